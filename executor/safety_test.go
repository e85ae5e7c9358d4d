package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Pause after the wait (Nexus PauseRack with wait_after_rack): the pause
// after a rack begins when the wait after that rack has ended, so the
// operator's continue starts the next rack at once: the wait is held in
// full (never spent inside the pause) and never run twice.
func TestPauseAfterRackBeginsWhenItsWaitEnds(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil,
		S{Name: "r01", Servers: 1, WaitAfter: 15 * time.Minute, PauseAfter: true}, S{Name: "r02", Servers: 1})
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonAfterRack)
	done := h.eventTime("scope_completed", rackID("r01"))
	waitEnd := h.eventTime("wait_completed", rackID("r01")+".wait")
	pause := h.eventTime("rack_pause", rackID("r01")+".pause")
	if waitEnd.Sub(done) != 15*time.Minute {
		t.Errorf("the wait lasted %v, want the full 15m", waitEnd.Sub(done))
	}
	if !pause.Equal(waitEnd) || h.index("rack_pause", rackID("r01")+".pause") < h.index("wait_completed", rackID("r01")+".wait") {
		t.Errorf("the pause began at %v, before the wait ended at %v", pause, waitEnd)
	}
	wantStates(t, h, map[string]string{rackID("r01") + ".wait": "completed", rackID("r01") + ".pause": "paused(after_rack)", rackID("r02"): "not_started"})

	// The operator continues an hour later: the next rack starts at once.
	h.clock.Advance(time.Hour)
	cont := h.clock.Now()
	if err := h.exec().Continue(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if got := h.eventTime("server_started", rackServer("r02", 1)); !got.Equal(cont) {
		t.Errorf("r02 started at %v, want at the continue (%v): no second wait", got, cont)
	}
}

// Quorum guard (rack resiliency): apply re-checks the other control-plane
// members right before it takes a member down. One that went down after
// the plan holds the member (pending) and pauses the run naming quorum;
// continue while it is still down stays paused; restored, continue goes on.
func TestQuorumGuardPausesWhenAMemberWentDown(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 3})
	h.prov.SetUnreachable(addrOf("cp", 3), true) // down since the plan
	out := h.run()
	wantOutcome(t, out, executor.OutcomePaused, executor.ReasonQuorum)
	for _, want := range []string{"quorum", "taking c1/cp/cp-s01 down would leave 1 of 3 control-plane members healthy, 2 needed", "c1/cp/cp-s03 (unreachable)", executor.NextAction{Kind: executor.NextContinue}.Ref()} {
		if !strings.Contains(out.Message, want) {
			t.Errorf("outcome message does not say %q: %s", want, out.Message)
		}
	}
	if n := h.prov.Count(addrOf("cp", 1), ""); n != 0 {
		t.Errorf("cp-s01 got %d provider steps while quorum did not hold", n)
	}
	wantStates(t, h, map[string]string{addrOf("cp", 1): "pending(quorum)", "cluster.c1.control_plane.serial.cp": "paused(quorum)", "run": "paused(quorum)"})

	ctx := context.Background()
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonQuorum)
	if n := h.prov.Count(addrOf("cp", 1), ""); n != 0 {
		t.Errorf("cp-s01 was taken down after a continue while cp-s03 was still down (%d steps)", n)
	}

	h.prov.SetUnreachable(addrOf("cp", 3), false) // restored
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	for i := 1; i <= 3; i++ {
		if got := h.state(addrOf("cp", i)); got != "completed" {
			t.Errorf("cp-s0%d is %s", i, got)
		}
	}
}

// A member that is down itself is not what the guard holds: the guard
// counts the others. With the override recorded in the plan
// (allow_quorum_loss), apply does not hold for quorum.
func TestQuorumGuardOverride(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 3})
	h.plan.Run.Stages[0].Groups[0].Clusters[0].Quorum = &plan.Quorum{Required: 2, Healthy: 2, Override: true}
	h.prov.SetUnreachable(addrOf("cp", 3), true)
	out := h.run()
	if out.Reason == executor.ReasonQuorum {
		t.Fatalf("held for quorum despite the override: %v", out)
	}
	if n := h.prov.Count(addrOf("cp", 1), ""); n == 0 {
		t.Error("cp-s01 was not upgraded under the override")
	}
}

