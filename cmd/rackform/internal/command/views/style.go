package views

import "strings"

// ANSI SGR sequences: the few that the human views use.
const (
	ansiReset     = "\x1b[0m"
	ansiBold      = "\x1b[1m"
	ansiUnderline = "\x1b[4m"
	ansiRed       = "\x1b[31m"
	ansiGreen     = "\x1b[32m"
	ansiYellow    = "\x1b[33m"
	ansiGray      = "\x1b[90m"
)

// style adds escape sequences when colour is on and nothing when it is
// off, so the coloured and plain renderings differ only by escapes.
type style bool

// wrap surrounds text with the sequences in codes and a reset.
func (s style) wrap(text string, codes ...string) string {
	if !s || text == "" {
		return text
	}
	return strings.Join(codes, "") + text + ansiReset
}
