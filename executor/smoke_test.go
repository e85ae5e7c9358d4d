package executor_test

import (
	"testing"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
)

func TestSmokeTwoRacks(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil,
		executortest.Scope{Name: "r01", Servers: 2},
		executortest.Scope{Name: "r02", Servers: 2})
	out := h.run()
	if out.Status != executor.OutcomeCompleted {
		t.Fatalf("outcome = %v", out)
	}
	for _, e := range h.eventTypes("") {
		t.Log(e)
	}
	t.Log(h.states())
}
