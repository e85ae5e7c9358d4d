package executor_test

import (
	"testing"

	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/providers"
)

// TestLastProviderStepIsMarked: the provider is told which step is a
// server's last it performs (wait_ready here, before the uncordon hook), so
// it can end the BMC session then instead of holding it idle; no other step
// says so.
func TestLastProviderStepIsMarked(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2})
	h.run()
	calls := h.prov.Calls()
	if len(calls) == 0 {
		t.Fatal("no provider calls")
	}
	last := map[string]int{}
	for _, c := range calls {
		if !c.Last {
			continue
		}
		last[c.Server]++
		if c.Kind != providers.StepWaitReady {
			t.Errorf("%s: step %s marked last, want only wait_ready (the uncordon hook after it is not a provider step)", c.Server, c.Kind)
		}
	}
	for _, s := range h.plan.Servers {
		if last[s.Address] != 1 {
			t.Errorf("%s: %d steps marked last, want 1", s.Address, last[s.Address])
		}
	}
}
