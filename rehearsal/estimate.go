package rehearsal

import "github.com/rackform/rackform/planner/plan"

// Learner is what a rehearsal takes estimates learned from earlier runs
// from: executor/history's Estimates (the same table plan learns from).
type Learner interface {
	Lookup(k plan.EstimateKey) (plan.Learned, bool)
}

// Reestimate gives every step of p the estimate learned for its class,
// where l has one, as plan does (the median, capped by the step's
// timeout), so that a plan made before the runs it could learn from is
// rehearsed with what steps like its own took since. It changes p in
// memory only (servers re-estimated alike share their steps again) and
// returns how many steps it re-estimated.
func Reestimate(p *plan.Plan, l Learner) int {
	n := 0
	in := plan.NewInterner()
	for i := range p.Servers {
		s := &p.Servers[i]
		steps, k := plan.Learn(s.Identity, s.Steps, l.Lookup)
		if k > 0 {
			s.Steps = in.Steps(steps)
		}
		n += k
	}
	return n
}
