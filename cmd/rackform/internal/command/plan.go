package command

import (
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/internal/version"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers/plugin"
)

// Exit codes of plan -detailed-exitcode.
const exitChanges = 2

// planCommand observes the fleet and writes the upgrade plan.
type planCommand struct {
	*Meta
	// start and now are replaced by tests; nil means the real plugins and
	// clock.
	start run.ProviderStarter
	now   func() time.Time

	out           string
	vars          stringList
	varFiles      stringList
	targets       stringList
	excludes      stringList
	detailed      bool
	json          bool
	parallelism   int
	noColor       bool
	onUnreachable string
	holdBack      bool
	rollout       string
	notAfter      time.Duration
	history       historyFlags
	stateDir      string
}

func (c *planCommand) Synopsis() string { return "Observe the fleet and write an upgrade plan" }
func (c *planCommand) Usage() string    { return "rackform plan [options] [DIR]" }

func (c *planCommand) Description() string {
	return `Loads the configuration in DIR (default: the current directory), asks every
server's BMC for its power state, health and firmware inventory through the
provider plugins, diffs what it reports against the release, checks the
version, threshold and control-plane rules, and prints the ordered plan:
stages, groups, clusters, phases, racks and batches, servers and steps, with
every threshold, wait and pause resolved to numbers.

With -out the plan is written to FILE: a deterministic JSON document holding
the configuration's text, the non-sensitive inputs, the provider binaries'
hashes and what every server reported. It holds no secret. Its SHA-256,
printed at the end, is the plan's identity for review and apply.

When ` + EnvSigningKey + ` is set (an Ed25519 private key in PEM, or
its file's path; see "rackform keygen"), the plan is signed: apply, given
the public key in ` + EnvTrustedKeys + `, then refuses a plan that was
changed after it was signed. The plan's checksum alone detects corruption,
not tampering.

Addresses for -target and -exclude are CLUSTER, CLUSTER/RACK or
CLUSTER/RACK/SERVER; each must match at least one server.

SIGINT or SIGTERM stops plan at once, while it loads the configuration or
observes the servers (exit 130); no plan is written.

Servers that could not be observed are listed first, one line per cause.
Refused credentials, a BMC without a usable firmware inventory and a system
the server does not resolve are configuration problems: the plan fails.
Unreachable servers follow on_unreachable (skip, the default, or block),
but a plan that observed no server of a cluster fails. Every server with a
problem (an undecidable version, an image its BMC cannot take, ...) is
named at once; with -hold-back-errored those servers are held back (listed
with their problems) and the rest of the fleet is planned.

Exit status: 0 on success, 1 on errors (bad arguments too), 130 when
interrupted. With -detailed-exitcode: 0 only when every in-scope server was
observed and is at target, 1 on errors, 2 when the plan has changes or any
server was not observed, is unhealthy or is held back: a fleet that was not
seen is never "no changes".`
}

func (c *planCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	c.vars, c.varFiles, c.targets, c.excludes = nil, nil, nil, nil
	fs.StringVar(&c.out, "out", "", "Write the plan file to `FILE`.")
	fs.Var(&c.vars, "var", "Set input variable `NAME=VALUE`. Repeatable; later values win.")
	fs.Var(&c.varFiles, "var-file", "Read input variables from `FILE`. Repeatable; later files win.")
	fs.Var(&c.targets, "target", "Plan only the servers under `ADDR` (CLUSTER[/RACK[/SERVER]]). Repeatable.")
	fs.Var(&c.excludes, "exclude", "Leave out the servers under `ADDR`. Repeatable.")
	fs.BoolVar(&c.detailed, "detailed-exitcode", false, "Exit 2 when the plan has changes or servers it could not observe or held back, 0 only when every server was observed and is at target.")
	fs.BoolVar(&c.json, "json", false, "Print a JSON-lines stream (one object per line) instead of text.")
	fs.IntVar(&c.parallelism, "parallelism", 0, "Read at most `N` BMCs at once per provider (default: the provider's own limit, such as the redfish block's concurrency).")
	fs.BoolVar(&c.noColor, "no-color", false, "Never colour the output (also: the NO_COLOR environment variable).")
	fs.StringVar(&c.onUnreachable, "on-unreachable", "", "`MODE` for unreachable or unhealthy servers: skip (plan them as skipped, with a warning) or block (fail the plan). Default: each cluster's strategy on_unreachable, else skip.")
	fs.BoolVar(&c.holdBack, "hold-back-errored", false, "Plan the rest of the fleet when some servers have problems: each is held back (not upgraded) and listed with its problems, instead of failing the plan.")
	fs.StringVar(&c.rollout, "rollout", "", "Plan the rollout `NAME` when the configuration declares several.")
	fs.DurationVar(&c.notAfter, "valid-for", planner.DefaultNotAfter, "How long after it is made the plan may be applied: a `DURATION` such as 24h.")
	c.history.register(fs)
	fs.StringVar(&c.stateDir, "state-dir", state.DefaultDir, "The state `DIR` of this configuration's runs: the plan records it (relative to the plan file, so apply finds it from any working directory), and steps are estimated from the earlier runs kept there (unless the configuration keeps its state in PostgreSQL: then from there).")
	c.habitFlags(fs)
	return fs
}

