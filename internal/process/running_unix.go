//go:build unix

// Package process tells whether a process of this host still runs: what a
// lock holder's or a plugin host's recorded process id is checked with.
package process

import (
	"errors"
	"syscall"
)

// Running reports whether pid may be a running process of this host: only
// ESRCH from kill(pid, 0) says it is not (EPERM: it runs as another user).
func Running(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
