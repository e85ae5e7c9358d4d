package command

import (
	"context"
	"flag"
	"fmt"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
)

// applyCommand applies a saved plan.
type applyCommand struct {
	*Meta
	runOpts
}

// optionalString is a string flag that knows whether it was given, so an
// empty value (an unset CI variable: -expect-sha256 "$SHA") is an error
// instead of no check at all.
type optionalString struct {
	value string
	set   bool
}

func (o *optionalString) String() string { return o.value }
func (o *optionalString) Set(v string) error {
	o.value, o.set = v, true
	return nil
}

func (c *applyCommand) Synopsis() string { return "Apply a saved plan, rack by rack" }
func (c *applyCommand) Usage() string    { return "rackform apply [options] PLANFILE" }

func (c *applyCommand) Description() string {
	return `Applies exactly the plan in PLANFILE (written by "rackform plan -out"):
stage by stage, cluster by cluster, rack by rack, with the thresholds, waits,
pauses and approval gates the plan resolved. Every state change is written to
a journal in the state directory before it is acted on, so running apply
again with the same plan after a crash resumes where it stopped: BMC tasks
in flight are polled, not started again, and no step runs twice.

The plan's embedded checksum detects corruption (a damaged or truncated
file), not tampering: anyone who can write the file can recompute it.
Tampering is detected by a signature: with ` + EnvTrustedKeys + ` set
(PEM public keys, or key file paths separated by ":"), apply refuses a plan
that is unsigned, signed by another key, or changed after it was signed
(targets, images, hooks, expiry, BMC addresses: every byte), and
-allow-unsigned is refused. Without trusted keys, -expect-sha256 with the
hash that was reviewed detects it; outside a terminal, apply requires one of
the two, or an explicit -allow-unsigned.

The plan is refused, and nothing is touched, when it is corrupt, truncated
or of an unknown format; when its signature or SHA-256 is not the expected
one; when it has expired; when it has already been applied; when the
provider plugin binaries differ from those that made the plan, or the CA
bundle a provider's ca_bundle names differs from the one it pinned; when a
sensitive variable or an environment variable the configuration reads is not
supplied; and when another apply holds the state lock (with -lock-timeout,
apply waits for it; with the postgres backend and -join, an apply of the
same plan runs beside it as another worker: each worker claims rollout
groups, the others' records come through the database).

Providers are configured from the configuration snapshot inside the plan and
the plan's variable values, never from the files in the working directory.
Sensitive variables are not stored in a plan: supply them again with -var,
-var-file or RACKFORM_VAR_name, and set the environment variables the
configuration reads with env().

A provider plugin that dies is restarted (a few times, with backoff) and
the steps it had in flight resume from the journal as after a crash of
apply: a BMC task is polled, an accepted update is found, never flashed
again. A plugin that cannot be restarted stops the run ("stopped: provider
unavailable", exit 3) with its servers resumable, not failed.

The first SIGINT or SIGTERM starts nothing new, gives up at once what only
reads or waits (polling a BMC task, waiting for a server to be ready,
shutdown and power-on waits, hooks: all journaled and resumed by the next
apply), lets requests that change a BMC finish (an update or reset until
the BMC returns its task, a reimage), and exits 130; a second one exits at
once (the journal stays consistent and the next apply resumes).

Exit status: 0 every planned server reached its target or was skipped
before its steps began; 4 the run completed but some servers failed, were
skipped after their steps began, or were left powered off, drained or with
a staged image (they are listed, each with the command that brings it
back); 1 error, refused, or the run failed (a threshold with on_breach =
"fail"); 2 bad arguments, or outside a terminal a plan nothing vouches for;
3 paused (after a rack, at an approval gate, on a breached threshold) or
stopped (by rackform stop, or a provider that could not be restarted); 130
interrupted. A pause prints the exact command that continues the run.`
}

func (c *applyCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	c.runOpts.flags(fs, "Keep the journal, plans and lock in `DIR` (default: the state directory the plan records, found from the plan file's directory wherever apply runs; .rackform for plans that record none). A plan whose run started in another state directory on this machine is refused.")
	c.expectSHA, c.allowUnsigned = optionalString{}, false
	fs.Var(&c.expectSHA, "expect-sha256", "Refuse the plan unless its SHA-256 is `HASH` (as printed by plan): the hash that was reviewed.")
	fs.BoolVar(&c.Join, "join", false, "With the postgres backend, when another apply of the same plan is running, drive the run beside it as another worker (each worker claims rollout groups) instead of refusing or waiting for its lock.")
	fs.BoolVar(&c.allowUnsigned, "allow-unsigned", false, "Apply a plan that is neither signed by a trusted key nor checked with -expect-sha256 (needed outside a terminal). Its checksum only detects corruption.")
	fs.BoolVar(&c.Rerun, "rerun", false, "Run a failed run of this plan again: what finished is kept, what failed or did not start is applied again.")
	c.habitFlags(fs)
	return fs
}

func (c *applyCommand) Run(ctx context.Context, args []string) int {
	rest, code, ok := c.operands(c, args, 1, 1, "takes one plan file, got %d arguments")
	if !ok {
		return code
	}
	c.name = "apply"
	name := rest[0]
	trust, code, ok := c.trust(c.Meta)
	if !ok {
		return code
	}
	type read struct {
		f       *run.File
		p       *plan.Plan
		warning string
		err     error
	}
	rd, ok := untilDone(ctx, func() (r read) {
		r.f, r.p, r.warning, r.err = run.ReadTrusted(name, trust)
		return r
	})
	if !ok {
		return c.interrupted("apply")
	}
	if rd.err != nil {
		return c.failErr(rd.err)
	}
	if rd.warning != "" {
		// A person at a terminal applies the file they have: say what
		// was not checked.
		fmt.Fprintf(c.Stderr, "Warning: %s\n", rd.warning)
	}
	// The commands printed to resume are the ones that work again: with
	// the same trust option (trusted keys come from the environment).
	c.vouched(trust, rd.f.SHA256)
	c.planPath = name
	if c.resumeFlag != "" {
		c.planPath = c.resumeFlag + " " + name
	}
	r, err := run.Open(ctx, rd.f, rd.p, c.options(c.Meta))
	if err != nil {
		return c.failErr(err)
	}
	var control func(*executor.Executor) error
	if c.Rerun {
		control = func(e *executor.Executor) error { return e.Rerun(ctx) }
	}
	return c.drive(ctx, c.Meta, r, control)
}
