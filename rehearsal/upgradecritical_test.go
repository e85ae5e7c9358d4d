package rehearsal

import (
	"testing"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
)

// A server upgraded although Critical (rule 50) is rehearsed as apply runs
// it: its simulated copy comes back Critical as it was, and its wait for
// readiness accepts it, so the rehearsal takes the plan's time. The same
// server without the override (a plan no planner writes) never counts as
// ready.
func TestRehearsalUpgradedAlthoughCritical(t *testing.T) {
	for _, tc := range []struct {
		name     string
		override bool
		want     string
	}{
		{"with the override", true, "completed"},
		{"without", false, "failed(unhealthy)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := executortest.NewBuilder(nil)
			b.Stage("s").Group(b, "g").Cluster("c1").Scope(S{Name: "r01", Servers: 2, Threshold: plan.Threshold{Type: "count", Value: 0}})
			p := withEstimates(b.Plan())
			srv := &p.Servers[len(p.Servers)-1]
			srv.Observed.Health = "Critical"
			if tc.override {
				srv.UpgradeWhenCritical = &plan.CriticalOverride{Reason: "INC-4711"}
			}
			res := rehearse(t, Options{Plan: p})
			if tc.override && (res.Outcome.Status != executor.OutcomeCompleted || res.Schedule.Total != res.Schedule.CriticalPath) {
				t.Errorf("outcome %s in %v, want completed on the critical path %v", res.Outcome, res.Schedule.Total, res.Schedule.CriticalPath)
			}
			var got string
			for _, b := range res.Schedule.Bars {
				if b.ID == srv.Address {
					got = b.State
					if b.Reason != "" {
						got += "(" + b.Reason + ")"
					}
				}
			}
			if got != tc.want {
				t.Errorf("%s rehearsed %q, want %q", srv.Address, got, tc.want)
			}
		})
	}
}
