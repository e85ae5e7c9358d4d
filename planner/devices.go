package planner

import (
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

// splitDevices separates a cluster's devices (switch trays, power
// shelves…: config.Server.IsDevice) from its servers, each in declared
// order.
func splitDevices(all []*config.Server) (servers, devices []*config.Server) {
	for _, s := range all {
		if s.IsDevice() {
			devices = append(devices, s)
		} else {
			servers = append(servers, s)
		}
	}
	return servers, devices
}

// devicesPhase is the phase of a cluster's devices: one scope per rack,
// racks in the compute phase's order with its canary first, each with the
// compute phase's threshold, failure budget, max_unavailable and breach
// action, and its wait and pause after every rack but the last with work.
// The strategy's devices attribute puts the phase before or after the
// servers' phases (order.go).
func (pb *phaseBuilder) devicesPhase(c *config.Cluster, devices []*config.Server) plan.Phase {
	id := "cluster." + c.Name + ".devices"
	ph := plan.Phase{ID: id, Kind: plan.PhaseDevices}
	if len(devices) == 0 {
		return ph
	}
	return phase(ph, pb.rackScopes(id, c, devices, "devices of "))
}
