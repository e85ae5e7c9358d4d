package sim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"time"
)

// timeline is one BMC's simulated time: what is scheduled to happen on it
// (a boot ending, a task finishing, the BMC coming back) and the jitter of
// its operations' durations. Its BMC's mu is held for every method.
type timeline struct {
	fleet   *Fleet
	name    string              // the BMC's, seeding its jitter
	events  []event             // sorted by at
	jitterN [jitterKinds]uint32 // operations of each kind so far (Timings.Jitter)
}

type event struct {
	at time.Time
	fn func(at time.Time)
}

// at schedules fn at time t. Its BMC's mu is held.
func (c *timeline) at(t time.Time, fn func(at time.Time)) {
	i := sort.Search(len(c.events), func(i int) bool { return c.events[i].at.After(t) })
	c.events = append(c.events, event{})
	copy(c.events[i+1:], c.events[i:])
	c.events[i] = event{at: t, fn: fn}
}

// advance runs every event due by now, in time order. Events see their own
// time, so chained events stay on the simulated timeline however late the
// request that triggers them arrives. Its BMC's mu is held.
func (c *timeline) advance(now time.Time) {
	for len(c.events) > 0 && !c.events[0].at.After(now) {
		ev := c.events[0]
		c.events = c.events[1:]
		ev.fn(ev.at)
	}
	if len(c.events) == 0 {
		c.events = nil
	}
}

func (c *timeline) after(t time.Time, d time.Duration) time.Time { return t.Add(c.fleet.scale(d)) }

// Operations whose durations Timings.Jitter spreads.
const (
	jitterBoot = iota
	jitterShutdown
	jitterFlash
	jitterBMCReset
	jitterInstall
	jitterKinds
)

// jittered returns d, the timing of operation kind, spread by
// Timings.Jitter for the BMC's next operation of that kind. Its BMC's mu is held.
func (c *timeline) jittered(kind int, d time.Duration) time.Duration {
	j := c.fleet.timings.Jitter
	if j == 0 {
		return d
	}
	n := c.jitterN[kind]
	c.jitterN[kind]++
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%d", c.name, kind, n)
	u := rand.New(rand.NewPCG(c.fleet.timings.JitterSeed, h.Sum64())).Float64()
	return time.Duration(float64(d) * (1 + j*(2*u-1)))
}
