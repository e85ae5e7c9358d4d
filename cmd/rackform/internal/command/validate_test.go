package command

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateColor pins who decides about colour: Meta.Color (a terminal
// without NO_COLOR) turns it on, -no-color turns it off, and -json never
// has any.
func TestValidateColor(t *testing.T) {
	dir := filepath.Join("testdata", "validate", "broken")
	tests := []struct {
		name  string
		color bool
		args  []string
	}{
		{"color", true, nil},
		{"no-color-flag", true, []string{"-no-color"}},
		{"not-a-terminal", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"validate"}, tt.args...), dir)
			code, stdout, stderr := runCommand(t, tt.color, args...)
			if code != ExitError {
				t.Errorf("exit code = %d, want %d", code, ExitError)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, "Unknown role") {
				t.Errorf("stderr does not report the role: %q", stderr)
			}
			if got, want := strings.Contains(stderr, "\x1b["), tt.color && len(tt.args) == 0; got != want {
				t.Errorf("escape sequences in stderr: %v, want %v", got, want)
			}
			golden(t, filepath.Join("testdata", "validate", tt.name+".golden"), []byte(stderr))
		})
	}

	t.Run("json", func(t *testing.T) {
		code, stdout, stderr := runCommand(t, true, "validate", "-json", dir)
		if code != ExitError || stderr != "" {
			t.Errorf("exit code = %d, stderr = %q; want %d and nothing", code, stderr, ExitError)
		}
		if strings.Contains(stdout, "\x1b[") {
			t.Error("escape sequence in JSON")
		}
		golden(t, filepath.Join("testdata", "validate", "json.golden"), []byte(stdout))
	})

	t.Run("success", func(t *testing.T) {
		code, stdout, _ := runCommand(t, true, "validate", filepath.Join("..", "..", "..", "..", "examples", "pause-rack"))
		if code != ExitOK {
			t.Fatalf("exit code = %d, want %d", code, ExitOK)
		}
		if want := "\x1b[1m\x1b[32mSuccess!\x1b[0m The configuration is valid.\n"; stdout != want {
			t.Errorf("stdout = %q, want %q", stdout, want)
		}
	})
}
