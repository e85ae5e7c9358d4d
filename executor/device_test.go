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
