//go:build unix

package executor

import (
	"errors"
	"syscall"
)

// processRunning reports whether pid may be a running process of this
// host: only ESRCH from kill(pid, 0) says it is not (EPERM: it runs as
// another user).
func processRunning(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
