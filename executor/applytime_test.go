package executor_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// TestGoneTaskOfAnUpdateWithoutApplyTime: an update sent without an apply
// time (the BMC lists none: it applies the image as it does by default,
// staged until the planned reset on most BMCs) whose task is gone when a
// resumed apply polls it is not failed because the version has not
// changed yet: wait_ready verifies it after the reset, as for OnReset.
func TestGoneTaskOfAnUpdateWithoutApplyTime(t *testing.T) {
	scripts := map[string]executortest.Script{rackServer("r01", 1): {Staged: true, TaskState: providers.TaskGone}}
	build := func(h *harness) {
		h.plan = executortest.Single(h.prov, scripts, S{Name: "r01", Servers: 1})
		for i := range h.plan.Servers[0].Steps {
			if st := &h.plan.Servers[0].Steps[i]; st.Kind == plan.StepUpdate {
				st.ApplyTime, st.ApplyTimeFrom = "", "not sent: the BMC lists no apply times for simple_update"
			}
		}
	}
	// The record right after the update's task URI: the BMC took it.
	h := newHarness(t)
	build(h)
	mem := h.backend.(*state.Memory)
	h.backend = &executortest.Crash{Backend: mem, After: 1 << 30}
	h.run()
	entries, _ := mem.Read(context.Background(), sha, -1)
	k := 0
	for i, e := range entries {
		if bytes.Contains(e.Data, []byte(`"type":"task_uri"`)) {
			k = i + 1
			break
		}
	}
	if k == 0 {
		t.Fatal("no task URI recorded")
	}
	h2 := newHarness(t)
	build(h2)
	mem2 := h2.backend
	h2.backend = &executortest.Crash{Backend: mem2, After: k}
	if _, err := h2.exec().Run(context.Background(), context.Background()); !errors.Is(err, executortest.ErrCrashed) {
		t.Fatal(err)
	}
	h2.backend = mem2
	runToCompletion(t, h2, 2)
	if got := h2.state(rackServer("r01", 1)); got != "completed" {
		t.Errorf("server %s, want completed (verified by wait_ready after the reset)", got)
	}
	if n := h2.prov.Count(rackServer("r01", 1), providers.StepUpdate); n != 1 {
		t.Errorf("the update was applied %d times, want once", n)
	}
}

// TestAtTargetMeansEveryMember: a server whose rule selects two GPUs, one
// at the target and one behind, is not "already at target" (rule 24): its
// update runs and reaches both. With both at the target it is skipped.
func TestAtTargetMeansEveryMember(t *testing.T) {
	for _, tc := range []struct {
		gpu1, gpu2 string
		want       string
	}{
		{"2.0", "1.0", "completed"},
		{"2.0", "2.0", "skipped(already_at_target)"},
	} {
		h := newHarness(t)
		addr := rackServer("r01", 1)
		h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
		comps := []providers.Component{
			{ID: "GPU_1", SoftwareID: "0x0020", Version: tc.gpu1, Updateable: true, State: providers.StateActive},
			{ID: "GPU_2", SoftwareID: "0x0020", Version: tc.gpu2, Updateable: true, State: providers.StateActive},
			{ID: "GPU_golden", SoftwareID: "0x0020", Version: "0.9", Updateable: true, State: providers.StateStandby},
			{ID: "Runtime", Version: "4.6"},
		}
		h.prov.Add(addr, comps, executortest.Targets(), executortest.Script{})
		s := &h.plan.Servers[0]
		s.Observed.Components, s.Fingerprint = comps, executortest.Fingerprint(comps)
		st := &s.Steps[2]
		if st.Component != "bios" {
			t.Fatalf("step 3 is %s %s, the builder changed", st.Kind, st.Component)
		}
		st.Component, st.Match, st.Target.Version, st.Target.Scheme = "gpu", &providers.Match{SoftwareID: "0x0020", Count: 2}, "2.0", "dotted"
		h.run()
		wantStates(t, h, map[string]string{addr: tc.want})
	}
}
