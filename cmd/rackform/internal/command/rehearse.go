package command

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/rehearseview"
	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/history"
	"github.com/rackform/rackform/internal/version"
	"github.com/rackform/rackform/rehearsal"
)

// rehearseCommand runs a saved plan's executor on a virtual clock against
// a simulated copy of its fleet.
type rehearseCommand struct {
	*Meta
	scenario     string
	seed         uint64
	start        string
	approveAfter time.Duration
	stopAtGates  bool
	json         bool
	format       string
	detail       string
	noColor      bool
	history      stringList
}

func (c *rehearseCommand) Synopsis() string { return "Rehearse a saved plan on simulated time" }
func (c *rehearseCommand) Usage() string    { return "rackform rehearse [options] PLANFILE" }

func (c *rehearseCommand) Description() string {
	return `Runs the plan in PLANFILE exactly as apply would — the same executor,
with its order, thresholds, waits, pauses, gates, maintenance windows,
quorum guard and remediation — on a virtual clock, against a simulated
copy of the fleet the plan observed (each server's identity, inventory,
power and health), with an in-memory journal. Hours of a rollout pass in
seconds. It touches no BMC, runs no hook and writes no state; an expired
plan is rehearsed too.

Every step takes the plan's estimate of it. The schedule is put on the
calendar from -start (default: now), which is what maintenance windows are
evaluated against. It prints when every stage, group, cluster, rack or
batch, server and wait starts and ends (-detail: every server, only
racks and batches, or only clusters, by default as the plan's size makes
readable); every window wait, gate and pause;
where each threshold is met or breached, with the numbers apply prints;
which clusters do not fit their maintenance window; and the total against
the plan's estimate and its critical path. -json prints the executor's
events as apply -json does (with their rehearsed times), then the schedule
(docs/json.md). -format=html writes one self-contained page instead: the
rack grid coloured by how each server ended, and the schedule drawn on the
calendar (as rackform show -format=html draws a plan's fault-free
rehearsal), with the scenario's breaches, pauses and their numbers.

An approval gate or a pause is answered as rackform approve or rackform
continue would, -approve-after (default 0s) of rehearsed time after it is
reached; -stop-at-gates stops there instead. A breached threshold stops the
rehearsal where apply would pause: continue does not lift it.

-scenario FILE injects faults (docs/rehearsal.md, examples/scenarios):
servers that never come back, update tasks that fail or are slow, BMCs that
answer 503 or drop off, hosts going down, remediation triggers, and random
faults by step kind, drawn from -seed: the same seed gives the same
rehearsal.

Exit status: as apply's would be at the end of the rehearsal: 0 completed,
4 completed with failed servers, 3 paused (a breached threshold, a gate with
-stop-at-gates), 1 failed or error, 2 bad arguments.`
}

func (c *rehearseCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("rehearse", flag.ContinueOnError)
	fs.StringVar(&c.scenario, "scenario", "", "Inject the faults of the scenario in `FILE` (HCL, docs/rehearsal.md).")
	fs.Uint64Var(&c.seed, "seed", 1, "`SEED` of the scenario's random faults.")
	fs.StringVar(&c.start, "start", "", "Start the run at `TIME` (RFC 3339, e.g. 2026-07-06T20:00:00Z; default: now, to the minute).")
	fs.DurationVar(&c.approveAfter, "approve-after", 0, "Approve each gate and continue each pause `DURATION` of rehearsed time after it is reached.")
	fs.BoolVar(&c.stopAtGates, "stop-at-gates", false, "Stop at the first approval gate or pause instead of answering it.")
	fs.BoolVar(&c.json, "json", false, "Print the machine-readable UI: the executor's events with their rehearsed times, then the schedule (JSON lines, docs/json.md); same as -format=json.")
	fs.StringVar(&c.format, "format", "text", "Output `FORMAT`: text, json, or html (one self-contained page: the rack grid and the rehearsed timeline).")
	fs.StringVar(&c.detail, "detail", "", "How far down the text goes: `LEVEL` servers (every server), racks (racks and batches; a server only when it did not complete) or clusters (a rack only when it did not complete, breached or held the run); default: servers up to 100 servers to upgrade, racks up to 100 racks and batches, clusters beyond.")
	fs.BoolVar(&c.noColor, "no-color", false, "Never colour the output (also: the NO_COLOR environment variable).")
	c.history = nil
	fs.Var(&c.history, "history", "Estimate each step from what steps like it took in the earlier runs in `DIR` (a state directory, a directory of them, or journal files beside their plans, as plan -history reads), instead of the plan's own estimate. Repeatable.")
	return fs
}

