package executor_test

import (
	"context"
	"errors"
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

func TestRule01StagesRunOneAfterAnother(t *testing.T) {
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

func TestRule02GroupsParallelClustersSequential(t *testing.T) {
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

func TestRule03PhasesInOrder(t *testing.T) {
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

func TestRule04ControlPlaneStrictlyOneAtATime(t *testing.T) {
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

func addrOf(scope string, i int) string {
	return "c1/" + scope + "/" + scope + "-s0" + string(rune('0'+i))
}

func TestRule06ScopesRunInPlanOrder(t *testing.T) {
	h := newHarness(t)
	// The planner sorts racks (alphanumeric: rack10 before rack2); the
	// executor follows the plan's order and never re-sorts.
	h.plan = executortest.Single(h.prov, nil, S{Name: "rack10", Servers: 1}, S{Name: "rack2", Servers: 1})
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if diff := cmp.Diff([]string{"c1/rack10/rack10-s01", "c1/rack2/rack2-s01"}, h.startOrder()); diff != "" {
		t.Error(diff)
	}
}

func TestRule07MaxUnavailable(t *testing.T) {
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

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func TestRule09PercentThresholdRoundsUp(t *testing.T) {
	// 75% of 10 needs ceil(7.5) = 8: two failures complete, three breach.
	for _, tc := range []struct {
		failures int
		want     string
	}{{2, "completed"}, {3, "paused(threshold)"}} {
		h := newHarness(t)
		scripts := map[string]Script{}
		for i := 1; i <= tc.failures; i++ {
			scripts[rackServer("r01", i)] = Script{FailKind: providers.StepUpdate}
		}
		h.plan = executortest.Single(h.prov, scripts, S{Name: "r01", Servers: 10, Threshold: plan.Threshold{Type: "percent", Value: 75}})
		h.run()
		if got := h.state(rackID("r01")); got != tc.want {
			t.Errorf("%d failures: rack is %s, want %s", tc.failures, got, tc.want)
		}
		if c := h.node(rackID("r01")).Counts; c.Required != 8 {
			t.Errorf("required = %d, want 8", c.Required)
		}
	}
}

func rackServer(rack string, i int) string {
	return "c1/" + rack + "/" + rack + "-s" + twoDigits(i)
}

func twoDigits(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func TestRule09NExcludesSkipped(t *testing.T) {
	// 10 servers, 75%: one already at target leaves N = 9, required
	// ceil(6.75) = 7 (floor would be 6). With a generous budget, three
	// failures breach only because 9 − 3 < 7; two failures do not.
	for _, tc := range []struct {
		failures int
		want     string
	}{{2, "completed"}, {3, "paused(threshold)"}} {
		h := newHarness(t)
		scripts := map[string]Script{rackServer("r01", 1): {AtTarget: true}}
		for i := 2; i < 2+tc.failures; i++ {
			scripts[rackServer("r01", i)] = Script{FailKind: providers.StepUpdate}
		}
		h.plan = executortest.Single(h.prov, scripts, S{Name: "r01", Servers: 10, Threshold: plan.Threshold{Type: "percent", Value: 75}, Budget: 5, BudgetSet: true})
		h.run()
		c := h.node(rackID("r01")).Counts
		if c.Eligible != 9 || c.Required != 7 || c.Skipped != 1 {
			t.Errorf("counts %+v, want eligible 9, required 7", *c)
		}
		if got := h.state(rackID("r01")); got != tc.want {
			t.Errorf("%d failures: %s, want %s", tc.failures, got, tc.want)
		}
	}
}

func TestRule09EmptyScopeIsSkipped(t *testing.T) {
	h := newHarness(t)
	p := executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2}, S{Name: "r02", Servers: 1})
	for i := range p.Servers {
		if strings.HasPrefix(p.Servers[i].Address, "c1/r01/") {
			p.Servers[i].Action, p.Servers[i].Reason = plan.ActionSkip, plan.ReasonAtTarget
		}
	}
	p.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes[0].Eligible = 0
	h.plan = p
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	wantStates(t, h, map[string]string{rackID("r01"): "skipped(empty)", rackID("r02"): "completed", "c1/r01/r01-s01": "skipped(already_at_target)"})

	// Everything at target at apply time also empties the scope.
	h2 := newHarness(t)
	h2.plan = executortest.Single(h2.prov, map[string]Script{rackServer("r01", 1): {AtTarget: true}}, S{Name: "r01", Servers: 1})
	wantOutcome(t, h2.run(), executor.OutcomeCompleted, "")
	wantStates(t, h2, map[string]string{rackID("r01"): "skipped(empty)"})
}

func TestRule10FailureBudget(t *testing.T) {
	for _, tc := range []struct {
		budget, failures int
		want             string
	}{{1, 1, "completed"}, {1, 2, "paused(threshold)"}, {0, 1, "paused(threshold)"}} {
		h := newHarness(t)
		scripts := map[string]Script{}
		for i := 1; i <= tc.failures; i++ {
			scripts[rackServer("r01", i)] = Script{FailKind: providers.StepShutdown}
		}
		// A count threshold of 1 is always reachable here: only the budget can breach.
		h.plan = executortest.Single(h.prov, scripts, S{Name: "r01", Servers: 6, Threshold: plan.Threshold{Type: "count", Value: 1}, Budget: tc.budget, BudgetSet: true, MaxUnavailable: 1})
		h.run()
		if got := h.state(rackID("r01")); got != tc.want {
			t.Errorf("budget %d, %d failures: %s, want %s", tc.budget, tc.failures, got, tc.want)
		}
	}
}

func TestRule11BreachWhenThresholdUnreachable(t *testing.T) {
	// count 3 of 4 with a budget of 10: the budget never trips, but after
	// two failures 2 succeeded + 0 remaining < 3.
	h := newHarness(t)
	scripts := map[string]Script{rackServer("r01", 1): {FailKind: providers.StepUpdate}, rackServer("r01", 2): {FailKind: providers.StepUpdate}}
	h.plan = executortest.Single(h.prov, scripts, S{Name: "r01", Servers: 4, Threshold: plan.Threshold{Type: "count", Value: 3}, Budget: 10, BudgetSet: true, MaxUnavailable: 2})
	out := h.run()
	wantOutcome(t, out, executor.OutcomePaused, executor.ReasonThreshold)
	if !strings.Contains(out.Message, "< 3 required") {
		t.Errorf("message %q", out.Message)
	}
	// One failure left the threshold reachable, so s03 started; the second
	// made it unreachable: s03 (in flight) finished, s04 never started.
	wantStates(t, h, map[string]string{rackServer("r01", 3): "completed", rackServer("r01", 4): "not_started"})
	if n := h.prov.Count(rackServer("r01", 4), ""); n != 0 {
		t.Errorf("server 4 got %d calls after the breach", n)
	}
}

func TestRule12BreachPausesEverythingInFlightFinishes(t *testing.T) {
	h := newHarness(t)
	// s01 fails its update; s02 is in flight at that moment and must finish.
	scripts := map[string]Script{rackServer("r01", 1): {FailKind: providers.StepUpdate}}
	h.plan = executortest.Single(h.prov, scripts, S{Name: "r01", Servers: 4, MaxUnavailable: 2}, S{Name: "r02", Servers: 2})
	out := h.run()
	wantOutcome(t, out, executor.OutcomePaused, executor.ReasonThreshold)
	if diff := cmp.Diff([]string{"rackform continue"}, out.Next); diff != "" {
		t.Error(diff)
	}
	wantStates(t, h, map[string]string{
		rackID("r01"): "paused(threshold)", "cluster.c1.compute": "paused(threshold)", "cluster.c1": "paused(threshold)",
		"stage.default.group.default": "paused(threshold)", "stage.default": "paused(threshold)", "run": "paused(threshold)",
		rackServer("r01", 2): "completed", rackServer("r01", 3): "not_started", rackID("r02"): "not_started",
	})
	t.Run("fail", func(t *testing.T) {
		h := newHarness(t)
		h.plan = executortest.Single(h.prov, scripts, S{Name: "r01", Servers: 4, MaxUnavailable: 2, OnBreach: "fail"})
		out := h.run()
		wantOutcome(t, out, executor.OutcomeFailed, executor.ReasonThreshold)
		wantStates(t, h, map[string]string{rackID("r01"): "failed(threshold)", "cluster.c1": "failed(threshold)", "run": "failed(threshold)", rackServer("r01", 2): "completed"})
		if _, err := h.exec().Run(context.Background(), context.Background()); !errors.Is(err, executor.ErrRunFailed) {
			t.Errorf("re-applying a failed run: %v, want ErrRunFailed", err)
		}
	})
	t.Run("nothing new starts anywhere", func(t *testing.T) {
		h := newHarness(t)
		b := executortest.NewBuilder(h.prov)
		b.Scripts = map[string]Script{"a/r01/r01-s01": {FailKind: providers.StepShutdown}}
		st := b.Stage("s")
		st.Group(b, "a").Cluster("a").Scope(S{Name: "r01", Servers: 1})
		st.Group(b, "b").Cluster("b").Scope(S{Name: "r01", Servers: 1}).Scope(S{Name: "r02", Servers: 1})
		h.plan = b.Plan()
		wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
		wantStates(t, h, map[string]string{"b/r01/r01-s01": "completed", "b/r02/r02-s01": "not_started"})
	})
}

func TestRule13AdvanceAtThresholdWhileStragglersContinue(t *testing.T) {
	h := newHarness(t)
	h.async = true
	// r01: 3 servers, 2 required. s03 hangs, then fails; r02's server
	// hangs too, proving r02 started while s03 was still in flight.
	scripts := map[string]Script{
		rackServer("r01", 3): {HangApply: 1, FailApply: 2},
		rackServer("r02", 1): {HangApply: 1},
	}
	h.plan = executortest.Single(h.prov, scripts,
		S{Name: "r01", Servers: 3, Threshold: plan.Threshold{Type: "count", Value: 2}},
		S{Name: "r02", Servers: 1})
	done := make(chan executor.Outcome)
	go func() { done <- h.run() }()
	<-h.prov.Hanging(rackServer("r01", 3))
	<-h.prov.Hanging(rackServer("r02", 1))
	h.prov.Release(rackServer("r01", 3))
	h.prov.Release(rackServer("r02", 1))
	wantOutcome(t, <-done, executor.OutcomeCompletedWithFailures, "")
	wantStates(t, h, map[string]string{rackID("r01"): "completed", rackServer("r01", 3): "failed(step)", rackID("r02"): "completed"})
	if c := h.node(rackID("r01")).Counts; c.Failed != 1 || c.Succeeded != 2 {
		t.Errorf("counts %+v", c)
	}
}

func TestRule14TerminalWithoutBreachIsCompletedWithFailures(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 4): {FailKind: providers.StepReimage}},
		S{Name: "r01", Servers: 4, Threshold: plan.Threshold{Type: "percent", Value: 75}})
	out := h.run()
	wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
	n := h.node(rackID("r01"))
	if n.State.Name != executor.Completed || !strings.Contains(n.Message, "1 failed: "+rackServer("r01", 4)) {
		t.Errorf("rack = %s %q", n.State, n.Message)
	}
	if !strings.Contains(out.Message, "1 failed") {
		t.Errorf("outcome message %q does not report the failure", out.Message)
	}
}

func TestRule15ContinueOnStillBreachedStaysPaused(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {FailKind: providers.StepUpdate}},
		S{Name: "r01", Servers: 3}, S{Name: "r02", Servers: 1})
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
	ctx := context.Background()
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	out := h.run()
	wantOutcome(t, out, executor.OutcomePaused, executor.ReasonThreshold)
	if !strings.Contains(out.Message, "still breached") || !strings.Contains(out.Message, rackServer("r01", 1)) {
		t.Errorf("message %q does not say why or what to skip", out.Message)
	}
	// The message names what skip accepts: the breached scope, not the
	// failed (terminal) server.
	if !strings.Contains(out.Message, "rackform skip "+rackID("r01")) || strings.Contains(out.Message, "rackform skip ADDR: "+rackServer("r01", 1)) {
		t.Errorf("message %q must name the scope to skip, not the failed server", out.Message)
	}
	for _, next := range []string{rackID("r01")} {
		if err := h.exec().Skip(ctx, next); err != nil {
			t.Errorf("the message's skip target %s is refused: %v", next, err)
		}
	}
	// The update-run seed lets the operator skip a single failed server
	// too (it leaves N); see TestSkipSingleFailedServerResumesTheScope.
	if err := h.exec().Skip(ctx, rackServer("r01", 1)); err != nil {
		t.Fatalf("skipping a failed server: %v, want it recorded", err)
	}
}

