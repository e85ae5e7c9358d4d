package command

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal"
)

// The HTML pages' timeline (show, status and rehearse -format=html) is a
// rehearsal of the plan: its own executor on a virtual clock, so that
// bars start when apply would start them. This file holds what the three
// commands share.

// timelineFlags are show's options for the rehearsed timeline.
type timelineFlags struct {
	start        string
	approveAfter time.Duration
}

func (f *timelineFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.start, "start", "", "With -format=html: rehearse the timeline from `TIME` (RFC 3339, e.g. 2026-07-06T20:00:00Z; default: when the plan was made).")
	fs.DurationVar(&f.approveAfter, "approve-after", 0, "With -format=html: answer each approval gate and pause `DURATION` after it is reached in the rehearsed timeline.")
}

// parseStart reads -start; zero when it is not set.
func parseStart(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("-start %q is not an RFC 3339 time (e.g. 2026-07-06T20:00:00Z)", s)
	}
	return t.UTC(), nil
}

// rehearsedCells rehearses p without faults from start and sets cells to
// draw it (planview.Cells.Rehearse). Where a rehearsal cannot run (a plan
// of a format apply no longer runs, a rehearsal that fails), the timeline
// is the plan's estimate, and its notes say so and why.
func rehearsedCells(ctx context.Context, p *plan.Plan, sha string, start time.Time, approveAfter time.Duration, cells *planview.Cells) {
	why := ""
	if err := plan.Applicable(p); err != nil {
		why = err.Error()
	} else {
		res, err := rehearsal.Run(ctx, rehearsal.Options{Plan: p, PlanSHA256: sha, Start: start, ApproveAfter: approveAfter, Command: views.Canonical})
		if err == nil {
			res.Schedule.Outcome.ExitCode = runExitCode(res.Outcome)
			cells.Rehearse(p, res.Schedule)
			return
		}
		why = "rehearsing it failed: " + err.Error()
	}
	tl := estimateTimeline(p, why)
	cells.Timeline = &tl
}

// estimateTimeline is the plan's estimate with a note saying why it is
// not a rehearsal.
func estimateTimeline(p *plan.Plan, why string) planview.Timeline {
	tl := planview.PlanTimeline(p)
	tl.Title = "Timeline (estimated, from plan time: not rehearsed)"
	tl.Notes = []string{"This timeline is the plan's estimate, not a rehearsal, because " + strings.TrimSuffix(lowerFirst(why), ".") +
		". The estimate leaves out waiting for maintenance windows, approval gates and pauses: its bars may lie where a cluster's window is closed."}
	return tl
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
