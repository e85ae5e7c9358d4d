package executor_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// crashing wraps the fake provider: the n-th call of a kind dies as a
// plugin crash does (providers.Unavailable), after the BMC did its part
// (the fake applied the step and, for updates, reported the task URI).
// While down, every call is unavailable; a restart brings it back.
type crashing struct {
	*executortest.Provider
	mu sync.Mutex
	// crashAt maps a step kind ("observe" and "task" too) to the call
	// counts at which the provider dies.
	crashAt map[string][]int
	calls   map[string]int
	// restarts is how many times the provider comes back after dying;
	// -1: always.
	restarts int
	down     bool
	crashes  int
}

func newCrashing(p *executortest.Provider, restarts int, at map[string][]int) *crashing {
	return &crashing{Provider: p, crashAt: at, calls: map[string]int{}, restarts: restarts}
}

func (c *crashing) hit(kind string) (crash bool, unavailable bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		// A restart brings the provider back, if it can be restarted.
		if c.restarts == 0 {
			return false, true
		}
		if c.restarts > 0 {
			c.restarts--
		}
		c.down = false
	}
	c.calls[kind]++
	for _, n := range c.crashAt[kind] {
		if c.calls[kind] == n {
			c.down = true
			c.crashes++
			return true, false
		}
	}
	return false, false
}

var errCrash = providers.Unavailable("", `Apply on provider "fake" failed: error reading from server: EOF (Unavailable). The plugin process has exited; its last log lines say why.`)

func (c *crashing) Describe(ctx context.Context) (*providers.Description, providers.Diagnostics) {
	if _, unavailable := c.hit("describe"); unavailable {
		return nil, providers.Unavailable("", `provider "fake" could not be restarted: the plugin binary is gone`)
	}
	return c.Provider.Describe(ctx)
}

func (c *crashing) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	crash, unavailable := c.hit("observe")
	if crash || unavailable {
		return errCrash
	}
	return c.Provider.Observe(ctx, req, fn)
}

func (c *crashing) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	crash, unavailable := c.hit(string(req.Step.Kind))
	if unavailable {
		return nil, errCrash
	}
	res, d := c.Provider.Apply(ctx, req, fn)
	if crash {
		// The BMC did the work; the plugin died before it could say so.
		return nil, errCrash
	}
	return res, d
}

func (c *crashing) Task(ctx context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	crash, unavailable := c.hit("task")
	if crash || unavailable {
		return nil, errCrash
	}
	return c.Provider.Task(ctx, req)
}

// A provider that dies during each step kind, and comes back when
// restarted, costs no server: every step resumes from the journal (the
// update's task is polled, never flashed again) and the run completes.
func TestProviderCrashAtEveryStepKindResumes(t *testing.T) {
	for _, kind := range []string{"observe", "shutdown", "update", "reimage", "wait_ready", "task"} {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t)
			h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2, MaxUnavailable: 1})
			at := map[string][]int{kind: {1}}
			if kind == "task" {
				// A task is polled only on resume: crash the update first.
				at = map[string][]int{"update": {1}, "task": {1}}
			}
			c := newCrashing(h.prov, -1, at)
			out := h.runWith(c)
			wantOutcome(t, out, executor.OutcomeCompleted, "")
			if c.crashes == 0 {
				t.Fatal("the provider never crashed")
			}
			assertExactlyOnce(t, h)
			var interrupted int
			for _, ev := range h.events {
				if ev.Type == "step_interrupted" {
					interrupted++
					if !strings.Contains(ev.Message, `provider "fake" failed during the step`) {
						t.Errorf("event message %q", ev.Message)
					}
				}
				if ev.Type == "step_failed" {
					t.Errorf("a step failed: %+v", ev)
				}
			}
			if interrupted != c.crashes {
				t.Errorf("%d step_interrupted events, %d crashes", interrupted, c.crashes)
			}
		})
	}
}