func TestRule15ContinueAfterSkipResumes(t *testing.T) {
	h := newHarness(t)
	// Required 2 of 3 with budget 0: s01 fails → breach. s03 not started
	// yet (max 1)... skip s03 shrinks N to 2, required stays 2: still
	// breached. Use count: skipping leaves min(v, N).
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 2): {FailKind: providers.StepUpdate}},
		S{Name: "r01", Servers: 3, MaxUnavailable: 1, Threshold: plan.Threshold{Type: "count", Value: 2}, Budget: 1, BudgetSet: true}, S{Name: "r02", Servers: 1})
	// s01 ok, s02 fails (1 ≤ budget 1, 1 + 1 open ≥ 2: not yet), s03 will
	// succeed → completed. Make it breach instead: s03 fails too.
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 2): {FailKind: providers.StepUpdate}, rackServer("r01", 3): {FailKind: providers.StepUpdate}},
		S{Name: "r01", Servers: 4, MaxUnavailable: 1, Threshold: plan.Threshold{Type: "count", Value: 2}, Budget: 1, BudgetSet: true}, S{Name: "r02", Servers: 1})
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
	ctx := context.Background()
	// The operator skips the last, untouched server: N = 3, required 2,
	// still 2 failed > budget 1 → stays paused.
	if err := h.exec().Skip(ctx, rackServer("r01", 4)); err != nil {
		t.Fatal(err)
	}
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
	// Skipping the whole rack lets the run go on.
	if err := h.exec().Skip(ctx, rackID("r01")); err != nil {
		t.Fatal(err)
	}
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompletedWithFailures, "")
	wantStates(t, h, map[string]string{rackID("r01"): "skipped(user)", rackID("r02"): "completed"})
}

