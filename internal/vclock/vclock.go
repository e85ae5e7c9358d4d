// Package vclock is a virtual clock for running real concurrent code on
// simulated time: a rehearsal runs apply's executor against a simulated
// fleet, where hours of waits, tasks and windows pass in milliseconds.
//
// Time moves only when nothing runs. The code under the clock registers
// every goroutine that takes part (an actor): Start before it begins, Done
// when it ends. An actor that waits for time calls Sleep; one that hands a
// message to the coordinator (the executor's scheduler) calls Park just
// before the send, and the coordinator, about to receive it, calls Unpark
// on its behalf. The coordinator calls Settle, which returns once every
// actor sleeps, is parked, or has ended, and then AdvanceTo the earliest
// time anything waits for (Next). Everything that wakes an actor (a timer
// due, a cancelled context found by Settle, a received message) is
// counted on the coordinator's goroutine before the actor runs, so the
// clock can never move while an actor is about to run: the same inputs
// give the same schedule.
package vclock

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"
)

// Clock is a virtual clock. The zero value is not usable; call New.
type Clock struct {
	mu   sync.Mutex
	cond *sync.Cond
	now  time.Time
	seq  uint64
	// active counts actors that run now (not sleeping, not parked).
	active int
	parked int
	sleep  sleepers
	// timers are channel timers (At) of the coordinator: they never
	// count as actors.
	timers sleepers
}

// New returns a clock at start with no actors.
func New(start time.Time) *Clock {
	c := &Clock{now: start}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// Now returns the virtual time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At returns a channel that receives the time once the clock reaches t
// (at once when t is not after now). It is for the coordinator, which is
// not an actor: waiting on it does not let time move by itself.
func (c *Clock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.seq++
	heap.Push(&c.timers, &sleeper{at: t, seq: c.seq, ch: ch})
	return ch
}

// SkipTo moves the clock to t (never back), firing what is due; it is
// AdvanceTo under the name the executor's Skipper uses.
func (c *Clock) SkipTo(t time.Time) { c.AdvanceTo(t) }

// Start registers one more running actor. Call it before starting the
// goroutine, on the goroutine that starts it.
func (c *Clock) Start() {
	c.mu.Lock()
	c.active++
	c.mu.Unlock()
}

// Done unregisters a running actor that ends.
func (c *Clock) Done() {
	c.mu.Lock()
	c.active--
	c.check()
	c.cond.Broadcast()
	c.mu.Unlock()
}

// Sleeper is what a fake that takes virtual time needs of the clock (a
// *Clock is one): its calls come from the clock's actors (the executor's
// workers) and take their time by sleeping on it.
type Sleeper interface {
	Now() time.Time
	Sleep(ctx context.Context, t time.Time) error
}

// Sleep blocks the calling actor until the clock reaches t, or ctx ends
// (then it returns ctx's error). A t not after now returns at once.
func (c *Clock) Sleep(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if err := ctx.Err(); err != nil {
		c.mu.Unlock()
		return err
	}
	if !t.After(c.now) {
		c.mu.Unlock()
		return nil
	}
	c.seq++
	s := &sleeper{at: t, seq: c.seq, ch: make(chan time.Time, 1), ctx: ctx}
	heap.Push(&c.sleep, s)
	c.active--
	c.check()
	c.cond.Broadcast()
	c.mu.Unlock()
	select {
	case <-s.ch:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		if s.index >= 0 {
			// Not woken yet: wake ourselves. (Settle wakes a sleeper
			// whose context the coordinator cancelled before it lets
			// time move, so this path cannot race a clock advance.)
			heap.Remove(&c.sleep, s.index)
			c.active++
		}
		c.mu.Unlock()
		return ctx.Err()
	}
}

// SleepFor is Sleep until now+d.
func (c *Clock) SleepFor(ctx context.Context, d time.Duration) error {
	return c.Sleep(ctx, c.Now().Add(d))
}

// Park marks the calling actor as blocked handing a message to the
// coordinator; the coordinator calls Unpark once it has received it.
func (c *Clock) Park() {
	c.mu.Lock()
	c.active--
	c.parked++
	c.check()
	c.cond.Broadcast()
	c.mu.Unlock()
}

// Unpark counts n parked actors as running again. The coordinator calls
// it just before it receives their n messages (after Settle, Parked says
// how many wait), never after: a received actor runs at once, and must
// already count as running.
func (c *Clock) Unpark(n int) {
	c.mu.Lock()
	c.active += n
	c.parked -= n
	c.check()
	c.mu.Unlock()
}

// Parked returns how many actors are parked: after Settle, the number of
// messages the coordinator can receive without blocking for long.
func (c *Clock) Parked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parked
}

// Settle blocks until no actor runs: each sleeps, is parked or has ended.
// A sleeper whose context has ended is woken here (and counted running),
// so that cancelling an actor's context and then settling waits for it.
func (c *Clock) Settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		c.wakeCancelled()
		if c.active == 0 {
			return
		}
		c.cond.Wait()
	}
}

func (c *Clock) wakeCancelled() {
	for i := 0; i < len(c.sleep); {
		s := c.sleep[i]
		if s.ctx.Err() == nil {
			i++
			continue
		}
		heap.Remove(&c.sleep, i)
		c.active++
		// Its Sleep returns through ctx.Done; no value is needed.
		i = 0
	}
}

// Next returns the earliest time a sleeper or a timer waits for, and
// false when nothing waits.
func (c *Clock) Next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t time.Time
	ok := false
	if len(c.sleep) > 0 {
		t, ok = c.sleep[0].at, true
	}
	if len(c.timers) > 0 && (!ok || c.timers[0].at.Before(t)) {
		t, ok = c.timers[0].at, true
	}
	return t, ok
}

// Sleepers returns how many actors sleep.
func (c *Clock) Sleepers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sleep)
}

// AdvanceTo moves the clock to t (never back) and wakes, in time order
// (then in the order they began to wait), every sleeper and timer due.
// Woken sleepers count as running before AdvanceTo returns.
func (c *Clock) AdvanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	for len(c.sleep) > 0 && !c.sleep[0].at.After(c.now) {
		s := heap.Pop(&c.sleep).(*sleeper)
		c.active++
		s.ch <- c.now
	}
	for len(c.timers) > 0 && !c.timers[0].at.After(c.now) {
		s := heap.Pop(&c.timers).(*sleeper)
		s.ch <- c.now
	}
}

// check panics on a miscount: an actor that called Done, Sleep or Park
// without Start is a bug in the code under the clock, and a silent
// negative count would let time move while it runs.
func (c *Clock) check() {
	if c.active < 0 || c.parked < 0 {
		panic(fmt.Sprintf("vclock: more actors stopped than started (a missing Start or Unpark): active %d parked %d", c.active, c.parked))
	}
}

type sleeper struct {
	at    time.Time
	seq   uint64
	ch    chan time.Time
	ctx   context.Context
	index int
}

// sleepers is a min-heap by (at, seq).
type sleepers []*sleeper

func (h sleepers) Len() int { return len(h) }
func (h sleepers) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h sleepers) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *sleepers) Push(x any) {
	s := x.(*sleeper)
	s.index = len(*h)
	*h = append(*h, s)
}
func (h *sleepers) Pop() any {
	old := *h
	n := len(old)
	s := old[n-1]
	old[n-1] = nil
	s.index = -1
	*h = old[:n-1]
	return s
}
