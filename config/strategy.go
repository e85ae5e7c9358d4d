package config

import (
	"slices"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Strategy defaults (rules 4–7, 16, 21, 30).
const (
	DefaultDrainTimeout    = 20 * time.Minute
	DefaultShutdownTimeout = 10 * time.Minute
	DefaultVerifyTimeout   = 60 * time.Minute
	DefaultWaitAfterRack   = 15 * time.Minute
	DefaultHookTimeout     = 10 * time.Minute
)

// Compute rack orders.
const (
	OrderAlphanumeric = "alphanumeric"
	OrderNatural      = "natural"
)

// Breach actions.
const (
	OnBreachPause = "pause"
	OnBreachFail  = "fail"
)

// What plan does with a server it cannot observe or that is unhealthy.
const (
	OnUnreachableSkip  = "skip"
	OnUnreachableBlock = "block"
)

// NewDefaultStrategy returns the built-in strategy, which reproduces the
// Operator Nexus order: control plane one at a time with the spare first,
// management in two rack-alternating groups of two 50% batches, compute
// racks one at a time in alphanumeric order with a 100% threshold.
func NewDefaultStrategy() *Strategy {
	return &Strategy{
		Name:            "default",
		Implicit:        true,
		DrainTimeout:    DefaultDrainTimeout,
		ShutdownTimeout: DefaultShutdownTimeout,
		VerifyTimeout:   DefaultVerifyTimeout,
		OnUnreachable:   OnUnreachableSkip,
		Devices:         DevicesAfterServers,
		Triggers:        RemediationTriggers{Provisioning: DefaultProvisioningTimeout, ReadOnlyFilesystem: DefaultReadOnlyFilesystem, UnknownState: DefaultUnknownState},
		ControlPlane: ControlPlaneSettings{
			OnBreach:      OnBreachPause,
			VerifyTimeout: DefaultVerifyTimeout,
			Remediation:   Remediation{Reboots: 1},
		},
		Management: ManagementSettings{
			ScopeSettings: ScopeSettings{
				Threshold:     Threshold{Type: "percent", Value: 50},
				FailureBudget: Quantity{Unset: true},
				OnBreach:      OnBreachPause,
			},
			Groups:        2,
			Batches:       2,
			VerifyTimeout: DefaultVerifyTimeout,
			Remediation:   Remediation{Reboots: 1, Reimages: 1},
		},
		Compute: ComputeSettings{
			ScopeSettings: ScopeSettings{
				Threshold:     Threshold{Type: "percent", Value: 100},
				FailureBudget: Quantity{Unset: true},
				OnBreach:      OnBreachPause,
			},
			Order:          OrderAlphanumeric,
			MaxUnavailable: Quantity{Value: 100, Percent: true},
			WaitAfterRack:  DefaultWaitAfterRack,
			VerifyTimeout:  DefaultVerifyTimeout,
			Remediation:    Remediation{Reimages: 1},
		},
	}
}

var thresholdSchema = &hcl.BlockHeaderSchema{Type: "threshold"}

var strategySchema = &hcl.BodySchema{
	Attributes: optional(
		"drain_timeout", "shutdown_timeout", "verify_timeout", "on_unreachable",
		"exceed_seed_limits", "devices",
	),
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "control_plane"}, {Type: "management"}, {Type: "compute"},
		{Type: "drain"}, {Type: "uncordon"},
		{Type: "stage", LabelNames: []string{"name"}},
		{Type: "remediation_triggers"},
	},
}

var remediationSchema = &hcl.BlockHeaderSchema{Type: "remediation"}

var controlPlaneSchema = &hcl.BodySchema{
	Attributes: optional("on_breach", "verify_timeout", "allow_quorum_loss", "spare_takeover", "takeover_command"),
	Blocks:     []hcl.BlockHeaderSchema{*remediationSchema},
}

var managementSchema = &hcl.BodySchema{
	Attributes: optional("groups", "batches", "failure_budget", "on_breach", "verify_timeout"),
	Blocks:     []hcl.BlockHeaderSchema{*thresholdSchema, *remediationSchema},
}

var computeSchema = &hcl.BodySchema{
	Attributes: optional(
		"order", "max_unavailable", "wait_after_rack", "pause_after_rack", "canary_rack",
		"failure_budget", "on_breach", "verify_timeout",
	),
	Blocks: []hcl.BlockHeaderSchema{*thresholdSchema, *remediationSchema},
}

var stageSchema = &hcl.BodySchema{
	Attributes: optional(
		"roles", "racks", "labels", "batch_size", "failure_budget", "on_breach", "wait_after",
		"pause_after",
	),
	Blocks: []hcl.BlockHeaderSchema{*thresholdSchema},
}

var hookSchema = &hcl.BodySchema{Attributes: append(required("command"), optional("timeout")...)}

var thresholdBodySchema = &hcl.BodySchema{Attributes: required("type", "value")}

var remediationBodySchema = &hcl.BodySchema{Attributes: optional("reboots", "reimages")}

