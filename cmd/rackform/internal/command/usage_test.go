package command

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Every help text fits a terminal of 80 columns: each command's (generated
// from its flag set, the descriptions hand-wrapped) and the top-level one.
// Help lines ran to 219 characters, a flag's usage on one line after a tab.
func TestHelpFitsIn80Columns(t *testing.T) {
	m := &Meta{}
	texts := map[string]string{}
	for name, r := range m.commands() {
		texts["rackform "+name+" -help"] = helpText(r)
	}
	var out, errb bytes.Buffer
	Main(context.Background(), []string{"-help"}, Streams{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	texts["rackform -help"] = out.String() + errb.String()
	for what, text := range texts {
		if !strings.Contains(text, "Usage: ") {
			t.Errorf("%s printed no usage: %q", what, text)
		}
		for i, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "\t") {
				t.Errorf("%s line %d has a tab (its width depends on the terminal): %q", what, i+1, line)
			}
			if n := cols(line); n > helpWidth {
				t.Errorf("%s line %d is %d columns: %q", what, i+1, n, line)
			}
		}
	}
}

// wrap keeps lines that fit as written and breaks the others at spaces,
// continuing at the line's own indentation.
func TestWrap(t *testing.T) {
	for _, tt := range []struct{ in, indent, want string }{
		{"short  x", "  ", "  short  x\n"},
		{"aaaa bbbb cccc dddd", "", "aaaa bbbb\ncccc dddd\n"},
		{"  aaaa bbbb cccc", "", "  aaaa bbbb\n  cccc\n"},
		{"one\n\ntwo", "> ", "> one\n\n> two\n"},
		{"→→→→ →→→→ →→→→", "", "→→→→ →→→→\n→→→→\n"},
	} {
		if got := wrap(tt.in, tt.indent, 12); got != tt.want {
			t.Errorf("wrap(%q, %q, 12) = %q, want %q", tt.in, tt.indent, got, tt.want)
		}
	}
}

// nearest suggests what was probably meant: a prefix, or a name within
// two edits; nothing for a word that is far from every name.
func TestNearest(t *testing.T) {
	names := []string{"apply", "approve", "plan", "status", "stop", "show", "validate"}
	for _, tt := range []struct {
		typed string
		want  []string
	}{
		{"aply", []string{"apply"}},
		{"valdiate", []string{"validate"}},
		{"stat", []string{"status"}},
		{"pla", []string{"plan"}},
		{"init", nil},
		{"x", nil},
	} {
		got := nearest(tt.typed, names)
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("nearest(%q) = %v, want %v", tt.typed, got, tt.want)
		}
	}
}