// When the provider cannot be restarted, the run stops as
// provider_unavailable with the server in flight resumable, not failed; the
// next apply, with the provider back, finishes it without flashing again.
func TestProviderUnavailableStopsResumable(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2, MaxUnavailable: 1})
	c := newCrashing(h.prov, 0, map[string][]int{"update": {1}})
	out := h.runWith(c)
	wantOutcome(t, out, executor.OutcomeStopped, executor.ReasonProviderUnavailable)
	if !strings.Contains(out.Message, `provider "fake" is unavailable: `) || !strings.Contains(out.Message, "could not be restarted") {
		t.Errorf("message %q", out.Message)
	}
	if diff := cmp.Diff([]executor.NextAction{{Kind: executor.NextApply}}, out.Next); diff != "" {
		t.Error(diff)
	}
	first := rackServer("r01", 1)
	wantStates(t, h, map[string]string{"run": "stopped(provider_unavailable)", first: "running", rackServer("r01", 2): "not_started"})
	n := h.node(first)
	if st := n.Steps[2]; st.Kind != "update" || st.State != executor.Running || st.TaskURI == "" {
		t.Errorf("the update: %+v, want running with its task URI", st)
	}
	// Listed as left out of service, with how to resume.
	if len(out.Stranded) != 1 || out.Stranded[0].Server != first || !out.Stranded[0].PoweredOff || !out.Stranded[0].Drained ||
		out.Stranded[0].Recover != "resume the run: "+(executor.NextAction{Kind: executor.NextApply}).Ref() {
		t.Errorf("stranded %+v", out.Stranded)
	}
	// The provider is back: the next apply polls the task and finishes.
	out = h.run()
	wantOutcome(t, out, executor.OutcomeCompleted, "")
	assertExactlyOnce(t, h)
	if h.prov.Polls() == 0 {
		t.Error("the journaled task was not polled")
	}
}

// A provider that dies on the same step every time it is restarted does
// not loop: the run stops after a bound.
func TestProviderCrashLoopStops(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	c := newCrashing(h.prov, -1, map[string][]int{"wait_ready": {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}})
	out := h.runWith(c)
	wantOutcome(t, out, executor.OutcomeStopped, executor.ReasonProviderUnavailable)
	if !strings.Contains(out.Message, `provider "fake" failed 5 times during step:5 (wait_ready) of c1/r01/r01-s01`) {
		t.Errorf("message %q", out.Message)
	}
	wantStates(t, h, map[string]string{rackServer("r01", 1): "running"})
}

// The first interrupt gives up polls and waits at once (journaled: the
// next apply resumes them) and waits only for requests that change a BMC.
func TestGracefulInterruptAbandonsPolls(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hangAt  int // the Apply call that hangs: 1 shutdown, 2 update (task journaled), 3 reimage, 4 wait_ready
		waits   bool
		runOp   int // the plan step index left in flight, when abandoned
		wantRun executor.StateName
	}{
		{"shutdown is abandoned", 1, false, 2, executor.Running},
		{"an update whose task is journaled is abandoned", 2, false, 3, executor.Running},
		{"a reimage is waited for", 3, true, 0, executor.Completed},
		{"wait_ready is abandoned", 4, false, 5, executor.Running},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.async = true
			srv := rackServer("r01", 1)
			h.plan = executortest.Single(h.prov, map[string]Script{srv: {HangApply: tc.hangAt}}, S{Name: "r01", Servers: 1})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan executor.Outcome, 1)
			go func() {
				out, err := h.exec().Run(ctx, context.Background())
				if err != nil {
					t.Error(err)
				}
				done <- out
			}()
			<-h.prov.Hanging(srv)
			cancel()
			var out executor.Outcome
			select {
			case out = <-done:
				if tc.waits {
					t.Fatal("Run returned without waiting for the request that changes the BMC")
				}
			case <-time.After(300 * time.Millisecond):
				if !tc.waits {
					t.Fatal("Run waited for an operation it should give up")
				}
				h.prov.Release(srv)
				out = <-done
			}
			wantOutcome(t, out, executor.OutcomeInterrupted, executor.ReasonInterrupted)
			n := h.node(srv)
			if n.State.Name != executor.Running {
				t.Errorf("server %s", n.State)
			}
			if tc.runOp > 0 {
				st := n.Steps[tc.runOp-1]
				if st.State != executor.Running {
					t.Errorf("step %d: %+v, want in flight", tc.runOp, st)
				}
			}
			h.async = false
			runToCompletion(t, h, 1)
			assertExactlyOnce(t, h)
		})
	}
}

