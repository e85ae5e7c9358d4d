package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// docs/rollout-rules.md, waits, pauses, gates, windows, timeouts (rules 16-21).

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
		if diff := cmp.Diff([]executor.NextAction{{Kind: executor.NextContinue}}, out.Next); diff != "" {
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
	if diff := cmp.Diff([]executor.NextAction{{Kind: executor.NextApprove, Gate: gate}}, out.Next); diff != "" {
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

// pacedClock is a fake clock that says it runs 3000 times faster than
// real time, as the demo's does (executor.Paced).
type pacedClock struct{ *executortest.Clock }

func (pacedClock) Pace() float64 { return 3000 }

// A hook is a real process: on a clock running 3000 times faster than real
// time its 20-minute timeout would be 0.4 s of real time, which a loaded
// machine can spend starting a shell. It is given at least 10 s of real
// time (30,000 s on that clock), then bounded as rule 21 says.
func TestRule21HookGivenRealTimeOnAFastClock(t *testing.T) {
	h := newHarness(t)
	h.async = true
	h.hooks.Hang[rackServer("r01", 1)+"/drain"] = true
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	o := h.options()
	o.Clock = pacedClock{h.clock}
	e, err := executor.New(o)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan executor.Outcome)
	go func() {
		out, err := e.Run(context.Background(), context.Background())
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- out
	}()
	<-h.hooks.Hanging()
	h.clock.Advance(20 * time.Minute)
	select {
	case out := <-done:
		t.Fatalf("the drain was ended at its 20m timeout on a clock 3000x real time: %+v", out)
	case <-time.After(200 * time.Millisecond):
	}
	h.clock.Advance(30000*time.Second - 20*time.Minute)
	wantOutcome(t, <-done, executor.OutcomeCompleted, "")
	if st := h.node(rackServer("r01", 1)).Steps[0]; st.State != executor.Completed || !strings.Contains(st.Message, "did not finish within 20m0s; proceeding") {
		t.Errorf("drain step = %+v", st)
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