// Update-run seed, fail fast: in a stage of a declared rollout, a member
// cluster that fails (a scope of it breached) fails its group, the stage
// and the run; the next member of its group never starts, and neither
// does the next stage.
func TestFailFastMemberFailureFailsGroupStageAndRun(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Scripts = map[string]Script{"c1/r01/r01-s01": {FailKind: providers.StepUpdate}}
	g := b.Stage("canary").Group(b, "g")
	g.Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	g.Cluster("c2").Scope(S{Name: "r02", Servers: 1})
	b.Stage("prod").Group(b, "p").Cluster("c3").Scope(S{Name: "r03", Servers: 1})
	h.plan = b.Plan()
	for i := range h.plan.Run.Stages {
		h.plan.Run.Stages[i].FailFast = true
	}
	out := h.run()
	wantOutcome(t, out, executor.OutcomeFailed, executor.ReasonThreshold)
	wantStates(t, h, map[string]string{
		"cluster.c1.compute.rack.r01": "paused(threshold)",
		"cluster.c1":                  "failed(threshold)",
		"stage.canary.group.g":        "failed(threshold)",
		"stage.canary":                "failed(threshold)",
		"run":                         "failed(threshold)",
		"cluster.c2":                  "not_started",
		"stage.prod":                  "not_started",
	})
	if n := h.prov.Count("c2/r02/r02-s01", "") + h.prov.Count("c3/r03/r03-s01", ""); n != 0 {
		t.Errorf("%d steps ran after the member failed", n)
	}
	if !strings.Contains(h.node("cluster.c1").State.Message, "member failed (fail fast)") {
		t.Errorf("cluster message: %q", h.node("cluster.c1").State.Message)
	}
}

// Without a declared rollout (the Nexus single-cluster run) a breach
// still pauses: fail fast is the update run's rule, not the rack's.
func TestFailFastOnlyForDeclaredRollouts(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {FailKind: providers.StepUpdate}}, S{Name: "r01", Servers: 1}, S{Name: "r02", Servers: 1})
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
	wantStates(t, h, map[string]string{"cluster.c1": "paused(threshold)", "run": "paused(threshold)"})
}

// Skip accounting: skipping a breached rack never turns it, its phase or
// its cluster into "skipped (empty)": they are skipped by the operator,
// and the failure before the skip is named.
func TestSkipAccountingBreachedScopeIsNotEmpty(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Scripts = map[string]Script{"c1/r01/r01-s01": {FailKind: providers.StepUpdate}}
	g := b.Stage("s").Group(b, "g")
	g.Cluster("c1").Scope(S{Name: "r01", Servers: 2, MaxUnavailable: 1})
	g.Cluster("c2").Scope(S{Name: "r02", Servers: 1})
	h.plan = b.Plan()
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
	ctx := context.Background()
	if err := h.exec().Skip(ctx, "cluster.c1.compute.rack.r01"); err != nil {
		t.Fatal(err)
	}
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	out := h.run()
	wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
	got := h.states()
	for _, id := range []string{"cluster.c1.compute.rack.r01", "cluster.c1.compute", "cluster.c1"} {
		if got[id] != "skipped(user)" {
			t.Errorf("%s is %s, want skipped(user), never skipped(empty)", id, got[id])
		}
	}
	if msg := h.node("cluster.c1").State.Message; !strings.Contains(msg, "failed before the skip: c1/r01/r01-s01") {
		t.Errorf("cluster message %q does not name the failure", msg)
	}
	if got["cluster.c2"] != "completed" {
		t.Errorf("cluster.c2 is %s", got["cluster.c2"])
	}
}

// Skipping a single failed server (update-run seed: skip a member
// during the run): it leaves its scope's N, so the serial control-plane
// scope it breached goes on when continued; it is reported as skipped
// after its steps began, not lost.
func TestSkipSingleFailedServerResumesTheScope(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{addrOf("cp", 1): {FailKind: providers.StepUpdate}},
		S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 2}, S{Name: "r01", Servers: 1})
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
	ctx := context.Background()
	if err := h.exec().Skip(ctx, addrOf("cp", 1)); err != nil {
		t.Fatalf("skipping the failed server: %v", err)
	}
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	out := h.run()
	wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
	wantStates(t, h, map[string]string{addrOf("cp", 1): "skipped(user)", addrOf("cp", 2): "completed", rackServer("r01", 1): "completed"})
	if out.Servers == nil || out.Servers.SkippedAfterStart != 1 {
		t.Errorf("outcome servers %+v: the skipped failed server must be counted as skipped after its steps began", out.Servers)
	}
	// A completed server still cannot be skipped.
	var re *executor.RefusedError
	if err := h.exec().Skip(ctx, addrOf("cp", 2)); err == nil || !errors.As(err, &re) {
		t.Errorf("skipping a completed server: %v, want refusal", err)
	}
}

