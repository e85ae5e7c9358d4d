package executor_test

import (
	"strings"
	"testing"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// asDevice makes the plan's server addr a switch tray: a device whose
// steps are one update and a wait for readiness (rule 51).
func asDevice(p *plan.Plan, addr string) {
	for i := range p.Servers {
		s := &p.Servers[i]
		if s.Address != addr {
			continue
		}
		s.Kind, s.Role, s.Reboots = "switch_tray", "device", 0
		s.Changes = s.Changes[:1]
		s.Steps = []plan.Step{
			{Index: 1, Kind: plan.StepUpdate, Component: "bios", Match: &providers.Match{ID: "BIOS"}, Target: version.Target{Version: "2.0"}, Image: "http://127.0.0.1:9/bmc.bin", ApplyTime: "Immediate"},
			{Index: 2, Kind: plan.StepWaitReady, Expect: []providers.Expectation{{Component: "bios", Match: providers.Match{ID: "BIOS"}, Target: version.Target{Version: "2.0"}}}},
		}
	}
}

// TestDeviceRunsOnlyItsSteps: a device is driven like a server, its
// target saying it is a device (so the provider reads its Manager, not a
// ComputerSystem), with exactly its update and wait_ready and nothing the
// executor adds for a host.
func TestDeviceRunsOnlyItsSteps(t *testing.T) {
	h := newHarness(t)
	dev, srv := rackServer("r01", 1), rackServer("r01", 2)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2})
	asDevice(h.plan, dev)
	out := h.run()
	wantOutcome(t, out, executor.OutcomeCompleted, "")
	var kinds []string
	for _, c := range h.prov.Calls() {
		switch c.Server {
		case dev:
			kinds = append(kinds, string(c.Kind))
			if c.Device != "switch_tray" {
				t.Errorf("%s call on the device with target Device %q", c.Kind, c.Device)
			}
		case srv:
			if c.Device != "" {
				t.Errorf("%s call on the server with target Device %q", c.Kind, c.Device)
			}
		}
	}
	if got := strings.Join(kinds, " "); got != "update wait_ready" {
		t.Errorf("device calls %q, want its update and its wait_ready only", got)
	}
}

// TestDeviceFailureSaysDevice: a device that does not come back is told
// as a device, not a server: its state says the device needs a replace,
// what brings it back asks for its controller and its version (it has no
// host to power on or uncordon), and the run's summary counts the
// servers and the devices upgraded apart.
func TestDeviceFailureSaysDevice(t *testing.T) {
	h := newHarness(t)
	dev := rackServer("r01", 1)
	h.plan = executortest.Single(h.prov, map[string]Script{dev: {WaitReadyFails: 100}},
		S{Name: "r01", Servers: 2, Threshold: plan.Threshold{Type: "count", Value: 1}})
	asDevice(h.plan, dev)
	// Sent now, active at the device's next start: left staged when it
	// fails.
	for i := range h.plan.Servers {
		if h.plan.Servers[i].Address == dev {
			h.plan.Servers[i].Steps[0].ApplyTime = "OnStartUpdateRequest"
		}
	}
	out := h.run()
	wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
	if n := h.node(dev); n.State.String() != "failed(unhealthy)" || !strings.Contains(n.Message, "the device is unhealthy and needs a replace") {
		t.Errorf("device %s %q, want failed(unhealthy) saying the device needs a replace", n.State, n.Message)
	}
	if len(out.Stranded) != 1 || out.Stranded[0].Server != dev {
		t.Fatalf("stranded %+v, want the device", out.Stranded)
	}
	want := "the device needs a repair or a replace; check that its controller answers and its firmware version reads back, then: " + executor.NextAction{Kind: executor.NextPlan, Target: dev}.Ref()
	if got := out.Stranded[0].Recover; got != want {
		t.Errorf("recover %q\nwant    %q", got, want)
	}
	if want := "1 server and 0 devices upgraded, 1 failed, 0 skipped; 1 left out of service"; out.Message != want {
		t.Errorf("message %q, want %q", out.Message, want)
	}
}

// TestDeviceStrandedAfterStepFailure: a device left with an image staged
// by a failed step is brought back by planning it again once its
// controller answers, never by powering on or uncordoning a host.
func TestDeviceStrandedAfterStepFailure(t *testing.T) {
	h := newHarness(t)
	dev := rackServer("r01", 1)
	h.plan = executortest.Single(h.prov, map[string]Script{dev: {FailKind: providers.StepWaitReady}},
		S{Name: "r01", Servers: 2, Threshold: plan.Threshold{Type: "count", Value: 1}})
	asDevice(h.plan, dev)
	for i := range h.plan.Servers {
		if h.plan.Servers[i].Address == dev {
			h.plan.Servers[i].Steps[0].ApplyTime = "OnStartUpdateRequest"
		}
	}
	out := h.run()
	if len(out.Stranded) != 1 || out.Stranded[0].Server != dev {
		t.Fatalf("stranded %+v, want the device", out.Stranded)
	}
	got := out.Stranded[0].Recover
	if strings.Contains(got, "power it on") || strings.Contains(got, "uncordon") || !strings.Contains(got, "controller answers") {
		t.Errorf("recover %q, want the device's controller and version, no host", got)
	}
	if !strings.HasSuffix(out.Message, "; 1 left out of service") || !strings.HasPrefix(out.Message, "1 server and 0 devices upgraded") {
		t.Errorf("message %q", out.Message)
	}
}

// A plan of servers only is told as before: "servers", no devices.
func TestServerSummaryWithoutDevices(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2})
	out := h.run()
	if want := "2 servers upgraded, 0 failed, 0 skipped"; out.Message != want {
		t.Errorf("message %q, want %q", out.Message, want)
	}
}