func TestRule16WaitAfterRack(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2, WaitAfter: 15 * time.Minute}, S{Name: "r02", Servers: 1})
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	r01Done := h.eventTime("scope_completed", rackID("r01"))
	waitStart := h.eventTime("wait_started", rackID("r01")+".wait")
	r02Start := h.eventTime("server_started", rackServer("r02", 1))
	if !waitStart.Equal(r01Done) || r02Start.Sub(r01Done) != 15*time.Minute {
		t.Errorf("rack done %v, wait started %v, next rack %v", r01Done, waitStart, r02Start)
	}
}

func TestRule16WaitDisablesEarlyAdvance(t *testing.T) {
	// With a wait, rule 13 does not apply: the wait starts when the last
	// straggler is terminal and the next rack starts when it ends.
	h := newHarness(t)
	h.async = true
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 2): {HangApply: 1}},
		S{Name: "r01", Servers: 2, Threshold: plan.Threshold{Type: "count", Value: 1}, WaitAfter: time.Minute}, S{Name: "r02", Servers: 1})
	done := make(chan executor.Outcome)
	go func() { done <- h.run() }()
	<-h.prov.Hanging(rackServer("r01", 2))
	h.prov.Release(rackServer("r01", 2))
	wantOutcome(t, <-done, executor.OutcomeCompleted, "")
	if h.index("server_started", rackServer("r02", 1)) < h.index("wait_completed", rackID("r01")+".wait") {
		t.Error("r02 started before r01's wait ended")
	}
	if h.index("wait_started", rackID("r01")+".wait") < h.index("server_completed", rackServer("r01", 2)) {
		t.Error("the wait started before the straggler finished")
	}
}

