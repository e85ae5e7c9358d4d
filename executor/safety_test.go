package executor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
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
	for _, want := range []string{"quorum", "taking c1/cp/cp-s01 down would leave 1 of 3 control-plane members healthy, 2 needed", "c1/cp/cp-s03 (unreachable)", "rackform continue"} {
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
