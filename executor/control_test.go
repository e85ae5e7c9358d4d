package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
)

// A gate is approved by its own name when no other gate has it; a name
// several gates share is refused with every candidate named.
func TestApproveByGateName(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Stage("canary").Group(b, "g").Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	b.Stage("prod").Gate("canary-ok", "before").Gate("go", "after").Group(b, "g").Cluster("c2").Scope(S{Name: "r01", Servers: 1})
	b.Stage("late").Gate("go", "before").Group(b, "g").Cluster("c3").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	ctx := context.Background()
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonApproval)

	var re *executor.RefusedError
	err := h.exec().Approve(ctx, "go")
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "2 gates of the plan are named go: stage.prod.gate.go, stage.late.gate.go; approve one by its address") {
		t.Errorf("approving a name two gates share: %v", err)
	}
	err = h.exec().Approve(ctx, "nope")
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "the plan has no such gate; its gates: stage.prod.gate.canary-ok, stage.prod.gate.go, stage.late.gate.go") {
		t.Errorf("approving an unknown gate: %v", err)
	}

	if err := h.exec().Approve(ctx, "canary-ok"); err != nil {
		t.Fatalf("approving the gate by its own name: %v", err)
	}
	if i := h.index("gate_approved", ""); i < 0 || h.events[i].Target != "stage.prod.gate.canary-ok" {
		t.Errorf("the approval does not name the gate's address: %+v", h.events)
	}
	if j := h.journalText(t); !strings.Contains(j, `"type":"approve","target":"stage.prod.gate.canary-ok"`) {
		t.Errorf("the journal does not record the gate's address:\n%s", j)
	}
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonApproval)
	wantStates(t, h, map[string]string{"stage.prod.gate.canary-ok": "completed", "stage.prod.gate.go": "pending(approval)", "c2/r01/r01-s01": "completed"})
	if err := h.exec().Approve(ctx, "canary-ok"); !errors.As(err, &re) || !strings.Contains(err.Error(), "already completed") {
		t.Errorf("approving it again: %v", err)
	}
}

// A refusal says, as data, which final state refused it: skipping in a
// failed run is refused with Already failed, skipping a completed server
// with Already completed.
func TestRefusalNamesTheStateThatRefusedIt(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Scripts = map[string]Script{"c2/r02/r02-s01": {FailApply: 2}}
	g := b.Stage("canary").Group(b, "g")
	g.Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	g.Cluster("c2").Scope(S{Name: "r02", Servers: 1})
	h.plan = b.Plan()
	h.plan.Run.Stages[0].FailFast = true
	wantOutcome(t, h.run(), executor.OutcomeFailed, executor.ReasonThreshold)
	ctx := context.Background()
	var re *executor.RefusedError
	if err := h.exec().Skip(ctx, "c2/r02/r02-s01"); !errors.As(err, &re) || re.Already != executor.Failed {
		t.Errorf("skip in a failed run: %v (%+v), want a refusal with Already failed", err, re)
	}
	re = nil
	if err := h.exec().Skip(ctx, "c1/r01/r01-s01"); !errors.As(err, &re) || re.Already != executor.Completed {
		t.Errorf("skip of a completed server: %v (%+v), want a refusal with Already completed", err, re)
	}
	re = nil
	if err := h.exec().Skip(ctx, "nowhere"); !errors.As(err, &re) || re.Already != "" {
		t.Errorf("skip of an unknown address: %v (%+v), want a refusal with no state", err, re)
	}
}
