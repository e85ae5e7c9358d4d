package executortest

import (
	"fmt"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Epoch is the fake clock's default start and the plans' created_at.
var Epoch = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// Scope describes a rack, batch or serial scope for Builder.
type Scope struct {
	Phase plan.PhaseKind // default compute
	Kind  string         // "rack" (default), "batch", "serial"
	Name  string
	// Servers is the number of servers; Role defaults by phase.
	Servers int
	Role    string
	// Threshold defaults to 100% (every server must succeed).
	Threshold plan.Threshold
	// Budget defaults to N − required (rule 10); set BudgetSet to use 0.
	Budget         int
	BudgetSet      bool
	MaxUnavailable int
	OnBreach       string // default "pause"
	WaitAfter      time.Duration
	PauseAfter     bool
}

// Builder makes plans for tests: stages → groups → clusters → phases →
// scopes, with servers whose steps are drain, shutdown, update BIOS 1.0 →
// 2.0, reimage Runtime 4.5 → 4.6, wait_ready, uncordon.
type Builder struct {
	stages  []*StageB
	servers []plan.Server
	// Provider registers every server built; may be nil.
	Provider *Provider
	// Scripts by server address, applied when the server is added.
	Scripts map[string]Script
	// NoHooks leaves drain/uncordon out of the servers' steps.
	NoHooks bool
	index   map[string]int
}

// StageB builds a stage.
type StageB struct {
	s      plan.Stage
	groups []*GroupB
}

// GroupB builds a group.
type GroupB struct {
	b        *Builder
	g        plan.Group
	clusters []*ClusterB
}

// ClusterB builds a cluster.
type ClusterB struct {
	b      *Builder
	c      plan.Cluster
	phases []plan.Phase
}

// NewBuilder returns a builder registering servers with p (may be nil).
func NewBuilder(p *Provider) *Builder { return &Builder{Provider: p, Scripts: map[string]Script{}} }

// Stage adds a stage.
func (b *Builder) Stage(name string) *StageB {
	s := &StageB{s: plan.Stage{ID: "stage." + name, Name: name, OnBreach: "fail"}}
	b.stages = append(b.stages, s)
	return s
}

// OnBreach sets the stage's on_breach.
func (s *StageB) OnBreach(v string) *StageB { s.s.OnBreach = v; return s }

// AfterWait sets the stage's after-stage wait.
func (s *StageB) AfterWait(d time.Duration) *StageB { s.s.AfterWait = plan.Duration(d); return s }

// Gate adds an approval gate ("before" or "after").
func (s *StageB) Gate(name, when string) *StageB {
	s.s.Gates = append(s.s.Gates, plan.Gate{ID: s.s.ID + ".gate." + name, Name: name, When: when})
	return s
}

// Group adds a group to the stage.
func (s *StageB) Group(b *Builder, name string) *GroupB {
	g := &GroupB{b: b, g: plan.Group{ID: s.s.ID + ".group." + name, Name: name}}
	s.groups = append(s.groups, g)
	return g
}

// Cluster adds a cluster to the group.
func (g *GroupB) Cluster(name string, windows ...plan.Interval) *ClusterB {
	c := &ClusterB{b: g.b, c: plan.Cluster{ID: "cluster." + name, Name: name, WindowPriority: "none", Windows: windows,
		Settings: plan.Settings{DrainTimeout: plan.Duration(20 * time.Minute), ShutdownTimeout: plan.Duration(10 * time.Minute),
			VerifyTimeout: plan.Duration(30 * time.Minute), DrainHook: []string{"drain"}, UncordonHook: []string{"uncordon"},
			HookTimeout: plan.Duration(5 * time.Minute)}}}
	g.clusters = append(g.clusters, c)
	return c
}

// Settings edits the cluster's settings.
func (c *ClusterB) Settings(f func(*plan.Settings)) *ClusterB { f(&c.c.Settings); return c }

// Scope adds a scope and its servers.
func (c *ClusterB) Scope(sp Scope) *ClusterB {
	if sp.Phase == "" {
		sp.Phase = plan.PhaseCompute
	}
	if sp.Kind == "" {
		sp.Kind = "rack"
	}
	if sp.Role == "" {
		sp.Role = map[plan.PhaseKind]string{plan.PhaseControlPlane: "control_plane", plan.PhaseManagement: "management", plan.PhaseCompute: "compute"}[sp.Phase]
	}
	if sp.Threshold.Type == "" {
		sp.Threshold = plan.Threshold{Type: "percent", Value: 100}
	}
	if sp.OnBreach == "" {
		sp.OnBreach = "pause"
	}
	var ph *plan.Phase
	for i := range c.phases {
		if c.phases[i].Kind == sp.Phase {
			ph = &c.phases[i]
		}
	}
	if ph == nil {
		c.phases = append(c.phases, plan.Phase{ID: c.c.ID + "." + string(sp.Phase), Kind: sp.Phase})
		ph = &c.phases[len(c.phases)-1]
	}
	rack := sp.Name
	scope := plan.Scope{ID: ph.ID + "." + sp.Kind + "." + sp.Name, Kind: sp.Kind, Name: sp.Name,
		Threshold: sp.Threshold, MaxUnavailable: sp.MaxUnavailable, OnBreach: sp.OnBreach,
		WaitAfter: plan.Duration(sp.WaitAfter), PauseAfter: sp.PauseAfter}
	if sp.Kind == "rack" {
		scope.Rack = rack
	}
	for i := 1; i <= sp.Servers; i++ {
		name := fmt.Sprintf("%s-s%02d", sp.Name, i)
		addr := c.c.Name + "/" + rack + "/" + name
		scope.Servers = append(scope.Servers, addr)
		c.b.addServer(addr, name, c.c.Name, rack, sp.Role)
	}
	n := len(scope.Servers)
	for _, a := range scope.Servers {
		if s := c.b.server(a); s != nil && s.Action == plan.ActionSkip {
			n--
		}
	}
	scope.Eligible = n
	if sp.Threshold.Type == "percent" {
		scope.Required = (sp.Threshold.Value*n + 99) / 100
	} else {
		scope.Required = min(sp.Threshold.Value, n)
	}
	scope.Budget = n - scope.Required
	if sp.BudgetSet {
		scope.Budget = sp.Budget
	}
	ph.Scopes = append(ph.Scopes, scope)
	return c
}

func (b *Builder) server(addr string) *plan.Server {
	if i, ok := b.index[addr]; ok {
		return &b.servers[i]
	}
	return nil
}

// Components is what a fresh fake server reports.
func Components() []providers.Component {
	return []providers.Component{{ID: "BIOS", Name: "System BIOS", Version: "1.0", Updateable: true}, {ID: "Runtime", Name: "Runtime image", Version: "4.5"}}
}

// Targets are the versions the built plans upgrade to.
func Targets() map[string]string { return map[string]string{"BIOS": "2.0", "Runtime": "4.6"} }

func (b *Builder) addServer(addr, name, cluster, rack, role string) {
	comps := Components()
	steps := []plan.Step{
		{Index: 1, Kind: plan.StepDrain},
		{Index: 2, Kind: plan.StepShutdown},
		{Index: 3, Kind: plan.StepUpdate, Component: "bios", Match: &providers.Match{ID: "BIOS"}, Target: version.Target{Version: "2.0"}, Image: "http://127.0.0.1:9/bios.bin", ApplyTime: "Immediate"},
		{Index: 4, Kind: plan.StepReimage, Component: "runtime", Match: &providers.Match{ID: "Runtime"}, Target: version.Target{Version: "4.6"}, Image: "http://127.0.0.1:9/runtime.iso"},
		{Index: 5, Kind: plan.StepWaitReady, Expect: []providers.Expectation{{Component: "bios", Match: providers.Match{ID: "BIOS"}, Target: version.Target{Version: "2.0"}}, {Component: "runtime", Match: providers.Match{ID: "Runtime"}, Target: version.Target{Version: "4.6"}}}},
		{Index: 6, Kind: plan.StepUncordon},
	}
	if b.NoHooks {
		steps = steps[1:5]
	}
	s := plan.Server{Address: addr, Name: name, Cluster: cluster, Rack: rack, Role: role, NodeName: "node-" + name,
		BMC: "https://bmc.invalid/" + addr, Provider: "fake",
		Observed:    plan.Observed{Reachable: true, PowerState: providers.PowerOn, Health: "OK", Components: comps},
		Fingerprint: Fingerprint(comps), Action: plan.ActionUpgrade,
		Changes: []plan.Change{{Component: "bios", Kind: "firmware", From: "1.0", To: "2.0", Reboot: true}, {Component: "runtime", Kind: "runtime", From: "4.5", To: "4.6"}},
		Steps:   steps, Reboots: 1}
	if b.index == nil {
		b.index = map[string]int{}
	}
	b.index[addr] = len(b.servers)
	b.servers = append(b.servers, s)
	if b.Provider != nil {
		b.Provider.Add(addr, comps, Targets(), b.Scripts[addr])
	}
}

// Plan assembles the plan.
func (b *Builder) Plan() *plan.Plan {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, RackformVersion: "test", CreatedAt: Epoch, NotAfter: Epoch.Add(30 * 24 * time.Hour),
		Providers: []plan.Provider{{Name: "fake", Version: "0.0.0", Source: "builtin"}},
		Run:       plan.Run{Name: "test", Scope: "full"}, Servers: b.servers}
	for _, s := range b.stages {
		st := s.s
		for _, g := range s.groups {
			gg := g.g
			for _, c := range g.clusters {
				cc := c.c
				cc.Phases = c.phases
				gg.Clusters = append(gg.Clusters, cc)
			}
			st.Groups = append(st.Groups, gg)
		}
		p.Run.Stages = append(p.Run.Stages, st)
	}
	return p
}

// Single builds a one-stage, one-group, one-cluster ("c1") plan.
func Single(p *Provider, scripts map[string]Script, scopes ...Scope) *plan.Plan {
	b := NewBuilder(p)
	if scripts != nil {
		b.Scripts = scripts
	}
	c := b.Stage("default").Group(b, "default").Cluster("c1")
	for _, s := range scopes {
		c.Scope(s)
	}
	return b.Plan()
}
