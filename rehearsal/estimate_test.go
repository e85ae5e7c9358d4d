package rehearsal

import (
	"testing"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// learnedTable is a Learner that knows one class: updates, on any server.
type learnedTable map[plan.StepKind]time.Duration

func (l learnedTable) Lookup(k plan.EstimateKey) (plan.Learned, bool) {
	d, ok := l[k.Kind]
	if !ok {
		return plan.Learned{}, false
	}
	return plan.Learned{Key: plan.EstimateKey{Kind: k.Kind}, Samples: 5, Runs: 1, Median: plan.Duration(d), P90: plan.Duration(d)}, true
}

// Rehearsed with what updates took in earlier runs (25 minutes, not the
// plan's 10), each server's path grows by 15 minutes, and so does the
// rehearsed canary cluster (two racks one after the other); a learned
// duration above a step's timeout is capped by it, as plan caps it.
func TestReestimateFromEarlierRuns(t *testing.T) {
	p := fleetPlan()
	before := bar(t, rehearse(t, Options{Plan: fleetPlan()}).Schedule, "cluster.canary")
	n := Reestimate(p, learnedTable{plan.StepUpdate: 25 * time.Minute})
	updates := 0
	for _, s := range p.Servers {
		for _, st := range s.Steps {
			if st.Kind == plan.StepUpdate {
				updates++
				if time.Duration(st.Estimate) != 25*time.Minute || st.Learned == nil {
					t.Errorf("%s: update estimated %v (learned %v)", s.Address, st.Estimate, st.Learned)
				}
			}
		}
	}
	if n != updates || n == 0 {
		t.Errorf("re-estimated %d steps, want the %d updates", n, updates)
	}
	after := bar(t, rehearse(t, Options{Plan: p}).Schedule, "cluster.canary")
	if got, want := after.End.Sub(after.Start)-before.End.Sub(before.Start), 2*15*time.Minute; got != want {
		t.Errorf("the canary cluster grew by %v, want %v (two racks, 15 minutes more each)", got, want)
	}

	q := fleetPlan()
	Reestimate(q, learnedTable{plan.StepWaitReady: 3 * time.Hour})
	for _, s := range q.Servers {
		for _, st := range s.Steps {
			if st.Kind == plan.StepWaitReady && time.Duration(st.Estimate) != time.Hour {
				t.Errorf("%s: wait_ready estimated %v, want its 1h timeout", s.Address, st.Estimate)
			}
		}
	}
}
