//go:build unix

package plugin

import (
	"errors"
	"syscall"
)

// processRunning reports whether process pid exists (signal 0 checks
// without sending; EPERM: it exists, another user's).
func processRunning(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
