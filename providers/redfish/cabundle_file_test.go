//go:build unix

package redfish

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A ca_bundle path naming a FIFO or a device is refused at once: the FIFO
// blocked configure, /dev/zero was read until memory ran out.
func TestCABundleOnlyRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ca.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        fifo + " is a named pipe (FIFO), not a regular file",
		"/dev/zero": "/dev/zero is a character device, not a regular file",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := loadCABundle(path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("loadCABundle(%s): %v, want %q", path, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("loadCABundle(%s) did not return", path)
		}
	}
}
