package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// docs/rollout-rules.md, thresholds and failure (rules 9-15).

func TestRule9PercentThresholdRoundsUp(t *testing.T) {
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

func TestRule9NExcludesSkipped(t *testing.T) {
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

func TestRule9EmptyScopeIsSkipped(t *testing.T) {
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
	if diff := cmp.Diff([]executor.NextAction{{Kind: executor.NextContinue}}, out.Next); diff != "" {
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
	skipScope, skipAny := executor.NextAction{Kind: executor.NextSkip, Target: rackID("r01")}, executor.NextAction{Kind: executor.NextSkip}
	if !strings.Contains(out.Message, skipScope.Ref()) || strings.Contains(out.Message, skipAny.Ref()+": "+rackServer("r01", 1)) {
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
