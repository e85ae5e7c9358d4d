package planner

import (
	"sort"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

// order expands the rollout and each cluster's strategy into the explicit
// run tree, every number resolved (rules 1–17, 20).
func (p *planning) order() plan.Run {
	run := plan.Run{Name: p.rollout.Name, Scope: p.rollout.Scope}
	if run.Scope == "" {
		run.Scope = config.ScopeFull
	}
	byCluster := map[*config.Cluster][]*config.Server{}
	for _, s := range p.inScope {
		byCluster[s.Cluster] = append(byCluster[s.Cluster], s)
	}
	done := map[*config.Cluster]bool{}
	for _, st := range p.rollout.Stages {
		stage := plan.Stage{ID: "stage." + st.Name, Name: st.Name, AfterWait: plan.Duration(st.AfterStageWait), OnBreach: config.OnBreachFail}
		stage.FailFast = !p.rollout.Implicit // an update run fails fast
		for _, a := range st.Approvals {
			stage.Gates = append(stage.Gates, plan.Gate{ID: stage.ID + ".gate." + a.Name, Name: a.Name, When: a.When, Description: a.Description})
		}
		for _, g := range st.Groups {
			group := plan.Group{ID: stage.ID + ".group." + g.Name, Name: g.Name}
			for _, c := range clusterOrder(g.Clusters, p.now) {
				if done[c] || len(byCluster[c]) == 0 {
					continue
				}
				done[c] = true
				cl := p.cluster(c, byCluster[c])
				group.Clusters = append(group.Clusters, cl)
				group.Estimate += cl.Estimate
			}
			if len(group.Clusters) > 0 {
				stage.Groups = append(stage.Groups, group)
				stage.Estimate = max(stage.Estimate, group.Estimate)
			}
		}
		if len(stage.Groups) == 0 {
			continue
		}
		stage.Estimate += stage.AfterWait
		run.Stages = append(run.Stages, stage)
	}
	return run
}

// clusterOrder sorts a group's clusters by maintenance-window priority at
// plan time: open now, opening within 4 h, no window, closed; ties keep
// the declared order (rule 20).
func clusterOrder(in []*config.Cluster, now time.Time) []*config.Cluster {
	out := append([]*config.Cluster(nil), in...)
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].MaintenanceWindow.Priority(now) < out[j].MaintenanceWindow.Priority(now)
	})
	return out
}

// windowPriority is the plan's spelling of a config.WindowPriority.
func windowPriority(w config.WindowPriority) string {
	switch w {
	case config.WindowOpenNow:
		return "open"
	case config.WindowOpeningSoon:
		return "opening"
	case config.WindowNone:
		return "none"
	}
	return "closed"
}

// maxIntervals bounds a window's intervals in a plan: a daily window over
// a 72 h plan has 3 or 4; the bound only guards against odd configurations.
const maxIntervals = 1000

// intervals lists w's open intervals between plan creation and expiry.
func (p *planning) intervals(w *config.MaintenanceWindow) []plan.Interval {
	end := p.now.Add(p.opts.NotAfter)
	var out []plan.Interval
	t := p.now
	for len(out) < maxIntervals && t.Before(end) {
		st := w.At(t)
		if st.OpensAt.IsZero() || !st.OpensAt.Before(end) {
			break
		}
		iv := plan.Interval{Start: st.OpensAt.UTC(), End: st.ClosesAt.UTC()}
		if iv.Start.Before(p.now) {
			iv.Start = p.now
		}
		if iv.End.After(end) {
			iv.End = end
		}
		if !iv.End.After(iv.Start) {
			break
		}
		out = append(out, iv)
		t = st.ClosesAt
	}
	return out
}

func remediation(r config.Remediation) []string {
	var out []string
	for i := 0; i < r.Reboots; i++ {
		out = append(out, "reboot")
	}
	for i := 0; i < r.Reimages; i++ {
		out = append(out, "reimage")
	}
	return out
}

func (p *planning) cluster(c *config.Cluster, servers []*config.Server) plan.Cluster {
	st := c.Strategy
	cl := plan.Cluster{
		ID: "cluster." + c.Name, Name: c.Name,
		WindowPriority: windowPriority(c.MaintenanceWindow.Priority(p.now)),
		Settings: plan.Settings{
			DrainTimeout:    plan.Duration(st.DrainTimeout),
			ShutdownTimeout: plan.Duration(st.ShutdownTimeout),
			VerifyTimeout:   plan.Duration(st.VerifyTimeout),
			Remediation: map[string][]string{
				config.RoleControlPlane:      remediation(st.ControlPlane.Remediation),
				config.RoleControlPlaneSpare: remediation(st.ControlPlane.Remediation),
				config.RoleManagement:        remediation(st.Management.Remediation),
				config.RoleCompute:           remediation(st.Compute.Remediation),
			},
		},
	}
	cl.Settings.Triggers = triggers(st.Triggers)
	if st.Drain != nil {
		cl.Settings.DrainHook = st.Drain.Command
	}
	if st.Uncordon != nil {
		cl.Settings.UncordonHook = st.Uncordon.Command
		cl.Settings.HookTimeout = plan.Duration(st.Uncordon.Timeout)
	}
	if c.MaintenanceWindow != nil {
		cl.Windows = p.intervals(c.MaintenanceWindow)
		if len(cl.Windows) == 0 {
			// Apply may start a cluster only inside its window, and a plan
			// without intervals reads as "no window": refuse rather than
			// hand apply a plan it could misread.
			p.report.errorf(rangePtr(c.DeclRange), "Window does not open before the plan expires",
				"Cluster %q has maintenance window %s, which does not open between %s and %s, when this plan expires, so apply could never start it. Plan closer to the window, with a longer -valid-for, or -exclude the cluster.",
				c.Name, c.MaintenanceWindow.Name, p.now.Format(time.RFC3339), p.now.Add(p.opts.NotAfter).Format(time.RFC3339))
		}
	}
	cl.Quorum = (&quorumCheck{observed: p.observed, servers: p.servers, report: p.report}).quorum(c)
	cl.Release = p.planChoice(c)
	var phases []plan.Phase
	pb := &phaseBuilder{servers: p.servers, report: p.report}
	servers, devices := splitDevices(servers)
	if len(st.Stages) > 0 {
		phases = pb.strategyStages(c, servers)
	} else {
		phases = pb.defaultPhases(c, servers)
	}
	if dp := pb.devicesPhase(c, devices); st.Devices == config.DevicesBeforeServers {
		phases = append([]plan.Phase{dp}, phases...)
	} else {
		phases = append(phases, dp)
	}
	for _, ph := range phases {
		if len(ph.Scopes) == 0 {
			continue
		}
		cl.Phases = append(cl.Phases, ph)
		cl.Estimate += ph.Estimate
	}
	return cl
}
