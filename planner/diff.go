package planner

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// finding is one problem found on many servers: reported once, naming the
// servers, so a fleet-wide mismatch is one readable error, not ten thousand.
type finding struct {
	severity hcl.DiagnosticSeverity
	summary  string
	detail   string
	subject  *hcl.Range
	servers  []string
}

// findings collects findings in first-seen order.
type findings struct {
	order []string
	byKey map[string]*finding
}

func (f *findings) add(key string, sev hcl.DiagnosticSeverity, subject *hcl.Range, summary, detail, server string) {
	if f.byKey == nil {
		f.byKey = map[string]*finding{}
	}
	x := f.byKey[key]
	if x == nil {
		x = &finding{severity: sev, summary: summary, detail: detail, subject: subject}
		f.byKey[key] = x
		f.order = append(f.order, key)
	}
	x.servers = append(x.servers, server)
}

// maxNamed is how many servers a finding names before "and N more".
const maxNamed = 10

func (f *findings) diagnostics() hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, k := range f.order {
		x := f.byKey[k]
		names := x.servers
		more := ""
		if len(names) > maxNamed {
			more = fmt.Sprintf(" and %d more", len(names)-maxNamed)
			names = names[:maxNamed]
		}
		noun := "Server"
		if len(x.servers) > 1 {
			noun = "Servers"
		}
		out = append(out, &hcl.Diagnostic{
			Severity: x.severity,
			Summary:  x.summary,
			Detail:   fmt.Sprintf("%s %s%s: %s", noun, strings.Join(names, ", "), more, x.detail),
			Subject:  x.subject,
		})
	}
	return out
}

// inScopeComponents are the release components the rollout's scope
// upgrades: firmware_only drops the runtime (ROLLOUT-RULES 3).
func (p *planning) inScopeComponents(r *config.Release) []*config.Component {
	var out []*config.Component
	for _, c := range r.Components {
		if p.rollout.Scope == config.ScopeFirmwareOnly && c.Kind == config.KindRuntime {
			continue
		}
		out = append(out, c)
	}
	return out
}

func providerMatch(m config.Match) providers.Match {
	return providers.Match{SoftwareID: m.SoftwareID, ID: m.ID, NamePattern: m.Name}
}

// matching returns the observed components a release component's match
// rule selects: SoftwareId, inventory Id, or a glob over Name.
func matching(m config.Match, observed []providers.Component) []providers.Component {
	var out []providers.Component
	pm := providerMatch(m)
	for _, o := range observed {
		if pm.Selects(o) {
			out = append(out, o)
		}
	}
	return out
}

// diff decides what happens to every in-scope server.
func (p *planning) diff() {
	p.servers = make(map[string]*plan.Server, len(p.inScope))
	var f findings
	for _, s := range p.inScope {
		addr := address(s)
		ps := &plan.Server{
			Address: addr, Name: s.Name, Cluster: s.Cluster.Name, Rack: s.Rack.Name, Role: s.Role,
			NodeName: s.NodeName, BMC: s.BMC, Labels: s.Labels, System: s.System,
		}
		if prov := p.provider(s.Cluster); prov != nil {
			ps.Provider = prov.Name
			if config.IsPlainHTTP(s.BMC) && config.AllowsHTTP(prov) {
				// Config refuses http:// without allow_http; allowed, it
				// is still worth one warning naming the servers.
				f.add("http\x00"+prov.Name, hcl.DiagWarning, rangePtr(prov.DeclRange), "Plain http:// BMC addresses",
					fmt.Sprintf("the BMC address is plain http://, so the BMC password crosses the network in clear text; provider %q allows it with allow_http = true. Use https:// where the BMC supports it.", prov.Name),
					addr)
			}
		}
		if w := s.MaintenanceWindow; w != nil && w != s.Cluster.MaintenanceWindow {
			ps.Windows = p.intervals(w)
			if len(ps.Windows) == 0 {
				f.add("window\x00"+w.Name, hcl.DiagError, rangePtr(w.DeclRange), "Window does not open before the plan expires",
					fmt.Sprintf("maintenance window %s does not open before this plan expires at %s, so apply could never start them. Plan closer to the window, with a longer -valid-for, or -exclude them.", w.Name, p.now.Add(p.opts.NotAfter).Format(time.RFC3339)),
					addr)
			}
		}
		p.servers[addr] = ps
		o := p.observed[addr]
		if o == nil {
			o = &providers.Observation{Server: addr, Diagnostics: providers.Diagnostics{{
				Severity: providers.Error, Summary: "No observation", Detail: "the provider returned nothing for this server",
			}}}
		}
		ps.Observed = plan.Observed{Reachable: o.Reachable, PowerState: o.PowerState, Health: o.Health, Components: sortedComponents(o.Components)}
		if o.Reachable {
			ps.Fingerprint = o.Fingerprint
			if ps.Fingerprint == "" {
				ps.Fingerprint = fingerprint(o)
			}
		}
		switch {
		case !o.Reachable:
			p.unavailable(s, ps, plan.ReasonUnreachable, "unreachable", describe(o.Diagnostics))
			continue
		case o.Health == "Critical":
			p.unavailable(s, ps, plan.ReasonUnhealthy, "unhealthy", "its BMC reports health Critical")
			continue
		}
		if s.Cluster.Release == nil {
			continue // config reported the missing release
		}
		p.diffServer(s, ps, &f)
	}
	p.reportUnavailable()
	p.diags = append(p.diags, f.diagnostics()...)
}

