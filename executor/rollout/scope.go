package rollout

import (
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// Slots is how many of a scope's n servers may be at work at once: up to
// max_unavailable (rule 7; unset or above n: all), one in a serial scope
// (rule 4).
func Slots(p *plan.Scope, n int) int {
	if p.Kind == "serial" {
		return 1
	}
	if p.MaxUnavailable <= 0 || p.MaxUnavailable > n {
		return n
	}
	return p.MaxUnavailable
}

// PausesAfter reports whether the run pauses after scope i of a phase:
// pause_after_rack pauses after every rack but the last (rule 17).
func PausesAfter(ph *plan.Phase, i int) bool {
	return ph.Scopes[i].PauseAfter && i < len(ph.Scopes)-1
}

// ScopeState is where a scope is, for the decision whether the next one
// may start.
type ScopeState int

const (
	ScopeWaiting ScopeState = iota // not started, or paused
	ScopeRunning
	ScopeCompleted
	ScopeSkipped
)

// After is a scope's wait and pause after it: which it has, and which are
// over.
type After struct {
	Wait, Pause         bool
	WaitOver, PauseOver bool
}

// Over reports whether the scope's wait and pause are over (or it has
// none).
func (a After) Over() bool { return (!a.Wait || a.WaitOver) && (!a.Pause || a.PauseOver) }

// PauseBegins reports whether a completed scope's pause begins: when the
// wait after it has ended (rules 16, 17), so continue starts the next
// scope and the wait is never cut short by a pause nor spent inside one.
func (a After) PauseBegins() bool { return a.Pause && (!a.Wait || a.WaitOver) }

// NextScopeMayStart reports whether the scope after this one may start:
// once this one is completed with its wait and pause over, or, when it has
// neither, as soon as it met its threshold (rule 13). A skipped scope lets
// the next start once its servers in flight are back (inFlight: their
// safety steps), a rack at a time.
func NextScopeMayStart(st ScopeState, inFlight int, after After, met bool) bool {
	switch st {
	case ScopeSkipped:
		return inFlight == 0
	case ScopeCompleted:
		return after.Over()
	case ScopeRunning:
		return !after.Wait && !after.Pause && met
	}
	return false
}

// WaitOver reports whether a wait that ends at until is over at now (a
// wait after a scope, rule 16, or after a stage, rule 19).
func WaitOver(until, now time.Time) bool { return !now.Before(until) }