// Skipping a member (cluster), a group or a stage before the run starts
// (update-run seed): recorded against the plan; the run never touches it.
func TestSkipBeforeTheRunStarts(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	g := b.Stage("s").Group(b, "g")
	g.Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	g.Cluster("c2").Scope(S{Name: "r02", Servers: 1})
	b.Stage("t").Group(b, "h").Cluster("c3").Scope(S{Name: "r03", Servers: 1})
	h.plan = b.Plan()
	ctx := context.Background()
	for _, id := range []string{"cluster.c2", "stage.t"} {
		if err := h.exec().Skip(ctx, id); err != nil {
			t.Fatalf("skip %s before the run: %v", id, err)
		}
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	wantStates(t, h, map[string]string{"cluster.c1": "completed", "cluster.c2": "skipped(user)", "stage.t": "skipped(user)"})
	if n := h.prov.Count("c2/r02/r02-s01", "") + h.prov.Count("c3/r03/r03-s01", ""); n != 0 {
		t.Errorf("%d steps ran on skipped members", n)
	}
}

// spareCluster: a spare (its own serial scope, upgraded first) and three
// control-plane members, with the spare takeover armed in the plan.
func spareCluster(h *harness, scripts map[string]Script, replaces string) {
	b := executortest.NewBuilder(h.prov)
	if scripts != nil {
		b.Scripts = scripts
	}
	b.Stage("s").Group(b, "g").Cluster("c1").
		Scope(S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "spare", Servers: 1, Role: "control_plane_spare"}).
		Scope(S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 3}).
		Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	q := &plan.Quorum{Required: 2, Healthy: 3, Takeover: &plan.Takeover{Spare: addrOf("spare", 1), Replaces: replaces, Hook: []string{"bring-in-spare"}}}
	h.plan.Run.Stages[0].Groups[0].Clusters[0].Quorum = q
}

func takeoverCalls(h *harness) []string {
	var out []string
	for _, c := range h.hooks.Calls() {
		if c.Name == "takeover" {
			out = append(out, executortest.Env(c, "RACKFORM_ADDRESS")+" replaces "+executortest.Env(c, "RACKFORM_REPLACES"))
		}
	}
	return out
}

// Spare takeover planned (rack resiliency): a member down at plan time;
// the spare is upgraded first, then the takeover step brings it in, so
// the other members keep quorum and are upgraded; who is spare now is
// recorded on the spare's takeover step.
func TestSpareTakeoverPlannedKeepsQuorum(t *testing.T) {
	h := newHarness(t)
	spareCluster(h, nil, addrOf("cp", 2))
	for i := range h.plan.Servers {
		if h.plan.Servers[i].Address == addrOf("cp", 2) {
			h.plan.Servers[i].Action, h.plan.Servers[i].Reason = plan.ActionSkip, plan.ReasonUnreachable
		}
	}
	h.plan.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes[1].Eligible = 2
	h.plan.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes[1].Required = 2
	h.prov.SetUnreachable(addrOf("cp", 2), true)
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if got := takeoverCalls(h); len(got) != 1 || got[0] != addrOf("spare", 1)+" replaces "+addrOf("cp", 2) {
		t.Errorf("takeover hooks: %q", got)
	}
	if h.index("step_completed", addrOf("spare", 1)) < 0 || h.index("server_started", addrOf("cp", 1)) < h.index("spare_takeover_started", "cluster.c1.control_plane.serial.cp") {
		t.Error("a member started before the spare took over")
	}
	wantStates(t, h, map[string]string{addrOf("cp", 1): "completed", addrOf("cp", 3): "completed"})
	var steps []string
	for _, s := range h.node(addrOf("spare", 1)).Steps {
		steps = append(steps, s.Op+" "+string(s.State))
	}
	if !strings.Contains(strings.Join(steps, ","), "takeover:"+addrOf("cp", 2)+" completed") {
		t.Errorf("the spare's steps do not record the takeover: %q", steps)
	}
}

// Spare takeover on failure: a member fails during the rollout; the
// upgraded spare takes its place, the failed member is skipped as
// replaced (it is the spare now), and the rollout continues.
func TestSpareTakeoverWhenAMemberFails(t *testing.T) {
	h := newHarness(t)
	spareCluster(h, map[string]Script{addrOf("cp", 1): {FailKind: providers.StepUpdate}}, "")
	out := h.run()
	wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
	if got := takeoverCalls(h); len(got) != 1 || got[0] != addrOf("spare", 1)+" replaces "+addrOf("cp", 1) {
		t.Errorf("takeover hooks: %q", got)
	}
	wantStates(t, h, map[string]string{addrOf("cp", 1): "skipped(replaced)", addrOf("cp", 2): "completed", addrOf("cp", 3): "completed", rackServer("r01", 1): "completed"})
	if h.index("spare_takeover", "cluster.c1.control_plane.serial.cp") < 0 {
		t.Error("no spare_takeover event")
	}
}

