package planview

import "github.com/rackform/rackform/planner/plan"

// BuildJSON is p's machine-readable representation as one value, servers
// and all, as WriteJSON writes it a server at a time: what the tests
// look into.
func BuildJSON(p *plan.Plan, sha string) PlanJSON {
	out, entries := document(asApplied(p), sha)
	for i, e := range entries {
		js := placed(e, i)
		out.Servers[js.Address] = js
	}
	return out
}
