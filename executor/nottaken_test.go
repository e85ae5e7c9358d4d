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

// notTakenPlan is one compute server whose BIOS update does not take the
// first n times (its BMC restarts during the flash and loses the task),
// with a wait_ready that checks the versions as the real provider's does.
func notTakenPlan(h *harness, n int, staged bool) string {
	srv := rackServer("r01", 1)
	h.plan = executortest.Single(h.prov, map[string]Script{srv: {UpdateNotTaken: n, ExpectVersions: true, Staged: staged}},
		S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	if staged {
		h.plan.Servers[0].Steps[2].ApplyTime = "OnReset"
	}
	return srv
}

func (h *harness) journalText(t *testing.T) string {
	t.Helper()
	return string(journalOf(t, h.backend))
}

// noRemediation fails when a remediation op ran on srv.
func noRemediation(t *testing.T, h *harness, srv string) {
	t.Helper()
	for _, st := range h.node(srv).Steps {
		if strings.HasPrefix(st.Op, "remedy:") || st.Op == "power_off" {
			t.Errorf("remediation ran on a healthy server: %+v", st)
		}
	}
}

// An update whose task vanished and whose version did not change is sent
// once more (journaled), and the server completes.
func TestUpdateNotTakenIsRetriedOnce(t *testing.T) {
	h := newHarness(t)
	srv := notTakenPlan(h, 1, false)
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if n := h.prov.Count(srv, providers.StepUpdate); n != 2 {
		t.Errorf("%d updates, want 2 (the one that did not take, and its retry)", n)
	}
	j := h.journalText(t)
	if !strings.Contains(j, `"type":"step_started","message":"sending the update again: it did not take effect: bios reads 1.0, expected 2.0; its BMC task vanished before it finished (as when the BMC restarts during the flash)","server":"c1/r01/r01-s01","op":"step:3","kind":"update","retry":1}`) {
		t.Errorf("the retry is not journaled with its reason:\n%s", j)
	}
	noRemediation(t, h, srv)
}

// Twice not taken: the server fails as an update that did not take
// effect, naming the component and both versions; it is never reimaged,
// and never called unhealthy or provisioning.
func TestUpdateNotTakenTwiceFails(t *testing.T) {
	h := newHarness(t)
	srv := notTakenPlan(h, 2, false)
	wantOutcome(t, h.run(), executor.OutcomeCompletedWithFailures, "")
	wantStates(t, h, map[string]string{srv: "failed(step)"})
	msg := h.node(srv).Message
	for _, want := range []string{"step 3 (update bios) failed: update did not take effect: bios reads 1.0, expected 2.0", "sent 2 times", "BMC task vanished"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	for _, bad := range []string{"provisioning", "replace", "unhealthy"} {
		if strings.Contains(msg, bad) {
			t.Errorf("message %q says %q", msg, bad)
		}
	}
	if n := h.prov.Count(srv, providers.StepUpdate); n != 2 {
		t.Errorf("%d updates, want 2", n)
	}
	if n := h.prov.Count(srv, providers.StepReimage); n != 0 {
		t.Errorf("%d reimages of a server whose firmware update did not take, want 0", n)
	}
	noRemediation(t, h, srv)
}

// A crash anywhere around the retry never flashes an update that did
// apply a third time: the resumed apply reads the version before it sends
// anything again.
func TestUpdateNotTakenRetrySurvivesACrash(t *testing.T) {
	for _, tc := range []struct {
		name, after string
		updates     int
	}{
		// The first attempt's task is journaled; the resume polls it,
		// finds it gone, reads the version, and retries once.
		{"after the first task", `"type":"task_uri"`, 2},
		// The retry is journaled and sent (the BMC takes it); the crash
		// loses its task: the resume reads the version and is done.
		{"after the retry is journaled", `"retry":1`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probe := newHarness(t)
			notTakenPlan(probe, 1, false)
			probe.run()
			k := -1
			for i, line := range strings.Split(strings.TrimSpace(probe.journalText(t)), "\n") {
				if strings.Contains(line, tc.after) {
					k = i + 1
					break
				}
			}
			if k < 0 {
				t.Fatalf("no record %s", tc.after)
			}
			h := newHarness(t)
			srv := notTakenPlan(h, 1, false)
			mem := h.backend
			h.backend = &executortest.Crash{Backend: mem, After: k}
			if _, err := h.exec().Run(context.Background(), context.Background()); !errors.Is(err, executortest.ErrCrashed) {
				t.Fatalf("Run: %v, want the simulated crash", err)
			}
			h.backend = mem
			runToCompletion(t, h, 2)
			if n := h.prov.Count(srv, providers.StepUpdate); n != tc.updates {
				t.Errorf("%d updates, want %d", n, tc.updates)
			}
			if got := h.state(srv); got != "completed" {
				t.Errorf("%s is %s", srv, got)
			}
		})
	}
}

// A staged update (OnReset) whose task vanished shows whether it took only
// after the reset: a server then on and healthy with the old version did
// not take it, and the vanished task says the BMC lost it (it restarted):
// it is sent once more with the host reset again (restage.go), and the
// server completes. Lost again, the server fails as an update that did
// not take effect, sent twice, with no remediation, with or without the
// remediation triggers' watch.
func TestStagedUpdateWhoseTaskVanishedIsSentAgainOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		notTaken int
		watched  bool
		want     string
	}{
		{"lost once", 1, false, "completed"},
		{"lost once, watched wait", 1, true, "completed"},
		{"lost twice", 2, false, "failed(step)"},
		{"lost twice, watched wait", 2, true, "failed(step)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv := notTakenPlan(h, tc.notTaken, true)
			if tc.watched {
				h.plan.Run.Stages[0].Groups[0].Clusters[0].Settings.Triggers = &plan.RemediationTriggers{Provisioning: plan.Duration(30 * time.Minute),
					ReadOnlyFilesystem: plan.Duration(10 * time.Minute), UnknownState: plan.Duration(10 * time.Minute)}
			}
			h.run()
			wantStates(t, h, map[string]string{srv: tc.want})
			if n := h.prov.Count(srv, providers.StepUpdate); n != 2 {
				t.Errorf("%d updates, want 2 (the one lost, and its retry)", n)
			}
			if n := h.prov.Count(srv, providers.StepReimage); n != 1 {
				t.Errorf("%d reimages, want the plan's one", n)
			}
			noRemediation(t, h, srv)
			if j := h.journalText(t); !strings.Contains(j, `"task_state":"Gone"`) || strings.Count(j, `"type":"retry_staged"`) != 1 {
				t.Errorf("the vanished task and one retry are not journaled:\n%s", j)
			}
			if tc.notTaken == 1 {
				return
			}
			msg := h.node(srv).Message
			for _, want := range []string{"step 3 (update bios) failed: update did not take effect: bios reads 1.0 after the reset, expected 2.0",
				"its BMC task vanished", "sent again, with the host reset again, and it did not take either"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "provisioning") || strings.Contains(msg, "replace") {
				t.Errorf("message %q blames the server", msg)
			}
		})
	}
}

