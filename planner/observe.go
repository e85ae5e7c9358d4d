package planner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// observe reads every in-scope server through its cluster's provider: one
// Observe stream per provider, all providers at once, each bounded by
// Parallelism. Servers a provider did not report are recorded as
// unreachable rather than dropped.
func (p *planning) observe(ctx context.Context) {
	p.observed = make(map[string]*providers.Observation, len(p.inScope))
	p.others = make(map[string]*plan.Others, len(p.inScope))
	p.observeServers(ctx, p.inScope)
}

// observeServers observes servers, replacing what was observed of them
// before (a channel's release changed after the first observation).
func (p *planning) observeServers(ctx context.Context, servers []*config.Server) {
	for _, s := range servers {
		delete(p.observed, address(s))
		delete(p.others, address(s))
	}
	byProvider := map[string][]*config.Server{}
	var names []string
	for _, s := range servers {
		prov := p.provider(s.Cluster)
		if prov == nil {
			continue // reported once per cluster below
		}
		if _, ok := byProvider[prov.Name]; !ok {
			names = append(names, prov.Name)
		}
		byProvider[prov.Name] = append(byProvider[prov.Name], s)
	}
	reported := map[*config.Cluster]bool{}
	for _, s := range servers {
		if p.provider(s.Cluster) == nil && !reported[s.Cluster] {
			reported[s.Cluster] = true
			p.report.errorf(rangePtr(s.Cluster.DeclRange), "No provider for cluster",
				"Cluster %q has no provider: declare a provider block and set provider = provider.NAME.", s.Cluster.Name)
		}
	}
	sort.Strings(names)

	byAddr := make(map[string]*config.Server, len(servers))
	for _, s := range servers {
		byAddr[address(s)] = s
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	type failure struct {
		name  string
		diags providers.Diagnostics
	}
	var failures []failure
	for _, name := range names {
		servers := byProvider[name]
		prov := p.opts.Providers[name]
		if prov == nil {
			p.failedProviders[name] = true
			decl := p.provider(servers[0].Cluster)
			p.report.errorf(rangePtr(decl.DeclRange), "Provider not started",
				"Provider %q is used by %d servers but was not started.", name, len(servers))
			continue
		}
		targets := make([]providers.Target, len(servers))
		for i, s := range servers {
			targets[i] = Target(s)
			targets[i].Updates = p.intents(s)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			diags := prov.Observe(ctx, &providers.ObserveRequest{Targets: targets, Concurrency: p.opts.Parallelism},
				func(o *providers.Observation) error {
					mu.Lock()
					defer mu.Unlock()
					// Keep the first report: a provider retrying must not
					// replace a good observation with a worse one.
					if _, dup := p.observed[o.Server]; !dup {
						p.observed[o.Server] = o
						if s := byAddr[o.Server]; s != nil && p.rollout.Channel == "" {
							p.keep(s, o)
						}
					}
					return nil
				})
			if diags.HasErrors() {
				mu.Lock()
				failures = append(failures, failure{name, diags})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(failures, func(i, j int) bool { return failures[i].name < failures[j].name })
	for _, f := range failures {
		p.failedProviders[f.name] = true
		decl := p.cfg.Provider(f.name)
		var msgs []string
		for _, d := range f.diags {
			if d.Severity == providers.Error {
				msgs = append(msgs, d.String())
			}
		}
		subject := rangePtrOf(decl)
		p.report.errorf(subject, "Provider failed to observe", "Provider %q could not observe the servers: %s.", f.name, strings.Join(msgs, "; "))
	}
}

// keep reduces an observation as soon as it arrives to what the plan
// keeps of it (decidedOn: the components its release decides on, a
// digest of the rest), as the diff would, so that a fleet's observations
// are never all held whole: 24 inventory members of 100,000 servers are
// 350 MB. Its fingerprint is taken first, from everything reported. Not
// with a channel, whose release is chosen from the observations.
func (p *planning) keep(s *config.Server, o *providers.Observation) {
	if o.EffectiveOutcome() == providers.OutcomeObserved && o.Fingerprint == "" {
		o.Fingerprint = fingerprint(o)
	}
	comps, others := decidedOn(s.Cluster.Release, o.Components)
	o.Components = p.lists.Components(comps)
	p.others[o.Server] = others
}

func rangePtrOf(decl *config.Provider) *hcl.Range {
	if decl == nil {
		return nil
	}
	return rangePtr(decl.DeclRange)
}

// Target is how a provider reaches server s, named by its plan address. Credentials are revealed here, in
// memory only, because the provider must log in; they never reach the plan.
func Target(s *config.Server) providers.Target {
	t := providers.Target{Name: address(s), Endpoint: s.BMC, System: s.System, Device: s.Kind}
	if c := s.Credentials; c != nil {
		t.Credentials = &providers.Credentials{Username: c.Username.Reveal(), Password: c.Password.Reveal()}
	}
	return t
}

// intents are the images the plan may send to s, so the provider answers
// how each would reach its BMC (Observation.Updates). A reimaged runtime
// goes through virtual media, not the UpdateService, and is not asked.
func (p *planning) intents(s *config.Server) []providers.UpdateIntent {
	rel := p.channel.releaseOf(s.Cluster)
	if rel == nil {
		return nil
	}
	var out []providers.UpdateIntent
	for _, c := range p.inScopeComponents(rel, s) {
		if c.Method == config.MethodReimage {
			continue
		}
		method := c.Method
		if s.UpdateMethod != "" {
			method = s.UpdateMethod
		}
		if method == config.MethodAuto {
			method = ""
		}
		out = append(out, providers.UpdateIntent{Component: c.Name, Match: providerMatch(c.Match), ImageURI: c.Image, ApplyTime: c.ApplyTime, Method: method})
	}
	return out
}

// fingerprint is the fallback when a provider sends none: a hash of what
// matters for drift, in a canonical order.
func fingerprint(o *providers.Observation) string {
	comps := append([]providers.Component(nil), o.Components...)
	sort.Slice(comps, func(i, j int) bool { return comps[i].ID < comps[j].ID })
	b, _ := json.Marshal(struct {
		Power, Health string
		Components    []providers.Component
	}{o.PowerState, o.Health, comps})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// provider is the cluster's provider block (see ProviderOf).
func (p *planning) provider(c *config.Cluster) *config.Provider { return ProviderOf(p.cfg, c) }

// ProviderOf is the provider block cluster c uses. A cluster without a
// provider attribute uses the only provider, or the one named "redfish";
// config applies the same default but only when the provider block happens
// to be decoded before the cluster, so callers should not rely on that.
func ProviderOf(cfg *config.Config, c *config.Cluster) *config.Provider {
	if c.Provider != nil {
		return c.Provider
	}
	if len(cfg.Providers) == 1 {
		return cfg.Providers[0]
	}
	return cfg.Provider("redfish")
}
