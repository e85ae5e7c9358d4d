package applyview

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal"
)

// StatusTimeline is a run's timeline for its status page, on the
// calendar: what its journal records, then, after a line at now, the
// remainder a rehearsal expects, taking the run over from its journal
// (rehearsal.Options.Journal: the plan's own executor resumes it on a
// simulated copy of the fleet whose servers are what the journal's
// finished steps made them), gates and pauses answered approveAfter after
// they are reached. A run that is over has no remainder. Where the
// rehearsal cannot take the run over, the timeline is the plan's estimate
// coloured by the run's state, and its notes say why.
func StatusTimeline(ctx context.Context, p *plan.Plan, sha string, st *executor.Status, journal []executor.Entry, now time.Time, approveAfter time.Duration) planview.Timeline {
	var err error
	var res *rehearsal.Result
	if len(journal) == 0 {
		err = errors.New("its journal has no record yet")
	} else {
		res, err = rehearsal.Run(ctx, rehearsal.Options{Plan: p, PlanSHA256: sha, Start: now, ApproveAfter: approveAfter, Journal: journal})
	}
	if err != nil {
		tl := planview.PlanTimeline(p)
		tl.Title = "Timeline (estimated, from plan time; bars coloured by the run's state)"
		why := err.Error()
		tl.Notes = []string{"This timeline is the plan's estimate coloured by the run's state, not what happened and its rehearsed remainder, because " +
			strings.ToLower(why[:1]) + strings.TrimSuffix(why[1:], ".") + "."}
		return tl
	}
	over := st.Run.State.Name.Terminal()
	if over {
		tl := planview.RehearsedTimeline(p, res.Schedule)
		tl.Notes = planview.RemainderNotes(res.Schedule, res.From, over)
		tl.Title = "Timeline (what happened, on the calendar)"
		return tl
	}
	tl := planview.RemainderTimeline(p, res.Schedule, res.From)
	tl.Notes = planview.RemainderNotes(res.Schedule, res.From, over)
	tl.Title = "Timeline (what happened, then the rehearsed remainder, on the calendar)"
	return tl
}
