package command

import (
	"context"
	"flag"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/executor"
)

// continueCommand resumes a paused or stopped run from the state backend.
type continueCommand struct {
	*Meta
	runOpts
}

func (c *continueCommand) Synopsis() string { return "Resume a paused or stopped apply" }
func (c *continueCommand) Usage() string    { return "rackform continue [options]" }

func (c *continueCommand) Description() string {
	return `Resumes the run of the plan the state directory applied last: a pause
after a rack ends, a stop is lifted, and breached thresholds are checked
again (a scope that is still breached stays paused and says which servers to
skip or fix). It needs no plan file: the plan is in the state directory, so
continue may run in another CI job sharing it. It then applies the rest of
the plan in this process, like apply, so it takes apply's options
(sensitive variables must be given again).

With -expect-sha256 HASH (the hash that was reviewed, as for apply), the
run must be of that plan and the plan the state backend stores must hash
to it: without signing keys, this is what stops a state directory whose
plan was replaced by an edited one (stored under its own hash) from being
resumed. The stored plan is vouched for as apply's plan file is: outside a
terminal, continue needs a plan signed by a key of ` + EnvTrustedKeys + `,
-expect-sha256, or an explicit -allow-unsigned (exit 2 without one).

When another apply of the same plan is running, continue only records the
request for it and exits 0.

With RACKFORM_PG_CONN_STR set, the run is in the PostgreSQL state backend
(a configuration's rackform { backend "postgres" {} } block): continue then
works from any machine and any CI job, with no plan file and no state
directory, only the connection string and the BMC credentials. With several
unfinished runs in the database it lists them and takes -run ID.

A cluster the plan holds pending because its release was not yet
available at its site is checked again: continue reads the plan's catalog
source afresh (a path is relative to the configuration directory the plan
was made in) and starts the cluster when the catalog now lists the release
at its site with the components the plan recorded; otherwise it stays
pending and continue says why. What is installed is always what the plan
recorded.

` + resumeExitStatus
}

func (c *continueCommand) Flags() *flag.FlagSet { return c.resumeFlags("continue", c.Meta) }

// stateDirResumeUsage is -state-dir of continue and approve.
const stateDirResumeUsage = "The state `DIR` of the run (default: .rackform; with -expect-sha256, when that holds no run of the plan, the state directory the plan's run started in on this machine)."

// resumeFlags are the options of continue and approve (command): apply's,
// and their own.
func (o *runOpts) resumeFlags(command string, m *Meta) *flag.FlagSet {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	o.flags(fs, stateDirResumeUsage)
	o.expectSHA, o.allowUnsigned = optionalString{}, false
	fs.Var(&o.expectSHA, "expect-sha256", "Refuse to go on unless the run is of the plan whose SHA-256 is `HASH` (the hash that was reviewed) and the plan the state backend stores hashes to it.")
	fs.BoolVar(&o.allowUnsigned, "allow-unsigned", false, "Go on with a stored plan that is neither signed by a trusted key nor checked with -expect-sha256 (needed outside a terminal, as for apply). Its checksum only detects corruption.")
	m.habitFlags(fs)
	runFlag(fs, &o.runID)
	return fs
}

// resumeExitStatus ends the help of continue and approve.
const resumeExitStatus = `Exit status: as apply: 0 every planned server at target (or skipped before
it began), 4 completed with failed, skipped-after-start or stranded
servers, 1 error, refused or failed run, 2 bad arguments or, outside a
terminal, a stored plan nothing vouches for, 3 paused or stopped, 130
interrupted.`

// runFlag is -run of the commands without a plan file.
func runFlag(fs *flag.FlagSet, v *string) {
	*v = ""
	fs.StringVar(v, "run", "", "With the postgres backend (RACKFORM_PG_CONN_STR set) holding several unfinished runs: act on the run whose plan SHA-256 starts with `ID`.")
}

func (c *continueCommand) Run(ctx context.Context, args []string) int {
	_, code, ok := c.operands(c, args, 0, 0, "takes no arguments, got %d")
	if !ok {
		return code
	}
	c.name, c.Recheck = "continue", true
	return c.resume(ctx, c.Meta, func(e *executor.Executor) error { return e.Continue(ctx) })
}

// resume opens the run the state backend holds (the plan it applied last,
// or -run) and drives it after recording control.
func (o *runOpts) resume(ctx context.Context, m *Meta, control func(*executor.Executor) error) int {
	trust, code, ok := o.trust(m)
	if !ok {
		return code
	}
	opts := o.options(m)
	opts.Trust = trust
	rn, err := run.OpenStored(ctx, o.runID, opts)
	if err != nil {
		return m.failErr(err)
	}
	o.vouched(trust, rn.SHA256)
	return o.drive(ctx, m, rn, control)
}
