package command

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/providers/sim"
	"github.com/rackform/rackform/rehearsal"
)

// scenarioFaults translates a rehearsal scenario (rackform rehearse
// -scenario) into the simulator's own fault injection, per BMC of a
// -config fleet, so that a real apply against the simulator meets the
// faults a rehearsal rehearsed. Only what the simulator can inject the same
// way is translated, each armed from the start:
//
//	never_ready            no-return, for good: every boot ends off, health Critical
//	update_fails           task-fail: every update task of the BMC ends in Exception
//	                       (so only without component)
//
// Every other fault (timed ones, slow steps, random draws) is rehearsal
// only, and is an error here, at its line, rather than silently left out.
func (c *simCommand) scenarioFaults(cfg *config.Config, path string) (map[string][]sim.Fault, *rehearsal.Scenario, hcl.Diagnostics) {
	sc, diags := rehearsal.LoadScenario(path)
	if sc == nil || diags.HasErrors() {
		return nil, sc, diags
	}
	var targets []rehearsal.Target
	for _, s := range cfg.Servers() {
		t := rehearsal.Target{Address: s.Cluster.Name + "/" + s.Rack.Name + "/" + s.Name, Name: s.Name, Cluster: s.Cluster.Name, Rack: s.Rack.Name, Role: s.Role, BMC: s.BMC}
		if r := s.Cluster.Release; r != nil {
			for _, comp := range r.Components {
				t.Components = append(t.Components, comp.Name)
			}
		}
		targets = append(targets, t)
	}
	faults, more := sc.Resolve(targets, time.Now())
	diags = append(diags, more...)
	if diags.HasErrors() {
		return nil, sc, diags
	}
	byServer := map[string]string{}
	for _, t := range targets {
		byServer[t.Address] = t.Name
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
		name := byServer[f.Server]
		if bmc, ok := c.aliases[name]; ok {
			name = bmc
		}
		switch {
		case f.Kind == rehearsal.FaultNeverReady:
			out[name] = append(out[name], sim.Fault{Kind: sim.FaultNoReturn})
		case f.Kind == rehearsal.FaultUpdateFails && f.Component == "":
			out[name] = append(out[name], sim.Fault{Kind: sim.FaultTaskFail})
		case f.Kind == rehearsal.FaultUpdateFails:
			refuse(f, "names a component, and the simulator fails every update task of a BMC or none")
		default:
			refuse(f, "is not one the simulator injects the way a rehearsal does (it takes never_ready and update_fails without a component)")
		}
	}
	if len(faults.Random.Fail)+len(faults.Random.Slow) > 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Random faults the simulator cannot draw",
			Detail: "The simulator draws its random faults its own way (-fault-rate, -seed), not per server and step as a rehearsal does; leave the random block out of a scenario given to rackform sim."})
	}
	return out, sc, diags
}
