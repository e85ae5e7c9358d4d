package executor_test

import (
	"context"
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

// Identity check at apply: before the first destructive step the server
// is observed and its identity compared with the plan's (fields the plan
// recorded only). A changed one is refused, untouched, named with the
// field and both values, and counts as failed; a plan without identity
// (older formats) is not checked.
func TestIdentityChangedServerIsRefused(t *testing.T) {
	h := newHarness(t)
	replaced := "c1/r01/r01-s01"
	p := executortest.Single(h.prov, map[string]Script{
		replaced:         {Identity: providers.Identity{UUID: "u-1", SerialNumber: "SN-NEW", Model: "R1"}},
		"c1/r01/r01-s02": {Identity: providers.Identity{UUID: "u-2", SerialNumber: "SN-2", Model: "R1"}},
		"c1/r01/r01-s03": {Identity: providers.Identity{UUID: "u-3", SerialNumber: "SN-3"}},
	}, S{Name: "r01", Servers: 3, Threshold: plan.Threshold{Type: "count", Value: 2}})
	p.Servers[0].Identity = providers.Identity{UUID: "u-1", SerialNumber: "SN-OLD", Manufacturer: "Contoso"}
	p.Servers[1].Identity = providers.Identity{UUID: "u-2", SerialNumber: "SN-2", Model: "R1"}
	// s03: a plan without identity (format 1.2 and before) is not checked.
	h.plan = p
	h.run()
	n := h.node(replaced)
	want := "the BMC at https://bmc.invalid/c1/r01/r01-s01 now reports serial SN-NEW; the plan was made for serial SN-OLD: was the machine replaced"
	if n.State.String() != "failed(identity_changed)" || !strings.Contains(n.Message, want) || !strings.HasPrefix(n.Message, "not touched: ") {
		t.Errorf("%s %q", n.State, n.Message)
	}
	if c := h.prov.Count(replaced, ""); c != 0 {
		t.Errorf("the replaced machine got %d steps", c)
	}
	for _, a := range []string{"c1/r01/r01-s02", "c1/r01/r01-s03"} {
		if st := h.state(a); st != "completed" {
			t.Errorf("%s: %s", a, st)
		}
	}
	if c := h.node(rackID("r01")).Counts; c.Failed != 1 {
		t.Errorf("the refused server must count as failed for its rack: %+v", c)
	}
}

// Truthful progress: a power off the BMC refuses is never reported as
// done; the failure says what was asked and what the BMC answered.
func TestRefusedPowerOffIsNotClaimed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script Script
		want   string
	}{
		// shutdown, update, reimage, wait_ready ✗, reimage, wait_ready ✗, power off ✗
		{"refused", Script{WaitReadyFails: 2, FailApply: 7}, "power off was asked and failed: "},
		{"answered but still on", Script{WaitReadyFails: 2, ReportPower: providers.PowerOn}, `the BMC answered "shutdown ok" but reports power On`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			a := "c1/r01/r01-s01"
			b := executortest.NewBuilder(h.prov)
			b.NoHooks = true
			b.Scripts[a] = tc.script
			b.Stage("default").Group(b, "default").Cluster("c1").Scope(S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
			p := b.Plan()
			h.plan = p
			if tc.script.ReportPower != "" {
				// Only the remediation's power off meets the stuck BMC.
				p.Servers[0].Steps = slices.DeleteFunc(p.Servers[0].Steps, func(s plan.Step) bool { return s.Kind == plan.StepShutdown })
			}
			h.run()
			n := h.node(a)
			if n.State.String() != "failed(unhealthy)" || strings.Contains(n.Message, "; powered off") || !strings.Contains(n.Message, tc.want) {
				t.Errorf("%s %q", n.State, n.Message)
			}
		})
	}
	// Confirmed: said so.
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{"c1/r01/r01-s01": {WaitReadyFails: 2, ReportPower: providers.PowerOff}}, S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	h.run()
	if n := h.node("c1/r01/r01-s01"); !strings.Contains(n.Message, "; powered off") {
		t.Errorf("a confirmed power off is reported: %q", n.Message)
	}
}

