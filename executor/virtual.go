package executor

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// How the runner waits, on the wall clock or a virtual one (Virtual).
// Workers wait for time with sleep and hand messages to the scheduler with
// send; the scheduler waits with virtualPass instead of its select when the
// clock is virtual.

// virtualLoop is how the runner's loop waits when the clock is virtual:
// it moves the clock, handles the parked workers' messages in a canonical
// order, and drains them when the run stops.
type virtualLoop struct{ r *runner }

// errRunOver answers a task hand-off that arrives after the run stopped:
// the provider call gives up, and the journal still shows the step in
// flight, so the next apply resumes it.
var errRunOver = errors.New("the apply stopped before the task could be journaled")

// sleep waits on the run's clock until t, or until ctx ends (then it
// returns ctx's error).
func (wk *worker) sleep(ctx context.Context, t time.Time) error {
	if wk.r.v != nil {
		return wk.r.v.Sleep(ctx, t)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wk.r.o.Clock.At(t):
		return nil
	}
}

// send hands a worker's message to the scheduler; it reports false when
// ctx ended first. On a virtual clock the worker parks, and the send
// always goes through: the scheduler receives every parked message, also
// after the run stopped (drain), so the clock's count of parked actors
// stays right for the next run on it.
func (wk *worker) send(ctx context.Context, m msg) bool {
	if wk.r.v != nil {
		wk.r.v.Park()
		wk.r.msgs <- m
		return true
	}
	select {
	case wk.r.msgs <- m:
		return true
	case <-ctx.Done():
		return false
	}
}

// virtualPass is one wait of the scheduler on a virtual clock: once no
// worker runs, it handles the messages of the parked ones in a canonical
// order, so that the journal and the events are the same on every run; when
// none is parked, it moves the clock to the earliest of what a worker
// sleeps until and wake.
func (vl *virtualLoop) virtualPass(ctx context.Context, wake time.Time) {
	v := vl.r.v
	v.Settle()
	if n := v.Parked(); n > 0 {
		v.Unpark(n)
		batch := make([]msg, n)
		for i := range batch {
			batch[i] = <-vl.r.msgs
		}
		slices.SortFunc(batch, canonical)
		for _, m := range batch {
			if vl.r.err != nil {
				if m.ack != nil {
					m.ack <- vl.r.err
				}
				continue
			}
			vl.r.handle(ctx, m)
		}
		return
	}
	if next, ok := v.Next(); ok && next.Before(wake) {
		wake = next
	}
	v.AdvanceTo(wake)
}

// virtualWake is when the scheduler on a virtual clock must look again,
// given wake (now plus the poll interval, or an earlier deadline). The
// poll interval is how often a live run reads what others write (control
// records, other workers' claims); on a virtual clock with no other worker
// nothing outside the run writes while it runs, and everything it waits
// for is a worker's sleep, a deadline or an operation's (vclock.Next,
// r.deadline, the op table), so it moves straight to the earliest of
// those: a rehearsal costs a pass per event, not one per simulated poll
// interval (a week of slow steps was 600,000 idle passes). With nothing
// timed at all it keeps the poll interval.
func (vl *virtualLoop) virtualWake(now, wake time.Time) time.Time {
	if vl.r.w != nil || !wake.Equal(now.Add(vl.r.o.PollInterval)) {
		return wake // another worker may write, or something is due sooner
	}
	none := now.Add(100 * 365 * 24 * time.Hour)
	next := none
	if t, ok := vl.r.v.Next(); ok {
		next = t
	}
	if !vl.r.deadline.IsZero() && vl.r.deadline.Before(next) {
		next = vl.r.deadline
	}
	next = vl.r.ops.wake(next)
	if next.Equal(none) || next.Before(wake) {
		return wake
	}
	return next
}

// canonical orders worker messages by the server's position in the plan,
// then by op. A worker has one message at a time, and a server one worker.
func canonical(a, b msg) int {
	return cmp.Or(a.o.sv.index-b.o.sv.index, strings.Compare(a.o.op, b.o.op))
}

// drain ends the workers still running when the run stops on a virtual
// clock: their operations are cancelled (their sleeps end), and what they
// park is received and dropped; a task hand-off is refused, so its step
// stays in flight in the journal and the next apply resumes it.
func (vl *virtualLoop) drain() {
	for o := range vl.r.ops.all() {
		if o.cancel != nil {
			o.cancel()
		}
	}
	for {
		vl.r.v.Settle()
		n := vl.r.v.Parked()
		if n == 0 {
			return
		}
		vl.r.v.Unpark(n)
		for range n {
			if m := <-vl.r.msgs; m.ack != nil {
				m.ack <- errRunOver
			}
		}
	}
}