func TestRule17PauseAfterEveryRackButTheLast(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil,
		S{Name: "r01", Servers: 1, PauseAfter: true}, S{Name: "r02", Servers: 1, PauseAfter: true}, S{Name: "r03", Servers: 1, PauseAfter: true})
	ctx := context.Background()
	for _, next := range []string{"r02", "r03"} {
		out := h.run()
		wantOutcome(t, out, executor.OutcomePaused, executor.ReasonAfterRack)
		if diff := cmp.Diff([]string{"rackform continue"}, out.Next); diff != "" {
			t.Error(diff)
		}
		if got := h.state("run"); got != "paused(after_rack)" {
			t.Errorf("run is %s", got)
		}
		if got := h.state(rackID(next)); got != "not_started" {
			t.Errorf("%s is %s before continue", next, got)
		}
		// Applying again without continue stays paused.
		wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonAfterRack)
		if err := h.exec().Continue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
}

func TestRule18ApprovalGates(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Stage("canary").Group(b, "g").Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	b.Stage("prod").Gate("qa", "before").Group(b, "g").Cluster("c2").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	ctx := context.Background()
	gate := "stage.prod.gate.qa"
	var re *executor.RefusedError
	if err := h.exec().Approve(ctx, gate); !errors.As(err, &re) {
		t.Fatalf("approving before the run started: %v", err)
	}
	// Reach stage 1 only: pause it with a stop so the gate is not reached.
	out := h.run()
	wantOutcome(t, out, executor.OutcomePaused, executor.ReasonApproval)
	if diff := cmp.Diff([]string{"rackform approve " + gate}, out.Next); diff != "" {
		t.Error(diff)
	}
	wantStates(t, h, map[string]string{gate: "pending(approval)", "stage.prod": "pending(approval)", "c2/r01/r01-s01": "not_started"})
	if err := h.exec().Approve(ctx, "stage.prod.gate.nope"); !errors.As(err, &re) {
		t.Errorf("approving an unknown gate: %v", err)
	}
	if err := h.exec().Approve(ctx, gate); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if err := h.exec().Approve(ctx, gate); !errors.As(err, &re) {
		t.Errorf("approving twice: %v", err)
	}
}

func TestRule18ApprovingAGateNotReachedIsRefused(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Stage("canary").Group(b, "g").Cluster("c1").Scope(S{Name: "r01", Servers: 1, PauseAfter: true}).Scope(S{Name: "r02", Servers: 1})
	b.Stage("prod").Gate("qa", "before").Group(b, "g").Cluster("c2").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonAfterRack)
	err := h.exec().Approve(context.Background(), "stage.prod.gate.qa")
	var re *executor.RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "not been reached") {
		t.Fatalf("approve of an unreached gate: %v", err)
	}
}

