package rollout

import (
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

func TestBreach(t *testing.T) {
	rack := &plan.Scope{Kind: "rack", Eligible: 4, Required: 3, Budget: 1, Threshold: plan.Threshold{Type: "percent", Value: 75}}
	serial := &plan.Scope{Kind: "serial", Eligible: 3, Required: 3, Threshold: plan.Threshold{Type: "count", Value: 3}}
	cases := []struct {
		name string
		p    *plan.Scope
		c    Counts
		want string
		met  bool
	}{
		{"running", rack, Counts{Eligible: 4, Succeeded: 1, Failed: 1}, "", false},
		{"met, then a straggler fails", rack, Counts{Eligible: 4, Succeeded: 3, Failed: 1}, "", true},
		{"over budget", rack, Counts{Eligible: 4, Succeeded: 1, Failed: 2}, "2 failed > budget 1 (N=4, required 3, succeeded 1)", false},
		{"cannot reach required", &plan.Scope{Eligible: 4, Required: 4, Budget: 1}, Counts{Eligible: 4, Succeeded: 2, Failed: 1}, "2 succeeded + 1 remaining < 4 required (N=4, 1 failed)", false},
		{"a skip shrinks N: percent recomputed", rack, Counts{Eligible: 2, Succeeded: 2}, "", true},
		{"a skip shrinks N: one of two is not 75%", rack, Counts{Eligible: 2, Succeeded: 1}, "", false},
		{"serial with a server down", serial, Counts{Eligible: 3, Succeeded: 1, Down: 1}, "a server of this serial scope is down; the next starts only after the previous is back healthy", false},
		{"count capped by N", serial, Counts{Eligible: 2, Succeeded: 2}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Breach(c.p, c.c); got != c.want {
				t.Errorf("Breach = %q, want %q", got, c.want)
			}
			if got := Met(c.p, c.c); got != c.met {
				t.Errorf("Met = %v, want %v", got, c.met)
			}
		})
	}
}
