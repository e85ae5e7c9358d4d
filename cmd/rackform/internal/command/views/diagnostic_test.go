package views

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

const serverSrc = `cluster "east" {
  rack "r01" {
    server "r01-c01" {
      bmc  = "https://127.9.0.1"
      role = "computer"
    }
    server "r01-c01" {
      bmc  = var.bmc
      role = each.value.role
    }
  }
}
`

// rangeOf returns the range of the first occurrence of needle in src, in
// the file named main.rf.hcl, so cases point at text rather than offsets.
func rangeOf(t *testing.T, src, needle string) *hcl.Range {
	t.Helper()
	i := bytes.Index([]byte(src), []byte(needle))
	if i < 0 {
		t.Fatalf("%q not in source", needle)
	}
	pos := func(off int) hcl.Pos {
		line, col := 1, 1
		for _, r := range src[:off] {
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return hcl.Pos{Line: line, Column: col, Byte: off}
	}
	return &hcl.Range{Filename: "main.rf.hcl", Start: pos(i), End: pos(i + len(needle))}
}

func parse(t *testing.T, src string) (map[string]*hcl.File, hcl.Diagnostics) {
	t.Helper()
	p := hclparse.NewParser()
	_, diags := p.ParseHCL([]byte(src), "main.rf.hcl")
	return p.Files(), diags
}

func expr(t *testing.T, src string) hcl.Expression {
	t.Helper()
	e, diags := hclsyntax.ParseExpression([]byte(src), "main.rf.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return e
}

// cases builds every diagnostic shape the renderers must handle. Each is
// rendered three ways and compared with golden files.
func cases(t *testing.T) map[string]func() (hcl.Diagnostics, map[string]*hcl.File) {
	return map[string]func() (hcl.Diagnostics, map[string]*hcl.File){
		// Real parser output: the case validate shows for a broken file.
		"syntax_error": func() (hcl.Diagnostics, map[string]*hcl.File) {
			src := "cluster \"east\" {\n  rack \"r01\" {\n    server \"a\" {\n      role = \n    }\n  }\n}\n"
			files, diags := parse(t, src)
			return diags, files
		},
		// "found the end of the file": the range is past the last line.
		"syntax_eof": func() (hcl.Diagnostics, map[string]*hcl.File) {
			files, diags := parse(t, "a = {\n")
			return diags, files
		},
		"semantic_in_block": func() (hcl.Diagnostics, map[string]*hcl.File) {
			files, _ := parse(t, serverSrc)
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Unknown server role",
				Detail:   `The role "computer" is not one of control_plane, control_plane_spare, management, compute.`,
				Subject:  rangeOf(t, serverSrc, `"computer"`),
			}}, files
		},
		// A block-header subject names the enclosing block, not itself.
		"duplicate_block": func() (hcl.Diagnostics, map[string]*hcl.File) {
			files, _ := parse(t, serverSrc)
			second := rangeOf(t, serverSrc, "server \"r01-c01\" {\n      bmc  = var.bmc")
			second.End = second.Start
			second.End.Column += len(`server "r01-c01"`)
			second.End.Byte += len(`server "r01-c01"`)
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Duplicate server",
				Detail:   `A server named "r01-c01" was already declared at main.rf.hcl:3,5-21. Server names must be unique within a configuration.`,
				Subject:  second,
			}}, files
		},
		// Context widens the snippet to several lines; the highlight stays on one.
		"context_range": func() (hcl.Diagnostics, map[string]*hcl.File) {
			files, _ := parse(t, serverSrc)
			ctx := rangeOf(t, serverSrc, "bmc  = \"https://127.9.0.1\"\n      role = \"computer\"")
			return hcl.Diagnostics{{
				Severity: hcl.DiagWarning,
				Summary:  "Plain HTTPS BMC address",
				Detail:   "The address has no port; 443 is assumed.",
				Subject:  rangeOf(t, serverSrc, `"https://127.9.0.1"`),
				Context:  ctx,
			}}, files
		},
		"multiline_highlight": func() (hcl.Diagnostics, map[string]*hcl.File) {
			files, _ := parse(t, serverSrc)
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Invalid server",
				Detail:   "Line one of the detail.\nLine two of the detail.",
				Subject:  rangeOf(t, serverSrc, "\"https://127.9.0.1\"\n      role = \"computer\""),
			}}, files
		},
		// Expression values say which instance failed; a marked (sensitive)
		// value is never printed.
		"expression_values": func() (hcl.Diagnostics, map[string]*hcl.File) {
			files, _ := parse(t, serverSrc)
			subject := rangeOf(t, serverSrc, "each.value.role")
			e := expr(t, "each.value.role == var.bmc || var.token != \"\" || length(var.racks) > 0")
			return hcl.Diagnostics{{
				Severity:   hcl.DiagError,
				Summary:    "Unknown server role",
				Detail:     `The role "computer" is not one of control_plane, control_plane_spare, management, compute.`,
				Subject:    subject,
				Expression: e,
				EvalContext: &hcl.EvalContext{Variables: map[string]cty.Value{
					"each": cty.ObjectVal(map[string]cty.Value{
						"key":   cty.StringVal("r01-c02"),
						"value": cty.ObjectVal(map[string]cty.Value{"role": cty.StringVal("computer")}),
					}),
					"var": cty.ObjectVal(map[string]cty.Value{
						"bmc":   cty.StringVal("https://127.9.0.2"),
						"token": cty.StringVal("hunter2").Mark("sensitive"),
						"racks": cty.ListVal([]cty.Value{cty.StringVal("r01"), cty.StringVal("r02")}),
					}),
				}},
			}}, files
		},
		// A var-file line that sets a sensitive variable is not shown.
		"sensitive_source": func() (hcl.Diagnostics, map[string]*hcl.File) {
			src := "token = \"hunter2\"\n"
			files, _ := parse(t, src)
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Invalid value for variable",
				Detail:   "The token must not contain a name.",
				Subject:  rangeOf(t, src, `"hunter2"`),
				Extra:    sensitiveExtra{},
			}}, files
		},
		"no_source": func() (hcl.Diagnostics, map[string]*hcl.File) {
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Invalid variable value",
				Detail:   "The value for var.racks must be a number.",
				Subject:  &hcl.Range{Filename: "prod.rfvars", Start: hcl.Pos{Line: 2, Column: 9, Byte: 20}, End: hcl.Pos{Line: 2, Column: 14, Byte: 25}},
			}}, nil
		},
		"no_subject": func() (hcl.Diagnostics, map[string]*hcl.File) {
			return hcl.Diagnostics{
				{Severity: hcl.DiagError, Summary: "No configuration files", Detail: "The directory empty/ has no *.rf.hcl files."},
				{Severity: hcl.DiagWarning, Summary: "Summary only"},
			}, nil
		},
	}
}