func TestRule18SkippingAStageSkipsItsGatesAndWait(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Stage("canary").Group(b, "g").Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	b.Stage("prod").Gate("qa", "before").Gate("signoff", "after").AfterWait(time.Hour).Group(b, "g").Cluster("c2").Scope(S{Name: "r01", Servers: 1})
	b.Stage("last").Group(b, "g").Cluster("c3").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonApproval)
	if err := h.exec().Skip(context.Background(), "stage.prod"); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	wantStates(t, h, map[string]string{"stage.prod": "skipped(user)", "stage.prod.gate.qa": "skipped(user)", "stage.prod.gate.signoff": "skipped(user)",
		"stage.prod.wait": "skipped(user)", "c2/r01/r01-s01": "skipped(user)", "c3/r01/r01-s01": "completed"})
	if n := h.prov.Count("c2/r01/r01-s01", ""); n != 0 {
		t.Errorf("skipped stage's server got %d calls", n)
	}
}

func TestRule19AfterStageWaitAndGatesTogether(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Stage("canary").Gate("qa", "after").AfterWait(time.Hour).Group(b, "g").Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	b.Stage("prod").Group(b, "g").Cluster("c2").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonApproval)
	start := h.eventTime("wait_started", "stage.canary.wait")
	if gp := h.eventTime("gate_pending", "stage.canary.gate.qa"); !gp.Equal(start) {
		t.Errorf("gate pending at %v, wait started at %v: not together", gp, start)
	}
	// Approved after 10 minutes: the run still waits out the hour.
	h.clock.Advance(10 * time.Minute)
	if err := h.exec().Approve(context.Background(), "stage.canary.gate.qa"); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if got := h.eventTime("server_started", "c2/r01/r01-s01"); got.Sub(start) != time.Hour {
		t.Errorf("stage 2 started %v after the wait began, want 1h", got.Sub(start))
	}
}

func TestRule20WindowsGateClusterStart(t *testing.T) {
	T := executortest.Epoch
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	g := b.Stage("s").Group(b, "g")
	g.Cluster("closed", plan.Interval{Start: T.Add(10 * time.Hour), End: T.Add(12 * time.Hour)}).Scope(S{Name: "r01", Servers: 1})
	g.Cluster("opening", plan.Interval{Start: T.Add(time.Hour), End: T.Add(3 * time.Hour)}).Scope(S{Name: "r01", Servers: 1})
	g.Cluster("none").Scope(S{Name: "r01", Servers: 1})
	g.Cluster("open", plan.Interval{Start: T.Add(-time.Hour), End: T.Add(time.Hour)}).Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	// Priority: open now, then (opening is blocked) none; then opening at
	// its start; then closed at its start.
	var order []string
	for _, id := range []string{"cluster.closed", "cluster.opening", "cluster.none", "cluster.open"} {
		order = append(order, id+"@"+h.eventTime("cluster_started", id).Sub(T).String())
	}
	want := []string{"cluster.closed@10h0m0s", "cluster.opening@1h0m0s", "cluster.none@0s", "cluster.open@0s"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Error(diff)
	}
	if h.index("cluster_started", "cluster.open") > h.index("cluster_started", "cluster.none") {
		t.Error("the cluster with an open window did not go first")
	}
	if h.index("cluster_pending", "cluster.opening") < 0 {
		t.Error("the blocked cluster was never pending(window)")
	}
}

func TestRule20WindowClosingNeverInterruptsWork(t *testing.T) {
	T := executortest.Epoch
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Stage("s").Group(b, "g").Cluster("c1", plan.Interval{Start: T, End: T.Add(time.Hour)}).
		Scope(S{Name: "r01", Servers: 1, WaitAfter: 2 * time.Hour}).Scope(S{Name: "r02", Servers: 1})
	h.plan = b.Plan()
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if got := h.eventTime("server_started", rackServer("r02", 1)).Sub(T); got != 2*time.Hour {
		t.Errorf("r02 started at +%v, after the window closed at +1h: want +2h", got)
	}
}