func describe(d providers.Diagnostics) string {
	if len(d) == 0 {
		return "the provider gave no reason"
	}
	var msgs []string
	for _, x := range d {
		x.Server = ""
		msgs = append(msgs, x.String())
	}
	return strings.Join(msgs, "; ")
}

// unavailable applies OnUnreachable to a server that cannot be upgraded
// now: either the plan fails naming it, or it is planned as skipped with
// the reason and a warning. Never dropped silently.
func (p *planning) unavailable(s *config.Server, ps *plan.Server, reason, what, why string) {
	d := &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Server " + what + ", skipped", Subject: rangePtr(s.DeclRange),
		Detail: fmt.Sprintf("Server %s is %s (%s); it is planned as skipped and counts for no threshold.", ps.Address, what, why)}
	if p.onUnreachable(s) == OnUnreachableBlock {
		d.Severity, d.Summary = hcl.DiagError, "Server "+what
		d.Detail = fmt.Sprintf("Server %s is %s (%s). Fix it, -exclude it, or plan with -on-unreachable=skip to plan it as skipped.", ps.Address, what, why)
	} else {
		ps.Action, ps.Reason = plan.ActionSkip, reason
	}
	p.unavail = append(p.unavail, unavailableServer{addr: ps.Address, what: what, diag: d})
}

// onUnreachable is the mode for s: the -on-unreachable option when given,
// else its strategy's on_unreachable (default skip).
func (p *planning) onUnreachable(s *config.Server) string {
	if p.opts.OnUnreachable != "" {
		return p.opts.OnUnreachable
	}
	if s.Cluster != nil && s.Cluster.Strategy != nil && s.Cluster.Strategy.OnUnreachable != "" {
		return s.Cluster.Strategy.OnUnreachable
	}
	return OnUnreachableSkip
}

// maxServerDiags is how many unreachable or unhealthy servers get their
// own diagnostic; a dead network must not bury the output in thousands.
// The plan's warnings still list every one.
const maxServerDiags = 10

// unavailableServer is a server unavailable() reported.
type unavailableServer struct {
	addr, what string
	diag       *hcl.Diagnostic
}

// reportUnavailable adds the first maxServerDiags diagnostics and one
// summary of the rest.
func (p *planning) reportUnavailable() {
	for i, u := range p.unavail {
		if i < maxServerDiags {
			p.diags = append(p.diags, u.diag)
		}
	}
	if rest := p.unavail[min(len(p.unavail), maxServerDiags):]; len(rest) > 0 {
		names := make([]string, 0, maxNamed)
		for _, u := range rest[:min(len(rest), maxNamed)] {
			names = append(names, u.addr)
		}
		more := ""
		if len(rest) > maxNamed {
			more = fmt.Sprintf(" and %d more", len(rest)-maxNamed)
		}
		first := rest[0].diag
		p.unavailSummary = &hcl.Diagnostic{
			Severity: first.Severity,
			Summary:  fmt.Sprintf("%d more servers unreachable or unhealthy", len(rest)),
			Detail:   fmt.Sprintf("Also %s: %s%s.", ternary(first.Severity == hcl.DiagError, "blocking the plan", "planned as skipped"), strings.Join(names, ", "), more),
		}
		p.diags = append(p.diags, p.unavailSummary)
	}
}

