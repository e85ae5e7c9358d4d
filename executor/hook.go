package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// ExecHooks runs hooks as commands (no shell), with the server's
// RACKFORM_* variables added to the environment. Output goes nowhere: it
// may hold anything, and the journal and events must never carry secrets.
type ExecHooks struct{}

// Run implements HookRunner.
func (ExecHooks) Run(ctx context.Context, h Hook) error {
	if len(h.Argv) == 0 {
		return nil
	}
	if h.Timeout > 0 {
		// A command runs in real time, so its bound is on the wall clock
		// (the executor also cancels ctx at the deadline on its own clock;
		// a rehearsal on a virtual clock runs no commands).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, h.Argv[0], h.Argv[1:]...)
	cmd.Env = append(os.Environ(), h.Env...)
	// A hook that forks a child holding its pipes must not hang us past
	// the deadline.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s hook %s did not finish: %w", h.Name, h.Argv[0], ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%s hook %s exited with status %d", h.Name, h.Argv[0], ee.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("%s hook %s: %w", h.Name, h.Argv[0], err)
	}
	return nil
}
