package rehearseview

import (
	"fmt"
	"io"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/uijson"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// JSON is `rackform rehearse -json`: the machine-readable UI's JSON lines
// (package uijson), as `apply -json` writes them — a version line, then
// every event of the executor with its rehearsed time as "@timestamp"
// (in the same messages apply uses) — and last one "schedule" line with
// the whole schedule. Nothing in it reads the wall clock, so the same
// plan, scenario, seed and start give the same bytes.
type JSON struct {
	w      *uijson.Writer
	events *applyview.JSON
}

// NewJSON writes to w; start stamps the version line.
func NewJSON(w io.Writer, start time.Time) *JSON {
	u := uijson.New(w)
	u.Now = func() time.Time { return start }
	return &JSON{w: u, events: applyview.NewJSON(w)}
}

// Version writes the first line.
func (j *JSON) Version(rackform string) { _ = j.w.Version(rackform) }

// Event implements executor.Sink: apply's message for the event.
func (j *JSON) Event(e executor.Event) { j.events.Event(e) }

// Schedule writes the last line: the schedule under "schedule".
func (j *JSON) Schedule(s *schedule.Schedule) error {
	msg := fmt.Sprintf("Rehearsal %s after %s (the plan estimates %s, its critical path is %s)", s.Outcome.Status, s.Total.Human(), s.PlanEstimate.Human(), s.CriticalPath.Human())
	for _, w := range s.Windows {
		if !w.Fits {
			msg += "; " + w.Name + " does not fit its maintenance window"
		}
	}
	return j.w.Write(uijson.TypeSchedule, applyview.OutcomeLevel(s.Outcome.Status), msg, s.End, struct {
		Schedule *schedule.Schedule `json:"schedule"`
	}{s})
}
