package planner

import (
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

// Shared components (the BMC's own firmware, a chassis CPLD) belong to a
// BMC, not to one of the systems behind it. They are planned once per BMC
// endpoint: the update step goes to the last server of that BMC in run
// order (its owner), so every other server of the BMC starts before it
// and none ever waits for a later one (no deadlock with serial scopes or
// the one-control-plane-server-down rule); the step lists those servers
// in After, and the executor starts it only once each has been drained
// and shut down as its strategy requires (its shutdown step completed) or
// has ended. The other servers keep the change, marked FlashedBy the
// owner, with no step for it and no expectation of it in their wait_ready
// (the owner's wait_ready verifies it). A server whose only changes are
// flashed elsewhere is skipped as shared_elsewhere.

// orderShared orders the run, assigns shared updates to their owners and,
// when that changed any server, orders again so thresholds and estimates
// count the final steps.
func (p *planning) orderShared() plan.Run {
	n := len(p.report.diags)
	run := p.order()
	// The first ordering's findings are kept aside: ordering again would
	// report them twice.
	first := append(hcl.Diagnostics(nil), p.report.diags[n:]...)
	p.report.diags = p.report.diags[:n]
	if !p.assignShared(run) {
		p.report.diags = append(p.report.diags, first...)
		return run
	}
	return p.order()
}

// bmcKey identifies a BMC endpoint however its URL was written.
func bmcKey(bmc string) string { return strings.TrimRight(strings.ToLower(bmc), "/") }

// assignShared reports whether any server changed.
func (p *planning) assignShared(run plan.Run) bool {
	pos := map[string]int{}
	for c := range run.Clusters() {
		for _, sc := range c.Scopes() {
			for _, a := range sc.Servers {
				if _, ok := pos[a]; !ok {
					pos[a] = len(pos)
				}
			}
		}
	}
	type key struct{ bmc, component string }
	members := map[key][]*config.Server{}
	var keys []key
	byBMC := map[string][]*config.Server{}
	for _, s := range p.inScope {
		addr := address(s)
		byBMC[bmcKey(s.BMC)] = append(byBMC[bmcKey(s.BMC)], s)
		for _, t := range p.targets[addr] {
			if !t.shared || p.servers[addr].Action != plan.ActionUpgrade {
				continue
			}
			k := key{bmcKey(s.BMC), t.c.Name}
			if members[k] == nil {
				keys = append(keys, k)
			}
			members[k] = append(members[k], s)
		}
	}
	if len(keys) == 0 {
		return false
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].bmc != keys[j].bmc {
			return keys[i].bmc < keys[j].bmc
		}
		return keys[i].component < keys[j].component
	})
	elsewhere := map[string]map[string]bool{}
	owners := map[string][]string{} // owner address → shared components it flashes
	changed := false
	for _, k := range keys {
		list := members[k]
		owner := list[0]
		for _, s := range list[1:] {
			if position(pos, s) > position(pos, owner) {
				owner = s
			}
		}
		oaddr := address(owner)
		owners[oaddr] = append(owners[oaddr], k.component)
		for _, s := range list {
			addr := address(s)
			if s == owner {
				continue
			}
			if elsewhere[addr] == nil {
				elsewhere[addr] = map[string]bool{}
			}
			elsewhere[addr][k.component] = true
			ps := p.servers[addr]
			ps.Changes = slices.Clone(ps.Changes) // shared with servers planned alike
			for i := range ps.Changes {
				if ps.Changes[i].Component == k.component {
					ps.Changes[i].FlashedBy = oaddr
				}
			}
		}
	}
	// Servers that flash nothing shared of their own lose those steps
	// first, so an owner's After lists only servers still upgraded.
	for _, s := range p.inScope {
		addr := address(s)
		skip := elsewhere[addr]
		if skip == nil {
			continue
		}
		changed = true
		ps := p.servers[addr]
		own := false
		for _, t := range p.targets[addr] {
			if !skip[t.c.Name] {
				own = true
			}
		}
		if !own {
			ps.Action, ps.Reason = plan.ActionSkip, plan.ReasonSharedElsewhere
			ps.Steps, ps.Reboots, ps.Estimate = nil, 0, 0
			continue
		}
		p.layout(s, ps, p.targets[addr], skip)
	}
	inScope := map[*config.Server]bool{}
	for _, s := range p.inScope {
		inScope[s] = true
	}
	for _, s := range p.inScope {
		addr := address(s)
		comps := owners[addr]
		if len(comps) == 0 {
			continue
		}
		var outside []string
		for _, o := range p.cfg.Servers() {
			if !inScope[o] && bmcKey(o.BMC) == bmcKey(s.BMC) {
				outside = append(outside, address(o))
			}
		}
		if len(outside) > 0 {
			p.report.warnf(rangePtr(s.DeclRange), "Shared component affects servers outside the plan",
				"Server %s flashes %s, shared by every system behind its BMC %s, which also serves %s: not in this plan (-target, -exclude or another rollout), so they are neither drained nor shut down for it.",
				addr, strings.Join(comps, ", "), s.BMC, strings.Join(outside, ", "))
		}
		var after []string
		for _, o := range byBMC[bmcKey(s.BMC)] {
			if o != s && p.servers[address(o)].Action == plan.ActionUpgrade {
				after = append(after, address(o))
			}
		}
		if len(after) == 0 {
			continue
		}
		changed = true
		ps := p.servers[addr]
		ps.Steps = slices.Clone(ps.Steps) // shared with servers planned alike
		for i := range ps.Steps {
			if ps.Steps[i].Shared {
				ps.Steps[i].After = after
			}
		}
	}
	return changed
}

// position is s's place in run order; a server outside the run tree
// counts as last.
func position(pos map[string]int, s *config.Server) int {
	if i, ok := pos[address(s)]; ok {
		return i
	}
	return len(pos)
}