// single returns the only block of typ in blocks, reporting duplicates.
func single(blocks hcl.Blocks, typ string, diags *hcl.Diagnostics) *hcl.Block {
	var found *hcl.Block
	for _, b := range blocks {
		if b.Type != typ {
			continue
		}
		if found != nil {
			*diags = append(*diags, errorAt(b.DefRange, "Duplicate "+typ+" block", "Only one %s block is allowed here; the first is at %s.", typ, posString(found.DefRange)))
			continue
		}
		found = b
	}
	return found
}

func (s *loadState) decodeStrategy(b *hcl.Block, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := b.Body.Content(strategySchema)
	a := s.attrs(content.Attributes, ctx, &diags)
	st := NewDefaultStrategy()
	st.Name, st.Implicit, st.DeclRange = b.Labels[0], false, b.DefRange
	st.DrainTimeout = a.duration("drain_timeout", st.DrainTimeout)
	st.ShutdownTimeout = a.duration("shutdown_timeout", st.ShutdownTimeout)
	st.VerifyTimeout = a.duration("verify_timeout", st.VerifyTimeout)
	st.OnUnreachable = a.oneOf("on_unreachable", st.OnUnreachable, OnUnreachableSkip, OnUnreachableBlock)
	st.Devices = a.oneOf("devices", st.Devices, DevicesBeforeServers, DevicesAfterServers)
	// Phase verify timeouts inherit the strategy's unless set.
	st.ControlPlane.VerifyTimeout = st.VerifyTimeout
	st.Management.VerifyTimeout = st.VerifyTimeout
	st.Compute.VerifyTimeout = st.VerifyTimeout

	if cb := single(content.Blocks, "control_plane", &diags); cb != nil {
		c, ca := s.content(cb.Body, controlPlaneSchema, ctx, &diags)
		st.ControlPlane.OnBreach = ca.oneOf("on_breach", st.ControlPlane.OnBreach, OnBreachPause, OnBreachFail)
		st.ControlPlane.VerifyTimeout = ca.duration("verify_timeout", st.ControlPlane.VerifyTimeout)
		st.ControlPlane.Remediation = s.decodeRemediation(c.Blocks, ctx, st.ControlPlane.Remediation, &diags)
		st.ControlPlane.AllowQuorumLoss = ca.boolean("allow_quorum_loss", false)
		st.ControlPlane.SpareTakeover = ca.boolean("spare_takeover", false)
		st.ControlPlane.TakeoverHook, _ = ca.strList("takeover_command")
	}
	if mb := single(content.Blocks, "management", &diags); mb != nil {
		c, ma := s.content(mb.Body, managementSchema, ctx, &diags)
		m := &st.Management
		m.Groups = ma.integer("groups", m.Groups, 1, 100)
		m.Batches = ma.integer("batches", m.Batches, 1, 100)
		m.ScopeSettings = s.decodeScope(c, ma, m.ScopeSettings, mb.DefRange, &diags)
		m.VerifyTimeout = ma.duration("verify_timeout", m.VerifyTimeout)
		m.Remediation = s.decodeRemediation(c.Blocks, ctx, m.Remediation, &diags)
	}
	if cb := single(content.Blocks, "compute", &diags); cb != nil {
		c, ca := s.content(cb.Body, computeSchema, ctx, &diags)
		cp := &st.Compute
		cp.Order = ca.oneOf("order", cp.Order, OrderAlphanumeric, OrderNatural)
		if q := ca.quantity("max_unavailable", cb.DefRange); !q.Unset {
			if !q.Percent && q.Value < 1 {
				ca.errorf(q.Range, "Invalid value for max_unavailable", "max_unavailable must be at least 1; got %d.", q.Value)
			} else {
				cp.MaxUnavailable = q
			}
		}
		cp.WaitAfterRack = ca.duration("wait_after_rack", cp.WaitAfterRack)
		cp.PauseAfterRack = ca.boolean("pause_after_rack", cp.PauseAfterRack)
		cp.CanaryRack, _ = ca.str("canary_rack")
		cp.ScopeSettings = s.decodeScope(c, ca, cp.ScopeSettings, cb.DefRange, &diags)
		cp.VerifyTimeout = ca.duration("verify_timeout", cp.VerifyTimeout)
		cp.Remediation = s.decodeRemediation(c.Blocks, ctx, cp.Remediation, &diags)
	}
	if hb := single(content.Blocks, "drain", &diags); hb != nil {
		st.Drain = s.decodeHook(hb, ctx, st.DrainTimeout, &diags)
	}
	if hb := single(content.Blocks, "uncordon", &diags); hb != nil {
		st.Uncordon = s.decodeHook(hb, ctx, DefaultHookTimeout, &diags)
	}
	seen := map[string]hcl.Range{}
	for _, sb := range content.Blocks {
		if sb.Type != "stage" {
			continue
		}
		c, sa := s.content(sb.Body, stageSchema, ctx, &diags)
		stg := &StrategyStage{Name: sb.Labels[0], DeclRange: sb.DefRange}
		if !claim(seen, "stage", stg.Name, "Strategy "+quote(st.Name), sb.DefRange, &diags) {
			continue
		}
		stg.Roles, _ = sa.strList("roles")
		for _, r := range stg.Roles {
			if !validRole(r) {
				sa.errorf(sa.rng("roles", sb.DefRange), "Unknown role", "%q is not a server role: it must be %s.", r, orList(Roles))
			}
		}
		stg.Racks, _ = sa.strList("racks")
		if len(stg.Racks) > 0 {
			s.stageRacks[stg] = sa.elemRanges("racks", len(stg.Racks), sb.DefRange)
		}
		stg.Labels = sa.strMap("labels")
		stg.BatchSize = sa.quantity("batch_size", sb.DefRange)
		if stg.BatchSize.Unset {
			stg.BatchSize = Quantity{Value: 100, Percent: true, Range: sb.DefRange}
		} else if !stg.BatchSize.Percent && stg.BatchSize.Value < 1 {
			sa.errorf(stg.BatchSize.Range, "Invalid value for batch_size", "batch_size must be at least 1; got %d.", stg.BatchSize.Value)
		}
		stg.ScopeSettings = s.decodeScope(c, sa, ScopeSettings{
			Threshold:     Threshold{Type: "percent", Value: 100},
			FailureBudget: Quantity{Unset: true},
			OnBreach:      OnBreachPause,
		}, sb.DefRange, &diags)
		stg.WaitAfter = sa.duration("wait_after", 0)
		stg.PauseAfter = sa.boolean("pause_after", false)
		st.Stages = append(st.Stages, stg)
	}
	st.Triggers = s.decodeTriggers(content.Blocks, ctx, &diags)
	st.ExceedSeedLimits = a.boolean("exceed_seed_limits", false)
	if !st.ExceedSeedLimits {
		diags = append(diags, seedLimitErrors(st, a)...)
	}
	s.strategies[st.Name] = st
	s.setObject(kindStrategy, st.Name, map[string]cty.Value{})
	return diags
}

