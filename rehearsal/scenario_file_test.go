//go:build unix

package rehearsal

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A scenario that never ends (a FIFO, /dev/zero), one over the size bound
// and one nested deeper than HCL's parser can take are refused at once,
// naming the file and the bound, before anything is parsed.
func TestLoadScenarioRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.hcl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.hcl")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3_100_000_000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	deep := filepath.Join(dir, "deep.hcl")
	src := `fault "slow" { servers = ` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + " }\n"
	if err := os.WriteFile(deep, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "The scenario file " + fifo + " cannot be read: " + fifo + " is a named pipe (FIFO), not a regular file."},
		{"/dev/zero", "The scenario file /dev/zero cannot be read: /dev/zero is a character device, not a regular file."},
		{big, big + " is 3.1 GB, over the 1 MiB a scenario may be."},
		{deep, deep + " nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 281)"},
	} {
		done := make(chan string, 1)
		go func() {
			_, diags := LoadScenario(tc.path)
			done <- diags.Error()
		}()
		select {
		case got := <-done:
			if !strings.Contains(got, tc.want) {
				t.Errorf("LoadScenario(%s): %s, want %q", tc.path, got, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadScenario(%s) did not return", tc.path)
		}
	}
}
