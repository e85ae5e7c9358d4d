//go:build unix

package sim

import "syscall"

// raiseFileLimit lifts the soft RLIMIT_NOFILE towards the hard limit: every
// BMC holds a listener and clients open connections to it.
func raiseFileLimit(n int) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return
	}
	if want := uint64(n)*2 + 1024; rl.Cur < want && rl.Cur < rl.Max {
		rl.Cur = min(want, rl.Max)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
}
