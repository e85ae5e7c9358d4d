//go:build !windows

package command

import (
	"os"
	"syscall"
)

// resizeSignals are the signals a terminal resize sends.
var resizeSignals = []os.Signal{syscall.SIGWINCH}