// A server that fails after it was shut down is listed as left out of
// service, with what brings it back; the run completes with failures.
func TestStrandedAfterFailure(t *testing.T) {
	h := newHarness(t)
	srv := rackServer("r01", 1)
	h.plan = executortest.Single(h.prov, map[string]Script{srv: {FailKind: providers.StepReimage}}, S{Name: "r01", Servers: 2, Threshold: plan.Threshold{Type: "count", Value: 1}})
	out := h.run()
	wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
	want := []executor.Stranded{{Server: srv, State: executor.Failed, Reason: executor.ReasonStep, PoweredOff: true, Drained: true,
		Recover: "plan it again, which brings it back with its upgrade: " + executor.NextAction{Kind: executor.NextPlan, Target: "c1/r01/r01-s01"}.Ref() + " (or power it on and uncordon it by hand)"}}
	if diff := cmp.Diff(want, out.Stranded); diff != "" {
		t.Errorf("stranded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, h.status().Stranded); diff != "" {
		t.Errorf("status stranded (-want +got):\n%s", diff)
	}
	if out.Message != "1 server upgraded, 1 failed, 0 skipped; 1 left out of service" {
		t.Errorf("message %q", out.Message)
	}
}

// A server whose uncordon hook failed is upgraded but left cordoned: the
// command that brings it back is the hook itself.
func TestStrandedCordoned(t *testing.T) {
	h := newHarness(t)
	srv := rackServer("r01", 1)
	h.hooks.Fail[srv+"/uncordon"] = true
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	out := h.run()
	wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
	want := []executor.Stranded{{Server: srv, State: executor.Completed, Drained: true,
		Recover: "uncordon it: env RACKFORM_SERVER=r01-s01 RACKFORM_NODE=node-r01-s01 RACKFORM_RACK=r01 RACKFORM_CLUSTER=c1 RACKFORM_ADDRESS=c1/r01/r01-s01 uncordon"}}
	if diff := cmp.Diff(want, out.Stranded); diff != "" {
		t.Errorf("stranded (-want +got):\n%s", diff)
	}
}

// Skipping a server whose steps began brings it back first; when a safety
// step fails, the server is skipped and reported as left out of service.
func TestSkipInFlightSafetyFails(t *testing.T) {
	h := newHarness(t)
	h.async = true
	srv := rackServer("r01", 1)
	// Apply 1 shutdown (hangs until skipped), 2 the safety power_on: fails.
	h.plan = executortest.Single(h.prov, map[string]Script{srv: {HangApply: 1, FailApply: 2}}, S{Name: "r01", Servers: 2, Threshold: plan.Threshold{Type: "count", Value: 1}})
	done := make(chan executor.Outcome, 1)
	go func() { done <- h.run() }()
	<-h.prov.Hanging(srv)
	if err := h.exec().Skip(context.Background(), srv); err != nil {
		t.Fatal(err)
	}
	h.prov.Release(srv)
	out := <-done
	wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
	n := h.node(srv)
	if n.State.Name != executor.Skipped || !strings.Contains(n.State.Message, "power_on failed: ") || !strings.HasSuffix(n.State.Message, "; left powered off, drained") {
		t.Errorf("state %s", n.State)
	}
	if len(out.Stranded) != 1 || out.Stranded[0].Server != srv || !out.Stranded[0].PoweredOff || !out.Stranded[0].Drained {
		t.Errorf("stranded %+v", out.Stranded)
	}
	// Never uncordoned: the node was not brought back.
	for _, c := range h.hooks.Calls() {
		if executortest.Env(c, "RACKFORM_ADDRESS") == srv && c.Name == "uncordon" {
			t.Error("uncordoned a server left powered off")
		}
	}
}

// Skipping a whole rack while one of its servers is in flight: the server
// is brought back first, and nothing above it completes before it has (a
// crash in between must still find the run unfinished).
func TestSkipRackInFlightCompletesAfterSafety(t *testing.T) {
	h := newHarness(t)
	h.async = true
	srv := rackServer("r01", 1)
	h.plan = executortest.Single(h.prov, map[string]Script{srv: {HangApply: 1}}, S{Name: "r01", Servers: 2, MaxUnavailable: 1})
	done := make(chan executor.Outcome, 1)
	go func() { done <- h.run() }()
	<-h.prov.Hanging(srv)
	if err := h.exec().Skip(context.Background(), rackID("r01")); err != nil {
		t.Fatal(err)
	}
	// Let the skip reach the run before the shutdown returns.
	deadline := time.Now().Add(5 * time.Second)
	for h.state(rackID("r01")) != "skipped(user)" {
		if time.Now().After(deadline) {
			t.Fatal("the skip never reached the run")
		}
		h.clock.Advance(3 * time.Second) // the run reads control records every PollInterval
		time.Sleep(5 * time.Millisecond)
	}
	if got := h.state("run"); got != "running" {
		t.Errorf("run is %s while a server of the skipped rack is in flight", got)
	}
	h.prov.Release(srv)
	wantOutcome(t, <-done, executor.OutcomeCompletedWithFailures, "")
	var order []string
	h.mu.Lock()
	for _, e := range h.events {
		if (e.Type == "server_skipped" && e.ID == srv) || strings.HasPrefix(e.Type, "run_") || strings.HasPrefix(e.Type, "phase_") {
			order = append(order, e.Type)
		}
	}
	h.mu.Unlock()
	if len(order) < 3 || order[0] != "run_started" || order[1] != "phase_started" || order[2] != "server_skipped" {
		t.Errorf("events %v: the server must be skipped (after its safety steps) before anything above it ends", order)
	}
	if n := h.prov.Count(rackServer("r01", 2), ""); n != 0 {
		t.Errorf("the other server of the skipped rack got %d calls", n)
	}
}

// A provider that dies while the quorum guard observes the other
// control-plane members leaves them unknown, not down: the plugin is
// restarted and the check runs again, and the run never pauses for quorum
// over members that are on, healthy and at target.
func TestProviderCrashDuringQuorumCheckIsNotAMemberDown(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 3})
	// cp-s01's pre-flight: its own observation (1), then cp-s02 (2) and
	// cp-s03 (3): the plugin dies observing cp-s02.
	c := newCrashing(h.prov, -1, map[string][]int{"observe": {2}})
	out := h.runWith(c)
	wantOutcome(t, out, executor.OutcomeCompleted, "")
	if c.crashes != 1 {
		t.Fatalf("%d crashes, want 1", c.crashes)
	}
	for _, ev := range h.events {
		if ev.Type == "quorum_hold" || ev.Reason == executor.ReasonQuorum {
			t.Errorf("held for quorum over a member the provider could not observe: %+v", ev)
		}
	}
	i := h.index("step_interrupted", addrOf("cp", 1))
	if i < 0 {
		t.Fatal("no step_interrupted event for cp-s01's pre-flight")
	}
	if msg := h.events[i].Message; !strings.Contains(msg, "observing the control-plane member c1/cp/cp-s02 for the quorum check") {
		t.Errorf("step_interrupted says %q", msg)
	}
	assertExactlyOnce(t, h)
}

// A provider that cannot be restarted during the quorum check stops the
// run as provider_unavailable, resumable; it never pauses it for quorum.
func TestProviderDownDuringQuorumCheckStopsResumable(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 3})
	c := newCrashing(h.prov, 0, map[string][]int{"observe": {2}})
	out := h.runWith(c)
	wantOutcome(t, out, executor.OutcomeStopped, executor.ReasonProviderUnavailable)
	if strings.Contains(out.Message, "quorum") && !strings.Contains(out.Message, "quorum check") {
		t.Errorf("message %q", out.Message)
	}
	wantStates(t, h, map[string]string{"cluster.c1.control_plane.serial.cp": "running", addrOf("cp", 1): "running"})
	// The provider is back: the next apply checks again and goes on.
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	assertExactlyOnce(t, h)
}
