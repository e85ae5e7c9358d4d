package planner

import (
	"strings"

	"github.com/rackform/rackform/config"
)

// address is a server's address in a plan: CLUSTER/RACK/SERVER.
func address(s *config.Server) string {
	return s.Cluster.Name + "/" + s.Rack.Name + "/" + s.Name
}

// targetMatches reports whether the -target/-exclude address addr covers s:
// addr is CLUSTER, CLUSTER/RACK or CLUSTER/RACK/SERVER, compared segment by
// segment so "east-1" never matches cluster "east-10".
func targetMatches(addr string, s *config.Server) bool {
	parts := strings.Split(addr, "/")
	want := []string{s.Cluster.Name, s.Rack.Name, s.Name}
	if len(parts) > len(want) {
		return false
	}
	for i, p := range parts {
		if p != want[i] {
			return false
		}
	}
	return true
}

func validAddress(addr string) bool {
	parts := strings.Split(addr, "/")
	if len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
	}
	return true
}

// selectServers collects the servers this plan covers, in rollout order:
// the rollout's clusters, minus what the upgrade scope, -target and
// -exclude leave out. A -target or -exclude that matches nothing is an
// error: a typo must not silently plan the whole fleet or nothing.
func (p *planning) selectServers() {
	for _, list := range [][]string{p.opts.Targets, p.opts.Excludes} {
		for _, a := range list {
			if !validAddress(a) {
				p.report.errorf(nil, "Invalid address", "%q is not an address: use CLUSTER, CLUSTER/RACK or CLUSTER/RACK/SERVER.", a)
			}
		}
	}
	targetHit := make([]bool, len(p.opts.Targets))
	excludeHit := make([]bool, len(p.opts.Excludes))
	seen := map[*config.Cluster]bool{}
	for _, c := range p.rollout.Clusters() {
		if seen[c] {
			continue
		}
		seen[c] = true
		for _, s := range c.Servers() {
			if p.rollout.Scope == config.ScopeControlPlaneOnly && !s.IsControlPlane() {
				continue
			}
			// An exclude is checked against every server, so one
			// that only overlaps no -target is not called a typo.
			out := false
			for i, x := range p.opts.Excludes {
				if targetMatches(x, s) {
					excludeHit[i], out = true, true
				}
			}
			if len(p.opts.Targets) > 0 {
				in := false
				for i, t := range p.opts.Targets {
					if targetMatches(t, s) {
						targetHit[i], in = true, true
					}
				}
				if !in {
					continue
				}
			}
			if out {
				continue
			}
			p.inScope = append(p.inScope, s)
		}
	}
	for i, hit := range targetHit {
		if !hit && validAddress(p.opts.Targets[i]) {
			p.report.errorf(nil, "Target matches nothing", "-target %q matches no server of rollout %q%s.", p.opts.Targets[i], p.rollout.Name, scopeNote(p.rollout.Scope))
		}
	}
	for i, hit := range excludeHit {
		if !hit && validAddress(p.opts.Excludes[i]) {
			p.report.errorf(nil, "Exclude matches nothing", "-exclude %q matches no server of rollout %q%s.", p.opts.Excludes[i], p.rollout.Name, scopeNote(p.rollout.Scope))
		}
	}
	if len(p.inScope) == 0 && !p.report.diags.HasErrors() {
		p.report.warnf(nil, "Nothing to plan", "Rollout %q selects no server.", p.rollout.Name)
	}
}

func scopeNote(scope string) string {
	if scope == config.ScopeControlPlaneOnly {
		return " (its scope is control_plane_only)"
	}
	return ""
}
