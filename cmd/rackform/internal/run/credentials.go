package run

import (
	"context"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/providers"
)

// WithCredentials wraps the providers of a run so that every target the
// executor passes them carries its server's credentials from cfg, the
// configuration loaded from the plan's snapshot with the sensitive inputs
// given again: the executor knows servers by plan address and BMC URL
// only, from the plan, which holds no secret.
func WithCredentials(provs map[string]providers.Provider, cfg *config.Config) map[string]providers.Provider {
	targets := providerTargets(cfg)
	out := make(map[string]providers.Provider, len(provs))
	for name, p := range provs {
		out[name] = &credentialed{Provider: p, targets: targets}
	}
	return out
}

// providerTargets maps every server of cfg, by plan address, to how its
// provider reaches it, credentials included (in memory only).
func providerTargets(cfg *config.Config) map[string]providers.Target {
	out := map[string]providers.Target{}
	for _, s := range cfg.Servers() {
		t := planner.Target(s)
		out[t.Name] = t
	}
	return out
}

// credentialed adds each server's credentials from the configuration to
// the targets the executor passes.
type credentialed struct {
	providers.Provider
	targets map[string]providers.Target
}

func (c *credentialed) fill(t providers.Target) providers.Target {
	if ct, ok := c.targets[t.Name]; ok && ct.Credentials != nil && t.Credentials == nil {
		t.Credentials = ct.Credentials
	}
	return t
}

func (c *credentialed) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	r := *req
	r.Targets = make([]providers.Target, len(req.Targets))
	for i, t := range req.Targets {
		r.Targets[i] = c.fill(t)
	}
	return c.Provider.Observe(ctx, &r, fn)
}

func (c *credentialed) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	r := *req
	r.Target = c.fill(r.Target)
	return c.Provider.Apply(ctx, &r, fn)
}

func (c *credentialed) Task(ctx context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	r := *req
	r.Target = c.fill(r.Target)
	return c.Provider.Task(ctx, &r)
}
