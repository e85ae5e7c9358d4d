// Package planner turns a loaded configuration and what the BMCs report into
// a plan: observe → diff → validate → order. Providers are injected, so the
// planner never starts a plugin itself.
package planner

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/internal/words"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// DefaultNotAfter is how long a plan stays valid when Options.NotAfter is 0:
// long enough for a review cycle, short enough that observations are fresh.
const DefaultNotAfter = 72 * time.Hour

// What to do with a server that cannot be observed or reports itself unhealthy.
const (
	// OnUnreachableSkip plans the server as skipped, with the reason, and
	// warns: the rest of the fleet is still planned.
	OnUnreachableSkip = config.OnUnreachableSkip
	// OnUnreachableBlock makes any such server a plan error.
	OnUnreachableBlock = config.OnUnreachableBlock
)

// Options are everything the planner needs besides the configuration.
type Options struct {
	// Providers are configured provider instances by provider block name.
	// The caller starts and configures them and closes them afterwards.
	Providers map[string]providers.Provider
	// Observed, when set, is called once every server has been observed:
	// the planner asks its providers nothing more, so the caller may stop
	// them there and give their memory back before the plan is built (at
	// 100,000 servers a plugin holds ~300 MB, and building the plan is
	// when the planner holds the most).
	Observed func()
	// ProviderInfo records the provider plugins (name, version, source,
	// binary hash) in the plan, so apply can refuse other binaries.
	ProviderInfo []plan.Provider
	// Now is the plan's creation time; it also decides window priority.
	Now time.Time
	// RackformVersion is written into the plan.
	RackformVersion string
	// Targets and Excludes are -target/-exclude addresses: CLUSTER,
	// CLUSTER/RACK or CLUSTER/RACK/SERVER. With Targets, only the servers
	// under one of them are planned; Excludes removes servers.
	Targets  []string
	Excludes []string
	// Rollout names the rollout to plan when the configuration declares
	// more than one.
	Rollout string
	// Parallelism bounds how many servers each provider reads at once;
	// 0 leaves it to the provider (its block's own setting or default),
	// so a command-line default never overrides the configuration.
	Parallelism int
	// NotAfter is how long the plan is valid (default DefaultNotAfter).
	NotAfter time.Duration
	// OnUnreachable is OnUnreachableSkip or OnUnreachableBlock; it
	// overrides every strategy's on_unreachable. "" means per strategy.
	// The configuration has no strategy attribute for it yet, so the
	// command line decides.
	OnUnreachable string
	// HoldBackErrored plans the rest of the fleet when some servers have
	// problems (undecidable versions, undeliverable images, refused
	// credentials, ...): each is planned as skipped (held back) with every
	// problem listed, instead of failing the plan. A cluster none of whose
	// servers was observed still fails it.
	HoldBackErrored bool
	// Estimates are step durations learned from earlier runs
	// (executor/history); nil keeps every step's fixed typical duration.
	Estimates Estimator
}

// Plan observes every in-scope server of cfg, diffs it against its
// release, validates the version, threshold and ordering rules, and returns
// the ordered plan. With errors in the diagnostics the plan is nil.
func Plan(ctx context.Context, cfg *config.Config, opts Options) (*plan.Plan, hcl.Diagnostics) {
	if opts.NotAfter <= 0 {
		opts.NotAfter = DefaultNotAfter
	}
	if opts.Parallelism < 0 {
		opts.Parallelism = 0
	}
	now := opts.Now.UTC()
	p := &planning{cfg: cfg, opts: opts, now: now, report: &reporter{}, targets: map[string][]target{}, lists: plan.NewInterner(), wants: map[*config.Component]version.Target{}, members: map[string]map[string]int{}, counts: map[string]map[string]int{}, failedProviders: map[string]bool{}}
	return p.run(ctx)
}

// planning is the state of one Plan call.
type planning struct {
	cfg  *config.Config
	opts Options
	now  time.Time

	report  *reporter
	rollout *config.Rollout
	// inScope are the servers the plan covers, in rollout order.
	inScope []*config.Server
	// observed holds each in-scope server's observation by address.
	observed map[string]*providers.Observation
	// others are, by address, the digests of what observations reduced
	// as they arrived (keep) do not hold any more; an observation with
	// no entry holds everything reported.
	others map[string]*plan.Others
	// servers are the plan's servers by address.
	servers map[string]*plan.Server
	// unavail are the servers skipped (or blocking) because they are
	// unreachable or unhealthy, in plan order.
	unavail []unavailableServer
	// heldBack are the servers -hold-back-errored held back.
	heldBack []string
	// failedProviders did not observe at all (reported on their own).
	failedProviders map[string]bool
	// targets are each upgraded server's changed components.
	targets map[string][]target
	// members are, by server address, how many active members each
	// in-scope component's rule selects: what apply must find again.
	members map[string]map[string]int
	// counts keeps one copy of each distinct members map (sameCounts).
	counts map[string]map[string]int
	// channel chooses the clusters' releases (channel.go).
	channel *channelResolver
	// lists shares equal step, change and component lists between
	// servers (plan.Interner): what changes one copies it first.
	lists *plan.Interner
	// stepBuf is where steps lays out a server's steps, reused: lists
	// keeps a copy of those no server had before.
	stepBuf []plan.Step
	// changeBuf is where diffServer collects a server's changes, reused
	// alike.
	changeBuf []plan.Change
	// wants holds each component's version.Target, made once: every
	// server's diff, updates and wait_ready name it.
	wants map[*config.Component]version.Target
}

