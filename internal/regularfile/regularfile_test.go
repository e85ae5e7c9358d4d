//go:build unix

package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO without a writer, a device and a directory are refused at once,
// naming what they are; a regular file is read.
func TestOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "plan.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(plain, []byte("text"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, fifo + " is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "/dev/zero is a character device, not a regular file"},
		{dir, dir + " is a directory, not a regular file"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Read(tc.path, Limit{Bytes: 1 << 20, What: "a test file"})
			done <- err
		}()
		select {
		case err := <-done:
			var nr *NotRegularError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read(%s): %v, want %q", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Read(%s) blocked", tc.path)
		}
	}
	b, err := Read(plain, Limit{Bytes: 1 << 20, What: "a test file"})
	if err != nil || string(b) != "text" {
		t.Errorf("Read of a regular file: %q, %v", b, err)
	}
}
