package executor

import (
	"fmt"
	"time"
)

// A BMC task that stops moving (a flash frozen at 42 %) is said, not just
// polled on: once its percent has not moved for stallAfter on the run's
// clock, the worker following it sends a step_stalled event (the task, its
// percent, since when), once per stall; it says it again if the task moves
// and stops again. Nothing else changes: the provider's or the step's own
// timeout still decides when the task has failed.

// stallAfter is how long a task's percent may stay still before it is
// called stalled.
const stallAfter = 10 * time.Minute

// stall follows one task's percent (worker side).
type stall struct {
	percent int
	since   time.Time
	noted   bool
}

// see takes a poll's percent at now and reports whether the task has just
// been still for stallAfter. An unknown percent (-1) says nothing.
func (s *stall) see(percent int, now time.Time) bool {
	if percent < 0 {
		return false
	}
	if s.since.IsZero() || percent != s.percent {
		s.percent, s.since, s.noted = percent, now, false
		return false
	}
	if s.noted || now.Sub(s.since) < stallAfter {
		return false
	}
	s.noted = true
	return true
}

// stalledMsg is the progress message a worker sends for a stalled task.
func (s *stall) msg(o *opRun, uri string, now time.Time) msg {
	since := s.since
	return msg{o: o, prog: true, percent: s.percent, stalledSince: &since, stalledTask: uri, progMsg: fmt.Sprintf(
		"task %s has stayed at %d%% since %s (%s); still polling it", uri, s.percent, since.UTC().Format(time.RFC3339), now.Sub(since).Round(time.Second))}
}

// stalledEvent is the event of a stalled task (scheduler side).
func (r *runner) stalledEvent(m msg) {
	p := m.percent
	r.event(Event{Type: "step_stalled", Server: m.o.sv.id, Op: m.o.op, StepKind: opLabel(m.o), TaskURI: m.stalledTask,
		Percent: &p, Since: m.stalledSince, Message: m.progMsg})
}
