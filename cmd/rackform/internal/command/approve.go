package command

import (
	"context"
	"flag"
	"fmt"

	"github.com/rackform/rackform/executor"
)

// approveCommand approves a pending approval gate and resumes the run.
type approveCommand struct {
	*Meta
	runOpts
}

func (c *approveCommand) Synopsis() string { return "Approve a pending approval gate and resume" }
func (c *approveCommand) Usage() string    { return "rackform approve [options] GATE" }

func (c *approveCommand) Description() string {
	return `Approves the approval gate GATE (its address, e.g. stage.canary.gate.qa, as
apply printed it) of the run the state directory applied last, then applies
the rest of the plan in this process, like continue. A gate the run has not
reached yet, or one already approved or skipped, is refused. Approvals do
not expire.

With -expect-sha256 HASH, the run must be of the reviewed plan and its
stored plan must hash to it, as for continue; outside a terminal, as for
continue, the stored plan needs a trusted signature, -expect-sha256 or
-allow-unsigned.

When another apply of the same plan is running, approve only records the
approval for it and exits 0.

` + resumeExitStatus
}

func (c *approveCommand) Flags() *flag.FlagSet { return c.resumeFlags("approve", c.Meta) }

func (c *approveCommand) Run(ctx context.Context, args []string) int {
	rest, code, ok := c.operands(c, args, 1, 1, "takes one gate address, got %d arguments")
	if !ok {
		return code
	}
	gate := rest[0]
	c.name = "approve"
	return c.resume(ctx, c.Meta, func(e *executor.Executor) error {
		if err := e.Approve(ctx, gate); err != nil {
			return err
		}
		if !c.json {
			// The gate's address, also when it was named by its own name.
			addr, err := e.GateAddress(ctx, gate)
			if err != nil {
				addr = gate
			}
			fmt.Fprintf(c.Stdout, "Approved %s.\n", addr)
		}
		return nil
	})
}