func ternary(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func sortedComponents(in []providers.Component) []providers.Component {
	out := append([]providers.Component(nil), in...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// diffServer compares each in-scope component with what the server
// reports, scheme-aware (ROLLOUT-RULES 27–29), and builds the steps.
func (p *planning) diffServer(s *config.Server, ps *plan.Server, f *findings) {
	rel := s.Cluster.Release
	ok := true
	var targets []*config.Component
	for _, c := range p.inScopeComponents(rel) {
		found := matching(c.Match, ps.Observed.Components)
		if len(found) == 0 {
			ok = false
			f.add("missing\x00"+s.Cluster.Name+"\x00"+c.Name, hcl.DiagError, rangePtr(c.DeclRange), "Component not found on server",
				fmt.Sprintf("the BMC reports no component matching %s for component %q of release %q. Check the match rule or the server's inventory.", describeMatch(c.Match), c.Name, rel.Name),
				ps.Address)
			continue
		}
		format := c.Version.Format()
		// below are the members older than the target, for the minor
		// rule; differs is set when an opaque member is not the target.
		var below []version.Version
		var seen []string
		down, up, differs, undecidable := false, false, false, false
		for _, o := range found {
			v, err := format.Parse(o.Version)
			if err != nil {
				undecidable = true
				f.add("parse\x00"+s.Cluster.Name+"\x00"+c.Name+"\x00"+o.Version, hcl.DiagError, rangePtr(c.DeclRange), "Undecidable version",
					fmt.Sprintf("component %q reports version %q (inventory %q), which the %s cannot read, so it cannot be compared with the target %s: %v. %s",
						c.Name, o.Version, o.ID, schemeName(c), c.Version, err, readAdvice(c, o.Version)),
					ps.Address)
				continue
			}
			if !contains(seen, o.Version) {
				seen = append(seen, o.Version)
			}
			order, err := version.Compare(v, c.Version)
			switch {
			case err != nil && c.Scheme == version.Opaque:
				differs = true
			case err != nil:
				undecidable = true
				f.add("order\x00"+s.Cluster.Name+"\x00"+c.Name+"\x00"+o.Version, hcl.DiagError, rangePtr(c.DeclRange), "Undecidable version",
					fmt.Sprintf("component %q reports version %q (inventory %q), which the %s cannot order against the target %s: %s. %s",
						c.Name, o.Version, o.ID, schemeName(c), c.Version, undecidableReason(err), orderAdvice(c, o.Version)),
					ps.Address)
			case order < 0:
				up = true
				below = append(below, v)
			case order > 0:
				down = true
			}
		}
		if undecidable {
			ok = false
			continue
		}
		from := strings.Join(seen, ", ")
		switch {
		case differs && !c.AllowChange:
			ok = false
			f.add("opaque\x00"+s.Cluster.Name+"\x00"+c.Name+"\x00"+from, hcl.DiagError, rangePtr(c.DeclRange), "Opaque version differs",
				fmt.Sprintf("component %q is at %s, not its target %s. Its versions are opaque (equal or different, never older or newer), so plan cannot tell whether moving it is an upgrade or a downgrade. Set allow_change = true on component %q to move it to %s anyway; the plan then shows it as a change.",
					c.Name, from, c.Version, c.Name, c.Version),
				ps.Address)
			continue
		case down && !c.AllowDowngrade:
			ok = false
			f.add("downgrade\x00"+s.Cluster.Name+"\x00"+c.Name+"\x00"+from, hcl.DiagError, rangePtr(c.DeclRange), "Downgrade refused",
				fmt.Sprintf("component %q is at %s, newer than the target %s of release %q. Set allow_downgrade = true on the component or release to downgrade on purpose.", c.Name, from, c.Version, rel.Name),
				ps.Address)
			continue
		case !down && !up && !differs:
			continue // at target
		}
		if c.Kind == config.KindRuntime && up && c.Version.HasMinors() {
			lowest := below[0]
			for _, v := range below[1:] {
				if order, err := version.Compare(v, lowest); err == nil && order < 0 {
					lowest = v
				}
			}
			if missing := p.skippedMinors(lowest, c.Version); len(missing) > 0 {
				ok = false
				f.add("minor\x00"+s.Cluster.Name+"\x00"+lowest.MinorString(), hcl.DiagError, rangePtr(rel.VersionRange), "Minor version skipped",
					fmt.Sprintf("the runtime %q would move from %s to %s, skipping %s. A run may move at most one minor version: upgrade to release %s first.",
						c.Name, lowest, c.Version, strings.Join(missing, ", "), missing[0]),
					ps.Address)
				continue
			}
		}
		ps.Changes = append(ps.Changes, plan.Change{
			Component: c.Name, Kind: c.Kind, From: from, To: c.Version.String(), Reboot: c.Reboot, Downgrade: down, Unordered: differs,
		})
		targets = append(targets, c)
	}
	if !ok {
		return
	}
	if len(ps.Changes) == 0 {
		ps.Action, ps.Reason = plan.ActionSkip, plan.ReasonAtTarget
		return
	}
	ps.Action = plan.ActionUpgrade
	ps.Steps, ps.Reboots = p.steps(s, targets)
	for _, st := range ps.Steps {
		ps.Estimate += st.Estimate
	}
}

// skippedMinors names the minor releases an upgrade from → to jumps over;
// with a catalog, each is named by its newest known version.
func (p *planning) skippedMinors(from, to version.Version) []string {
	var known []version.Version
	if p.cfg.Catalog != nil {
		known = p.cfg.Catalog.Releases
	}
	minors := version.SkippedMinors(from, to, known)
	for i, m := range minors {
		var best version.Version
		for _, k := range known {
			if k.MinorString() != m {
				continue
			}
			if order, err := version.Compare(k, best); best.IsZero() || err == nil && order > 0 {
				best = k
			}
		}
		if !best.IsZero() {
			minors[i] = best.String()
		}
	}
	return minors
}

// schemeName names a component's scheme in a sentence.
func schemeName(c *config.Component) string {
	if c.Scheme == version.Pattern {
		return fmt.Sprintf("version_pattern %q", c.Pattern)
	}
	return fmt.Sprintf("%q scheme", c.Scheme)
}

// readAdvice says what to declare so a reported version can be read: a
// built-in scheme that reads and orders both it and the target, when one
// does.
func readAdvice(c *config.Component, reported string) string {
	if sc := version.Deciding(c.Version.String(), reported); sc != "" && sc != c.Scheme {
		return fmt.Sprintf("Declare scheme = %q on component %q, which reads and orders both.", sc, c.Name)
	}
	if sc := version.Deciding(reported); sc != "" && sc != c.Scheme {
		return fmt.Sprintf("Scheme %q reads %q, but not against the target %s: declare scheme = %q on component %q and write its version as the BMC spells it (for example with its family token), or declare a version_pattern that reads both.",
			sc, reported, c.Version, sc, c.Name)
	}
	return fmt.Sprintf("No built-in scheme reads it against the target: declare a version_pattern on component %q whose capture groups say what is compared, or scheme = %q and allow_change = true to compare for equality only.", c.Name, version.Opaque)
}

// orderAdvice says what to do when a reported version reads but cannot be
// ordered against the target.
func orderAdvice(c *config.Component, reported string) string {
	if r, err := c.Version.Format().Parse(reported); err == nil && r.Family() != c.Version.Family() {
		return fmt.Sprintf("The server reports firmware of another family than component %q targets: check that the match rule selects the right inventory member, and give servers of another platform a release of their own.", c.Name)
	}
	return fmt.Sprintf("Write the target as the exact build the server should report, or declare a version_pattern on component %q that decides it.", c.Name)
}

// undecidableReason is the reason of a version.UndecidableError, else the
// error's text.
func undecidableReason(err error) string {
	var u *version.UndecidableError
	if errors.As(err, &u) {
		return u.Reason
	}
	return err.Error()
}

func describeMatch(m config.Match) string {
	switch {
	case m.SoftwareID != "":
		return fmt.Sprintf("software_id %q", m.SoftwareID)
	case m.ID != "":
		return fmt.Sprintf("id %q", m.ID)
	}
	return fmt.Sprintf("name %q", m.Name)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
