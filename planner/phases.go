package planner

import (
	"container/heap"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

// phaseBuilder lays out one cluster's phases: which servers go together in
// what order (control plane one at a time, management in groups and
// batches, compute rack by rack, or the strategy's own stages), each
// scope's thresholds and its estimate from the plan's servers.
type phaseBuilder struct {
	// servers are the plan's servers by address: their actions and step
	// estimates.
	servers map[string]*plan.Server
	report  *reporter
}

// defaultPhases is the Nexus order: control plane, management, compute
// (rules 3–7).
func (pb *phaseBuilder) defaultPhases(c *config.Cluster, servers []*config.Server) []plan.Phase {
	st := c.Strategy
	var cp, mgmt, compute []*config.Server
	for _, s := range servers {
		switch s.Role {
		case config.RoleControlPlane, config.RoleControlPlaneSpare:
			cp = append(cp, s)
		case config.RoleManagement:
			mgmt = append(mgmt, s)
		case config.RoleCompute:
			compute = append(compute, s)
		}
	}
	id := "cluster." + c.Name
	return []plan.Phase{
		phase(plan.Phase{ID: id + ".control_plane", Kind: plan.PhaseControlPlane}, pb.controlPlaneScopes(id+".control_plane", cp, st.ControlPlane.OnBreach)),
		phase(plan.Phase{ID: id + ".management", Kind: plan.PhaseManagement}, pb.managementScopes(id+".management", c, mgmt)),
		phase(plan.Phase{ID: id + ".compute", Kind: plan.PhaseCompute}, pb.computeScopes(id+".compute", c, compute)),
	}
}

func phase(ph plan.Phase, scopes []plan.Scope) plan.Phase {
	ph.Scopes = scopes
	for _, s := range scopes {
		ph.Estimate += s.Estimate
	}
	return ph
}

// controlPlaneScopes is one serial scope: spares first, then the others,
// each group in name order, strictly one at a time and each required to
// succeed (rule 4). No setting can change that.
func (pb *phaseBuilder) controlPlaneScopes(id string, cp []*config.Server, onBreach string) []plan.Scope {
	if len(cp) == 0 {
		return nil
	}
	ordered := append([]*config.Server(nil), cp...)
	sort.SliceStable(ordered, func(i, j int) bool {
		si, sj := ordered[i].Role == config.RoleControlPlaneSpare, ordered[j].Role == config.RoleControlPlaneSpare
		if si != sj {
			return si
		}
		return ordered[i].Name < ordered[j].Name
	})
	sc := pb.newScope(id+".serial", "serial", "control plane", "", ordered)
	sc.Threshold = plan.Threshold{Type: "percent", Value: 100}
	sc.Required, sc.Budget, sc.MaxUnavailable = sc.Eligible, 0, 1
	sc.OnBreach = onBreach
	if sc.OnBreach == "" {
		sc.OnBreach = config.OnBreachPause
	}
	pb.estimate(&sc)
	return []plan.Scope{sc}
}

// managementScopes splits the management servers into rack-alternating
// groups (1st, 3rd, … rack → A; 2nd, 4th, … → B), each in batches of
// ⌈n/b⌉ then the rest, each with its threshold (rule 5).
func (pb *phaseBuilder) managementScopes(id string, c *config.Cluster, mgmt []*config.Server) []plan.Scope {
	if len(mgmt) == 0 {
		return nil
	}
	ms := c.Strategy.Management
	var out []plan.Scope
	for g, batches := range c.ManagementBatches(mgmt) {
		for b, batch := range batches {
			name := fmt.Sprintf("group %s batch %d", config.GroupLetter(g), b+1)
			sc := pb.newScope(fmt.Sprintf("%s.group.%s.batch.%d", id, strings.ToLower(config.GroupLetter(g)), b+1), "batch", name, "", batch)
			pb.thresholds(&sc, ms.ScopeSettings, config.Quantity{Value: 100, Percent: true}, "management "+name)
			out = append(out, sc)
		}
	}
	return out
}

// computeScopes is one scope per rack, in the strategy's order with the
// canary first; every rack but the last with work gets the wait and the
// pause (rules 6, 7, 9, 10, 16, 17).
func (pb *phaseBuilder) computeScopes(id string, c *config.Cluster, compute []*config.Server) []plan.Scope {
	if len(compute) == 0 {
		return nil
	}
	cs := c.Strategy.Compute
	if cs.CanaryRack != "" && c.Rack(cs.CanaryRack) == nil {
		pb.report.errorf(rangePtr(c.Strategy.DeclRange), "Unknown canary rack",
			"Strategy %q names canary_rack %q, but cluster %q has no rack of that name.", c.Strategy.Name, cs.CanaryRack, c.Name)
	}
	return pb.rackScopes(id, c, compute, "")
}

// rackScopes is one scope per rack of servers with the compute settings,
// in the strategy's order with the canary first, and the wait and the
// pause after every rack but the last with work; a scope's threshold
// messages name it as what+"rack R of cluster C".
func (pb *phaseBuilder) rackScopes(id string, c *config.Cluster, servers []*config.Server, what string) []plan.Scope {
	cs := c.Strategy.Compute
	var out []plan.Scope
	for _, r := range config.RacksInOrder(servers, cs.Order, cs.CanaryRack) {
		rack := r[0].Rack.Name
		sc := pb.newScope(id+".rack."+rack, "rack", rack, rack, r)
		pb.thresholds(&sc, cs.ScopeSettings, cs.MaxUnavailable, what+"rack "+rack+" of cluster "+c.Name)
		out = append(out, sc)
	}
	waitsAndPauses(out, cs.WaitAfterRack, cs.PauseAfterRack)
	return out
}

// waitsAndPauses sets WaitAfter and PauseAfter on every scope that is
// followed by another scope with work: a rack where nothing happens is
// skipped(empty) and must not cost a wait or a pause.
func waitsAndPauses(scopes []plan.Scope, wait time.Duration, pause bool) {
	last := -1
	for i := range scopes {
		if scopes[i].Eligible > 0 {
			last = i
		}
	}
	for i := range scopes {
		if i < last && scopes[i].Eligible > 0 {
			scopes[i].WaitAfter = plan.Duration(wait)
			scopes[i].PauseAfter = pause
			scopes[i].Estimate += plan.Duration(wait)
		}
	}
}

// newScope makes a scope over servers with N counted (rule 9:
// servers skipped at plan time leave N).
func (pb *phaseBuilder) newScope(id, kind, name, rack string, servers []*config.Server) plan.Scope {
	sc := plan.Scope{ID: id, Kind: kind, Name: name, Rack: rack}
	for _, s := range servers {
		addr := address(s)
		sc.Servers = append(sc.Servers, addr)
		if ps := pb.servers[addr]; ps != nil && ps.Action == plan.ActionUpgrade {
			sc.Eligible++
		}
	}
	return sc
}

// thresholds resolves a rack's or batch's threshold, failure budget,
// concurrency and breach action, and reports the impossible ones
// (rules 7, 9, 10, 12).
func (pb *phaseBuilder) thresholds(sc *plan.Scope, ss config.ScopeSettings, maxUnavailable config.Quantity, what string) {
	n := sc.Eligible
	sc.Threshold = plan.Threshold{Type: ss.Threshold.Type, Value: ss.Threshold.Value}
	if sc.Threshold.Type == "" {
		sc.Threshold = plan.Threshold{Type: "percent", Value: 100}
	}
	th := config.Threshold{Type: sc.Threshold.Type, Value: sc.Threshold.Value}
	// N = 0 makes the scope skipped(empty): it requires nothing, whatever
	// a count threshold says (rule 9).
	if n > 0 {
		sc.Required = th.Required(n)
	}
	if n > 0 && sc.Required > n {
		pb.report.errorf(rangePtr(ss.Threshold.Range), "Threshold cannot be met",
			"The %s has %d servers to upgrade, but its threshold requires %d successes (%s %d). Lower the threshold or use a percentage.",
			what, n, sc.Required, sc.Threshold.Type, sc.Threshold.Value)
	}
	if ss.FailureBudget.Unset {
		sc.Budget = max(n-sc.Required, 0)
	} else {
		sc.Budget = ss.FailureBudget.Resolve(n, 0)
	}
	if maxUnavailable.Percent {
		sc.MaxUnavailable = maxUnavailable.Resolve(n, 1)
	} else {
		sc.MaxUnavailable = max(maxUnavailable.Value, 1)
		if n > 0 && maxUnavailable.Value > n {
			pb.report.errorf(rangePtr(maxUnavailable.Range), "max_unavailable larger than the rack",
				"max_unavailable is %d, but the %s has only %d servers to upgrade, and a rack can never have more servers down at once than it has. Use a percentage or a smaller count.",
				maxUnavailable.Value, what, n)
		}
	}
	sc.OnBreach = ss.OnBreach
	if sc.OnBreach == "" {
		sc.OnBreach = config.OnBreachPause
	}
	pb.estimate(sc)
}

// estimate is the scope's makespan: its eligible servers started in
// order on MaxUnavailable slots, each taking its own estimate. Servers
// with learned estimates that run side by side each take their median plus
// their spread scaled to the slowest of those at once (slowestOf): a rack
// ends with its slowest server.
func (pb *phaseBuilder) estimate(sc *plan.Scope) {
	slots := &durationHeap{}
	width := max(sc.MaxUnavailable, 1)
	together := min(width, sc.Eligible)
	var end plan.Duration
	for _, addr := range sc.Servers {
		ps := pb.servers[addr]
		if ps == nil || ps.Action != plan.ActionUpgrade {
			continue
		}
		start := plan.Duration(0)
		if slots.Len() == width {
			start = heap.Pop(slots).(plan.Duration)
		}
		finish := start + ps.Estimate
		if s := spread(ps); s > 0 {
			finish += plan.Duration(slowestOf(together) * float64(s))
		}
		heap.Push(slots, finish)
		end = max(end, finish)
	}
	sc.Estimate = end
}

type durationHeap []plan.Duration

func (h durationHeap) Len() int           { return len(h) }
func (h durationHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h durationHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *durationHeap) Push(x any)        { *h = append(*h, x.(plan.Duration)) }
func (h *durationHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// strategyStages replaces the default phases with the strategy's own
// stages. A server goes to the first stage whose selectors match it; a
// server no stage selects is an error, never dropped. Control-plane
// servers of a stage still go one at a time, spare first, before its
// other servers (rule 4 holds whatever the config says).
func (pb *phaseBuilder) strategyStages(c *config.Cluster, servers []*config.Server) []plan.Phase {
	st := c.Strategy
	members, missed := st.StageMembers(servers)
	var phases []plan.Phase
	for si, stg := range st.Stages {
		var cp, rest []*config.Server
		for _, s := range members[si] {
			if s.IsControlPlane() {
				cp = append(cp, s)
			} else {
				rest = append(rest, s)
			}
		}
		id := "cluster." + c.Name + ".stage." + stg.Name
		scopes := pb.controlPlaneScopes(id+".control_plane", cp, st.ControlPlane.OnBreach)
		var batches []plan.Scope
		for b, batch := range stg.Batches(rest) {
			sc := pb.newScope(fmt.Sprintf("%s.batch.%d", id, b+1), "batch", fmt.Sprintf("batch %d", b+1), "", batch)
			pb.thresholds(&sc, stg.ScopeSettings, config.Quantity{Value: 100, Percent: true}, fmt.Sprintf("batch %d of stage %q", b+1, stg.Name))
			batches = append(batches, sc)
		}
		waitsAndPauses(batches, 0, false)
		scopes = append(scopes, batches...)
		ph := phase(plan.Phase{ID: id, Kind: plan.PhaseStage, Name: stg.Name}, scopes)
		if len(ph.Scopes) > 0 {
			last := &ph.Scopes[len(ph.Scopes)-1]
			last.WaitAfter = plan.Duration(stg.WaitAfter)
			last.PauseAfter = stg.PauseAfter
			last.Estimate += plan.Duration(stg.WaitAfter)
			ph.Estimate += plan.Duration(stg.WaitAfter)
		}
		phases = append(phases, ph)
	}
	if len(missed) > 0 {
		// Every server is named: all problems at once.
		addrs := make([]string, len(missed))
		for i, s := range missed {
			addrs[i] = address(s)
		}
		pb.report.diags = append(pb.report.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Server in no strategy stage",
			Detail: fmt.Sprintf("Strategy %q declares stages, and no stage selects %s. Add a stage that selects them (a stage with no roles, racks or labels selects every remaining server).",
				st.Name, strings.Join(addrs, ", ")),
			Subject: rangePtr(missed[0].DeclRange),
		})
	}
	return phases
}
