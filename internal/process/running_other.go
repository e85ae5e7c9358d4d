//go:build !unix

// Package process tells whether a process of this host still runs: what a
// lock holder's or a plugin host's recorded process id is checked with.
package process

// Running cannot tell on this platform: every process counts as running,
// so nothing is taken for gone.
func Running(int) bool { return true }