// Without the takeover armed the same failure pauses the control plane
// (rule 4): nothing rotates in by itself.
func TestSpareTakeoverNotArmedPauses(t *testing.T) {
	h := newHarness(t)
	spareCluster(h, map[string]Script{addrOf("cp", 1): {FailKind: providers.StepUpdate}}, "")
	h.plan.Run.Stages[0].Groups[0].Clusters[0].Quorum = nil
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
	if got := takeoverCalls(h); len(got) != 0 {
		t.Errorf("takeover ran: %q", got)
	}
}

// Remediation triggers bound the wait: provisioning not done within the
// trigger (here bounded by the 30m verify timeout) fails the wait at 30m,
// not later, and starts the role's remediation (compute: one reimage),
// then the server is failed(unhealthy) and counts against its rack.
func TestRemediationTriggerProvisioningBoundsTheWait(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Scripts = map[string]Script{rackServer("r01", 1): {FailKind: providers.StepWaitReady}}
	b.Stage("s").Group(b, "g").Cluster("c1").Settings(func(s *plan.Settings) {
		s.Triggers = &plan.RemediationTriggers{Provisioning: plan.Duration(6 * time.Hour), ReadOnlyFilesystem: plan.Duration(10 * time.Minute), UnknownState: plan.Duration(30 * time.Minute)}
	}).Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonThreshold)
	var started, failed time.Time
	var msg string
	h.mu.Lock()
	for _, e := range h.events {
		if e.Server == rackServer("r01", 1) && e.Op == "step:5" {
			switch e.Type {
			case "step_started":
				started = e.Time
			case "step_failed":
				failed, msg = e.Time, e.Message
			}
		}
	}
	h.mu.Unlock()
	if d := failed.Sub(started); d != 30*time.Minute {
		t.Errorf("the wait failed after %v, want 30m", d)
	}
	if !strings.Contains(msg, "remediation trigger provisioning: provisioning not done within 30m0s") {
		t.Errorf("step_failed message %q", msg)
	}
	if h.index("step_started", rackServer("r01", 1)) < 0 || h.prov.Count(rackServer("r01", 1), providers.StepReimage) != 2 {
		t.Errorf("reimages: %d, want the plan's and remediation's", h.prov.Count(rackServer("r01", 1), providers.StepReimage))
	}
	if got := h.state(rackServer("r01", 1)); got != "failed(unhealthy)" {
		t.Errorf("server is %s", got)
	}
}

