package executor_test

import (
	"context"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
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