// Truthful progress: a reimage remediation the role calls for but the
// plan cannot do (firmware only: no runtime image) is announced, with why.
func TestSkippedReimageRemediationIsAnnounced(t *testing.T) {
	h := newHarness(t)
	p := executortest.Single(h.prov, map[string]Script{"c1/r01/r01-s01": {WaitReadyFails: 1}}, S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	s := &p.Servers[0]
	s.Steps = slices.DeleteFunc(s.Steps, func(st plan.Step) bool { return st.Kind == plan.StepReimage })
	h.plan = p
	h.run()
	var got []string
	for _, e := range h.events {
		if e.Type == "remediation_skipped" {
			got = append(got, e.Server+": "+e.Message)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "c1/r01/r01-s01: reimage remediation skipped: this plan carries no runtime image") {
		t.Errorf("remediation_skipped events: %q", got)
	}
	if n := h.node("c1/r01/r01-s01"); !strings.Contains(n.Message, "reimage remediation skipped") {
		t.Errorf("the failure does not say the reimage was skipped: %q", n.Message)
	}
}

// A plan of a format before 1.3 is refused at apply (it records neither
// delivery nor identity), clearly and touching nothing.
func TestApplyRefusesOlderPlanFormats(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	h.plan.FormatVersion = "1.2"
	_, err := h.exec().Run(context.Background(), context.Background())
	if err == nil || !strings.Contains(err.Error(), "plan format 1.2 was written by an older rackform") {
		t.Fatalf("Run = %v", err)
	}
	if c := len(h.prov.Calls()); c != 0 {
		t.Errorf("%d steps ran", c)
	}
}

// Apply sends each update exactly as plan recorded it: method, transfer
// protocol, targets and the image digest.
func TestUpdateIsSentAsPlanned(t *testing.T) {
	h := newHarness(t)
	p := executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	for i := range p.Servers[0].Steps {
		st := &p.Servers[0].Steps[i]
		if st.Kind == plan.StepUpdate {
			st.Method, st.TransferProtocol, st.Targets, st.SHA256 = providers.MethodSimpleUpdate, "HTTPS", []string{"/redfish/v1/Systems/1"}, strings.Repeat("cd", 32)
		}
	}
	h.plan = p
	h.run()
	for _, c := range h.prov.Calls() {
		if c.Kind == providers.StepUpdate {
			s := c.Step
			if s.Method != providers.MethodSimpleUpdate || s.TransferProtocol != "HTTPS" || len(s.Targets) != 1 || s.Targets[0] != "/redfish/v1/Systems/1" || s.SHA256 != strings.Repeat("cd", 32) {
				t.Errorf("sent %+v", s)
			}
			return
		}
	}
	t.Fatal("no update was sent")
}

// Shared components: the update of a component shared by every server on
// a BMC (Step.After) starts only once each other server on it has been
// shut down (or has ended), is sent once, and the ordering rules still
// hold (the servers of the rack run in parallel up to max_unavailable).
func TestSharedUpdateWaitsForEveryServerOnItsBMC(t *testing.T) {
	h := newHarness(t)
	h.async = true
	b := executortest.NewBuilder(h.prov)
	b.NoHooks = true
	b.Stage("default").Group(b, "default").Cluster("c1").Scope(S{Name: "r01", Servers: 3})
	p := b.Plan()
	owner := &p.Servers[2]
	owner.Steps = append(owner.Steps[:len(owner.Steps)-1:len(owner.Steps)-1],
		plan.Step{Index: 10, Kind: plan.StepUpdate, Component: "bmc", Match: &providers.Match{ID: "BMC"}, Target: version.Target{Version: "1.5"}, Image: "http://127.0.0.1:9/bmc.bin",
			Shared: true, After: []string{"c1/r01/r01-s01", "c1/r01/r01-s02"}},
		owner.Steps[len(owner.Steps)-1])
	// s01 hangs in its shutdown until released: the shared flash waits.
	h.prov.Add("c1/r01/r01-s01", executortest.Components(), executortest.Targets(), Script{HangApply: 1})
	h.plan = p
	done := make(chan executor.Outcome, 1)
	go func() { done <- h.run() }()
	<-h.prov.Hanging("c1/r01/r01-s01")
	// Everything else that can run has run; the shared flash has not.
	waitFor(t, func() bool { return h.hasEvent("step_waiting", "c1/r01/r01-s03") })
	for _, c := range h.prov.Calls() {
		if c.Component == "bmc" {
			t.Fatalf("the shared component was flashed while %s was still up", "c1/r01/r01-s01")
		}
	}
	h.prov.Release("c1/r01/r01-s01")
	out := <-done
	if out.Status != executor.OutcomeCompleted {
		t.Fatalf("outcome %+v", out)
	}
	n := 0
	var order []string
	for _, c := range h.prov.Calls() {
		order = append(order, c.Server+" "+string(c.Kind)+" "+c.Component)
		if c.Component == "bmc" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the shared component was flashed %d times, want once", n)
	}
	i := slices.Index(order, "c1/r01/r01-s03 update bmc")
	j := slices.Index(order, "c1/r01/r01-s01 shutdown ")
	if i < j {
		t.Errorf("flashed before s01 was shut down: %q", order)
	}
}

func (h *harness) hasEvent(typ, server string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		if e.Type == typ && e.Server == server {
			return true
		}
	}
	return false
}

// waitFor polls cond while the asynchronous run proceeds, bounded so a
// broken run fails instead of hanging the test.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the condition was not reached")
}

// A held-back or unobserved server never silently disappears: status
// lists it as skipped, with the plan's reason and problems.
func TestStatusListsHeldBackAndUnobservedServers(t *testing.T) {
	h := newHarness(t)
	p := executortest.Single(h.prov, nil, S{Name: "r01", Servers: 3, Threshold: plan.Threshold{Type: "count", Value: 1}})
	held, gone := &p.Servers[1], &p.Servers[2]
	held.Action, held.Reason, held.Problems, held.Steps = plan.ActionSkip, plan.ReasonHeldBack, []string{`Undecidable version: component "bios" reports "two"`}, nil
	gone.Action, gone.Reason, gone.Problems, gone.Steps = plan.ActionSkip, plan.ReasonUnreachable, []string{"dial tcp: connection refused"}, nil
	h.plan = p
	h.run()
	for a, want := range map[string]string{
		held.Address: `skipped(held_back) skipped in the plan: Undecidable version: component "bios" reports "two"`,
		gone.Address: "skipped(unreachable) skipped in the plan: dial tcp: connection refused",
	} {
		n := h.node(a)
		if got := n.State.String() + " " + n.Message; got != want {
			t.Errorf("%s: %q, want %q", a, got, want)
		}
	}
}

// Truthful progress: a server that came back only after remediation says
// so when it completes (what it took), rather than completing silently.
func TestRemediatedServerSaysWhatItTook(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, map[string]Script{"c1/r01/r01-s01": {WaitReadyFails: 1}}, S{Name: "r01", Servers: 1})
	h.run()
	n := h.node("c1/r01/r01-s01")
	if n.State.String() != "completed" || !strings.Contains(n.Message, "came back healthy and at target after remediation (reimage)") {
		t.Errorf("%s %q", n.State, n.Message)
	}
}
