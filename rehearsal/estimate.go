package rehearsal

import (
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// Learner is what a rehearsal takes estimates learned from earlier runs
// from: executor/history's Estimates (the same table plan learns from).
type Learner interface {
	Lookup(k plan.EstimateKey) (plan.Learned, bool)
}

// Reestimate gives every step of p the estimate learned for its class,
// where l has one, as plan does (the median, capped by the step's
// timeout), so that a plan made before the runs it could learn from is
// rehearsed with what steps like its own took since. It changes p in
// memory only and returns how many steps it re-estimated.
func Reestimate(p *plan.Plan, l Learner) int {
	n := 0
	for i := range p.Servers {
		s := &p.Servers[i]
		for j := range s.Steps {
			learned, ok := l.Lookup(plan.KeyOf(s.Identity, s.Steps, j))
			if !ok {
				continue
			}
			st := &s.Steps[j]
			d := time.Duration(learned.Median)
			if t := time.Duration(st.Timeout); t > 0 && t < d {
				d = t
			}
			st.Estimate, st.Learned = plan.Duration(d), &learned
			n++
		}
	}
	return n
}
