// Package plannertest provides an in-process provider whose servers report
// what a test says, for planner and command tests and benchmarks.
package plannertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
)

// Provider is a fake providers.Provider. Observe answers from Servers;
// a target it does not know is unreachable.
type Provider struct {
	// Servers maps a target name (the server's plan address) to what it
	// reports.
	Servers map[string]*providers.Observation
	// Latency is slept per BMC request, Requests times per server (the
	// k of the latency bound), holding one of Concurrency slots.
	Latency  time.Duration
	Requests int

	mu      sync.Mutex
	targets []providers.Target
	calls   atomic.Int64
	// peak is the most targets observed at once.
	inflight, peak atomic.Int64
}

var _ providers.Provider = (*Provider)(nil)

// Targets returns every target Observe was asked for.
func (p *Provider) Targets() []providers.Target {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providers.Target(nil), p.targets...)
}

// ObserveCalls is how many Observe streams were opened.
func (p *Provider) ObserveCalls() int { return int(p.calls.Load()) }

// PeakConcurrency is the most servers read at once.
func (p *Provider) PeakConcurrency() int { return int(p.peak.Load()) }

func (p *Provider) Describe(context.Context) (*providers.Description, providers.Diagnostics) {
	return &providers.Description{Name: "fake", Version: "0.0.0", ProtocolVersion: providers.ProtocolVersion}, nil
}

func (p *Provider) Configure(context.Context, *providers.ConfigureRequest) providers.Diagnostics {
	return nil
}

// Observe implements providers.Provider (providertest.ObserveEach), up to
// ten servers at once when the request does not say.
func (p *Provider) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	p.calls.Add(1)
	p.mu.Lock()
	p.targets = append(p.targets, req.Targets...)
	p.mu.Unlock()
	return providertest.ObserveEach(ctx, req, 10, p.observe, fn)
}

// observe reads one server: Requests round trips of Latency, then what
// Servers says it reports.
func (p *Provider) observe(ctx context.Context, t providers.Target) *providers.Observation {
	n := p.inflight.Add(1)
	for {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}
	defer p.inflight.Add(-1)
	for i := 0; i < max(p.Requests, 1) && p.Latency > 0; i++ {
		select {
		case <-time.After(p.Latency):
		case <-ctx.Done():
			return nil
		}
	}
	o := p.Servers[t.Name]
	if o == nil {
		return &providers.Observation{Server: t.Name, Diagnostics: providers.Errorf(t.Name, "BMC unreachable", "connection refused")}
	}
	c := *o
	c.Server = t.Name
	return &c
}

func (p *Provider) Apply(context.Context, *providers.ApplyRequest, func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	return nil, providers.Errorf("", "Not supported", "the planner fake does not apply steps")
}

func (p *Provider) Task(context.Context, *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	return nil, providers.Errorf("", "Not supported", "the planner fake has no tasks")
}

func (p *Provider) Stop(context.Context) providers.Diagnostics { return nil }

// State is what a generated server reports.
type State int

const (
	// Behind reports every component one version below its target.
	Behind State = iota
	// AtTarget reports every component at its target.
	AtTarget
	// Unreachable reports nothing: the BMC does not answer.
	Unreachable
)

// Address is a server's plan address, CLUSTER/RACK/SERVER.
func Address(s *config.Server) string { return s.Cluster.Name + "/" + s.Rack.Name + "/" + s.Name }

// FromConfig builds fakes for every provider of cfg whose servers report
// what state says, with inventories derived from each cluster's release.
func FromConfig(cfg *config.Config, state func(i int, s *config.Server) State) map[string]*Provider {
	out := map[string]*Provider{}
	for i, s := range cfg.Servers() {
		name := "redfish"
		if s.Cluster.Provider != nil {
			name = s.Cluster.Provider.Name
		}
		p := out[name]
		if p == nil {
			p = &Provider{Servers: map[string]*providers.Observation{}}
			out[name] = p
		}
		st := state(i, s)
		rel, runs := s.Cluster.Release, false
		if rel == nil {
			// A channel chooses the release: the cluster runs a catalog
			// release (its sim_release label, else the oldest).
			rel, runs = config.SimStartRelease(cfg, s.Cluster), true
		}
		if st == Unreachable || rel == nil {
			continue
		}
		o := &providers.Observation{Server: Address(s), Reachable: true, PowerState: providers.PowerOn, Health: "OK"}
		for _, c := range rel.Components {
			if !c.For(s) {
				continue // a switch tray has no BIOS, a server no tray firmware
			}
			v := c.Version.String()
			if st == Behind && !runs {
				v = Previous(c.Version)
			}
			o.Components = append(o.Components, Inventory(c, v))
		}
		o.Fingerprint = fmt.Sprintf("fake:%s:%d", Address(s), st)
		p.Servers[Address(s)] = o
	}
	return out
}

// Inventory is an inventory entry that c's match rule selects, at v.
func Inventory(c *config.Component, v string) providers.Component {
	comp := providers.Component{ID: c.Name, Name: c.Name, Version: v, Updateable: true}
	switch {
	case c.Match.SoftwareID != "":
		comp.SoftwareID = c.Match.SoftwareID
	case c.Match.ID != "":
		comp.ID = c.Match.ID
	case c.Match.Name != "":
		comp.Name = strings.NewReplacer("*", "", "?", "x", "[", "", "]", "").Replace(c.Match.Name)
	}
	return comp
}

// Previous is a version just older than v in v's own format, its last
// number lowered, a release date's included: "2.80" → "2.79", "4.6.1" →
// "4.6.0", "P79 v1.46" → "P79 v1.45".
func Previous(v version.Version) string { return version.Previous(v, true) }
