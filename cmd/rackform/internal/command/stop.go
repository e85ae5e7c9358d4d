package command

import (
	"context"
	"flag"
	"fmt"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
)

// stopCommand asks the running apply to stop.
type stopCommand struct {
	*Meta
	stateDir string
	runID    string
}

func (c *stopCommand) Synopsis() string {
	return "Stop the run: nothing new starts, work in flight finishes"
}
func (c *stopCommand) Usage() string { return "rackform stop [options]" }

func (c *stopCommand) Description() string {
	return `Records a stop for the run of the plan the state directory applied last.
A running apply (in this or another process sharing the state directory)
starts nothing new, lets the servers in flight finish their steps, and ends
with the run stopped (exit 3). "rackform continue" or applying the plan
again resumes it.

Exit status: 0 when the stop is recorded, 1 when it is refused (no run, or
the run is already stopped or finished).`
}

func (c *stopCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("stop", flag.ContinueOnError)
	fs.StringVar(&c.stateDir, "state-dir", state.DefaultDir, "The state `DIR` of the run.")
	runFlag(fs, &c.runID)
	return fs
}

func (c *stopCommand) Run(ctx context.Context, args []string) int {
	_, code, ok := c.operands(c, args, 0, 0, "takes no arguments, got %d")
	if !ok {
		return code
	}
	r, err := run.OpenForControl(ctx, c.runEnv(), c.stateDir, c.runID)
	if err != nil {
		return c.fail("%s", err)
	}
	defer r.Close()
	b, sha := r.Backend, r.SHA256
	if err := r.Control.Stop(ctx); err != nil {
		return c.controlFailed(err)
	}
	if h, err := b.LockHolder(ctx); err == nil {
		fmt.Fprintf(c.Stdout, "Stop recorded for plan %s. The apply running as %s (pid %d) starts nothing new and ends once the servers in flight finish.\n", plan.ShortSHA(sha), h.Who, h.PID)
	} else {
		fmt.Fprintf(c.Stdout, "Stop recorded for plan %s. No apply is running; the next apply or continue lifts the stop.\n", plan.ShortSHA(sha))
	}
	return ExitOK
}
