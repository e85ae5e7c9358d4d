package planview

import (
	"fmt"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
)

// UpgradedCritical lists the servers the plan upgrades although their BMC
// reported health Critical (a server's upgrade_when_critical), in plan
// order. Every rendering shows them first: each is an exception a
// reviewer approves by name.
func UpgradedCritical(p *plan.Plan) []*plan.Server {
	return Where(p, func(s *plan.Server) bool { return s.Action == plan.ActionUpgrade && s.UpgradeWhenCritical != nil })
}

// CriticalTitle heads the list of servers upgraded although Critical, in
// words: what is different about them and what apply does.
func CriticalTitle(n int) string {
	return fmt.Sprintf("%s although %s health Critical, as the configuration says (upgrade_when_critical); apply accepts %s back on and at target whatever health %s BMC then reports",
		views.Plural(n, "server is upgraded", "servers are upgraded"), ternary(n == 1, "its BMC reports", "their BMCs report"), ternary(n == 1, "it", "each"), "its")
}

// CriticalLine is one server of that list: its address and the reviewed
// reason.
func CriticalLine(s *plan.Server) string {
	return s.Address + ": " + s.UpgradeWhenCritical.Reason
}

func ternary(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}
