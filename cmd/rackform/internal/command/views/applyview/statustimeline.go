package applyview

import (
	"errors"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// StatusTimeline is a run's timeline for its status page, on the
// calendar: what its journal records, then, after a line at now, the
// remainder a rehearsal expects (rehearsed: the schedule of a rehearsal
// that took the run over from its journal at from; the status command
// runs it and hands it here, as no view runs the engine). A run that is
// over has no remainder. Where the rehearsal could not take the run over
// (why), the timeline is the plan's estimate coloured by the run's state,
// and its notes say why.
func StatusTimeline(p *plan.Plan, st *executor.Status, rehearsed *schedule.Schedule, from time.Time, why error) planview.Timeline {
	if why != nil || rehearsed == nil {
		if why == nil {
			why = errors.New("no rehearsal of the remainder was made")
		}
		tl := planview.PlanTimeline(p)
		tl.Title = "Timeline (estimated, from plan time; bars coloured by the run's state)"
		w := why.Error()
		tl.Notes = []string{"This timeline is the plan's estimate coloured by the run's state, not what happened and its rehearsed remainder, because " +
			strings.ToLower(w[:1]) + strings.TrimSuffix(w[1:], ".") + "."}
		return tl
	}
	over := st.Run.State.Name.Terminal()
	if over {
		tl := planview.RehearsedTimeline(p, rehearsed)
		tl.Notes = planview.RemainderNotes(rehearsed, from, over)
		tl.Title = "Timeline (what happened, on the calendar)"
		return tl
	}
	tl := planview.RemainderTimeline(p, rehearsed, from)
	tl.Notes = planview.RemainderNotes(rehearsed, from, over)
	tl.Title = "Timeline (what happened, then the rehearsed remainder, on the calendar)"
	return tl
}
