package executor_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// docs/rollout-rules.md, control (rules 22-26) and remediation (rule 30).

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
