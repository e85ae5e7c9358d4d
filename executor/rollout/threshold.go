package rollout

import (
	"fmt"

	"github.com/rackform/rackform/planner/plan"
)

// Counts are a scope's servers by how they stand (rule 9: N, the eligible
// servers, excludes the skipped ones).
type Counts struct {
	Eligible  int
	Succeeded int
	Failed    int
	// Down: servers of the scope out of service now (at work or failed
	// and not back), for a serial scope.
	Down int
}

// Required is the number of successes a scope of n eligible servers
// needs. The plan resolved it for the N it planned; skips at apply time
// shrink N (rule 9), so it is recomputed then: ceil(v·N/100) for percent,
// min(v, N) for count *(choice: skipping servers never makes a count
// threshold impossible)*.
func Required(p *plan.Scope, n int) int {
	if n == p.Eligible {
		return p.Required
	}
	switch p.Threshold.Type {
	case "percent":
		return (p.Threshold.Value*n + 99) / 100
	case "count":
		return min(p.Threshold.Value, n)
	}
	return min(p.Required, n)
}

// Met reports whether a scope met its threshold: the next scope may start
// (rule 13).
func Met(p *plan.Scope, c Counts) bool { return c.Succeeded >= Required(p, c.Eligible) }

// Breach says why a scope is breached (rule 11), or "". A scope that met
// its threshold is never breached afterwards (rule 13: a straggler failing
// later raises the count but does not undo the advance).
func Breach(p *plan.Scope, c Counts) string {
	n := c.Eligible
	req := Required(p, n)
	if c.Succeeded >= req {
		return ""
	}
	open := n - c.Succeeded - c.Failed
	switch {
	case c.Failed > p.Budget:
		return fmt.Sprintf("%d failed > budget %d (N=%d, required %d, succeeded %d)", c.Failed, p.Budget, n, req, c.Succeeded)
	case c.Succeeded+open < req:
		return fmt.Sprintf("%d succeeded + %d remaining < %d required (N=%d, %d failed)", c.Succeeded, open, req, n, c.Failed)
	case p.Kind == "serial" && c.Down > 0 && open > 0:
		return "a server of this serial scope is down; the next starts only after the previous is back healthy"
	}
	return ""
}