func (c *planCommand) Run(ctx context.Context, args []string) int {
	rest, code, ok := c.operands(c, args, 0, 1, "takes at most one directory, got %d arguments")
	if !ok {
		// Usage errors exit 1, so -detailed-exitcode's 2 always means changes.
		if code == ExitUsage {
			return ExitError
		}
		return code
	}
	if c.onUnreachable != "" && c.onUnreachable != planner.OnUnreachableSkip && c.onUnreachable != planner.OnUnreachableBlock {
		fmt.Fprintf(c.Stderr, "Error: -on-unreachable must be %q or %q, got %q\n", planner.OnUnreachableSkip, planner.OnUnreachableBlock, c.onUnreachable)
		return ExitError
	}
	if c.parallelism < 0 {
		fmt.Fprintf(c.Stderr, "Error: -parallelism must be 1 or more (0: the provider's own limit), got %d\n", c.parallelism)
		return ExitError
	}
	if c.notAfter <= 0 {
		fmt.Fprintf(c.Stderr, "Error: -valid-for must be a positive duration such as 24h, got %s\n", c.notAfter)
		return ExitError
	}
	// A signing key that cannot be used is found before any BMC is asked.
	key, err := signingKey(c.Getenv)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s\n", err)
		return ExitError
	}
	path := "."
	if len(rest) == 1 {
		path = rest[0]
	}
	color := c.Color && !c.noColor
	var stream *planview.Stream
	if c.json {
		stream = planview.NewStream(c.Stdout)
		if err := stream.Version(version.String()); err != nil {
			return c.writeFailed(err)
		}
	}

	loader := config.NewLoader(config.LoadOptions{Vars: c.vars, VarFiles: withAutoVarFiles(path, c.varFiles), Getenv: c.Getenv})
	type loaded struct {
		cfg   *config.Config
		diags hcl.Diagnostics
	}
	l, ok := untilDone(ctx, func() loaded {
		cfg, diags := loader.Load(path)
		return loaded{cfg, diags}
	})
	if !ok {
		return c.interrupted("plan")
	}
	cfg, diags := l.cfg, l.diags
	report := func(d hcl.Diagnostics) bool {
		if len(d) == 0 {
			return true
		}
		if stream != nil {
			return stream.Diagnostics(views.NewDiagnostics(d, loader.Files())) == nil
		}
		c.showDiagnostics(d, loader.Files(), color)
		return true
	}
	if diags.HasErrors() {
		report(diags)
		return ExitError
	}
	// Estimates learned from earlier runs; an archive that cannot be read
	// is found before any BMC is asked.
	c.history.stateDir = c.stateDir
	estimates, err := c.learnedEstimates(ctx, cfg, c.history)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s\n", err)
		return ExitError
	}
	if ctx.Err() != nil {
		return c.interrupted("plan")
	}

	start := c.start
	if start == nil {
		start = pluginStarter(func() (*plugin.Lock, error) {
			return plugin.LoadLock(filepath.Join(cfg.Dir, plugin.LockFile))
		}, c.Getenv, c.Stderr)
	}
	running := &run.Providers{}
	// With credentials missing the planner refuses before observing; no
	// plugin needs to start for that.
	if len(cfg.MissingEnv) == 0 {
		var pd hcl.Diagnostics
		running, pd = run.StartProviders(ctx, cfg, start)
		diags = append(diags, pd...)
	}
	defer running.Close()
	if ctx.Err() != nil {
		return c.interrupted("plan")
	}
	if diags.HasErrors() {
		report(diags)
		return ExitError
	}

	now := time.Now
	if c.now != nil {
		now = c.now
	}
	p, pd := planner.Plan(ctx, cfg, planner.Options{
		Providers:       running.ByName,
		Observed:        running.Close,
		ProviderInfo:    running.Info,
		Now:             now(),
		RackformVersion: version.String(),
		Targets:         c.targets,
		Excludes:        c.excludes,
		Rollout:         c.rollout,
		Parallelism:     c.parallelism,
		NotAfter:        c.notAfter,
		OnUnreachable:   c.onUnreachable,
		HoldBackErrored: c.holdBack,
		Estimates:       estimates,
	})
	if ctx.Err() != nil {
		// Observing was cut short: nothing is written.
		return c.interrupted("plan")
	}
	diags = append(diags, pd...)
	if !report(diags) {
		return c.writeFailed(fmt.Errorf("writing diagnostics"))
	}
	if diags.HasErrors() || p == nil {
		return ExitError
	}
	// Where the run will keep its state (format 1.5): see run.PlanState.
	st, note, err := run.PlanState(cfg.Backend, c.out, c.stateDir)
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s\n", err)
		return ExitError
	}
	if note != "" {
		fmt.Fprintf(c.Stderr, "Note: %s\n", note)
	}
	p.State = st
	var file []byte
	if key != nil {
		file, err = plan.EncodeSigned(p, key)
		if err == nil {
			p.SignedBy = plan.Fingerprint(key.Public().(ed25519.PublicKey))
		}
	} else {
		file, err = plan.Encode(p)
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "Error: %s\n", err)
		return ExitError
	}
	sha := plan.SHA256(file)
	if c.out != "" {
		// The plan holds no secret, so it may be read by reviewers and CI.
		if err := os.WriteFile(c.out, file, 0o644); err != nil {
			fmt.Fprintf(c.Stderr, "Error: writing the plan file: %s\n", err)
			return ExitError
		}
	}
	if stream != nil {
		err = stream.Plan(p)
		if err == nil {
			err = stream.PlanFile(c.out, sha, p.SignedBy)
		}
	} else {
		err = c.writeText(p, sha, color)
	}
	if err != nil {
		return c.writeFailed(err)
	}
	if c.detailed && !settled(p) {
		return exitChanges
	}
	return ExitOK
}

