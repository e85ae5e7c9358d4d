package command

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// statusCommand shows the state of the run.
type statusCommand struct {
	*Meta
	controlFlags
	json   bool
	format string
	// approveAfter is -approve-after: how the rehearsed remainder answers
	// gates and pauses; now is the clock (tests set it).
	approveAfter time.Duration
	now          func() time.Time
}

func (c *statusCommand) Synopsis() string { return "Show the state of the run" }
func (c *statusCommand) Usage() string    { return "rackform status [options]" }

func (c *statusCommand) Description() string {
	return `Shows the run of the plan the state directory applied last, replayed from
its journal: every stage, group, cluster, phase and rack or batch with its
state and counts, the servers that are not simply done or waiting (running,
failed, skipped), who holds the state lock (with several applies on one
run, apply -join, each one and the rollout groups it holds), and the
commands that move a paused or stopped run on. With -json, the whole state tree (schema "v": 1),
every server included. The first line says where the run's state is.

With -plan PLANFILE, the run of that plan wherever its state is: the state
directory the plan records (relative to the plan file), or the one its run
started in on this machine.

With -format=html, one self-contained page: the rack grid coloured by the
run's state, and a timeline on the calendar of what happened (from the
journal) and, after a line at now, the remainder as a rehearsal expects
it: the plan's own executor takes the run over from its journal on a
simulated copy of the fleet (as rackform rehearse does), gates and pauses
answered -approve-after after they are reached (at once by default), a
stopped run continued. Steps in flight now count again in full.

Exit status: 0, or 1 when there is no run to show.`
}

func (c *statusCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	c.register(fs, "Show the run of plan `FILE`, wherever its state is: the state directory the plan records (found from the plan file's directory), or the one its run started in on this machine.")
	fs.BoolVar(&c.json, "json", false, "Print the state tree as JSON.")
	fs.StringVar(&c.format, "format", "text", "Output `FORMAT`: text, json, or html (one self-contained page: the rack grid coloured by the run's state, and a timeline of what happened and the rehearsed remainder).")
	fs.DurationVar(&c.approveAfter, "approve-after", 0, "With -format=html: answer each approval gate and pause `DURATION` after it is reached in the rehearsed remainder.")
	return fs
}

