package executor

import (
	"iter"
	"maps"
	"time"
)

// opTable is the operations in flight, the one record of them: at most one
// per server, counted from the moment the scheduler decides it (the journal
// holds it back until the records announcing it are durable) until the
// scheduler has handled its result. Hooks with a deadline on the run's
// clock are timed here; with Options.Synchronous, begun operations wait
// here, in order, for the scheduler to run them itself.
type opTable struct {
	byServer map[*node]*opRun
	n        int
	timed    map[*opRun]bool
	queue    []*opRun
}

func newOpTable() *opTable {
	return &opTable{byServer: map[*node]*opRun{}, timed: map[*opRun]bool{}}
}

// add counts o in flight.
func (t *opTable) add(o *opRun) {
	t.byServer[o.sv] = o
	t.n++
}

// remove ends o: its result was handled, or it was held back unbegun.
func (t *opTable) remove(o *opRun) {
	delete(t.byServer, o.sv)
	delete(t.timed, o)
	t.n--
}

// of is sv's operation in flight, or nil.
func (t *opTable) of(sv *node) *opRun { return t.byServer[sv] }

// inflight counts the operations in flight.
func (t *opTable) inflight() int { return t.n }

// all ranges over the operations in flight, in no particular order.
func (t *opTable) all() iter.Seq[*opRun] { return maps.Values(t.byServer) }

// time gives a begun o a deadline on the run's clock (expire cancels it).
func (t *opTable) time(o *opRun, at time.Time) {
	o.deadline = at
	t.timed[o] = true
}

// expire cancels the timed operations whose deadline is not after now.
func (t *opTable) expire(now time.Time) {
	for o := range t.timed {
		if !now.Before(o.deadline) && !o.timedOut {
			o.timedOut = true
			o.cancel()
		}
	}
}

// wake is the earliest of wake and the deadlines not yet reached.
func (t *opTable) wake(wake time.Time) time.Time {
	for o := range t.timed {
		if !o.timedOut && o.deadline.Before(wake) {
			wake = o.deadline
		}
	}
	return wake
}

// enqueue holds a begun o for the scheduler to run (Synchronous).
func (t *opTable) enqueue(o *opRun) { t.queue = append(t.queue, o) }

// next takes the first held operation (Synchronous).
func (t *opTable) next() (*opRun, bool) {
	if len(t.queue) == 0 {
		return nil, false
	}
	o := t.queue[0]
	t.queue = t.queue[1:]
	return o, true
}
