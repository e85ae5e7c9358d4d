package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
)

// skipCommand skips a server, scope, wait or gate of the run.
type skipCommand struct {
	*Meta
	controlFlags
}

func (c *skipCommand) Synopsis() string {
	return "Skip a server, rack, batch, cluster, stage, wait or gate"
}
func (c *skipCommand) Usage() string { return "rackform skip [options] ADDR" }

func (c *skipCommand) Description() string {
	return `Records skipping ADDR in the run of the plan the state directory applied
last. ADDR is a server address (CLUSTER/RACK/SERVER) or the id of a rack,
batch, phase, cluster, group, stage, wait, pause or gate, as status shows
them. A skipped server counts as neither success nor failure and leaves its
scope's N, so a breached threshold can be met again; "rackform continue"
then resumes. A failed server can be skipped too (it stays reported as not
at its target); something completed cannot. A running apply obeys the skip.
With -plan PLANFILE the skip is recorded for that plan's run even before
it is applied: a member, group or stage left out from the start.

A server whose steps have begun is never left powered off or drained: the
operation in flight finishes (a flash is never cut short), then the apply
brings the server back (powers it on if it was shut down, waits until it is
on and healthy, runs the uncordon hook) and only then skips it. Such a
server did not reach its target: the run then ends with exit status 4, and
whatever could not be brought back is listed with the command that does.

Exit status: 0 when the skip is recorded, 1 when it is refused.`
}

func (c *skipCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("skip", flag.ContinueOnError)
	c.register(fs, "Skip in the run of plan `FILE`, even before it is applied (a member, group or stage left out from the start), wherever its state is.")
	return fs
}

func (c *skipCommand) Run(ctx context.Context, args []string) int {
	rest, code, ok := c.operands(c, args, 1, 1, "takes one address, got %d arguments")
	if !ok {
		return code
	}
	run, err := c.open(ctx, c.Meta)
	if err != nil {
		return c.fail("%s", err)
	}
	defer run.Close()
	p, sha, e := run.Plan, run.SHA256, run.Control
	if err := e.Skip(ctx, rest[0]); err != nil {
		code := c.controlFailed(err)
		if hint := failedSkipHint(p, rest[0], err); hint != "" {
			fmt.Fprintln(c.Stderr, hint)
		}
		return code
	}
	fmt.Fprintf(c.Stdout, "Skip of %s recorded for plan %s.\n", rest[0], plan.ShortSHA(sha))
	if st, err := e.Status(ctx); err == nil && begun(st.Run, rest[0]) {
		fmt.Fprintf(c.Stdout, "%s has begun its steps: the apply finishes the operation in flight, brings it back (power on, wait until healthy, uncordon), then skips it.\n", rest[0])
	}
	return ExitOK
}

// failedSkipHint is the advice after a skip of server addr was refused
// because something has already failed: the scope holding the server is
// what to skip. It is empty for any other refusal or address.
func failedSkipHint(p *plan.Plan, addr string, err error) string {
	var re *executor.RefusedError
	if !errors.As(err, &re) || re.Already != executor.Failed {
		return ""
	}
	scope := scopeOf(p, addr)
	if scope == "" {
		return ""
	}
	return "A failed server stays failed. To let a breached rack or batch go on without it, skip the scope: rackform skip " + scope
}

// begun reports whether the server addr (anywhere under n) has started a
// step.
func begun(run *executor.Node, addr string) bool {
	for n := range applyview.Nodes(run) {
		if n.ID == addr && n.Kind == executor.KindServer {
			return slices.ContainsFunc(n.Steps, func(s executor.StepStatus) bool { return s.State != executor.NotStarted })
		}
	}
	return false
}

// scopeOf is the id of the rack, batch or serial scope holding server addr.
func scopeOf(p *plan.Plan, addr string) string {
	for _, e := range planview.Scopes(p) {
		if slices.Contains(e.Scope.Servers, addr) {
			return e.Scope.ID
		}
	}
	return ""
}