// reporter collects one Plan call's diagnostics: the planning and each
// part it hands work to report into the same one, in order.
type reporter struct {
	diags hcl.Diagnostics
}

func (r *reporter) errorf(subject *hcl.Range, summary, format string, args ...any) {
	r.diags = append(r.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: subject,
	})
}

func (r *reporter) warnf(subject *hcl.Range, summary, format string, args ...any) {
	r.diags = append(r.diags, &hcl.Diagnostic{
		Severity: hcl.DiagWarning, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: subject,
	})
}

func (p *planning) run(ctx context.Context) (*plan.Plan, hcl.Diagnostics) {
	ro, err := p.cfg.EffectiveRollout(p.opts.Rollout)
	if err != nil {
		p.report.errorf(nil, "No rollout to plan", "%s.", words.Capitalize(err.Error()))
		return nil, p.report.diags
	}
	p.rollout = ro
	p.channel = &channelResolver{cfg: p.cfg, rollout: ro, report: p.report}
	if n := len(p.cfg.MissingEnv); n > 0 {
		// Without them providers would log in with empty credentials.
		them := words.Plural(n, "it", "them")
		p.report.errorf(nil, "Missing environment variables",
			"The configuration reads %s with env(), but %s not set or empty. Set %s before planning; apply needs %s too.",
			strings.Join(p.cfg.MissingEnv, ", "), words.Plural(n, "it is", "they are"), them, them)
		return nil, p.report.diags
	}
	if n := p.cfg.SensitiveDataReads; n > 0 {
		// The plan could not record such a file without the secret path
		// (and what it holds), and apply loads only what the plan holds.
		p.report.errorf(nil, "File read through a sensitive path",
			"The configuration reads %d file(s) with file() or templatefile() through a path derived from a sensitive value (env() or a sensitive variable). The plan records every file the configuration reads and apply reads nothing else, so such a file cannot be used: read credentials with env() or a sensitive variable instead.", n)
		return nil, p.report.diags
	}
	p.checkRolloutMembership()
	p.selectServers()
	if p.report.diags.HasErrors() {
		return nil, p.report.diags
	}
	p.channel.resolveReleases(nil)
	if p.report.diags.HasErrors() {
		return nil, p.report.diags
	}
	p.observe(ctx)
	p.resolveAfterObserve(ctx)
	if p.opts.Observed != nil {
		p.opts.Observed()
	}
	if err := ctx.Err(); err != nil {
		p.report.errorf(nil, "Plan interrupted", "Observing the servers was interrupted: %v.", err)
		return nil, p.report.diags
	}
	p.diff()
	warnSeedLimits(p.report, p.inScope)
	run := p.orderShared()
	snap := snapshot(p.cfg)
	p.checkSnapshot(snap)
	if p.report.diags.HasErrors() {
		return nil, p.report.diags
	}
	out := &plan.Plan{
		FormatVersion:   plan.FormatVersion,
		RackformVersion: p.opts.RackformVersion,
		CreatedAt:       p.now,
		NotAfter:        p.now.Add(p.opts.NotAfter),
		Config:          snap,
		Inputs:          inputs(p.cfg),
		Providers:       sortedProviders(p.opts.ProviderInfo),
		Targets:         p.opts.Targets,
		Excludes:        p.opts.Excludes,
		Run:             run,
		Catalog:         p.channel.planCatalog(),
	}
	out.Servers = make([]plan.Server, 0, len(p.inScope))
	for _, s := range p.inScope {
		out.Servers = append(out.Servers, *p.servers[address(s)])
	}
	out.History = history(p.opts.Estimates, out.Servers)
	// Warnings as the diagnostics group them: one per cause or finding,
	// naming every server (each server also lists its own problems).
	for _, d := range p.report.diags {
		if d.Severity == hcl.DiagWarning {
			out.Warnings = append(out.Warnings, plan.Message{Summary: d.Summary, Detail: d.Detail})
		}
	}
	out.Summary = summarize(out)
	return out, p.report.diags
}

// checkRolloutMembership enforces rule 8 across the rollout: a
// cluster (and so its servers) may sit in only one group. The
// configuration refuses such a rollout too; the plan checks again because
// it must never upgrade a server twice, whoever built the model. (A
// cluster left out of the rollout is the configuration's warning alone.)
func (p *planning) checkRolloutMembership() {
	type seen struct {
		stage, group string
		rng          hcl.Range
	}
	where := map[*config.Cluster]seen{}
	for _, st := range p.rollout.Stages {
		for _, g := range st.Groups {
			for _, c := range g.Clusters {
				if first, ok := where[c]; ok {
					rng := g.DeclRange
					p.report.errorf(rangePtr(rng), "Cluster in two rollout groups",
						"Cluster %q is in group %q of stage %q and again in group %q of stage %q (first at %s); its servers would be upgraded twice. Put each cluster in one group.",
						c.Name, first.group, first.stage, g.Name, st.Name, first.rng)
					continue
				}
				where[c] = seen{st.Name, g.Name, g.DeclRange}
			}
		}
	}
}

// rangePtr returns a pointer to r, or nil when r is the zero range (an
// implicit object has no source to point at).
func rangePtr(r hcl.Range) *hcl.Range {
	if r.Filename == "" {
		return nil
	}
	return r.Ptr()
}

func sortedProviders(in []plan.Provider) []plan.Provider {
	out := append([]plan.Provider(nil), in...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
