//go:build unix

package plugin

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A lock file that is a FIFO or a device is refused at once, naming it: a
// FIFO blocked the load, /dev/zero was read until memory ran out.
func TestLockOnlyRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), LockFile)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        fifo + " is a named pipe (FIFO), not a regular file",
		"/dev/zero": "/dev/zero is a character device, not a regular file",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := LoadLock(path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("LoadLock(%s): %v, want %q", path, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadLock(%s) did not return", path)
		}
	}
}
