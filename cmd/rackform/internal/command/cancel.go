package command

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
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

// interruptGrace is how long a command may go on after SIGINT or SIGTERM
// before rackform exits 130 without it: commands stop themselves at a
// signal (untilDone), and this bounds one that is busy in code that does
// not look (a render, a large decode) so a CI runner's timeout is obeyed.
const interruptGrace = time.Second

// ownsInterrupts reports whether command r decides alone when it ends
// after a signal, so it is never cut short: apply, continue and approve
// (the first signal lets requests that change a BMC finish and journals
// them, the second exits at once), demo and sim (they run and stop those),
// the provider plugin (its host ends it, after the BMC operations it lets
// finish), and the commands that write a user's file and finish that
// write (plan, fmt, keygen, providers lock; plan stops observing at a
// signal).
func ownsInterrupts(r runner) bool {
	switch r.(type) {
	case *applyCommand, *continueCommand, *approveCommand, *demoCommand, *simCommand, *providerRedfishCommand,
		*planCommand, *fmtCommand, *keygenCommand, *providersLockCommand:
		return true
	}
	return false
}

// runBounded runs r, and once ctx is cancelled (SIGINT, SIGTERM) waits at
// most interruptGrace for it before returning ExitInterrupted with
// "Interrupted: NAME stopped." on stderr; main then exits, ending r.
func runBounded(ctx context.Context, r runner, args []string, stderr io.Writer) int {
	if ownsInterrupts(r) {
		return r.Run(ctx, args)
	}
	done := make(chan int, 1)
	go func() { done <- r.Run(ctx, args) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	t := time.NewTimer(interruptGrace)
	defer t.Stop()
	select {
	case code := <-done:
		return code
	case <-t.C:
		name := "rackform"
		if f := strings.Fields(r.Usage()); len(f) > 1 {
			name = f[1]
		}
		fmt.Fprintf(stderr, "Interrupted: %s stopped.\n", name)
		return ExitInterrupted
	}
}
