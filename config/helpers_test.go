package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

type bytesBuffer = strings.Builder

// base is a complete, valid configuration the rule tests add to or edit:
// one release, one cluster of one rack with three control-plane servers.
const base = `
release "r1" {
  version = "4.5.0"
  component "bios" {
    match {
      software_id = "BIOS"
    }
    version = "1.2.3"
    scheme  = "dotted"
    image   = "https://127.0.0.1/bios.bin"
  }
}

cluster "c1" {
  release = release.r1
  rack "a" {
    server "a1" {
      bmc  = "https://127.0.0.1:8443"
      role = "control_plane"
    }
    server "a2" {
      bmc  = "https://127.0.0.2:8443"
      role = "control_plane"
    }
    server "a3" {
      bmc  = "https://127.0.0.3:8443"
      role = "control_plane"
    }
  }
}
`

// writeConfig writes files into a fresh directory and makes it the working
// directory, so diagnostics name files as "main.rf.hcl".
func writeConfig(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
}

func loadFiles(t *testing.T, files map[string]string, opts LoadOptions) (*Config, hcl.Diagnostics) {
	t.Helper()
	writeConfig(t, files)
	return NewLoader(opts).Load(".")
}

// diag is a diagnostic flattened for comparison.
type diag struct {
	Severity string
	Summary  string
	Detail   string
	// Range is "FILE:LINE,COL-LINE,COL" of the subject.
	Range string
}

func flatten(diags hcl.Diagnostics) []diag {
	var out []diag
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		r := ""
		if d.Subject != nil {
			r = fmt.Sprintf("%s:%d,%d-%d,%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Subject.End.Line, d.Subject.End.Column)
		}
		out = append(out, diag{sev, d.Summary, d.Detail, r})
	}
	return out
}

// renderDiags renders diagnostics with source snippets for test failures.
func renderDiags(l *Loader, diags hcl.Diagnostics) string {
	var b bytesBuffer
	w := hcl.NewDiagnosticTextWriter(&b, l.Files(), 100, false)
	_ = w.WriteDiagnostics(diags)
	return b.String()
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
