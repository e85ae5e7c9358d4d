package executor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// stagedLostPlan is one compute server whose BIOS update is staged for the
// next reset (its task completes), then whose BMC restarts while its own
// firmware is flashed: the BMC update's task vanishes, and the restart
// discards the staged BIOS image. The BMC update is sent again and takes;
// after the reset the BIOS still reads its old version. With lostAgain,
// the BMC discards the BIOS image it stages the second time too.
func stagedLostPlan(h *harness, lostAgain bool) string {
	srv := rackServer("r01", 1)
	script := Script{ExpectVersions: true, Staged: true, UpdateNotTaken: 1, NotTakenOf: "BMC", RestartLosesStaged: true}
	if lostAgain {
		script.DropStaged = map[string]int{"BIOS": 2}
	}
	h.plan = executortest.Single(h.prov, map[string]Script{srv: script},
		S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	ps := &h.plan.Servers[0]
	comps := append(executortest.Components(), providers.Component{ID: "BMC", Name: "BMC firmware", Version: "1.0", Updateable: true})
	ps.Observed.Components, ps.Fingerprint = comps, executortest.Fingerprint(comps)
	h.prov.Add(srv, comps, executortest.Targets(), script)
	ps.Steps[2].ApplyTime = "OnReset"
	bmc := plan.Step{Index: 7, Kind: plan.StepUpdate, Component: "bmc", Match: &providers.Match{ID: "BMC"}, Target: version.Target{Version: "2.0"},
		Image: "http://127.0.0.1:9/bmc.bin", ApplyTime: "Immediate"}
	ps.Steps = slices.Insert(ps.Steps, 3, bmc)
	return srv
}

// watchTriggers makes the plan's remediation triggers watch its waits.
func watchTriggers(h *harness) {
	h.plan.Run.Stages[0].Groups[0].Clusters[0].Settings.Triggers = &plan.RemediationTriggers{Provisioning: plan.Duration(30 * time.Second),
		ReadOnlyFilesystem: plan.Duration(10 * time.Minute), UnknownState: plan.Duration(10 * time.Minute)}
}

// sent counts the updates of component sent to srv: fresh ones, and
// those run again after a crash (ResumeSince: the provider attaches to
// the work an earlier attempt started).
func sent(h *harness, srv, component string) (fresh, resumed int) {
	for _, c := range h.prov.Calls() {
		if c.Server != srv || c.Kind != providers.StepUpdate || c.Component != component {
			continue
		}
		if c.ResumeSince.IsZero() {
			fresh++
		} else {
			resumed++
		}
	}
	return fresh, resumed
}

// journalCount counts the journal's records that contain every one of
// parts.
func journalCount(t *testing.T, h *harness, parts ...string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(h.journalText(t), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// wantOneRetry checks the journal of a server whose lost BIOS was sent
// again: one retry_staged naming it, the host powered off and reset again
// once each, the BIOS sent again once, journaled as a retry, and the
// plan's wait_ready run twice. After a crash, resumed, an op of the retry
// may have been started twice, and done once.
func wantOneRetry(t *testing.T, h *harness, srv string, resumed bool) {
	t.Helper()
	for _, c := range []struct {
		parts []string
		want  int
	}{
		{[]string{`"type":"retry_staged"`, `"op":"step:5"`, `"steps":[3]`, "it did not take effect: bios reads 1.0 after the reset, expected 2.0", "the BMC restarted"}, 1},
		{[]string{`"type":"retry_staged"`}, 1},
		{[]string{`"type":"step_started"`, `"op":"step:3"`, `"retry":1`, "sending the update again: it did not take effect: bios reads 1.0 after the reset"}, 1},
		{[]string{`"type":"step_started"`, `"op":"restage:shutdown"`}, 1},
		{[]string{`"type":"step_done"`, `"op":"restage:shutdown"`}, 1},
		{[]string{`"type":"step_started"`, `"op":"restage:reset"`}, 1},
		{[]string{`"type":"step_done"`, `"op":"restage:reset"`}, 1},
	} {
		n := journalCount(t, h, c.parts...)
		if resumed && c.parts[0] == `"type":"step_started"` && n > c.want {
			n = c.want // started again after the crash
		}
		if n != c.want {
			t.Errorf("%d journal records with %q, want %d", n, c.parts, c.want)
		}
	}
	if n := journalCount(t, h, `"type":"step_started"`, `"op":"step:5"`); n < 2 {
		t.Errorf("the plan's wait_ready started %d times, want it run again after the retry", n)
	}
	var resets []executortest.Call
	for _, c := range h.prov.Calls() {
		if c.Server == srv && c.Kind == providers.StepReset {
			resets = append(resets, c)
		}
	}
	if len(resets) == 0 || resets[0].ResetType != "On" {
		t.Errorf("resets %+v, want a reset On (the host is off after the plan's shutdown, done again)", resets)
	}
	if n := h.prov.Count(srv, providers.StepShutdown); n < 2 {
		t.Errorf("%d shutdowns, want the plan's and the retry's", n)
	}
	if n := h.prov.Count(srv, providers.StepReimage); n != 1 {
		t.Errorf("%d reimages, want the plan's one", n)
	}
	noRemediation(t, h, srv)
}

// A staged update lost with a BMC restart (its own task completed, the
// BMC's update after it was lost in flight and sent again) does not show
// after the reset: it is sent once more, journaled as a retry, the host
// powered off and reset again as the plan did, and the plan's wait_ready
// run again; the BIOS then shows, and the server completes. Nothing else
// is sent again, the server is not reimaged beyond the plan, and no
// remediation runs, with or without the remediation triggers' watch
// (issue 33, item 1).
func TestStagedUpdateLostWithBMCRestartIsSentAgain(t *testing.T) {
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain wait", true: "watched wait"}[watched], func(t *testing.T) {
			h := newHarness(t)
			srv := stagedLostPlan(h, false)
			if watched {
				watchTriggers(h)
			}
			wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
			wantStates(t, h, map[string]string{srv: "completed"})
			if bios, _ := sent(h, srv, "bios"); bios != 2 {
				t.Errorf("%d BIOS updates, want 2 (the one the restart lost, and its retry)", bios)
			}
			if bmc, _ := sent(h, srv, "bmc"); bmc != 2 {
				t.Errorf("%d BMC updates, want 2 (the one lost in flight, and its retry)", bmc)
			}
			wantOneRetry(t, h, srv, false)
			h.prov.Observe(context.Background(), &providers.ObserveRequest{Targets: []providers.Target{{Name: srv}}}, func(o *providers.Observation) error {
				for _, c := range o.Components {
					if (c.ID == "BIOS" || c.ID == "BMC") && c.Version != "2.0" {
						t.Errorf("%s at %s, want 2.0", c.ID, c.Version)
					}
				}
				return nil
			})
			for _, st := range h.node(srv).Steps {
				if st.Op == "step:3" && (st.State != executor.Completed || st.Attempts != 2) {
					t.Errorf("the BIOS update is %s after %d attempts, want completed after 2", st.State, st.Attempts)
				}
				if st.Op == "step:5" && st.State != executor.Completed {
					t.Errorf("the plan's wait_ready is %s: %s", st.State, st.Message)
				}
			}
			var retryEvent bool
			for _, e := range h.events {
				if e.Type == "step_retry" && e.Server == srv && e.Op == "step:5" &&
					strings.Contains(e.Message, "sending the staged updates again, then resetting the host again: it did not take effect: bios reads 1.0 after the reset") {
					retryEvent = true
				}
			}
			if !retryEvent {
				t.Error("no step_retry event saying why the staged update is sent again")
			}
		})
	}
}

