package views

import (
	"encoding/json"
	"fmt"
	"io"
)

// ValidateFormatVersion is the format_version of validate -json output:
// Terraform's, because the document is Terraform's schema.
const ValidateFormatVersion = "1.0"

// Validate is the outcome of `rackform validate`. Its JSON form is exactly
// Terraform's `validate -json` document.
type Validate struct {
	FormatVersion string        `json:"format_version"`
	Valid         bool          `json:"valid"`
	ErrorCount    int           `json:"error_count"`
	WarningCount  int           `json:"warning_count"`
	Diagnostics   []*Diagnostic `json:"diagnostics"`
}

// NewValidate counts diags; the configuration is valid when none is an error.
func NewValidate(diags []*Diagnostic) *Validate {
	v := &Validate{FormatVersion: ValidateFormatVersion, Diagnostics: diags}
	if v.Diagnostics == nil {
		v.Diagnostics = []*Diagnostic{}
	}
	for _, d := range diags {
		switch d.Severity {
		case SeverityError:
			v.ErrorCount++
		case SeverityWarning:
			v.WarningCount++
		}
	}
	v.Valid = v.ErrorCount == 0
	return v
}

// WriteJSON writes the document, indented, with a final newline.
func (v *Validate) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	// Snippets hold source code; "<" is clearer than "\u003c" to a reader.
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteText writes the diagnostics to diag (stderr) and, when the
// configuration is valid, the success line to out (stdout).
func (v *Validate) WriteText(out, diag io.Writer, color bool) error {
	return v.WriteTextWith(out, diag, color, WriteDiagnostics)
}

// WriteTextWith is WriteText with the diagnostics written by write (a
// compact rendering of warnings, say).
func (v *Validate) WriteTextWith(out, diag io.Writer, color bool, write func(io.Writer, []*Diagnostic, bool) error) error {
	if err := write(diag, v.Diagnostics, color); err != nil {
		return err
	}
	if !v.Valid {
		return nil
	}
	if len(v.Diagnostics) > 0 {
		if _, err := io.WriteString(diag, "\n"); err != nil {
			return err
		}
	}
	msg := "The configuration is valid."
	if v.WarningCount > 0 {
		verb := "were"
		if v.WarningCount == 1 {
			verb = "was"
		}
		msg = fmt.Sprintf("The configuration is valid, but there %s %s.", verb, Plural(v.WarningCount, "warning"))
	}
	_, err := fmt.Fprintf(out, "%s %s\n", Style(color).Wrap("Success!", ANSIBold, ANSIGreen), msg)
	return err
}
