package planner

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/internal/words"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// quorumCheck decides a cluster's quorum from what was observed and
// planned.
type quorumCheck struct {
	observed map[string]*providers.Observation
	servers  map[string]*plan.Server
	report   *reporter
}

// quorum checks that the plan never takes a control plane's healthy
// members below quorum (rack resiliency: losing etcd/KCP quorum stops the
// Kubernetes API across the instance). Members are the control_plane
// servers (the spare is not one); quorum is ⌊n/2⌋+1; the plan takes its
// planned members down one at a time, so each healthy member it upgrades
// leaves healthy−1 while it is down. A control plane of fewer than three
// members cannot keep quorum through any rolling upgrade, so the check
// applies from three. The ways out are restoring the member, letting the
// upgraded spare take its place (spare_takeover), or an explicit
// override (allow_quorum_loss), which the plan shows prominently. It
// returns what the plan records, or nil when nothing needs a reviewer.
func (qc *quorumCheck) quorum(c *config.Cluster) *plan.Quorum {
	members, spares := c.ControlPlane()
	if len(members) < 3 {
		return nil
	}
	q := &plan.Quorum{Required: len(members)/2 + 1}
	var planned []string
	for _, s := range members {
		addr := address(s)
		q.Members = append(q.Members, addr)
		if why := qc.unhealthy(s); why != "" {
			q.Down = append(q.Down, plan.QuorumMember{Server: addr, Why: why})
			continue
		}
		q.Healthy++
		if ps := qc.servers[addr]; ps != nil && ps.Action == plan.ActionUpgrade {
			planned = append(planned, addr)
		}
	}
	cp := c.Strategy.ControlPlane
	healthy := q.Healthy
	var spare *config.Server
	for _, s := range spares {
		if qc.unhealthy(s) == "" {
			spare = s
			break
		}
	}
	if cp.SpareTakeover && spare != nil {
		// The spare is upgraded first (rule 4), then takes the first down
		// member's place: one more healthy member for the rest. With none
		// down it is armed: apply brings it in for a member that fails.
		q.Takeover = &plan.Takeover{Spare: address(spare), Hook: cp.TakeoverHook}
		if len(q.Down) > 0 {
			q.Takeover.Replaces = q.Down[0].Server
			healthy++
		}
	}
	lost := len(planned) > 0 && healthy-1 < q.Required
	if lost && cp.AllowQuorumLoss {
		q.Override = true
		qc.report.warnf(rangePtr(c.Strategy.DeclRange), "Control-plane quorum override",
			"Cluster %q may lose control-plane quorum during this run: %d of %d members are healthy (%s down), %d must stay healthy, and upgrading %s takes each down in turn. Strategy %q allows it with allow_quorum_loss = true; apply will not pause for quorum.",
			c.Name, healthy, len(members), downList(q.Down), q.Required, strings.Join(planned, ", "), c.Strategy.Name)
		return q
	}
	if lost {
		subject := rangePtr(c.DeclRange)
		if len(q.Down) > 0 {
			if s := byAddress(c, q.Down[0].Server); s != nil {
				subject = rangePtr(s.DeclRange)
			}
		}
		var ways []string
		for _, d := range q.Down {
			ways = append(ways, "restore "+d.Server+" and plan again")
			break
		}
		switch {
		case len(spares) == 0:
			ways = append(ways, "add a spare (role control_plane_spare) that can take a down member's place")
		case spare == nil:
			ways = append(ways, fmt.Sprintf("bring the spare %s back so it can take a down member's place", address(spares[0])))
		case len(q.Down) > 0 && !cp.SpareTakeover:
			ways = append(ways, fmt.Sprintf("let the spare %s take the place of %s (spare_takeover = true in the control_plane block of strategy %q)", address(spare), q.Down[0].Server, c.Strategy.Name))
		}
		ways = append(ways, fmt.Sprintf("or override with allow_quorum_loss = true in the control_plane block of strategy %q, which the plan then shows prominently", c.Strategy.Name))
		qc.report.diags = append(qc.report.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Control-plane quorum would be lost",
			Detail: fmt.Sprintf("Cluster %q has %d control-plane members and keeps quorum only while %d are healthy. %s, so %d %s healthy, and upgrading %s %s, leaving %d: the cluster would lose quorum. Ways out: %s.",
				c.Name, len(members), q.Required, downList(q.Down)+words.Plural(len(q.Down), " is down", " are down"),
				healthy, words.Plural(healthy, "is", "are"), strings.Join(planned, ", "), words.Plural(len(planned), "takes it down", "takes each down in turn"),
				healthy-1, strings.Join(ways, "; ")),
			Subject: subject,
		})
		return q
	}
	if len(q.Down) == 0 && q.Takeover == nil {
		return nil
	}
	return q
}

// unhealthy says why a control-plane server cannot count for quorum now,
// or "" when it can: its BMC did not answer, it reports health Critical,
// or its host is not on. A server outside the plan's targets was not
// observed and counts as healthy.
func (qc *quorumCheck) unhealthy(s *config.Server) string {
	o, ok := qc.observed[address(s)]
	if !ok {
		if qc.servers[address(s)] == nil {
			return ""
		}
		return "not observed"
	}
	return o.NotHealthy()
}

func byAddress(c *config.Cluster, addr string) *config.Server {
	for _, s := range c.Servers() {
		if address(s) == addr {
			return s
		}
	}
	return nil
}

func downList(down []plan.QuorumMember) string {
	if len(down) == 0 {
		return "none"
	}
	var out []string
	for _, d := range down {
		out = append(out, d.Server+" ("+d.Why+")")
	}
	return strings.Join(out, ", ")
}

// warnSeedLimits warns once per strategy that opts out of the seed's
// drain and shutdown bounds (config refuses them otherwise).
func warnSeedLimits(report *reporter, inScope []*config.Server) {
	seen := map[*config.Strategy]bool{}
	for _, s := range inScope {
		st := s.Cluster.Strategy
		if st == nil || seen[st] || !st.ExceedSeedLimits {
			continue
		}
		seen[st] = true
		for _, x := range st.SeedLimitExcesses() {
			report.warnf(rangePtr(x.Range), "Above the seed limit for "+x.What,
				"Strategy %q sets %s to %s, above the %s the upgrade allows for %s, and opts out with exceed_seed_limits = true: a rack may spend longer than 30 minutes on cordon, drain and shutdown.",
				st.Name, x.Attribute, config.HumanDuration(x.Value), config.HumanDuration(x.Limit), x.What)
		}
	}
}

// triggers is the plan's copy of a strategy's remediation triggers.
func triggers(t config.RemediationTriggers) *plan.RemediationTriggers {
	return &plan.RemediationTriggers{
		Provisioning:       plan.Duration(t.Provisioning),
		ReadOnlyFilesystem: plan.Duration(t.ReadOnlyFilesystem),
		UnknownState:       plan.Duration(t.UnknownState),
	}
}
