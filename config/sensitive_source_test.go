package config

import (
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const sensitiveSrc = `
variable "token" {
  type      = string
  sensitive = true
  default   = "changeme-token"
  validation {
    condition     = !can(regex("hunter", var.token))
    error_message = "The token must not contain a name."
  }
}
variable "pin" {
  type      = number
  sensitive = true
  default   = 0
}
variable "racks" {
  type    = number
  default = 1
}
`

// snippetLines returns the source lines a renderer would show for d.
func snippetLines(t *testing.T, d *hcl.Diagnostic) string {
	t.Helper()
	if d.Subject == nil {
		return ""
	}
	src, err := os.ReadFile(d.Subject.Filename)
	if err != nil {
		return "" // not a file (a -var value): nothing to show
	}
	lines := strings.Split(string(src), "\n")
	r := *d.Subject
	if d.Context != nil {
		r = hcl.RangeOver(*d.Context, r)
	}
	from, to := r.Start.Line, max(r.End.Line, r.Start.Line)
	return strings.Join(lines[from-1:min(to, len(lines))], "\n")
}

// TestSensitiveSourceHidden: a diagnostic whose source lines hold a
// sensitive value carries an Extra that makes renderers leave the snippet
// out; other diagnostics keep theirs.
func TestSensitiveSourceHidden(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		opts    LoadOptions
		secret  string
		summary string // a diagnostic that must be reported
	}{
		{
			name:    "validation fails on a var-file value",
			files:   map[string]string{"main.rf.hcl": base + sensitiveSrc, "s.vars": "racks = 2\ntoken = \"hunter2-secret\"\n"},
			opts:    LoadOptions{VarFiles: []string{"s.vars"}},
			secret:  "hunter2-secret",
			summary: "Invalid value for variable",
		},
		{
			name:    "type error on a var-file value",
			files:   map[string]string{"main.rf.hcl": base + sensitiveSrc, "s.vars": "pin = \"hunter2-pin\"\n"},
			opts:    LoadOptions{VarFiles: []string{"s.vars"}},
			secret:  "hunter2-pin",
			summary: "Invalid value for input variable",
		},
		{
			name:    "a non-sensitive error on the line of a secret (JSON)",
			files:   map[string]string{"main.rf.hcl": base + sensitiveSrc, "s.json": `{"racks": "three", "token": "hunter2-json"}`},
			opts:    LoadOptions{VarFiles: []string{"s.json"}},
			secret:  "hunter2-json",
			summary: "Invalid value for input variable",
		},
		{
			name:    "a var file that does not parse",
			files:   map[string]string{"main.rf.hcl": base + sensitiveSrc, "s.vars": "token = \"hunter2-open\n"},
			opts:    LoadOptions{VarFiles: []string{"s.vars"}},
			secret:  "hunter2-open",
			summary: "Unterminated template string",
		},
		{
			name:    "a variable set twice",
			files:   map[string]string{"main.rf.hcl": base + sensitiveSrc, "s.vars": "token = \"a\"\ntoken = \"hunter2-again\"\n"},
			opts:    LoadOptions{VarFiles: []string{"s.vars"}},
			secret:  "hunter2-again",
			summary: "Attribute redefined",
		},
		{
			name: "a literal password",
			files: map[string]string{"main.rf.hcl": strings.Replace(base, `role = "control_plane"`, `role = "control_plane"
      credentials {
        username = "root"
        password = "hunter2-literal"
      }`, 1)},
			secret:  "hunter2-literal",
			summary: "Literal password",
		},
		{
			name:    "a sensitive default of the wrong type",
			files:   map[string]string{"main.rf.hcl": base + "variable \"pin2\" {\n  type      = number\n  sensitive = true\n  default   = \"hunter2-default\"\n}\n"},
			secret:  "hunter2-default",
			summary: "Invalid default value for variable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadFiles(t, tt.files, tt.opts)
			found := false
			for _, d := range diags {
				found = found || d.Summary == tt.summary
				if strings.Contains(d.Summary+d.Detail, tt.secret) {
					t.Errorf("message holds the secret: %s: %s", d.Summary, d.Detail)
				}
				if strings.Contains(snippetLines(t, d), tt.secret) && !SourceIsSensitive(d) {
					t.Errorf("%q would show its source, which holds the secret", d.Summary)
				}
			}
			if !found {
				t.Errorf("no %q diagnostic in %v", tt.summary, flatten(diags))
			}
		})
	}

	// A problem on a line without a secret keeps its snippet.
	_, diags := loadFiles(t, map[string]string{"main.rf.hcl": base + sensitiveSrc, "s.vars": "token = \"fine\"\nracks = \"three\"\n"},
		LoadOptions{VarFiles: []string{"s.vars"}})
	if len(diags) != 1 || diags[0].Subject == nil || diags[0].Subject.Start.Line != 2 || SourceIsSensitive(diags[0]) {
		t.Errorf("want the racks error on line 2 with its snippet, got %v", flatten(diags))
	}
	// -var and environment values have no file; the variable's
	// declaration, which a snippet of them shows, holds no secret.
	_, diags = loadFiles(t, map[string]string{"main.rf.hcl": base + sensitiveSrc},
		LoadOptions{Vars: []string{"pin=hunter2-cli"}, Getenv: func(k string) string {
			return map[string]string{"RACKFORM_VAR_token": "hunter2-env"}[k]
		}})
	if len(diags) != 2 {
		t.Fatalf("want 2 diagnostics, got %v", flatten(diags))
	}
	for _, d := range diags {
		if text := d.Summary + d.Detail + snippetLines(t, d); strings.Contains(text, "hunter2") {
			t.Errorf("diagnostic shows a secret: %s", text)
		}
	}
	// A -var value parsed as an expression: its diagnostics point into
	// the value's own text, which is the secret.
	_, diags = loadFiles(t, map[string]string{"main.rf.hcl": base + "variable \"keys\" {\n  type      = list(string)\n  sensitive = true\n}\n"},
		LoadOptions{Vars: []string{"keys=[hunter2]"}})
	if len(diags) == 0 {
		t.Fatal("no diagnostic for a -var value that refers to a variable")
	}
	for _, d := range diags {
		if d.Subject == nil || d.Subject.Filename != inputFilename("keys") || !SourceIsSensitive(d) {
			t.Errorf("want a sensitive-source diagnostic in %s, got %+v", inputFilename("keys"), d)
		}
	}
}
