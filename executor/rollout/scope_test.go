package rollout

import (
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

func TestSlots(t *testing.T) {
	cases := []struct {
		p    plan.Scope
		n    int
		want int
	}{
		{plan.Scope{Kind: "rack"}, 5, 5},
		{plan.Scope{Kind: "rack", MaxUnavailable: 2}, 5, 2},
		{plan.Scope{Kind: "rack", MaxUnavailable: 9}, 5, 5},
		{plan.Scope{Kind: "serial", MaxUnavailable: 3}, 5, 1},
	}
	for _, c := range cases {
		if got := Slots(&c.p, c.n); got != c.want {
			t.Errorf("Slots(%+v, %d) = %d, want %d", c.p, c.n, got, c.want)
		}
	}
}

func TestNextScopeMayStart(t *testing.T) {
	none := After{}
	waiting := After{Wait: true}
	waited := After{Wait: true, WaitOver: true}
	pausing := After{Wait: true, WaitOver: true, Pause: true}
	cases := []struct {
		name     string
		st       ScopeState
		inFlight int
		a        After
		met      bool
		want     bool
	}{
		{"not started", ScopeWaiting, 0, none, false, false},
		{"running, threshold met, nothing after it (rule 13)", ScopeRunning, 2, none, true, true},
		{"running, threshold not met", ScopeRunning, 2, none, false, false},
		{"running, met, with a wait after it (rule 16)", ScopeRunning, 1, waiting, true, false},
		{"completed, waiting", ScopeCompleted, 0, waiting, true, false},
		{"completed, wait over", ScopeCompleted, 0, waited, true, true},
		{"completed, paused (rule 17)", ScopeCompleted, 0, pausing, true, false},
		{"completed, continued", ScopeCompleted, 0, After{Pause: true, PauseOver: true}, true, true},
		{"skipped with a server coming back", ScopeSkipped, 1, none, false, false},
		{"skipped", ScopeSkipped, 0, waiting, false, true},
	}
	for _, c := range cases {
		if got := NextScopeMayStart(c.st, c.inFlight, c.a, c.met); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if waiting.PauseBegins() || (After{Pause: true, Wait: true}).PauseBegins() || !pausing.PauseBegins() || !(After{Pause: true}).PauseBegins() {
		t.Error("a pause begins once the wait after its scope is over, and only then (rules 16, 17)")
	}
}

func TestPausesAfter(t *testing.T) {
	ph := &plan.Phase{Scopes: []plan.Scope{{PauseAfter: true}, {}, {PauseAfter: true}}}
	for i, want := range []bool{true, false, false} {
		if got := PausesAfter(ph, i); got != want {
			t.Errorf("scope %d: %v, want %v (never after the last)", i, got, want)
		}
	}
}
