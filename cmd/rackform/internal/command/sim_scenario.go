package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/providers/sim"
	"github.com/rackform/rackform/rehearsal"
)

// scenarioFaults translates a rehearsal scenario (rackform rehearse
// -scenario) into the simulator's own fault injection, per BMC of a
// -config fleet, so that a real apply against the simulator meets the
// faults a rehearsal rehearsed:
//
//	never_ready            no-return, for good: every boot ends off, health Critical
//	update_fails           task-fail: the BMC's update tasks end in Exception
//	                       (with component: only that component's)
//	slow                   slow: tasks (update), boots (reset, power_on, wait_ready,
//	                       reimage) or shutdowns take factor times as long
//	bmc_busy               busy from at for for: 503 with Retry-After
//	bmc_down               down from at for for: every connection dropped
//	host_down              host-down from at for for: the host off, health Critical
//	read_only_filesystem   read-only-fs from at for for
//	unknown_state          unknown-state from at for for
//
// at and for are on the simulator's clock, which starts when it starts
// serving and runs -speed times faster (now is the at of "0s"); an RFC
// 3339 at is that moment of it. What the simulator cannot inject the same
// way is an error at its line rather than left out: a random block (it
// draws its own), slow drain or uncordon (hooks, not the BMC's), a host
// fault on a BMC that serves several servers (it would hit them all), a
// read-only filesystem or unknown state without at (a rehearsal starts it
// at the server's first boot, which the simulator does not single out), a
// component the simulator does not know.
func (c *simCommand) scenarioFaults(cfg *config.Config, path string) (map[string][]sim.Fault, *rehearsal.Scenario, hcl.Diagnostics) {
	sc, diags := rehearsal.LoadScenario(path)
	if sc == nil || diags.HasErrors() {
		return nil, sc, diags
	}
	var targets []rehearsal.Target
	// keys are the simulator's names of each release component (its
	// match's Id or SoftwareId, or its own name, as the simulator's
	// inventory calls it: BIOS, BMC, NIC, CPLD, GPU, Runtime).
	keys := map[string]string{}
	for _, s := range cfg.Servers() {
		t := rehearsal.Target{Address: s.Cluster.Name + "/" + s.Rack.Name + "/" + s.Name, Name: s.Name, Cluster: s.Cluster.Name, Rack: s.Rack.Name, Role: s.Role, BMC: s.BMC}
		if r := s.Cluster.Release; r != nil {
			for _, comp := range r.Components {
				t.Components = append(t.Components, comp.Name)
				keys[comp.Name] = simComponent(comp)
			}
		}
		targets = append(targets, t)
	}
	now := time.Now()
	faults, more := sc.Resolve(targets, now)
	diags = append(diags, more...)
	if diags.HasErrors() {
		return nil, sc, diags
	}
	byServer, shared := map[string]string{}, map[string]int{}
	for _, t := range targets {
		byServer[t.Address] = t.Name
		shared[t.BMC]++
	}
	bmcOf := map[string]string{}
	for _, t := range targets {
		bmcOf[t.Address] = t.BMC
	}
	speed := c.speed
	if speed <= 0 {
		speed = 1
	}
	// The simulator's clock: a scenario's moment at is now + (at − now)
	// of simulated time, reached (at − now) / speed from now.
	timed := func(f rehearsal.Fault) sim.Timed {
		var tm sim.Timed
		if !f.At.IsZero() {
			tm.From = now.Add(time.Duration(float64(f.At.Sub(now)) / speed))
		}
		if f.For > 0 {
			from := tm.From
			if from.IsZero() {
				from = now
			}
			tm.Until = from.Add(time.Duration(float64(f.For) / speed))
		}
		return tm
	}
	out := map[string][]sim.Fault{}
	said := map[hcl.Range]bool{}
	refuse := func(f rehearsal.Fault, why string) {
		if said[f.Range] {
			return
		}
		said[f.Range] = true
		r := f.Range
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Fault the simulator cannot inject",
			Detail: fmt.Sprintf("The %s fault %s; rehearse it with rackform rehearse -scenario instead.", f.Kind, why), Subject: &r})
	}
	for _, f := range faults.List {
		name := c.bmcOf(byServer[f.Server])
		component := ""
		if f.Component != "" {
			if component = keys[f.Component]; component == "" {
				refuse(f, fmt.Sprintf("names component %q, which the simulator does not know by the name, Id or SoftwareId of its match (it knows %s)", f.Component, strings.Join(simComponents, ", ")))
				continue
			}
		}
		host := f.Kind == rehearsal.FaultHostDown || f.Kind == rehearsal.FaultReadOnlyFS || f.Kind == rehearsal.FaultUnknownState
		if host && shared[bmcOf[f.Server]] > 1 {
			refuse(f, fmt.Sprintf("hits server %s, whose BMC serves %d servers: the simulator would take them all down", f.Server, shared[bmcOf[f.Server]]))
			continue
		}
		var ft sim.Fault
		switch f.Kind {
		case rehearsal.FaultNeverReady:
			ft = sim.Fault{Kind: sim.FaultNoReturn}
		case rehearsal.FaultUpdateFails:
			ft = sim.Fault{Kind: sim.FaultTaskFail, Timed: sim.Timed{Component: component}}
		case rehearsal.FaultSlow:
			for _, s := range f.Steps {
				if s == "drain" || s == "uncordon" {
					refuse(f, "slows "+s+", a hook the executor runs, not something a BMC does")
				}
			}
			ft = sim.Fault{Kind: sim.FaultSlow, Timed: sim.Timed{Component: component, Factor: f.Factor, Steps: strings.Join(f.Steps, ",")}}
		case rehearsal.FaultBMCBusy:
			// Retry-After: the spell in real time, between 1 and 10
			// seconds (the simulator's range), so a short spell is waited
			// out as the provider's retries would.
			tm := timed(f)
			ra := 10 * time.Second
			if !tm.Until.IsZero() {
				from := tm.From
				if from.IsZero() {
					from = now
				}
				ra = min(max(tm.Until.Sub(from).Round(time.Second), time.Second), 10*time.Second)
			}
			ft = sim.Fault{Kind: sim.FaultBusy, Latency: ra, Timed: tm}
		case rehearsal.FaultBMCDown:
			ft = sim.Fault{Kind: sim.FaultDown, Timed: timed(f)}
		case rehearsal.FaultHostDown:
			ft = sim.Fault{Kind: sim.FaultHostDown, Timed: timed(f)}
		case rehearsal.FaultReadOnlyFS, rehearsal.FaultUnknownState:
			if f.At.IsZero() {
				refuse(f, "has no at: a rehearsal starts it at the server's first boot, which the simulator does not single out; give it an at")
				continue
			}
			kind := sim.FaultReadOnlyFS
			if f.Kind == rehearsal.FaultUnknownState {
				kind = sim.FaultUnknownState
			}
			ft = sim.Fault{Kind: kind, Timed: timed(f)}
		default:
			refuse(f, "is not one the simulator injects")
			continue
		}
		if !said[f.Range] {
			out[name] = append(out[name], ft)
		}
	}
	if len(faults.Random.Fail)+len(faults.Random.Slow) > 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Random faults the simulator cannot draw",
			Detail: "The simulator draws its random faults its own way (-fault-rate, -seed), not per server and step as a rehearsal does; leave the random block out of a scenario given to rackform sim."})
	}
	return out, sc, diags
}

// simComponents are the simulator's component names.
var simComponents = []string{sim.ComponentBIOS, sim.ComponentBMC, sim.ComponentNIC, sim.ComponentCPLD, sim.ComponentGPU, sim.ComponentRuntime}

// simComponent is what the simulator calls a release component: the Id or
// SoftwareId its match names, or its own name, when one of them is a
// simulator component (any case); "" when none is.
func simComponent(c *config.Component) string {
	for _, n := range []string{c.Match.ID, c.Match.SoftwareID, c.Name} {
		for _, k := range simComponents {
			if n != "" && strings.EqualFold(n, k) {
				return k
			}
		}
	}
	return ""
}
