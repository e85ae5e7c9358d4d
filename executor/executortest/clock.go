// Package executortest is a kit for testing code that drives the executor:
// a fake clock, a scripted fake provider, fake hooks, a plan builder and a
// backend wrapper that simulates crashes. Nothing in it sleeps.
package executortest

import (
	"sync"
	"time"
)

// Clock is a fake clock. Timers fire when the clock is advanced to or past
// them; the executor skips it forward (SkipTo) when it would only wait.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []timer
}

type timer struct {
	at time.Time
	ch chan time.Time
}

// NewClock starts at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now implements executor.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At implements executor.Clock.
func (c *Clock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, timer{t, ch})
	return ch
}

// SkipTo implements executor.Skipper.
func (c *Clock) SkipTo(t time.Time) { c.set(t) }

// Advance moves the clock forward by d, firing due timers.
func (c *Clock) Advance(d time.Duration) { c.set(c.Now().Add(d)) }

func (c *Clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if !tm.at.After(c.now) {
			tm.ch <- c.now
		} else {
			kept = append(kept, tm)
		}
	}
	c.timers = kept
}
