package planner

import (
	"math"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Estimator gives step durations learned from earlier runs
// (executor/history.Estimates, handed in by the CLI): the planner uses
// them instead of its fixed typical durations (steps.go). The planner
// never reads a journal itself.
type Estimator interface {
	// Lookup returns the learned estimate for a step of class k, or of the
	// first coarser class that has one (model → vendor → any server);
	// false keeps the default.
	Lookup(k plan.EstimateKey) (plan.Learned, bool)
	// Runs is how many earlier runs the estimates come from.
	Runs() int
}

// learn gives each of a server's steps the learned estimate of its class,
// where there is one: the median, capped by the step's timeout like the
// defaults. id is who the server's BMC says it is.
func learn(est Estimator, id providers.Identity, steps []plan.Step) []plan.Step {
	if est == nil {
		return steps
	}
	steps, _ = plan.Learn(id, steps, est.Lookup)
	return steps
}

// history is what the plan says of its learned estimates: the runs read
// and each learned estimate its steps use, in the order first used.
func history(est Estimator, servers []plan.Server) *plan.History {
	if est == nil {
		return nil
	}
	h := &plan.History{Runs: est.Runs()}
	seen := map[plan.EstimateKey]bool{}
	for i := range servers {
		for _, st := range servers[i].Steps {
			if l := st.Learned; l != nil && !seen[l.Key] {
				seen[l.Key] = true
				h.Estimates = append(h.Estimates, *l)
			}
		}
	}
	return h
}

// spread is how much longer than its estimate a server's steps take in a
// slow run: the sum over its learned steps of p90 − median (each capped by
// the step's timeout), as if a server slow at one step were slow at every
// step. That is the safe side: when steps vary independently the server's
// spread is smaller (closer to the root of the sum of squares), and a rack
// is estimated a little long. Default estimates have no spread.
func spread(ps *plan.Server) plan.Duration {
	var d plan.Duration
	for _, st := range ps.Steps {
		if l := st.Learned; l != nil {
			p90 := capped(time.Duration(l.P90), time.Duration(st.Timeout))
			d += max(p90-st.Estimate, 0)
		}
	}
	return d
}

// z90 is the standard normal quantile of 0.9.
var z90 = math.Sqrt2 * math.Erfinv(0.8)

// slowestOf scales a server's spread (p90 − median) to the expected
// slowest of k servers running side by side: a scope ends with its
// slowest server, so k servers at once take longer than one. With step
// durations taken as normal, the expected largest of k draws is about the
// (k − 3/8)/(k + 1/4) quantile (Blom); the factor is that quantile's z
// over z of 0.9. One server at a time: 0 (the median); 2: 0.46; 10: 1.21;
// 40: 1.68.
func slowestOf(k int) float64 {
	if k <= 1 {
		return 0
	}
	q := (float64(k) - 0.375) / (float64(k) + 0.25)
	return math.Sqrt2 * math.Erfinv(2*q-1) / z90
}
