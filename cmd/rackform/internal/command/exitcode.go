package command

import (
	"errors"
	"fmt"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/executor"
)

// Exit codes, documented in docs/operating.md's table and in each command's help.
// This file is the one place outcomes become exit codes.
const (
	// ExitOK: success; for apply, continue and approve: every planned
	// server reached its target or was skipped before its steps began.
	ExitOK = 0
	// ExitError: an error (invalid configuration, refused plan, a run
	// that failed by a threshold with on_breach = "fail").
	ExitError = 1
	// ExitUsage: bad flags or arguments, and for apply outside a terminal a
	// plan that nothing vouches for (no trusted keys, -expect-sha256 or
	// -allow-unsigned).
	ExitUsage = 2
	// ExitPaused: apply paused (after a rack, at a gate, on a breach) or
	// stopped (by the operator, or a provider that could not be restarted);
	// also fmt -check "needs formatting".
	ExitPaused = 3
	// ExitIncomplete: the run completed, but not every planned server
	// reached its target: some failed, were skipped after their steps
	// began, or were left powered off, drained or with a staged image.
	ExitIncomplete = 4
	// ExitInterrupted: stopped by SIGINT/SIGTERM; apply resumes.
	ExitInterrupted = 130
)

// runExitCode maps how a run ended to the exit code of apply, continue and
// approve.
func runExitCode(o executor.Outcome) int {
	switch o.Status {
	case executor.OutcomeCompleted:
		return ExitOK
	case executor.OutcomeCompletedWithFailures:
		return ExitIncomplete
	case executor.OutcomePaused, executor.OutcomeStopped:
		return ExitPaused
	case executor.OutcomeInterrupted:
		return ExitInterrupted
	}
	return ExitError
}

// failErr prints err and returns its exit code: ExitUsage for a plan file
// that nothing vouches for outside a terminal (the command line lacks what
// the job must say), else ExitError.
func (m *Meta) failErr(err error) int {
	fmt.Fprintf(m.Stderr, "Error: %s\n", views.CanonicalText(err.Error()))
	var unverified *run.UnverifiedError
	if errors.As(err, &unverified) {
		return ExitUsage
	}
	return ExitError
}
