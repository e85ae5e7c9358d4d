package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
)

// forceUnlockCommand removes a state lock left by an apply that is gone.
type forceUnlockCommand struct {
	*Meta
	stateDir string
}

func (c *forceUnlockCommand) Synopsis() string {
	return "Remove a state lock left by an apply that is gone"
}
func (c *forceUnlockCommand) Usage() string { return "rackform force-unlock [options] ID" }

func (c *forceUnlockCommand) Description() string {
	return `Removes the state lock whose ID is ID, as printed when apply was refused
because the state was locked. Only do this when the apply holding it is
gone (its machine crashed, its job was killed): two applies of one run at
once would act on the same servers.

A lock file that cannot be read (a torn write, a hand edit) still locks
the state. Apply's refusal shows what could be read of it and an ID
("corrupt-" and a hash of its bytes); force-unlock with that ID shows it
again and removes exactly that file.

With RACKFORM_PG_CONN_STR set, the lock is the lease in the PostgreSQL
state backend, and force-unlock works from any machine. The apply that held
it can then no longer write its journal, so it acts no further and stops
with an error; an apply that died needs no force-unlock there: its lease
expires (lease_duration, default 30s) and the next apply takes it over.

Exit status: 0 when the lock was removed, 1 when no lock has this ID.`
}

func (c *forceUnlockCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("force-unlock", flag.ContinueOnError)
	fs.StringVar(&c.stateDir, "state-dir", state.DefaultDir, "The state `DIR` holding the lock.")
	return fs
}

func (c *forceUnlockCommand) Run(ctx context.Context, args []string) int {
	rest, code, ok := c.operands(c, args, 1, 1, "takes one lock ID, got %d arguments")
	if !ok {
		return code
	}
	b, err := run.OpenControl(ctx, c.runEnv(), c.stateDir)
	if err != nil {
		return c.fail("%s", err)
	}
	defer b.Close()
	h, err := b.LockHolder(ctx)
	var corrupt *executor.CorruptLockError
	if errors.As(err, &corrupt) {
		// Show what could be read before anything is removed.
		fmt.Fprintf(c.Stdout, "The lock %s cannot be read (%v). It holds %s.\n", corrupt.Where, corrupt.Err, corrupt.Readable())
	}
	if err := executor.ForceUnlock(ctx, b, rest[0]); err != nil {
		return c.fail("%s", err)
	}
	switch {
	case corrupt != nil:
		fmt.Fprintf(c.Stdout, "Removed the corrupt lock %s (ID %s).\n", corrupt.Where, corrupt.ID())
	case err == nil:
		fmt.Fprintf(c.Stdout, "Removed the lock %s held by %s (pid %d) since %s for plan %s.\n", h.ID, h.Who, h.PID, h.Since.UTC().Format(time.RFC3339), plan.ShortSHA(h.PlanSHA256))
	}
	return ExitOK
}