func (c *statusCommand) Run(ctx context.Context, args []string) int {
	_, code, ok := c.operands(c, args, 0, 0, "takes no arguments, got %d")
	if !ok {
		return code
	}
	if c.format != "text" && c.format != "json" && c.format != "html" {
		return c.usage("-format must be text, json or html, got %q", c.format)
	}
	switch {
	case c.approveAfter < 0:
		return c.usage("-approve-after must not be negative, got %s", c.approveAfter)
	case c.approveAfter != 0 && c.format != "html":
		return c.usage("-approve-after sets the HTML page's rehearsed remainder: it needs -format=html")
	}
	run, err := c.open(ctx, c.Meta)
	if err != nil {
		return c.fail("%s", err)
	}
	defer run.Close()
	b, p, e := run.Backend, run.Plan, run.Control
	if c.format == "html" {
		now := time.Now
		if c.now != nil {
			now = c.now
		}
		entries, err := b.Read(ctx, run.SHA256, -1)
		if err != nil {
			return c.fail("reading the run's journal: %s", err)
		}
		// The rest of the run rehearsed first and its model dropped
		// before the status's is made: of 100,000 servers each is
		// hundreds of MB.
		rehearsed, from, why := rehearseRemainder(ctx, p, run.SHA256, entries, now().UTC(), c.approveAfter)
		st, err := e.Status(ctx)
		if err != nil {
			return c.fail("%s", err)
		}
		applyview.CanonicalStatus(st)
		tl := applyview.StatusTimeline(p, st, rehearsed, from, why)
		if err := applyview.WriteStatusHTML(c.Stdout, p, st, &tl); err != nil {
			return c.fail("writing the status: %s", err)
		}
		return ExitOK
	}
	st, err := e.Status(ctx)
	if err != nil {
		return c.fail("%s", err)
	}
	applyview.CanonicalStatus(st)
	var workers []executor.WorkerStatus
	if cl, ok := b.Backend.(executor.Claimer); ok {
		ws, err := cl.Workers(ctx, run.SHA256)
		if err != nil {
			return c.fail("reading the run's workers: %s", err)
		}
		if len(ws) > 1 {
			workers = ws
		}
	}
	st.Workers = workers
	if c.json || c.format == "json" {
		enc := json.NewEncoder(c.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(applyview.NewStatusJSON(st)); err != nil {
			return c.fail("writing the status: %s", err)
		}
		return ExitOK
	}
	fmt.Fprintf(c.Stdout, "state: %s\n", stateName(run.Backend))
	if err := applyview.WriteStatus(c.Stdout, p, st, &applyview.Resume{StateDir: run.Backend.Dir}); err != nil {
		return c.fail("writing the status: %s", err)
	}
	for _, s := range st.Spares {
		if s.TookOverFrom != "" {
			fmt.Fprintf(c.Stdout, "Spare of cluster %s now: %s (%s took its place as a control-plane member).\n", s.Cluster, s.Spare, s.TookOverFrom)
		} else {
			fmt.Fprintf(c.Stdout, "Spare of cluster %s: %s (takeover armed).\n", s.Cluster, s.Spare)
		}
	}
	h, err := b.LockHolder(ctx)
	var corrupt *executor.CorruptLockError
	switch {
	case err == nil:
		lease := ""
		switch {
		case h.Expired:
			lease = fmt.Sprintf("; its lease expired at %s: that apply is gone, the next apply takes over", h.LeaseExpires.UTC().Format(time.RFC3339))
		case !h.LeaseExpires.IsZero():
			lease = fmt.Sprintf("; lease renewed until %s", h.LeaseExpires.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(c.Stdout, "Locked by %s (pid %d) since %s for plan %s (lock ID %s%s).\n", h.Who, h.PID, h.Since.UTC().Format(time.RFC3339), plan.ShortSHA(h.PlanSHA256), h.ID, lease)
	case errors.As(err, &corrupt):
		fmt.Fprintf(c.Stdout, "Locked: %s.\n", views.CanonicalText(corrupt.Error()))
	}
	writeWorkers(c.Stdout, workers)
	return ExitOK
}

// writeWorkers lists the applies driving the run together (apply -join),
// each with the rollout groups it holds now; nothing for a lone apply.
func writeWorkers(w io.Writer, ws []executor.WorkerStatus) {
	if len(ws) < 2 {
		return
	}
	fmt.Fprintf(w, "Workers on this run: %d applies share its rollout groups.\n", len(ws))
	for _, x := range ws {
		groups := "no group held now"
		if len(x.Units) > 0 {
			groups = "holds " + strings.Join(x.Units, ", ")
		}
		fmt.Fprintf(w, "  %s (pid %d, worker ID %s, since %s, lease until %s): %s\n", x.Who, x.PID, x.ID,
			x.Since.UTC().Format(time.RFC3339), x.LeaseExpires.UTC().Format(time.RFC3339), groups)
	}
}

// rehearseRemainder rehearses what is left of a run: the plan's own
// executor takes the run over from its journal (rehearsal.Options.Journal)
// on a simulated copy of the fleet whose servers are what the journal's
// finished steps made them, gates and pauses answered approveAfter after
// they are reached. It returns the schedule, where the rehearsal took the
// run over, or why it could not.
func rehearseRemainder(ctx context.Context, p *plan.Plan, sha string, journal []executor.Entry, now time.Time, approveAfter time.Duration) (*schedule.Schedule, time.Time, error) {
	if len(journal) == 0 {
		return nil, time.Time{}, errors.New("its journal has no record yet")
	}
	res, err := rehearsal.Run(ctx, rehearsal.Options{Plan: p, PlanSHA256: sha, Start: now, ApproveAfter: approveAfter, Journal: journal, Command: views.Canonical})
	if err != nil {
		return nil, time.Time{}, err
	}
	return res.Schedule, res.From, nil
}