func validRole(r string) bool { return slices.Contains(Roles, r) }

// decodeScope reads threshold, failure_budget and on_breach.
func (s *loadState) decodeScope(c *hcl.BodyContent, a *attrs, def ScopeSettings, blockRange hcl.Range, diags *hcl.Diagnostics) ScopeSettings {
	out := def
	out.Threshold.Range = blockRange
	if tb := single(c.Blocks, "threshold", diags); tb != nil {
		_, ta := s.content(tb.Body, thresholdBodySchema, a.ctx, diags)
		typ := ta.oneOf("type", "", "count", "percent")
		if typ != "" {
			if v, ok := ta.value("value", cty.Number, false); ok {
				rng := ta.rng("value", tb.DefRange)
				f, _ := v.AsBigFloat().Float64()
				n := int(f)
				switch {
				case float64(n) != f:
					ta.errorf(rng, "Invalid threshold", "A threshold value must be a whole number; got %g.", f)
				case typ == "percent" && (n < 1 || n > 100):
					ta.errorf(rng, "Invalid threshold", "A percent threshold must be from 1 to 100; got %d.", n)
				case typ == "count" && n < 1:
					ta.errorf(rng, "Invalid threshold", "A count threshold must be at least 1; got %d.", n)
				default:
					out.Threshold = Threshold{Type: typ, Value: n, Range: rng}
				}
			}
		}
	}
	if q := a.quantity("failure_budget", blockRange); !q.Unset {
		out.FailureBudget = q
	}
	out.OnBreach = a.oneOf("on_breach", out.OnBreach, OnBreachPause, OnBreachFail)
	return out
}

func (s *loadState) decodeRemediation(blocks hcl.Blocks, ctx *hcl.EvalContext, def Remediation, diags *hcl.Diagnostics) Remediation {
	rb := single(blocks, "remediation", diags)
	if rb == nil {
		return def
	}
	_, a := s.content(rb.Body, remediationBodySchema, ctx, diags)
	return Remediation{
		Reboots:  a.integer("reboots", def.Reboots, 0, 10),
		Reimages: a.integer("reimages", def.Reimages, 0, 10),
	}
}

func (s *loadState) decodeHook(b *hcl.Block, ctx *hcl.EvalContext, def time.Duration, diags *hcl.Diagnostics) *Hook {
	c, d := b.Body.Content(hookSchema)
	*diags = append(*diags, d...)
	a := s.attrs(c.Attributes, ctx, diags)
	h := &Hook{DeclRange: b.DefRange, Timeout: def}
	h.Command, _ = a.strList("command")
	if c.Attributes["command"] != nil && len(h.Command) == 0 && !d.HasErrors() {
		a.errorf(a.rng("command", b.DefRange), "Invalid hook command", "A %s hook's command is an argument list with at least the program, such as [\"kubectl\", \"drain\", \"$NODE\"].", b.Type)
	}
	h.Timeout = a.duration("timeout", def)
	return h
}