// settled reports whether the plan is "no changes": nothing to upgrade and
// every in-scope server observed and at target (or left out on purpose).
// A server not observed, unhealthy or held back is not known to be at
// target, so the plan is never "no changes" with one.
func settled(p *plan.Plan) bool {
	if p.Summary.Upgrade > 0 {
		return false
	}
	for i := range p.Servers {
		if !p.Servers[i].Settled() {
			return false
		}
	}
	return true
}

func (c *planCommand) writeText(p *plan.Plan, sha string, color bool) error {
	if err := planview.WriteText(c.Stdout, p, color); err != nil {
		return err
	}
	signed := ""
	if p.SignedBy != "" {
		signed = fmt.Sprintf("Signed by %s (%s)\n", p.SignedBy, EnvSigningKey)
	}
	if c.out != "" {
		// Only a written plan can be shown: the diagnostics above name
		// servers failing alike on one line.
		each := ""
		if p.Summary.NotObserved+p.Summary.HeldBack > 0 {
			each = fmt.Sprintf("rackform show %s lists every server not observed or held back with its own message.\n", c.out)
		}
		_, err := fmt.Fprintf(c.Stdout, "\nSaved the plan to %s\nPlan SHA-256: %s\n%s%sTo apply exactly this plan: rackform apply -expect-sha256 %s %s\n", c.out, sha, signed, each, sha, c.out)
		return err
	}
	_, err := fmt.Fprintf(c.Stdout, "\nPlan SHA-256: %s\nThe plan was not saved; run plan with -out FILE to apply exactly this plan.\n", sha)
	return err
}

func (c *planCommand) writeFailed(err error) int {
	fmt.Fprintf(c.Stderr, "Error: writing the plan: %s\n", err)
	return ExitError
}
