package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFmtSyntaxError: a file that does not parse is reported with a
// coloured snippet on a terminal, plain otherwise, and never rewritten.
func TestFmtSyntaxError(t *testing.T) {
	src := filepath.Join("testdata", "fmt", "bad.rf.hcl")
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		color bool
		args  []string
	}{
		{"color", true, nil},
		{"no-color-flag", true, []string{"-no-color"}},
		{"check", false, []string{"-check"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Work on a copy: a bug that rewrote the file must not
			// destroy the fixture for the next run.
			path := filepath.Join(t.TempDir(), "bad.rf.hcl")
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{"fmt"}, tt.args...), path)
			code, stdout, stderr := runCommand(t, tt.color, args...)
			if code != ExitError {
				t.Errorf("exit code = %d, want %d", code, ExitError)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(orig) {
				t.Error("a file with a syntax error was rewritten")
			}
			// The temporary directory differs per run; the golden holds a stable name.
			stderr = strings.ReplaceAll(stderr, path, "bad.rf.hcl")
			golden(t, filepath.Join("testdata", "fmt", tt.name+".golden"), []byte(stderr))
		})
	}
}