func TestRule21DrainBoundedThenProceed(t *testing.T) {
	h := newHarness(t)
	h.async = true
	h.hooks.Hang[rackServer("r01", 1)+"/drain"] = true
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	done := make(chan executor.Outcome)
	go func() { done <- h.run() }()
	<-h.hooks.Hanging()
	h.clock.Advance(20 * time.Minute)
	wantOutcome(t, <-done, executor.OutcomeCompleted, "")
	st := h.node(rackServer("r01", 1)).Steps[0]
	if st.State != executor.Completed || !strings.Contains(st.Message, "did not finish within 20m0s; proceeding") {
		t.Errorf("drain step = %+v", st)
	}
	// Shutdown is bounded by the provider: it gets the 10m timeout.
	for _, c := range h.prov.Calls() {
		if c.Kind == providers.StepShutdown && c.Timeout != 10*time.Minute {
			t.Errorf("shutdown timeout = %v, want 10m", c.Timeout)
		}
	}
	// The hook saw the server's identity.
	hk := h.hooks.Calls()[0]
	for k, want := range map[string]string{"RACKFORM_SERVER": "r01-s01", "RACKFORM_NODE": "node-r01-s01", "RACKFORM_RACK": "r01", "RACKFORM_CLUSTER": "c1"} {
		if got := executortest.Env(hk, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if hk.Timeout != 20*time.Minute {
		t.Errorf("drain hook timeout = %v", hk.Timeout)
	}
}

func TestRule21DrainHookFailureFailsTheServerUntouched(t *testing.T) {
	h := newHarness(t)
	h.hooks.Fail[rackServer("r01", 1)+"/drain"] = true
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2, Threshold: plan.Threshold{Type: "count", Value: 1}})
	wantOutcome(t, h.run(), executor.OutcomeCompletedWithFailures, "")
	wantStates(t, h, map[string]string{rackServer("r01", 1): "failed(step)"})
	if n := h.prov.Count(rackServer("r01", 1), ""); n != 0 {
		t.Errorf("server with a failed drain got %d provider calls", n)
	}
}

func TestRule22StopLetsWorkInFlightFinish(t *testing.T) {
	h := newHarness(t)
	h.async = true
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {HangApply: 1}}, S{Name: "r01", Servers: 3, MaxUnavailable: 1})
	done := make(chan executor.Outcome)
	go func() { done <- h.run() }()
	<-h.prov.Hanging(rackServer("r01", 1))
	// Another process (CI job) stops the run.
	if err := h.exec().Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.prov.Release(rackServer("r01", 1))
	out := <-done
	wantOutcome(t, out, executor.OutcomeStopped, "")
	wantStates(t, h, map[string]string{"run": "stopped", rackServer("r01", 1): "completed", rackServer("r01", 2): "not_started"})
	var re *executor.RefusedError
	if err := h.exec().Stop(context.Background()); !errors.As(err, &re) {
		t.Errorf("second stop: %v", err)
	}
	h.async = false
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
}

func TestRule23Skip(t *testing.T) {
	ctx := context.Background()
	t.Run("a server leaves N", func(t *testing.T) {
		h := newHarness(t)
		h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2, PauseAfter: true}, S{Name: "r02", Servers: 4})
		wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonAfterRack)
		if err := h.exec().Skip(ctx, rackServer("r02", 4)); err != nil {
			t.Fatal(err)
		}
		if err := h.exec().Continue(ctx); err != nil {
			t.Fatal(err)
		}
		wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
		c := h.node(rackID("r02")).Counts
		if c.Eligible != 3 || c.Required != 3 || c.Skipped != 1 || c.Succeeded != 3 {
			t.Errorf("counts %+v", c)
		}
		if n := h.prov.Count(rackServer("r02", 4), ""); n != 0 {
			t.Errorf("skipped server got %d calls", n)
		}
	})
	t.Run("terminal is refused", func(t *testing.T) {
		h := newHarness(t)
		h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1, PauseAfter: true}, S{Name: "r02", Servers: 1})
		wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonAfterRack)
		var re *executor.RefusedError
		for _, id := range []string{rackServer("r01", 1), rackID("r01"), "nope", "run"} {
			if err := h.exec().Skip(ctx, id); !errors.As(err, &re) {
				t.Errorf("skip %s: %v, want refusal", id, err)
			}
		}
		// A pause is a node too: skipping it is a targeted continue.
		if err := h.exec().Skip(ctx, rackID("r01")+".pause"); err != nil {
			t.Fatal(err)
		}
		wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	})
	t.Run("a server in flight is skipped when its operation returns", func(t *testing.T) {
		h := newHarness(t)
		h.async = true
		h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {HangApply: 1}}, S{Name: "r01", Servers: 2, Threshold: plan.Threshold{Type: "count", Value: 1}})
		done := make(chan executor.Outcome)
		go func() { done <- h.run() }()
		<-h.prov.Hanging(rackServer("r01", 1))
		if err := h.exec().Skip(ctx, rackServer("r01", 1)); err != nil {
			t.Fatal(err)
		}
		h.prov.Release(rackServer("r01", 1))
		// Skipped after its steps began: not a clean finish.
		out := <-done
		wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
		wantStates(t, h, map[string]string{rackServer("r01", 1): "skipped(user)"})
		// The shutdown in flight finished; then its safety steps brought it
		// back: powered on, healthy, uncordoned. Nothing else ran.
		var kinds []providers.StepKind
		for _, c := range h.prov.Calls() {
			if c.Server == rackServer("r01", 1) {
				kinds = append(kinds, c.Kind)
			}
		}
		if diff := cmp.Diff([]providers.StepKind{providers.StepShutdown, providers.StepPowerOn, providers.StepWaitReady}, kinds); diff != "" {
			t.Errorf("provider calls of the skipped server (-want +got):\n%s", diff)
		}
		if got := h.node(rackServer("r01", 1)).State.Message; got != "skipped by the operator after its steps began; brought back: powered on, healthy, uncordoned" {
			t.Errorf("message %q", got)
		}
		if len(out.Stranded) != 0 || out.Servers == nil || out.Servers.SkippedAfterStart != 1 {
			t.Errorf("stranded %v, counts %+v", out.Stranded, out.Servers)
		}
	})
}