func (c *rehearseCommand) Run(ctx context.Context, args []string) int {
	rest, code, ok := c.operands(c, args, 1, 1, "takes one plan file, got %d arguments")
	if !ok {
		return code
	}
	if c.json {
		c.format = "json"
	}
	switch c.format {
	case "text", "json", "html":
	default:
		return c.usage("-format must be text, json or html, got %q", c.format)
	}
	if c.detail != "" && !slices.Contains(rehearseview.Details(), rehearseview.Detail(c.detail)) {
		return c.usage("-detail must be servers, racks or clusters, got %q", c.detail)
	}
	if c.approveAfter < 0 {
		return c.usage("-approve-after must not be negative, got %s", c.approveAfter)
	}
	start, err := parseStart(c.start)
	if err != nil {
		return c.usage("%s", err)
	}
	if start.IsZero() {
		start = time.Now().UTC().Truncate(time.Minute)
	}
	name := rest[0]
	f, p, err := run.ReadPlan(name)
	if err != nil {
		return c.fail("%s", err)
	}
	color := c.Color && !c.noColor
	if len(c.history) > 0 {
		sources, err := openArchives(c.history)
		if err != nil {
			return c.fail("%s", err)
		}
		est, err := history.Load(ctx, sources, history.Options{})
		if err != nil {
			return c.fail("reading the earlier runs: %s", err)
		}
		n := rehearsal.Reestimate(p, est)
		runs := "runs"
		if est.Runs() == 1 {
			runs = "run"
		}
		fmt.Fprintf(c.Stderr, "Note: %d steps estimated from %d earlier %s (-history); the others keep the plan's estimate.\n", n, est.Runs(), runs)
	}
	var faults *rehearsal.Faults
	if c.scenario != "" {
		// Every mistake at once: names are checked against the plan
		// even when the file has others.
		sc, diags := rehearsal.LoadScenario(c.scenario)
		if sc != nil {
			var more hcl.Diagnostics
			faults, more = sc.Resolve(rehearsal.PlanTargets(p), start)
			diags = append(diags, more...)
		}
		if len(diags) > 0 {
			c.showDiagnostics(diags, sc.Files(), color)
		}
		if diags.HasErrors() {
			return ExitError
		}
	}
	var js *rehearseview.JSON
	var sink executor.Sink
	if c.format == "json" {
		js = rehearseview.NewJSON(c.Stdout, start)
		js.Version(version.String())
		sink = js
	}
	res, err := rehearsal.Run(ctx, rehearsal.Options{Plan: p, PlanSHA256: f.SHA256, Faults: faults, Seed: c.seed,
		Start: start, ApproveAfter: c.approveAfter, StopAtGates: c.stopAtGates, Events: sink, Command: views.Canonical})
	if err != nil {
		return c.fail("rehearsing %s: %s", name, err)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(c.Stderr, "Interrupted.")
		return ExitInterrupted
	}
	res.Schedule.Outcome.ExitCode = runExitCode(res.Outcome)
	switch {
	case js != nil:
		err = js.Schedule(res.Schedule)
	case c.format == "html":
		err = rehearseview.WriteHTML(c.Stdout, p, res.Schedule)
	default:
		err = rehearseview.WriteText(c.Stdout, p, res.Schedule, color, rehearseview.Detail(c.detail))
	}
	if err != nil {
		return c.fail("writing the rehearsal: %s", err)
	}
	return runExitCode(res.Outcome)
}