func TestDiagnosticRendering(t *testing.T) {
	for name, build := range cases(t) {
		t.Run(name, func(t *testing.T) {
			diags, files := build()
			if len(diags) == 0 {
				t.Fatal("case produced no diagnostics")
			}
			ds := NewDiagnostics(diags, files)

			var plain, color bytes.Buffer
			if err := WriteDiagnostics(&plain, ds, false); err != nil {
				t.Fatal(err)
			}
			if err := WriteDiagnostics(&color, ds, true); err != nil {
				t.Fatal(err)
			}
			var js bytes.Buffer
			if err := NewValidate(ds).WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "diagnostics", name+".txt"), plain.Bytes())
			golden(t, filepath.Join("testdata", "diagnostics", name+".color.txt"), color.Bytes())
			golden(t, filepath.Join("testdata", "diagnostics", name+".json"), js.Bytes())

			// Colour must add escapes and nothing else.
			if diff := cmp.Diff(plain.String(), ansi.ReplaceAllString(color.String(), "")); diff != "" {
				t.Errorf("colour rendering differs from plain beyond escapes (-plain +stripped):\n%s", diff)
			}
			if bytes.Contains(plain.Bytes(), []byte("\x1b")) {
				t.Error("plain rendering contains an escape sequence")
			}
			if bytes.Contains(plain.Bytes(), []byte("hunter2")) || bytes.Contains(js.Bytes(), []byte("hunter2")) {
				t.Error("a sensitive value was rendered")
			}
		})
	}
}