// Lost again after the retry: the server fails as an update that did not
// take effect, saying it was sent again with the host reset again; it is
// sent no third time, never called provisioning, never remediated.
func TestStagedUpdateLostTwiceFails(t *testing.T) {
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain wait", true: "watched wait"}[watched], func(t *testing.T) {
			h := newHarness(t)
			srv := stagedLostPlan(h, true)
			if watched {
				watchTriggers(h)
			}
			wantOutcome(t, h.run(), executor.OutcomeCompletedWithFailures, "")
			wantStates(t, h, map[string]string{srv: "failed(step)"})
			msg := h.node(srv).Message
			for _, want := range []string{"step 3 (update bios) failed: update did not take effect: bios reads 1.0 after the reset, expected 2.0",
				"the BMC restarted", "sent again, with the host reset again, and it did not take either", "check the BMC, then plan again"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			for _, bad := range []string{"provisioning", "replace", "unhealthy", "powered off"} {
				if strings.Contains(msg, bad) {
					t.Errorf("message %q says %q", msg, bad)
				}
			}
			if bios, _ := sent(h, srv, "bios"); bios != 2 {
				t.Errorf("%d BIOS updates, want 2 (never more than one retry)", bios)
			}
			wantOneRetry(t, h, srv, false)
		})
	}
}

