package command

import (
	"context"
	"fmt"
)

// untilDone runs f and returns its result, or returns at once with ok false
// when ctx is cancelled first (SIGINT/SIGTERM). Loading a configuration is
// evaluation and file reads that cannot be interrupted midway; the command
// stops waiting for it and exits 130, and the process ends with it. Reads
// that could block forever (a FIFO, a device) are refused by the loader.
func untilDone[T any](ctx context.Context, f func() T) (T, bool) {
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v, true
	case <-ctx.Done():
		var zero T
		return zero, false
	}
}

// interrupted reports an interrupt and returns ExitInterrupted.
func (m *Meta) interrupted(what string) int {
	fmt.Fprintf(m.Stderr, "Interrupted: %s stopped.\n", what)
	return ExitInterrupted
}