type sensitiveExtra struct{}

func (sensitiveExtra) DiagnosticSourceIsSensitive() bool { return true }

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestSnippetOffsets pins the JSON snippet fields against the source, so a
// consumer that slices Code with the offsets gets the highlighted text.
func TestSnippetOffsets(t *testing.T) {
	files, _ := parse(t, serverSrc)
	tests := []struct {
		needle    string
		startLine int
		context   string
	}{
		{`"computer"`, 5, `server "r01-c01"`},
		{`rack "r01"`, 2, `cluster "east"`},
		{`cluster "east"`, 1, ""},
		{"each.value.role", 9, `server "r01-c01"`},
	}
	for _, tt := range tests {
		t.Run(tt.needle, func(t *testing.T) {
			d := NewDiagnostic(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "x", Subject: rangeOf(t, serverSrc, tt.needle)}, files)
			s := d.Snippet
			if s == nil {
				t.Fatal("no snippet")
			}
			if got := s.Code[s.HighlightStartOffset:s.HighlightEndOffset]; got != tt.needle {
				t.Errorf("highlight = %q, want %q", got, tt.needle)
			}
			if s.StartLine != tt.startLine {
				t.Errorf("start_line = %d, want %d", s.StartLine, tt.startLine)
			}
			var ctx string
			if s.Context != nil {
				ctx = *s.Context
			}
			if ctx != tt.context {
				t.Errorf("context = %q, want %q", ctx, tt.context)
			}
		})
	}
}

func TestValidateCounts(t *testing.T) {
	tests := []struct {
		name             string
		severities       []hcl.DiagnosticSeverity
		valid            bool
		errors, warnings int
		text             string
	}{
		{"none", nil, true, 0, 0, "Success! The configuration is valid.\n"},
		{"one warning", []hcl.DiagnosticSeverity{hcl.DiagWarning}, true, 0, 1, "Success! The configuration is valid, but there was 1 warning.\n"},
		{"two warnings", []hcl.DiagnosticSeverity{hcl.DiagWarning, hcl.DiagWarning}, true, 0, 2, "Success! The configuration is valid, but there were 2 warnings.\n"},
		{"error and warning", []hcl.DiagnosticSeverity{hcl.DiagError, hcl.DiagWarning}, false, 1, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var diags hcl.Diagnostics
			for _, s := range tt.severities {
				diags = append(diags, &hcl.Diagnostic{Severity: s, Summary: "s"})
			}
			v := NewValidate(NewDiagnostics(diags, nil))
			if v.Valid != tt.valid || v.ErrorCount != tt.errors || v.WarningCount != tt.warnings {
				t.Errorf("got valid=%v errors=%d warnings=%d, want %v %d %d", v.Valid, v.ErrorCount, v.WarningCount, tt.valid, tt.errors, tt.warnings)
			}
			var out, errw bytes.Buffer
			if err := v.WriteText(&out, &errw, false); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.text, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
		})
	}
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// FuzzDiagnostics renders the parser's diagnostics for arbitrary source:
// the renderer must never panic and its offsets must stay inside Code,
// whatever ranges the parser reports.
func FuzzDiagnostics(f *testing.F) {
	f.Add(serverSrc)
	f.Add("a = {\n")
	f.Add("cluster \"east\" {\n  rack \"r01\" {\n    server \"a\" {\n      role = \n    }\n  }\n}\n")
	f.Add("x = \"unterminated\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, src string) {
		p := hclparse.NewParser()
		_, diags := p.ParseHCL([]byte(src), "main.rf.hcl")
		for _, d := range NewDiagnostics(diags, p.Files()) {
			if s := d.Snippet; s != nil {
				if s.HighlightStartOffset < 0 || s.HighlightStartOffset > s.HighlightEndOffset || s.HighlightEndOffset > len(s.Code) {
					t.Fatalf("highlight %d-%d outside code of %d bytes", s.HighlightStartOffset, s.HighlightEndOffset, len(s.Code))
				}
			}
			DiagnosticText(d, true)
		}
	})
}
