// Package executortest is a kit for testing code that drives the executor:
// a fake clock, a scripted fake provider, fake hooks, a plan builder and a
// backend wrapper that simulates crashes. Nothing in it sleeps.
package executortest

import (
	"time"

	"github.com/rackform/rackform/internal/vclock"
)

// Clock is a fake clock. Timers fire when the clock is advanced to or past
// them; the executor skips it forward (SkipTo) when it would only wait.
// It is internal/vclock's clock without its actors: it is not an
// executor.Virtual, so the executor runs on it as on the wall clock.
type Clock struct{ v *vclock.Clock }

// NewClock starts at t.
func NewClock(t time.Time) *Clock { return &Clock{vclock.New(t)} }

// Now implements executor.Clock.
func (c *Clock) Now() time.Time { return c.v.Now() }

// At implements executor.Clock.
func (c *Clock) At(t time.Time) <-chan time.Time { return c.v.At(t) }

// SkipTo implements executor.Skipper.
func (c *Clock) SkipTo(t time.Time) { c.v.AdvanceTo(t) }

// Advance moves the clock forward by d, firing due timers.
func (c *Clock) Advance(d time.Duration) { c.v.AdvanceTo(c.v.Now().Add(d)) }