func TestRule24AlreadyAtTargetIsSkipped(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {AtTarget: true}}, S{Name: "r01", Servers: 2})
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	wantStates(t, h, map[string]string{rackServer("r01", 1): "skipped(already_at_target)", rackServer("r01", 2): "completed"})
	if n := h.prov.Count(rackServer("r01", 1), ""); n != 0 {
		t.Errorf("server at target got %d calls", n)
	}
	if len(h.hooks.Calls()) != 2 {
		t.Errorf("hooks ran %d times, want 2 (drain and uncordon of s02 only)", len(h.hooks.Calls()))
	}
}

func TestRule25CompletedPlanCannotBeAppliedAgain(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	calls := len(h.prov.Calls())
	_, err := h.exec().Run(context.Background(), context.Background())
	if !errors.Is(err, executor.ErrAlreadyApplied) {
		t.Fatalf("second apply: %v", err)
	}
	if len(h.prov.Calls()) != calls {
		t.Error("the refused apply touched a server")
	}
	var re *executor.RefusedError
	if err := h.exec().Continue(context.Background()); !errors.As(err, &re) {
		t.Errorf("continue of a completed run: %v", err)
	}
}

func TestRule26DriftedServerIsNotTouched(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {Drift: true}}, S{Name: "r01", Servers: 2})
	out := h.run()
	// 100% threshold: a drifted server counts as not succeeded.
	wantOutcome(t, out, executor.OutcomePaused, executor.ReasonThreshold)
	n := h.node(rackServer("r01", 1))
	if n.State.String() != "failed(drift)" || !strings.Contains(n.Message, "NIC 9.9 appeared") {
		t.Errorf("drifted server: %s %q", n.State, n.Message)
	}
	if c := h.prov.Count(rackServer("r01", 1), ""); c != 0 || len(h.hooks.Calls()) != 2 {
		t.Errorf("drifted server touched: %d provider calls, %d hooks", c, len(h.hooks.Calls()))
	}
}

// A plan of format 1.4 records only the components it decides on and a
// digest of the rest: a change among the rest is drift too, named as such
// (not as a component that appeared).
func TestRule26DriftAmongUnrecordedComponents(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {Drift: true}}, S{Name: "r01", Servers: 2})
	for i := range h.plan.Servers {
		if s := &h.plan.Servers[i]; s.Address == rackServer("r01", 1) {
			// At plan the BMC also reported NIC 9.8, recorded by digest.
			s.Observed.Others = plan.OthersOf([]providers.Component{{ID: "NIC", Version: "9.8"}}, nil)
		}
	}
	h.run()
	n := h.node(rackServer("r01", 1))
	if n.State.String() != "failed(drift)" || !strings.Contains(n.Message, "other components changed (1 at plan, 1 now)") || strings.Contains(n.Message, "appeared") {
		t.Errorf("drifted server: %s %q", n.State, n.Message)
	}
}

