package views

import (
	"fmt"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// Past MaxDiagnostics, the rest are counted in one more diagnostic, an
// error when any of them is one.
func TestNewDiagnosticsBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		errorAt  int // index of the only error; -1: none
		total    int
		want     int
		severity string
	}{
		{"under the bound", -1, MaxDiagnostics, MaxDiagnostics, SeverityWarning},
		{"warnings past it", -1, 300, MaxDiagnostics + 1, SeverityWarning},
		{"an error past it", 250, 300, MaxDiagnostics + 1, SeverityError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var diags hcl.Diagnostics
			for i := range tc.total {
				sev := hcl.DiagWarning
				if i == tc.errorAt {
					sev = hcl.DiagError
				}
				diags = append(diags, &hcl.Diagnostic{Severity: sev, Summary: fmt.Sprint("problem ", i)})
			}
			out := NewDiagnostics(diags, nil)
			if len(out) != tc.want {
				t.Fatalf("%d diagnostics, want %d", len(out), tc.want)
			}
			last := out[len(out)-1]
			if tc.total > MaxDiagnostics && (last.Severity != tc.severity || last.Detail != fmt.Sprintf("%d more problems are not shown; fix the ones above and run again.", tc.total-MaxDiagnostics)) {
				t.Errorf("last: %s %q", last.Severity, last.Detail)
			}
		})
	}
}
