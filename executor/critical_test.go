package executor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// criticalPlan is one compute rack of one server whose BMC reports health
// Critical, planned with upgrade_when_critical when reason is set, with
// remediation triggers when watched.
func criticalPlan(h *harness, script Script, reason string, watched bool) string {
	srv := rackServer("r01", 1)
	b := executortest.NewBuilder(h.prov)
	b.Scripts = map[string]Script{srv: script}
	c := b.Stage("s").Group(b, "g").Cluster("c1")
	if watched {
		c = c.Settings(func(s *plan.Settings) {
			s.Triggers = &plan.RemediationTriggers{Provisioning: plan.Duration(6 * time.Hour), ReadOnlyFilesystem: plan.Duration(time.Minute), UnknownState: plan.Duration(30 * time.Minute)}
		})
	}
	c.Scope(S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	h.plan = b.Plan()
	for i := range h.plan.Servers {
		if h.plan.Servers[i].Address == srv {
			h.plan.Servers[i].Observed.Health = "Critical"
			if reason != "" {
				h.plan.Servers[i].UpgradeWhenCritical = &plan.CriticalOverride{Reason: reason}
			}
		}
	}
	return srv
}

// eventMessage is the message of srv's first event of type typ (and op,
// when set).
func (h *harness) eventMessage(typ, srv, op string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		if e.Type == typ && e.Server == srv && (op == "" || e.Op == op) {
			return e.Message
		}
	}
	return ""
}

// Rule 50 at apply: a server upgraded although Critical is not held back
// before its first step (the pre-flight event says why it goes on); every
// wait for readiness accepts it back with any health once it is on and at
// target, since it was Critical before; it completes saying its reason and
// the health it came back with. Without the override the wait still
// requires a healthy server.
func TestRule50UpgradedAlthoughCritical(t *testing.T) {
	const reason = "INC-4711: the PSU fault is fixed by the new BMC"
	for _, tc := range []struct {
		name       string
		script     Script
		reason     string
		watched    bool
		wantState  string
		wantMsg    string
		wantAccept bool
		reimages   int
	}{
		{name: "still Critical: accepted", script: Script{Health: "Critical"}, reason: reason,
			wantState: "completed", wantMsg: "upgraded although Critical (" + reason + "): ready: on and at target, still health Critical as before the upgrade; accepted, as its upgrade_when_critical says",
			wantAccept: true, reimages: 1},
		{name: "healthy again", script: Script{Health: "Critical", HealthAfter: "OK"}, reason: reason,
			wantState: "completed", wantMsg: "upgraded although Critical (" + reason + "): ready: on, at target and healthy again (health OK); it was Critical before the upgrade",
			wantAccept: true, reimages: 1},
		{name: "Warning after", script: Script{Health: "Critical", HealthAfter: "Warning"}, reason: reason,
			wantState: "completed", wantMsg: "upgraded although Critical (" + reason + "): ready: on and at target with health Warning; it was Critical before the upgrade",
			wantAccept: true, reimages: 1},
		// Watched by remediation triggers: on and Critical while not yet
		// at target is provisioning for it, never a read-only filesystem
		// (a 1-minute trigger would otherwise reimage it).
		{name: "watched, slow to come back", script: Script{Health: "Critical", WaitReadyFails: 10}, reason: reason, watched: true,
			wantState: "completed", wantMsg: "upgraded although Critical (" + reason + "): ready: on and at target, still health Critical as before the upgrade; accepted, as its upgrade_when_critical says",
			wantAccept: true, reimages: 1},
		{name: "without the override", script: Script{Health: "Critical"},
			wantState: "failed(unhealthy)", reimages: 2},
		{name: "without the override, watched", script: Script{Health: "Critical"}, watched: true,
			wantState: "failed(unhealthy)", reimages: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv := criticalPlan(h, tc.script, tc.reason, tc.watched)
			h.run()
			n := h.node(srv)
			if n.State.String() != tc.wantState {
				t.Fatalf("state %s %q, want %s", n.State, n.Message, tc.wantState)
			}
			if tc.wantMsg != "" && n.Message != tc.wantMsg {
				t.Errorf("message\n%q\nwant\n%q", n.Message, tc.wantMsg)
			}
			waits := 0
			for _, c := range h.prov.Calls() {
				if c.Server == srv && c.Kind == providers.StepWaitReady {
					waits++
					if c.Step.AcceptCritical != tc.wantAccept {
						t.Errorf("wait_ready AcceptCritical %v, want %v", c.Step.AcceptCritical, tc.wantAccept)
					}
				}
			}
			if waits == 0 {
				t.Error("no wait_ready")
			}
			if got := h.prov.Count(srv, providers.StepReimage); got != tc.reimages {
				t.Errorf("%d reimages, want %d (the plan's%s)", got, tc.reimages, map[bool]string{true: " and remediation's", false: " only"}[tc.reimages > 1])
			}
			observed := h.eventMessage("server_observed", srv, "")
			if tc.reason != "" {
				if want := "no drift; upgraded although its BMC reports health Critical, as its configuration says: " + reason; observed != want {
					t.Errorf("server_observed %q, want %q", observed, want)
				}
				if msg := h.eventMessage("step_completed", srv, "step:5"); !strings.HasPrefix(msg, "ready: on") {
					t.Errorf("the wait's step_completed says %q", msg)
				}
			} else if observed != "no drift" {
				t.Errorf("server_observed %q", observed)
			}
			if tc.watched && tc.reason == "" {
				if msg := h.eventMessage("step_failed", srv, "step:5"); !strings.Contains(msg, "remediation trigger read_only_filesystem") {
					t.Errorf("without the override, on and Critical is a read-only filesystem: %q", msg)
				}
			}
		})
	}
}

// A staged update that did not take on a server upgraded although
// Critical is told as on any other (its wait finds it on, Critical as
// before, at the old version): sent again once with the host reset again,
// and the server completes, never remediated (rules 40 and 50).
func TestRule50UpdateNotTakenOnACriticalServer(t *testing.T) {
	h := newHarness(t)

	srv := rackServer("r01", 1)
	h.plan = executortest.Single(h.prov, map[string]Script{srv: {UpdateNotTaken: 1, ExpectVersions: true, Staged: true, Health: "Critical"}},
		S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	h.plan.Servers[0].Steps[2].ApplyTime = "OnReset" // only the plan's wait for readiness reads it
	h.plan.Servers[0].Observed.Health = "Critical"
	h.plan.Servers[0].UpgradeWhenCritical = &plan.CriticalOverride{Reason: "INC-4711"}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	if n := h.prov.Count(srv, providers.StepUpdate); n != 2 {
		t.Errorf("%d updates, want 2 (the one that did not take, and its retry)", n)
	}
	noRemediation(t, h, srv)
}