func TestRule30Remediation(t *testing.T) {
	kinds := func(h *harness, addr string) []string {
		var out []string
		for _, c := range h.prov.Calls() {
			if c.Server == addr {
				out = append(out, string(c.Kind))
			}
		}
		return out
	}
	base := []string{"shutdown", "update", "reimage", "wait_ready"}
	for _, tc := range []struct {
		name      string
		phase     plan.PhaseKind
		kind      string
		fails     int
		wantState string
		wantCalls []string
	}{
		{"compute recovers after one reimage", plan.PhaseCompute, "rack", 1, "completed", append(slices.Clone(base), "reimage", "wait_ready")},
		{"compute fails, powered off", plan.PhaseCompute, "rack", 2, "failed(unhealthy)", append(slices.Clone(base), "reimage", "wait_ready", "shutdown")},
		{"management: reboot then reimage", plan.PhaseManagement, "batch", 3, "failed(unhealthy)", append(slices.Clone(base), "reset", "wait_ready", "reimage", "wait_ready")},
		{"management recovers after reboot", plan.PhaseManagement, "batch", 1, "completed", append(slices.Clone(base), "reset", "wait_ready")},
		{"control plane: one reboot", plan.PhaseControlPlane, "serial", 2, "failed(unhealthy)", append(slices.Clone(base), "reset", "wait_ready")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv := "c1/x/x-s01"
			h.plan = executortest.Single(h.prov, map[string]Script{srv: {WaitReadyFails: tc.fails}},
				S{Phase: tc.phase, Kind: tc.kind, Name: "x", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
			h.run()
			n := h.node(srv)
			if n.State.String() != tc.wantState {
				t.Errorf("state %s %q, want %s", n.State, n.Message, tc.wantState)
			}
			if tc.wantState == "failed(unhealthy)" && !strings.Contains(n.Message, "needs a replace") {
				t.Errorf("message %q does not say it needs a replace", n.Message)
			}
			if diff := cmp.Diff(tc.wantCalls, kinds(h, srv)); diff != "" {
				t.Errorf("provider calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRule12StageOnBreachPauseThenSkipStage(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Scripts = map[string]Script{"c1/r01/r01-s01": {FailKind: providers.StepUpdate}}
	b.Stage("canary").OnBreach("pause").Group(b, "g").Cluster("c1").Scope(S{Name: "r01", Servers: 1, OnBreach: "fail"})
	b.Stage("prod").Group(b, "g").Cluster("c2").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	out := h.run()
	wantOutcome(t, out, executor.OutcomePaused, executor.ReasonThreshold)
	wantStates(t, h, map[string]string{rackID("r01"): "failed(threshold)", "cluster.c1": "failed(threshold)", "stage.canary": "paused(threshold)", "run": "paused(threshold)"})
	ctx := context.Background()
	// Continue alone cannot help: the cluster failed.
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
	if err := h.exec().Skip(ctx, "stage.canary"); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompletedWithFailures, "")
	wantStates(t, h, map[string]string{"stage.canary": "skipped(user)", "c2/r01/r01-s01": "completed"})
}

func TestRule20WindowThatNeverOpensPausesBlocked(t *testing.T) {
	T := executortest.Epoch
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Stage("s").Group(b, "g").Cluster("late", plan.Interval{Start: T.Add(-2 * time.Hour), End: T.Add(-time.Hour)}).Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	out := h.run()
	wantOutcome(t, out, executor.OutcomePaused, executor.ReasonBlocked)
	if !strings.Contains(out.Message, "cluster.late") || !strings.Contains(out.Message, "no opening before the plan expires") {
		t.Errorf("message %q", out.Message)
	}
	if err := h.exec().Skip(context.Background(), "cluster.late"); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
}

func TestRule05ManagementBatchesEachNeedTheirThreshold(t *testing.T) {
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

func TestRule30RemediationResumesWithoutSkippingTheReimage(t *testing.T) {
	// A crash while "remedy:1:reimage" is being announced must still run
	// that reimage on resume (the runtime is already at its version from
	// the first reimage, so a version check would wrongly call it done).
	// A crash after the BMC accepted it but before its task URI was
	// journaled re-runs it: remediation is not verified by version.
	clean := newHarness(t)
	srv := "c1/r01/r01-s01"
	clean.plan = executortest.Single(clean.prov, map[string]Script{srv: {WaitReadyFails: 1}}, S{Name: "r01", Servers: 1})
	mem := clean.backend
	clean.run()
	entries, _ := mem.Read(context.Background(), sha, -1)
	k := 0
	for i, e := range entries {
		if strings.Contains(string(e.Data), `"op":"remedy:1:reimage"`) {
			k = i // crash while writing that record
			break
		}
	}
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{srv: {WaitReadyFails: 1}}, S{Name: "r01", Servers: 1})
	m2 := h.backend
	h.backend = &executortest.Crash{Backend: m2, After: k}
	h.exec().Run(context.Background(), context.Background())
	h.backend = m2
	runToCompletion(t, h, 1)
	if n := h.prov.Count(srv, providers.StepReimage); n != 2 {
		t.Errorf("reimage ran %d times, want 2 (the step and the remediation)", n)
	}
	wantStates(t, h, map[string]string{srv: "completed"})
}

func TestRule08ServerInTwoScopesIsRefused(t *testing.T) {
	h := newHarness(t)
	p := executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1}, S{Name: "r02", Servers: 1})
	scopes := p.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes
	scopes[1].Servers = append(scopes[1].Servers, scopes[0].Servers[0])
	_, err := executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: h.backend})
	if err == nil || !strings.Contains(err.Error(), "c1/r01/r01-s01 is in two scopes") {
		t.Fatalf("New = %v, want a refusal naming the server", err)
	}
}

func TestRule03FirmwareOnlyRemediationCannotReimage(t *testing.T) {
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