// A staged update whose task completed, with no sign of a BMC restart
// before the reset, that does not show after it was refused, not lost:
// it is not sent again (the same image would meet the same refusal), and
// the server fails as an update that did not take effect.
func TestStagedUpdateRefusedIsNotSentAgain(t *testing.T) {
	h := newHarness(t)
	srv := rackServer("r01", 1)
	h.plan = executortest.Single(h.prov, map[string]Script{srv: {ExpectVersions: true, Staged: true, DropStaged: map[string]int{"BIOS": 1}}},
		S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	h.plan.Servers[0].Steps[2].ApplyTime = "OnReset"
	wantOutcome(t, h.run(), executor.OutcomeCompletedWithFailures, "")
	wantStates(t, h, map[string]string{srv: "failed(step)"})
	msg := h.node(srv).Message
	if !strings.Contains(msg, "update did not take effect: bios reads 1.0 after the reset, expected 2.0; it was staged for the next reset, and the reset did not apply it; check the BMC") {
		t.Errorf("message %q", msg)
	}
	if bios, _ := sent(h, srv, "bios"); bios != 1 {
		t.Errorf("%d BIOS updates, want 1", bios)
	}
	if n := journalCount(t, h, `"type":"retry_staged"`); n != 0 {
		t.Errorf("%d retries of a refused update", n)
	}
	noRemediation(t, h, srv)
}

// A crash at any record of the retry (from the retry_staged record on)
// is resumed from the journal: the server completes, the BIOS is sent
// again once (a resumed send carries ResumeSince, so the provider
// attaches to the work already started), the retry is journaled once,
// and the server is neither reimaged beyond the plan nor remediated.
func TestStagedUpdateRetrySurvivesACrash(t *testing.T) {
	probe := newHarness(t)
	stagedLostPlan(probe, false)
	probe.run()
	lines := strings.Split(strings.TrimSpace(probe.journalText(t)), "\n")
	from := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"type":"retry_staged"`) })
	to := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, `"type":"step_done"`) && strings.Contains(l, `"op":"step:5"`)
	})
	if from < 0 || to < from {
		t.Fatalf("no retry, then the wait_ready done, in the journal:\n%s", strings.Join(lines, "\n"))
	}
	attached := 0
	for k := from; k <= to; k++ {
		t.Run(fmt.Sprintf("before record %d", k+1), func(t *testing.T) {
			h := newHarness(t)
			srv := stagedLostPlan(h, false)
			mem := h.backend
			h.backend = &executortest.Crash{Backend: mem, After: k}
			if _, err := h.exec().Run(context.Background(), context.Background()); !errors.Is(err, executortest.ErrCrashed) {
				t.Fatalf("Run: %v, want the simulated crash", err)
			}
			h.backend = mem
			runToCompletion(t, h, 2)
			if got := h.state(srv); got != "completed" {
				t.Fatalf("%s is %s: %s", srv, got, h.node(srv).Message)
			}
			bios, resumed := sent(h, srv, "bios")
			if bios != 2 || resumed > 1 {
				t.Errorf("%d BIOS updates sent, %d run again after the crash; want 2 and at most 1", bios, resumed)
			}
			attached += resumed
			if bmc, _ := sent(h, srv, "bmc"); bmc != 2 {
				t.Errorf("%d BMC updates, want 2", bmc)
			}
			wantOneRetry(t, h, srv, true)
		})
	}
	if attached == 0 {
		t.Error("no crash came while the BIOS was sent again: the resumed send (ResumeSince) is not tested")
	}
}

// A later staged update whose task vanished is a sign that the BMC
// restarted and lost the staged images only if it did not show after the
// reset either: one that showed says the staged images survived, and a
// BIOS that did not show beside it was refused, not lost (not sent
// again). When neither showed, both are sent again, in the plan's order,
// and the server completes.
func TestStagedUpdateLossSignIsReadBack(t *testing.T) {
	for _, tc := range []struct {
		name        string
		drop        map[string]int
		want        string
		bios, bmc   int
		retryStaged int
	}{
		{"the later update showed", map[string]int{"BIOS": 1}, "failed(step)", 1, 1, 0},
		{"neither showed", map[string]int{"BIOS": 1, "BMC": 1}, "completed", 2, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv := stagedLostPlan(h, false)
			script := Script{ExpectVersions: true, Staged: true, StagedTaskGone: true, StagedTaskGoneOf: "BMC", DropStaged: tc.drop}
			h.prov.Add(srv, h.plan.Servers[0].Observed.Components, executortest.Targets(), script)
			h.plan.Servers[0].Steps[3].ApplyTime = "OnReset"
			h.run()
			wantStates(t, h, map[string]string{srv: tc.want})
			if bios, _ := sent(h, srv, "bios"); bios != tc.bios {
				t.Errorf("%d BIOS updates, want %d", bios, tc.bios)
			}
			if bmc, _ := sent(h, srv, "bmc"); bmc != tc.bmc {
				t.Errorf("%d BMC updates, want %d", bmc, tc.bmc)
			}
			if n := journalCount(t, h, `"type":"retry_staged"`); n != tc.retryStaged {
				t.Errorf("%d retries, want %d", n, tc.retryStaged)
			}
			if tc.retryStaged > 0 {
				if n := journalCount(t, h, `"type":"retry_staged"`, `"steps":[3,7]`); n != 1 {
					t.Errorf("the retry does not name the BIOS and the BMC updates in the plan's order:\n%s", h.journalText(t))
				}
				var order []string
				for _, c := range h.prov.Calls() {
					if c.Kind == providers.StepUpdate {
						order = append(order, c.Component)
					}
				}
				if want := []string{"bios", "bmc", "bios", "bmc"}; !slices.Equal(order, want) {
					t.Errorf("updates sent %v, want %v", order, want)
				}
			} else if msg := h.node(srv).Message; !strings.Contains(msg, "update did not take effect: bios reads 1.0 after the reset") {
				t.Errorf("message %q", msg)
			}
			noRemediation(t, h, srv)
		})
	}
}

// A server skipped in the middle of the retry (the host powered off
// again, the update not yet sent again) is never left off: nothing more
// of the retry runs, it is powered on, waited for and uncordoned, then
// skipped.
func TestStagedUpdateRetrySkippedIsBroughtBack(t *testing.T) {
	probe := newHarness(t)
	stagedLostPlan(probe, false)
	probe.run()
	lines := strings.Split(strings.TrimSpace(probe.journalText(t)), "\n")
	k := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, `"type":"step_done"`) && strings.Contains(l, `"op":"restage:shutdown"`)
	})
	if k < 0 {
		t.Fatal("no retry's power off in the journal")
	}
	h := newHarness(t)
	srv := stagedLostPlan(h, false)
	mem := h.backend
	h.backend = &executortest.Crash{Backend: mem, After: k + 1}
	if _, err := h.exec().Run(context.Background(), context.Background()); !errors.Is(err, executortest.ErrCrashed) {
		t.Fatalf("Run: %v, want the simulated crash", err)
	}
	h.backend = mem
	if err := h.exec().Skip(context.Background(), srv); err != nil {
		t.Fatal(err)
	}
	h.run()
	if got := h.state(srv); got != "skipped(user)" {
		t.Fatalf("%s is %s: %s", srv, got, h.node(srv).Message)
	}
	if msg := h.node(srv).Message; !strings.Contains(msg, "brought back: powered on, healthy, uncordoned") {
		t.Errorf("message %q", msg)
	}
	if bios, _ := sent(h, srv, "bios"); bios != 1 {
		t.Errorf("%d BIOS updates, want 1: the retry went on after the skip", bios)
	}
	if n := journalCount(t, h, `"op":"restage:reset"`); n != 0 {
		t.Errorf("the retry's reset ran after the skip")
	}
	noRemediation(t, h, srv)
}
