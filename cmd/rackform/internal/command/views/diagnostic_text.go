package views

import (
	"fmt"
	"io"
	"strings"
)

// WriteDiagnostics renders diags for people, in order, separated by blank
// lines, in the shape Terraform uses:
//
//	Error: Unknown server role
//
//	  on main.rf.hcl line 12, in server "r01-c01":
//	  12:       role = "computer"
//
//	The role "computer" is not one of ...
//
// With color, the severity is red or yellow, the summary bold and the
// highlighted range underlined.
func WriteDiagnostics(w io.Writer, diags []*Diagnostic, color bool) error {
	for i, d := range diags {
		sep := ""
		if i > 0 {
			sep = "\n"
		}
		if _, err := io.WriteString(w, sep+DiagnosticText(d, color)); err != nil {
			return err
		}
	}
	return nil
}

// DiagnosticText renders one diagnostic, ending with a newline.
func DiagnosticText(d *Diagnostic, color bool) string {
	st := Style(color)
	var head string
	switch d.Severity {
	case SeverityError:
		head = st.Wrap("Error: ", ANSIBold, ANSIRed)
	case SeverityWarning:
		head = st.Wrap("Warning: ", ANSIBold, ANSIYellow)
	}
	parts := []string{head + st.Wrap(d.Summary, ANSIBold) + "\n"}
	if d.Range != nil {
		parts = append(parts, snippetText(d, st))
	}
	if d.Detail != "" {
		parts = append(parts, strings.TrimRight(d.Detail, "\n")+"\n")
	}
	return strings.Join(parts, "\n")
}

func snippetText(d *Diagnostic, st Style) string {
	var b strings.Builder
	s := d.Snippet
	if s == nil {
		why := "(source code not available)"
		if d.sourceHidden {
			why = "(source code not shown: it holds a sensitive value)"
		}
		fmt.Fprintf(&b, "  on %s line %d:\n  %s\n", d.Range.Filename, d.Range.Start.Line, why)
		return b.String()
	}
	in := ""
	if s.Context != nil {
		in = ", in " + *s.Context
	}
	fmt.Fprintf(&b, "  on %s line %d%s:\n", d.Range.Filename, d.Range.Start.Line, in)

	// Underline line by line, so that no escape spans a line break and the
	// line-number gutter is never underlined.
	lineStart := 0
	for i, line := range strings.Split(s.Code, "\n") {
		lineEnd := lineStart + len(line)
		from := clamp(s.HighlightStartOffset-lineStart, 0, len(line))
		to := clamp(s.HighlightEndOffset-lineStart, from, len(line))
		text := line[:from] + st.Wrap(line[from:to], ANSIUnderline) + line[to:]
		fmt.Fprintf(&b, "%4d: %s\n", s.StartLine+i, text)
		lineStart = lineEnd + 1
	}

	if len(s.Values) > 0 {
		b.WriteString("    " + st.Wrap("├────────────────", ANSIGray) + "\n")
		for _, v := range s.Values {
			fmt.Fprintf(&b, "    %s %s %s\n", st.Wrap("│", ANSIGray), st.Wrap(v.Traversal, ANSIBold), v.Statement)
		}
	}
	return b.String()
}
