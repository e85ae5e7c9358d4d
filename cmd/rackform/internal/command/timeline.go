package command

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal"
	"github.com/rackform/rackform/rehearsal/schedule"
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

// rehearsedTimeline rehearses p without faults from start and lays the
// schedule out for the page (s is the schedule). Where a rehearsal cannot
// run (a plan of a format apply no longer runs, a rehearsal that fails),
// the timeline is the plan's estimate, its notes say so and why, and s is
// nil.
func rehearsedTimeline(ctx context.Context, p *plan.Plan, sha string, start time.Time, approveAfter time.Duration) (tl planview.Timeline, s *schedule.Schedule) {
	why := ""
	if err := plan.Applicable(p); err != nil {
		why = err.Error()
	} else {
		res, err := rehearsal.Run(ctx, rehearsal.Options{Plan: p, PlanSHA256: sha, Start: start, ApproveAfter: approveAfter})
		if err == nil {
			res.Schedule.Outcome.ExitCode = runExitCode(res.Outcome)
			return rehearsalTimeline(p, res.Schedule), res.Schedule
		}
		why = "rehearsing it failed: " + err.Error()
	}
	return estimateTimeline(p, why), nil
}

// rehearsalTimeline is a rehearsal's timeline with its title.
func rehearsalTimeline(p *plan.Plan, s *schedule.Schedule) planview.Timeline {
	tl := planview.RehearsedTimeline(p, s)
	tl.Title = "Timeline (rehearsed from " + s.Start.UTC().Format("Mon 02 Jan 2006 15:04 UTC") + ", on the calendar)"
	return tl
}

// windowNotes say on the page's grid which clusters' work runs past
// their maintenance window in the rehearsal, and under its headline the
// rehearsed total against the plan's estimate.
func windowNotes(s *schedule.Schedule, cells *planview.Cells) {
	if s == nil {
		return
	}
	notes := map[string]string{}
	var misfits []string
	for _, w := range s.Windows {
		if w.Fits {
			continue
		}
		if len(w.Windows) == 0 {
			notes[w.Name] = "rehearsed: " + strings.TrimSuffix(w.Miss, ".")
			continue
		}
		misfits = append(misfits, w.Name)
		if w.Overrun > 0 {
			notes[w.Name] = "rehearsed: does not fit its maintenance window (its work runs " + w.Overrun.Human() + " past the window's close)"
		} else {
			notes[w.Name] = "rehearsed: does not fit its maintenance window: " + strings.TrimSuffix(w.Miss, ".")
		}
	}
	notice := fmt.Sprintf("Rehearsed, the rollout takes %s (%s → %s UTC) where the plan estimates %s.", s.Total.Human(),
		s.Start.UTC().Format("Mon 02 Jan 15:04"), s.End.UTC().Format("Mon 02 Jan 15:04"), s.PlanEstimate.Human())
	switch n := len(misfits); {
	case n == 0:
	case n == 1:
		notice += " Cluster " + misfits[0] + " does not fit its maintenance window."
	case n <= 4:
		notice += " Clusters " + strings.Join(misfits[:n-1], ", ") + " and " + misfits[n-1] + " do not fit their maintenance windows."
	default:
		notice += fmt.Sprintf(" %d clusters (%s and %d more) do not fit their maintenance windows.", n, strings.Join(misfits[:3], ", "), n-3)
	}
	cells.Notices = append(cells.Notices, notice)
	prev := cells.ClusterNote
	cells.ClusterNote = func(name string) string {
		if prev != nil {
			if n := prev(name); n != "" {
				return n
			}
		}
		return notes[name]
	}
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
