package executor_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// docs/rollout-rules.md, one test (or a few) per numbered rule: ordering
// (rules 1-8) here; thresholds, timing and control in the other
// rules_*_test.go files.

type S = executortest.Scope

type Script = executortest.Script

// eventTime returns the time of the first event of type typ for id.
func (h *harness) eventTime(typ, id string) time.Time {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		if e.Type == typ && (e.ID == id || e.Server == id) {
			return e.Time
		}
	}
	h.t.Fatalf("no %s event for %s", typ, id)
	return time.Time{}
}

// index of the first event typ for id, -1 when none.
func (h *harness) index(typ, id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, e := range h.events {
		if e.Type == typ && (e.ID == id || e.Server == id) {
			return i
		}
	}
	return -1
}

func wantOutcome(t *testing.T, got executor.Outcome, status executor.OutcomeStatus, reason string) {
	t.Helper()
	if got.Status != status || got.Reason != reason {
		t.Fatalf("outcome = %v, want %s(%s)", got, status, reason)
	}
}

func wantStates(t *testing.T, h *harness, want map[string]string) {
	t.Helper()
	got := h.states()
	sub := map[string]string{}
	for k := range want {
		sub[k] = got[k]
	}
	if diff := cmp.Diff(want, sub); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

func addrOf(scope string, i int) string {
	return "c1/" + scope + "/" + scope + "-s0" + string(rune('0'+i))
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func rackServer(rack string, i int) string {
	return "c1/" + rack + "/" + rack + "-s" + twoDigits(i)
}

func twoDigits(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func TestRule1StagesRunOneAfterAnother(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	s1 := b.Stage("canary").AfterWait(time.Hour)
	s1.Group(b, "g").Cluster("c1").Scope(S{Name: "r01", Servers: 2})
	b.Stage("prod").Group(b, "g").Cluster("c2").Scope(S{Name: "r01", Servers: 2})
	h.plan = b.Plan()
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	stage1Done := h.eventTime("stage_completed", "stage.canary")
	waitEnd := h.eventTime("wait_completed", "stage.canary.wait")
	c2Start := h.eventTime("server_started", "c2/r01/r01-s01")
	if c2Start.Before(waitEnd) || waitEnd.Sub(h.eventTime("wait_started", "stage.canary.wait")) != time.Hour {
		t.Errorf("stage 2 started at %v, wait ended %v (stage 1 done %v)", c2Start, waitEnd, stage1Done)
	}
	if h.index("server_completed", "c1/r01/r01-s02") > h.index("server_started", "c2/r01/r01-s01") {
		t.Error("stage 2 started before stage 1 finished")
	}
}

func TestRule2GroupsParallelClustersSequential(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	st := b.Stage("s")
	ga := st.Group(b, "a")
	ga.Cluster("a1").Scope(S{Name: "r01", Servers: 1})
	ga.Cluster("a2").Scope(S{Name: "r01", Servers: 1})
	gb := st.Group(b, "b")
	gb.Cluster("b1").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	// Parallel: b1 starts before a1 finishes.
	if h.index("server_started", "b1/r01/r01-s01") > h.index("cluster_completed", "cluster.a1") {
		t.Error("group b waited for group a")
	}
	// Sequential: a2 starts only after a1 completed.
	if h.index("cluster_started", "cluster.a2") < h.index("cluster_completed", "cluster.a1") {
		t.Error("cluster a2 started before a1 completed")
	}
}

func TestRule3PhasesInOrder(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil,
		S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 2},
		S{Phase: plan.PhaseManagement, Kind: "batch", Name: "m1", Servers: 2, Threshold: plan.Threshold{Type: "percent", Value: 50}},
		S{Name: "r01", Servers: 2})
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	cpDone := h.index("phase_completed", "cluster.c1.control_plane")
	mgmtStart := h.index("server_started", "c1/m1/m1-s01")
	mgmtDone := h.index("phase_completed", "cluster.c1.management")
	computeStart := h.index("server_started", "c1/r01/r01-s01")
	if !(cpDone < mgmtStart && mgmtDone < computeStart) {
		t.Errorf("phase order wrong: cp done %d, mgmt start %d, mgmt done %d, compute start %d", cpDone, mgmtStart, mgmtDone, computeStart)
	}
}

func TestRule3FirmwareOnlyRemediationCannotReimage(t *testing.T) {
	h := newHarness(t)
	p := executortest.Single(h.prov, map[string]Script{"c1/r01/r01-s01": {WaitReadyFails: 1}}, S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	// firmware_only: the planner leaves the runtime reimage out.
	s := &p.Servers[0]
	s.Steps = slices.DeleteFunc(s.Steps, func(st plan.Step) bool { return st.Kind == plan.StepReimage })
	h.plan = p
	h.run()
	n := h.node("c1/r01/r01-s01")
	if n.State.String() != "failed(unhealthy)" || !strings.Contains(n.Message, "powered off") {
		t.Errorf("%s %q", n.State, n.Message)
	}
	if c := h.prov.Count("c1/r01/r01-s01", providers.StepReimage); c != 0 {
		t.Errorf("a firmware_only plan reimaged %d times", c)
	}
}

func TestRule4ControlPlaneStrictlyOneAtATime(t *testing.T) {
	t.Run("serial", func(t *testing.T) {
		h := newHarness(t)
		h.plan = executortest.Single(h.prov, nil, S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 3, MaxUnavailable: 3})
		wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
		for i := 1; i < 3; i++ {
			if h.index("server_started", addrOf("cp", i+1)) < h.index("server_completed", addrOf("cp", i)) {
				t.Errorf("cp server %d started before %d was back", i+1, i)
			}
		}
	})
	t.Run("a down server blocks the next even within budget", func(t *testing.T) {
		h := newHarness(t)
		h.plan = executortest.Single(h.prov, map[string]Script{addrOf("cp", 1): {FailKind: providers.StepUpdate}},
			S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 3, Threshold: plan.Threshold{Type: "count", Value: 1}, Budget: 5, BudgetSet: true})
		out := h.run()
		wantOutcome(t, out, executor.OutcomePaused, executor.ReasonThreshold)
		if !strings.Contains(out.Message, "the next starts only after the previous is back healthy") {
			t.Errorf("message %q does not explain that a serial scope waits for the previous server", out.Message)
		}
		if n := h.prov.Count(addrOf("cp", 2), ""); n != 0 {
			t.Errorf("second cp server got %d calls while the first is down", n)
		}
	})
	t.Run("two control-plane scopes never overlap", func(t *testing.T) {
		h := newHarness(t)
		h.async = true
		b := executortest.NewBuilder(h.prov)
		b.Scripts = map[string]Script{addrOf("spare", 1): {HangApply: 1}}
		b.Stage("s").Group(b, "g").Cluster("c1").
			// A zero threshold lets the next scope start at once (rule 13):
			// only the cluster-wide control-plane guard holds it back.
			Scope(S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "spare", Servers: 1, Role: "control_plane_spare", Threshold: plan.Threshold{Type: "count", Value: 0}}).
			Scope(S{Phase: plan.PhaseControlPlane, Kind: "rack", Name: "cp", Servers: 2, Role: "control_plane", Threshold: plan.Threshold{Type: "count", Value: 0}})
		h.plan = b.Plan()
		done := make(chan executor.Outcome)
		go func() { done <- h.run() }()
		<-h.prov.Hanging(addrOf("spare", 1))
		h.prov.Release(addrOf("spare", 1))
		wantOutcome(t, <-done, executor.OutcomeCompleted, "")
		if h.index("server_started", addrOf("cp", 1)) < h.index("server_completed", addrOf("spare", 1)) {
			t.Error("a control-plane server started while the spare was down")
		}
		if h.index("server_started", addrOf("cp", 2)) < h.index("server_completed", addrOf("cp", 1)) {
			t.Error("two control-plane servers were down at once")
		}
	})
}

