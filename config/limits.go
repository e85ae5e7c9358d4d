package config

import (
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// The seed's bounds on taking a node out (Operator Nexus runtime upgrade):
// each node gets at most 20 minutes to drain and 10 minutes for its VMs to
// shut down, so a rack spends at most 30 minutes on cordon, drain and
// shutdown. A strategy may go beyond them only with exceed_seed_limits.
const (
	SeedDrainLimit    = 20 * time.Minute
	SeedShutdownLimit = 10 * time.Minute
)

// SeedLimitExcess is one strategy bound above the seed's.
type SeedLimitExcess struct {
	// Attribute is how the configuration names it: drain_timeout,
	// drain.timeout or shutdown_timeout.
	Attribute string
	Value     time.Duration
	Limit     time.Duration
	// What says which limit, in words.
	What  string
	Range hcl.Range
}

// SeedLimitExcesses lists the strategy's drain and shutdown bounds above
// the seed's limits.
func (st *Strategy) SeedLimitExcesses() []SeedLimitExcess {
	var out []SeedLimitExcess
	if st.DrainTimeout > SeedDrainLimit {
		out = append(out, SeedLimitExcess{Attribute: "drain_timeout", Value: st.DrainTimeout, Limit: SeedDrainLimit, What: "draining a node", Range: st.DeclRange})
	}
	if st.Drain != nil && st.Drain.Timeout > SeedDrainLimit && st.Drain.Timeout != st.DrainTimeout {
		out = append(out, SeedLimitExcess{Attribute: "drain.timeout", Value: st.Drain.Timeout, Limit: SeedDrainLimit, What: "draining a node", Range: st.Drain.DeclRange})
	}
	if st.ShutdownTimeout > SeedShutdownLimit {
		out = append(out, SeedLimitExcess{Attribute: "shutdown_timeout", Value: st.ShutdownTimeout, Limit: SeedShutdownLimit, What: "shutting down a node's VMs", Range: st.DeclRange})
	}
	return out
}

// seedLimitErrors reports each bound above the seed's limits at its
// attribute, with the way to opt out.
func seedLimitErrors(st *Strategy, a *attrs) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, x := range st.SeedLimitExcesses() {
		rng := x.Range
		if x.Attribute != "drain.timeout" {
			rng = a.rng(x.Attribute, x.Range)
		}
		diags = append(diags, errorAt(rng, "Above the seed limit for "+x.What, "Strategy %q sets %s = %q, above the %s the upgrade allows for %s (so that a rack spends at most 30 minutes on cordon, drain and shutdown). Lower it, or set exceed_seed_limits = true in the strategy to allow it; the plan then warns.", st.Name, x.Attribute, fmtDuration(x.Value), fmtDuration(x.Limit), x.What))
	}
	return diags
}

// HumanDuration writes a duration as people do: 30m, 1h, 1h30m.
func HumanDuration(d time.Duration) string { return fmtDuration(d) }

// fmtDuration writes 30m0s as 30m and 1h0m0s as 1h.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Default remediation trigger durations (Operator Nexus rack resiliency).
const (
	DefaultProvisioningTimeout = 6 * time.Hour
	DefaultReadOnlyFilesystem  = 10 * time.Minute
	DefaultUnknownState        = 30 * time.Minute
)

// RemediationTriggers are how long each condition the seed names lasts
// before remediation starts: a server that does not finish provisioning
// (come back on, healthy and at target) within Provisioning; a running
// server stuck with a read-only root filesystem (reported unhealthy while
// on) for ReadOnlyFilesystem; a control-plane or management server in an
// Unknown state (its BMC or host state cannot be read) for UnknownState.
type RemediationTriggers struct {
	Provisioning       time.Duration
	ReadOnlyFilesystem time.Duration
	UnknownState       time.Duration
	// Set is true when the strategy declares the block.
	Set       bool
	DeclRange hcl.Range
}

var triggersSchema = &hcl.BodySchema{Attributes: optional("provisioning", "read_only_filesystem", "unknown_state")}

func (s *loadState) decodeTriggers(blocks hcl.Blocks, ctx *hcl.EvalContext, diags *hcl.Diagnostics) RemediationTriggers {
	out := RemediationTriggers{Provisioning: DefaultProvisioningTimeout, ReadOnlyFilesystem: DefaultReadOnlyFilesystem, UnknownState: DefaultUnknownState}
	b := single(blocks, "remediation_triggers", diags)
	if b == nil {
		return out
	}
	_, a := s.content(b.Body, triggersSchema, ctx, diags)
	out.Provisioning = a.duration("provisioning", out.Provisioning)
	out.ReadOnlyFilesystem = a.duration("read_only_filesystem", out.ReadOnlyFilesystem)
	out.UnknownState = a.duration("unknown_state", out.UnknownState)
	out.Set, out.DeclRange = true, b.DefRange
	return out
}
