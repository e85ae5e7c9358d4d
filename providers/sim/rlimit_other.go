//go:build !unix

package sim

// raiseFileLimit does nothing where there is no RLIMIT_NOFILE.
func raiseFileLimit(int) {}