// Re-running a failed run (update-run seed: a failed run can be started
// again): a new run of the same plan over the same journal; what finished
// is kept (the members that completed are not touched again), the failed
// member starts over and, repaired, completes; the run completes.
func TestRerunFailedRunKeepsFinishedMembers(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Scripts = map[string]Script{"c2/r02/r02-s01": {FailApply: 2}} // its update fails once
	g := b.Stage("canary").Group(b, "g")
	g.Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	g.Cluster("c2").Scope(S{Name: "r02", Servers: 1})
	b.Stage("prod").Group(b, "p").Cluster("c3").Scope(S{Name: "r03", Servers: 1})
	h.plan = b.Plan()
	for i := range h.plan.Run.Stages {
		h.plan.Run.Stages[i].FailFast = true
	}
	wantOutcome(t, h.run(), executor.OutcomeFailed, executor.ReasonThreshold)
	c1Calls := h.prov.Count("c1/r01/r01-s01", "")
	ctx := context.Background()
	// Only a failed run can be run again.
	if _, err := h.exec().Run(ctx, ctx); !errors.Is(err, executor.ErrRunFailed) {
		t.Fatalf("apply of the failed run: %v, want ErrRunFailed", err)
	}
	if err := h.exec().Rerun(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	wantStates(t, h, map[string]string{"cluster.c1": "completed", "cluster.c2": "completed", "cluster.c3": "completed", "run": "completed"})
	if n := h.prov.Count("c1/r01/r01-s01", ""); n != c1Calls {
		t.Errorf("the finished member was touched again: %d calls, was %d", n, c1Calls)
	}
	var re *executor.RefusedError
	if err := h.exec().Rerun(ctx); !errors.As(err, &re) {
		t.Errorf("rerun of a completed run: %v, want refusal", err)
	}
}

// Spare takeover for a member that went down during the run: the quorum
// guard finds cp-s03 down before taking cp-s01 down; with the takeover
// armed, the upgraded spare takes cp-s03's place (instead of a pause),
// cp-s03 is skipped as replaced, and the members are upgraded with quorum.
func TestSpareTakeoverWhenAMemberGoesDown(t *testing.T) {
	h := newHarness(t)
	spareCluster(h, nil, "")
	h.prov.SetUnreachable(addrOf("cp", 3), true)
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if got := takeoverCalls(h); len(got) != 1 || got[0] != addrOf("spare", 1)+" replaces "+addrOf("cp", 3) {
		t.Errorf("takeover hooks: %q", got)
	}
	wantStates(t, h, map[string]string{addrOf("cp", 1): "completed", addrOf("cp", 2): "completed", addrOf("cp", 3): "skipped(replaced)"})
	if n := h.prov.Count(addrOf("cp", 1), providers.StepUpdate); n == 0 {
		t.Error("cp-s01 was not upgraded after the takeover")
	}
}

// A control-plane peer whose BMC takes connections and never answers
// holds the quorum check before cp-s01 goes down. Once it has not answered
// for 30 s, the run says what it waits for and on whom: a quorum_wait
// event and the member's state in status name the peer and since when (a
// peer that answers is not said). When the provider gives up on the peer
// (unreachable), the run pauses for quorum as before, with nothing taken
// down; when the peer answers at last, the member's state no longer says
// the wait and the run goes on (issue 33, item 7).
func TestQuorumWaitForAHungPeerIsSaid(t *testing.T) {
	for _, answers := range []bool{false, true} {
		t.Run(map[bool]string{false: "never answers", true: "answers late"}[answers], func(t *testing.T) {
			h := newHarness(t)
			h.async = true
			member, peer := addrOf("cp", 1), addrOf("cp", 3)
			h.plan = executortest.Single(h.prov, map[string]Script{peer: {HangObserve: 1}}, S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 3})
			hanging := h.prov.Hanging(peer)
			done := make(chan executor.Outcome, 1)
			go func() { done <- h.run() }()
			select {
			case <-hanging:
			case <-time.After(10 * time.Second):
				t.Fatal("the quorum check never observed the peer")
			}
			said := func(typ string) []executor.Event {
				h.mu.Lock()
				defer h.mu.Unlock()
				var out []executor.Event
				for _, e := range h.events {
					if e.Type == typ && (e.Server == member || e.ID == member) {
						out = append(out, e)
					}
				}
				return out
			}
			h.clock.Advance(29 * time.Second)
			time.Sleep(20 * time.Millisecond) // a scheduler pass that must not say it yet
			if s := said("quorum_wait"); len(s) != 0 {
				t.Errorf("a wait of 29 s is said: %+v", s)
			}
			h.clock.Advance(time.Minute + 41*time.Second)
			waitFor(t, func() bool { return len(said("quorum_wait")) > 0 })
			want := "waiting for quorum: the control-plane member " + peer + " has not answered since 12:00:00 UTC; it is observed before " + member + " goes down, and if its BMC does not answer the run pauses for quorum"
			if s := said("quorum_wait"); len(s) != 1 || s[0].Target != peer || s[0].Message != want || s[0].Since == nil || !s[0].Since.Equal(executortest.Epoch) {
				t.Errorf("quorum_wait events %+v, want one on %s: %s", s, peer, want)
			}
			// Status (the journal, as another process reads it) says it too.
			waitFor(t, func() bool { return h.node(member).Message == want })
			if got := h.node(member).State.Name; got != executor.Running {
				t.Errorf("%s is %s while its quorum check waits, want running", member, got)
			}
			h.prov.SetUnreachable(peer, !answers) // the provider gives up, or the BMC answers at last
			h.prov.Release(peer)
			var out executor.Outcome
			select {
			case out = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the run did not end once the peer's observation did")
			}
			if s := said("quorum_wait"); len(s) != 1 {
				t.Errorf("%d quorum_wait events, want the one", len(s))
			}
			if !answers {
				wantOutcome(t, out, executor.OutcomePaused, executor.ReasonQuorum)
				wantStates(t, h, map[string]string{member: "pending(quorum)", "cluster.c1.control_plane.serial.cp": "paused(quorum)"})
				if n := h.prov.Count(member, ""); n != 0 {
					t.Errorf("%s got %d provider steps while quorum did not hold", member, n)
				}
				return
			}
			wantOutcome(t, out, executor.OutcomeCompleted, "")
			if r := said("server_running"); len(r) != 2 || r[0].Message != want || r[1].Message != "" {
				t.Errorf("server_running events %+v, want the wait said, then no longer", r)
			}
		})
	}
}