func TestRule5ManagementBatchesEachNeedTheirThreshold(t *testing.T) {
	half := plan.Threshold{Type: "percent", Value: 50}
	t.Run("one failure of two meets 50%", func(t *testing.T) {
		h := newHarness(t)
		h.plan = executortest.Single(h.prov, map[string]Script{"c1/a1/a1-s01": {FailKind: providers.StepUpdate}},
			S{Phase: plan.PhaseManagement, Kind: "batch", Name: "a1", Servers: 2, Threshold: half},
			S{Phase: plan.PhaseManagement, Kind: "batch", Name: "a2", Servers: 2, Threshold: half})
		wantOutcome(t, h.run(), executor.OutcomeCompletedWithFailures, "")
		wantStates(t, h, map[string]string{"cluster.c1.management.batch.a1": "completed", "cluster.c1.management.batch.a2": "completed"})
	})
	t.Run("a batch below its threshold stops the next", func(t *testing.T) {
		h := newHarness(t)
		h.plan = executortest.Single(h.prov, map[string]Script{"c1/a1/a1-s01": {FailKind: providers.StepUpdate}, "c1/a1/a1-s02": {FailKind: providers.StepUpdate}},
			S{Phase: plan.PhaseManagement, Kind: "batch", Name: "a1", Servers: 2, Threshold: half},
			S{Phase: plan.PhaseManagement, Kind: "batch", Name: "a2", Servers: 2, Threshold: half})
		wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
		wantStates(t, h, map[string]string{"cluster.c1.management.batch.a1": "paused(threshold)", "cluster.c1.management.batch.a2": "not_started"})
	})
}

func TestRule6ScopesRunInPlanOrder(t *testing.T) {
	h := newHarness(t)
	// The planner sorts racks (alphanumeric: rack10 before rack2); the
	// executor follows the plan's order and never re-sorts.
	h.plan = executortest.Single(h.prov, nil, S{Name: "rack10", Servers: 1}, S{Name: "rack2", Servers: 1})
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if diff := cmp.Diff([]string{"c1/rack10/rack10-s01", "c1/rack2/rack2-s01"}, h.startOrder()); diff != "" {
		t.Error(diff)
	}
}

func TestRule7MaxUnavailable(t *testing.T) {
	for _, max := range []int{1, 2, 5} {
		t.Run("max="+string(rune('0'+max)), func(t *testing.T) {
			h := newHarness(t)
			h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 5, MaxUnavailable: max})
			wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
			peak, cur := 0, 0
			for _, e := range h.events {
				if e.Kind != executor.KindServer {
					continue
				}
				switch e.State {
				case executor.Running:
					cur++
				case executor.Completed, executor.Failed, executor.Skipped:
					cur--
				}
				peak = max2(peak, cur)
			}
			if peak != max {
				t.Errorf("peak servers in flight = %d, want %d", peak, max)
			}
		})
	}
}

func TestRule8ServerInTwoScopesIsRefused(t *testing.T) {
	h := newHarness(t)
	p := executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1}, S{Name: "r02", Servers: 1})
	scopes := p.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes
	scopes[1].Servers = append(scopes[1].Servers, scopes[0].Servers[0])
	_, err := executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: h.backend})
	if err == nil || !strings.Contains(err.Error(), "c1/r01/r01-s01 is in two scopes") {
		t.Fatalf("New = %v, want a refusal naming the server", err)
	}
}