// An apply resumed while the BMC restarts in the middle of the update
// (the provider died with the task recorded) polls a BMC that does not
// answer: it polls again rather than failing the update, and once the
// BMC is back and the task gone, reads the version and sends the update
// that did not take once more.
func TestResumedPollWaitsForARestartingBMC(t *testing.T) {
	for _, tc := range []struct {
		name     string
		silent   int // polls the BMC does not answer
		want     string
		updates  int
		failWith string
	}{
		{name: "back within the limit", silent: 3, want: "completed", updates: 2},
		// 2 s polls: 901 unanswered polls are past the 30-minute limit.
		{name: "never back", silent: 1 << 20, want: "failed(step)", updates: 1, failWith: "the BMC has not answered for 30m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := rackServer("r01", 1)
			build := func(h *harness) {
				h.plan = executortest.Single(h.prov, map[string]Script{srv: {UpdateNotTaken: 1, ExpectVersions: true, TaskNoAnswer: tc.silent}},
					S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
			}
			probe := newHarness(t)
			build(probe)
			probe.run()
			k := -1
			for i, line := range strings.Split(strings.TrimSpace(probe.journalText(t)), "\n") {
				if strings.Contains(line, `"type":"task_uri"`) {
					k = i + 1
					break
				}
			}
			if k < 0 {
				t.Fatal("no task_uri record")
			}
			h := newHarness(t)
			build(h)
			mem := h.backend
			h.backend = &executortest.Crash{Backend: mem, After: k}
			if _, err := h.exec().Run(context.Background(), context.Background()); !errors.Is(err, executortest.ErrCrashed) {
				t.Fatalf("Run: %v, want the simulated crash", err)
			}
			h.backend = mem
			h.run()
			if got := h.state(srv); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("%s is %s, want %s: %s", srv, got, tc.want, h.node(srv).Message)
			}
			if n := h.prov.Count(srv, providers.StepUpdate); n != tc.updates {
				t.Errorf("%d updates, want %d", n, tc.updates)
			}
			if tc.failWith != "" && !strings.Contains(h.node(srv).Message, tc.failWith) {
				t.Errorf("message %q lacks %q", h.node(srv).Message, tc.failWith)
			}
			noRemediation(t, h, srv)
		})
	}
}

