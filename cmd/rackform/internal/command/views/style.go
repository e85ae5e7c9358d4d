package views

import "strings"

// ANSI SGR sequences: the few that the human views (this package,
// planview, rehearseview) use.
const (
	ANSIReset     = "\x1b[0m"
	ANSIBold      = "\x1b[1m"
	ANSIUnderline = "\x1b[4m"
	ANSIRed       = "\x1b[31m"
	ANSIGreen     = "\x1b[32m"
	ANSIYellow    = "\x1b[33m"
	ANSIGray      = "\x1b[90m"
	ANSICyan      = "\x1b[36m"
)

// Style adds escape sequences when colour is on and nothing when it is
// off, so the coloured and plain renderings differ only by escapes.
type Style bool

// Wrap surrounds text with the sequences in codes and a reset.
func (s Style) Wrap(text string, codes ...string) string {
	if !s || text == "" {
		return text
	}
	return strings.Join(codes, "") + text + ANSIReset
}