// An update the BMC accepted with no task to follow (HTTP 204) is
// confirmed only by the plan's wait_ready: a server then on and healthy
// with the old version did not take it, and fails in those words, saying
// why nothing confirmed it, with no remediation (it is not powered off
// and not called unhealthy), with or without the remediation triggers'
// watch. One that did take completes.
func TestUpdateWithoutTaskNotTakenFailsAtWaitReady(t *testing.T) {
	for _, tc := range []struct {
		name     string
		notTaken int
		watched  bool
		want     string
	}{
		{"taken", 0, false, "completed"},
		{"taken, watched wait", 0, true, "completed"},
		{"not taken", 1, false, "failed(step)"},
		{"not taken, watched wait", 1, true, "failed(step)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv := rackServer("r01", 1)
			h.plan = executortest.Single(h.prov, map[string]Script{srv: {UpdateNotTaken: tc.notTaken, NoTask: true, ExpectVersions: true}},
				S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
			if tc.watched {
				h.plan.Run.Stages[0].Groups[0].Clusters[0].Settings.Triggers = &plan.RemediationTriggers{Provisioning: plan.Duration(30 * time.Minute),
					ReadOnlyFilesystem: plan.Duration(10 * time.Minute), UnknownState: plan.Duration(10 * time.Minute)}
			}
			h.run()
			wantStates(t, h, map[string]string{srv: tc.want})
			if n := h.prov.Count(srv, providers.StepUpdate); n != 1 {
				t.Errorf("%d updates, want 1 (an update with no task is not sent again)", n)
			}
			noRemediation(t, h, srv)
			if tc.notTaken == 0 {
				return
			}
			msg := h.node(srv).Message
			for _, want := range []string{"step 3 (update bios) failed: update did not take effect: bios reads 1.0 after the reset, expected 2.0",
				"the BMC accepted it with no task to follow, so nothing confirmed the flash", "check the BMC, then plan again"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			for _, bad := range []string{"provisioning", "replace", "unhealthy", "vanished"} {
				if strings.Contains(msg, bad) {
					t.Errorf("message %q says %q", msg, bad)
				}
			}
		})
	}
}

// An update sent Immediate whose task vanished, but which the BMC staged
// for the next reset all the same (a pending member at the version, as
// Lenovo's UEFI-Pending shows it), is not sent again: the plan's
// wait_ready reads it after the reset.
func TestUpdateStagedDespiteImmediateIsNotSentAgain(t *testing.T) {
	h := newHarness(t)
	srv := rackServer("r01", 1)
	h.plan = executortest.Single(h.prov, map[string]Script{srv: {ExpectVersions: true, Staged: true, StagedTaskGone: true, PendingShown: true}},
		S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	steps := h.plan.Servers[0].Steps
	if steps[2].ApplyTime != "Immediate" {
		t.Fatalf("step 3 applies %q, want Immediate", steps[2].ApplyTime)
	}
	byName := &providers.Match{NamePattern: "System BIOS"}
	steps[2].Match = byName
	steps[4].Expect[0].Match = *byName
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if n := h.prov.Count(srv, providers.StepUpdate); n != 1 {
		t.Errorf("%d updates, want 1: the image the BMC staged was sent again", n)
	}
	noRemediation(t, h, srv)
}
