package planner

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/internal/words"
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
	// problems are each server's error findings, one sentence each, for
	// the servers -hold-back-errored holds back.
	problems map[string][]string
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
	if sev == hcl.DiagError {
		if f.problems == nil {
			f.problems = map[string][]string{}
		}
		f.problems[server] = append(f.problems[server], summary+": "+words.Capitalize(detail))
	}
}

// diagnostics are the findings, each naming every server it concerns (a
// fleet's odd machines are all reported at once, never the first few).
// With holdBack, errors become warnings: their servers are held back.
func (f *findings) diagnostics(holdBack bool) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, k := range f.order {
		x := f.byKey[k]
		d := &hcl.Diagnostic{
			Severity: x.severity,
			Summary:  x.summary,
			Detail:   fmt.Sprintf("%s %s: %s", words.Plural(len(x.servers), "Server", "Servers"), strings.Join(x.servers, ", "), x.detail),
			Subject:  x.subject,
		}
		if holdBack && d.Severity == hcl.DiagError {
			d.Severity = hcl.DiagWarning
			d.Summary = "Held back: " + d.Summary
			d.Detail += " (Held back by -hold-back-errored: not upgraded by this plan.)"
		}
		out = append(out, d)
	}
	return out
}

// inScopeComponents are the release components the rollout's scope
// upgrades on s: firmware_only drops the runtime (rule 3); a device gets
// the components for its kind, a server those for no device
// (config.Component.For).
func (p *planning) inScopeComponents(r *config.Release, s *config.Server) []*config.Component {
	var out []*config.Component
	for _, c := range r.Components {
		if p.rollout.Scope == config.ScopeFirmwareOnly && c.Kind == config.KindRuntime {
			continue
		}
		if !c.For(s) {
			continue
		}
		out = append(out, c)
	}
	return out
}

func providerMatch(m config.Match) providers.Match {
	return providers.Match{SoftwareID: m.SoftwareID, ID: m.ID, NamePattern: m.Name, Count: m.Count}
}

// matching returns the observed components a release component's match
// rule selects (SoftwareId, inventory Id, or a glob over Name), in any
// state: what the plan records of the server.
func matching(m config.Match, observed []providers.Component) []providers.Component {
	return providerMatch(m).Members(observed)
}

// diff decides what happens to every in-scope server.
func (p *planning) diff() {
	p.servers = make(map[string]*plan.Server, len(p.inScope))
	var f findings
	for _, s := range p.inScope {
		addr := address(s)
		ps := &plan.Server{
			Address: addr, Name: s.Name, Cluster: s.Cluster.Name, Rack: s.Rack.Name, Role: s.Role, Kind: s.Kind,
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
		outcome := o.EffectiveOutcome()
		ps.Outcome, ps.Identity, ps.Auth = outcome, o.Identity, o.Auth
		comps, others := o.Components, p.others[addr]
		if _, kept := p.others[addr]; !kept {
			comps, others = decidedOn(s.Cluster.Release, o.Components)
			comps = p.lists.Components(comps)
		}
		ps.Observed = plan.Observed{Reachable: outcome == providers.OutcomeObserved, PowerState: o.PowerState, Health: o.Health,
			Components: comps, Others: others, System: o.System}
		if outcome == providers.OutcomeObserved {
			ps.Fingerprint = o.Fingerprint
			if ps.Fingerprint == "" {
				ps.Fingerprint = fingerprint(o)
			}
		}
		// The plan keeps what it decides on and a digest of the rest:
		// the full inventory goes now, not once the whole fleet is
		// planned (a fifth of plan's memory at 10,000 servers).
		o.Components = nil
		switch {
		case outcome != providers.OutcomeObserved:
			p.unavailable(s, ps, outcome, describeOutcome(o))
			continue
		case o.Health == "Critical" && s.UpgradeWhenCritical == nil:
			p.unavailable(s, ps, plan.ReasonUnhealthy, "its BMC reports health Critical")
			continue
		case o.Health == "Critical":
			// Reviewed in the configuration: planned as any other server,
			// the reason recorded (rule 50).
			ps.UpgradeWhenCritical = &plan.CriticalOverride{Reason: s.UpgradeWhenCritical.Reason}
		case s.UpgradeWhenCritical != nil:
			f.add("critical\x00"+addr, hcl.DiagWarning, rangePtr(s.UpgradeWhenCritical.Range), "Not Critical",
				fmt.Sprintf("its BMC reports %s, not Critical, so upgrade_when_critical changes nothing: the server is planned as any other. Remove it once the fault it was for is gone.", healthText(o.Health)),
				addr)
		}
		if p.channel.releaseOf(s.Cluster) == nil {
			continue // config reported the missing release
		}
		if ch := p.channel.choices[s.Cluster]; ch != nil && ch.blocked {
			continue // the channel's choice broke a version rule (reported)
		}
		p.diffServer(s, ps, o, &f)
	}
	p.reportUnavailable()
	p.checkClustersObserved()
	if p.opts.HoldBackErrored {
		p.holdBack(f.problems)
	}
	p.report.diags = append(p.report.diags, f.diagnostics(p.opts.HoldBackErrored)...)
}

// holdBack plans each server with problems as skipped (held back), with
// every problem listed: the rest of the fleet is planned without it.
func (p *planning) holdBack(problems map[string][]string) {
	for _, s := range p.inScope {
		addr := address(s)
		probs := problems[addr]
		ps := p.servers[addr]
		if len(probs) == 0 || ps == nil {
			continue
		}
		ps.Action, ps.Reason, ps.Problems = plan.ActionSkip, plan.ReasonHeldBack, probs
		ps.Changes, ps.Steps, ps.Reboots, ps.Estimate = nil, nil, 0, 0
		p.heldBack = append(p.heldBack, addr)
	}
}

// healthText names a reported health in words.
func healthText(h string) string {
	if h == "" {
		return "no health"
	}
	return "health " + h
}

// describeOutcome is one readable line saying why a server was not
// observed: the provider's diagnostics (the BMC's own message), and for a
// BMC serving several systems, the systems it lists.
func describeOutcome(o *providers.Observation) string {
	why := describe(o.Diagnostics)
	if o.EffectiveOutcome() == providers.OutcomeSystemUnresolved && len(o.Systems) > 0 {
		var sys []string
		for _, r := range o.Systems {
			x := r.ID
			if r.UUID != "" {
				x += " " + r.UUID
			}
			if r.Name != "" {
				x += fmt.Sprintf(" %q", r.Name)
			}
			sys = append(sys, x)
		}
		why += "; the BMC serves the systems " + strings.Join(sys, ", ")
	}
	return why
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

// decidedOn splits a server's observed components into those the plan
// decides on, which it records in id order (every component a release
// component matches, in scope or not), and a count and digest of the
// rest. Without a release (the configuration is in error) everything is
// recorded. comps are as the provider reported them: only what is kept
// is sorted, which is the same as keeping from the sorted list.
func decidedOn(rel *config.Release, comps []providers.Component) ([]providers.Component, *plan.Others) {
	if rel == nil || len(comps) == 0 {
		return sortedComponents(comps), nil
	}
	var kept []providers.Component
	for _, o := range comps {
		for _, c := range rel.Components {
			if providerMatch(c.Match).Selects(o) {
				kept = append(kept, o)
				break
			}
		}
	}
	slices.SortStableFunc(kept, byID)
	return kept, plan.OthersOf(comps, kept)
}

func byID(a, b providers.Component) int { return strings.Compare(a.ID, b.ID) }

// sortedComponents returns in sorted by id (stable), in itself when it
// already is: lists are read-only.
func sortedComponents(in []providers.Component) []providers.Component {
	if slices.IsSortedFunc(in, byID) {
		return in
	}
	out := slices.Clone(in)
	slices.SortStableFunc(out, byID)
	return out
}

// diffServer compares each in-scope component with what the server
// reports, scheme-aware (rules 27–29), and builds the steps. A
// component's rule means every active member it selects (the members that
// run, not a rollback, staged or standby copy beside them): which members
// those are and whether they are as many as the rule requires are decided
// as apply decides them (providers.Match.Active and Counted, which
// Match.AtTarget reads), each is compared with the target by the one "at
// target" rule (version.Target.Matches), and the members not at it are
// the ones its update is for. The diff walks the members itself, rather
// than asking AtTarget, for what its messages and the change say of each:
// the one it cannot read, the versions moving, older or newer.
func (p *planning) diffServer(s *config.Server, ps *plan.Server, o *providers.Observation, f *findings) {
	rel := p.channel.releaseOf(s.Cluster)
	ok := true
	var targets []target
	// The server's changes, in p's buffer until they are interned.
	changes := p.changeBuf[:0]
	counts := map[string]int{}
	if s.IsDevice() && len(p.inScopeComponents(rel, s)) == 0 {
		f.add("nocomponent\x00"+s.Cluster.Name+"\x00"+s.Kind, hcl.DiagWarning, rangePtr(rel.DeclRange), "No component for the device",
			fmt.Sprintf("release %q has no component for devices of kind %s (a component with devices = [%q]), so nothing of theirs is compared or updated.", rel.Name, s.Kind, s.Kind),
			ps.Address)
	}
	for _, c := range p.inScopeComponents(rel, s) {
		found := matching(c.Match, ps.Observed.Components)
		if len(found) == 0 {
			ok = false
			f.add("missing\x00"+s.Cluster.Name+"\x00"+c.Name, hcl.DiagError, rangePtr(c.DeclRange), "Component not found on server",
				fmt.Sprintf("the BMC reports no component matching %s for component %q of release %q. Check the match rule or the server's inventory.", describeMatch(c.Match), c.Name, rel.Name),
				ps.Address)
			continue
		}
		rule := providerMatch(c.Match)
		active := rule.Active(found)
		if len(active) == 0 {
			ok = false
			f.add("copies\x00"+s.Cluster.Name+"\x00"+c.Name+"\x00"+providers.MembersText(found), hcl.DiagError, rangePtr(c.DeclRange), "Only copies match",
				fmt.Sprintf("the match rule %s of component %q selects only inventory members that do not run: %s. A version is compared only with the firmware that runs; match the running member (its SoftwareId, Id or name), which the BMC lists beside these.",
					describeMatch(c.Match), c.Name, membersWithSigns(found)),
				ps.Address)
			continue
		}
		if kinds, why := providers.Devices(active, c.Version.Format()); kinds != nil {
			ok = false
			f.add("devices\x00"+s.Cluster.Name+"\x00"+c.Name+"\x00"+providers.DevicesText(kinds), hcl.DiagError, rangePtr(c.DeclRange), "Rule matches different devices",
				fmt.Sprintf("the match rule %s of component %q selects members that are different devices (%s): %s. One image would be sent to all of them. Narrow the rule to one kind of device: match it by name (a glob only that device's names match) or by id, with count = N for how many it must find, and give the other devices a component of their own.",
					describeMatch(c.Match), c.Name, why, providers.DevicesText(kinds)),
				ps.Address)
			continue
		}
		if !rule.Counted(active) {
			ok = false
			f.add(fmt.Sprintf("count\x00%s\x00%s\x00%d", s.Cluster.Name, c.Name, len(active)), hcl.DiagError, rangePtr(c.DeclRange), "Wrong number of members",
				fmt.Sprintf("component %q must match %d running members (count = %d), but its rule %s matches %d: %s. A missing device is not skipped: check the server, or the count.",
					c.Name, c.Match.Count, c.Match.Count, describeMatch(c.Match), len(active), providers.MembersText(active)),
				ps.Address)
			continue
		}
		counts[c.Name] = len(active)
		format := c.Version.Format()
		tgt := p.want(c)
		// moving are the active members not at the target; lowest the
		// oldest of those older than it, for the minor rule; differs is
		// set when an opaque member is not the target.
		var moving []providers.Component
		var lowest version.Version
		minorRule := c.Kind == config.KindRuntime && c.Version.HasMinors()
		var seen []string
		down, up, differs, undecidable := false, false, false, false
		for _, o := range active {
			at, err := tgt.Matches(o.Version)
			if err != nil {
				undecidable = true
				f.add("parse\x00"+s.Cluster.Name+"\x00"+c.Name+"\x00"+o.Version, hcl.DiagError, rangePtr(c.DeclRange), "Undecidable version",
					fmt.Sprintf("component %q reports version %q (inventory %q), which the %s cannot read, so it cannot be compared with the target %s: %v. %s",
						c.Name, o.Version, o.ID, schemeName(c), c.Version, err, readAdvice(c, o.Version)),
					ps.Address)
				continue
			}
			if at {
				continue
			}
			moving = append(moving, o)
			if !slices.Contains(seen, o.Version) {
				seen = append(seen, o.Version)
			}
			v, _ := format.Parse(o.Version)
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
				if !up {
					lowest = v
				} else if minorRule {
					if order, err := version.Compare(v, lowest); err == nil && order < 0 {
						lowest = v
					}
				}
				up = true
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
		case len(moving) == 0:
			if id, fixed := notUpdateable(active); fixed && c.Method != config.MethodReimage {
				ps.Notes = append(ps.Notes, fmt.Sprintf("Component %q (inventory %q) is at its target %s; its BMC says it is not updateable, so it could not be changed.", c.Name, id, c.Version))
			}
			continue // at target
		}
		// A reimaged runtime goes through virtual media, not the
		// UpdateService: Updateable says nothing about it.
		if id, fixed := notUpdateable(moving); fixed && c.Method != config.MethodReimage {
			ok = false
			f.add("fixed\x00"+s.Cluster.Name+"\x00"+c.Name, hcl.DiagError, rangePtr(c.DeclRange), "Component not updateable",
				fmt.Sprintf("component %q is at %s and release %q wants %s, but the BMC marks inventory member %q as not updateable (Updateable: false), so plan will not send it an image. Give these servers a release without the change, or update the component another way.",
					c.Name, strings.Join(seen, ", "), rel.Name, c.Version, id),
				ps.Address)
			continue
		}
		up1 := updatePlan(o, c.Name)
		if up1 != nil && up1.Problem != "" && c.Method != config.MethodReimage {
			ok = false
			f.add("deliver\x00"+s.Cluster.Name+"\x00"+c.Name+"\x00"+up1.Problem, hcl.DiagError, rangePtr(c.DeclRange), "Image cannot be delivered",
				fmt.Sprintf("component %q needs an update to %s, but its BMC cannot take the image: %s", c.Name, c.Version, strings.TrimSuffix(up1.Problem, ".")+"."),
				ps.Address)
			continue
		}
		if minorRule && up {
			if missing := p.skippedMinors(lowest, c.Version); len(missing) > 0 {
				ok = false
				f.add("minor\x00"+s.Cluster.Name+"\x00"+lowest.MinorString(), hcl.DiagError, rangePtr(rel.VersionRange), "Minor version skipped",
					fmt.Sprintf("the runtime %q would move from %s to %s, skipping %s. A run may move at most one minor version: upgrade to release %s first.",
						c.Name, lowest, c.Version, strings.Join(missing, ", "), missing[0]),
					ps.Address)
				continue
			}
		}
		shared := isShared(active)
		changes = append(changes, plan.Change{
			Component: c.Name, Kind: c.Kind, From: from, To: c.Version.String(), Reboot: c.Reboot, Downgrade: down, Unordered: differs,
			Shared: shared, Members: len(active), Moving: len(moving),
		})
		ids := make([]string, len(moving))
		for i, m := range moving {
			ids[i] = m.ID
		}
		targets = append(targets, target{c: c, up: up1, shared: shared, moving: ids})
	}
	p.changeBuf = changes
	p.members[ps.Address] = p.sameCounts(counts)
	if !ok {
		if len(changes) > 0 {
			ps.Changes = slices.Clone(changes)
		}
		return
	}
	if len(changes) == 0 {
		ps.Action, ps.Reason = plan.ActionSkip, plan.ReasonAtTarget
		return
	}
	ps.Action = plan.ActionUpgrade
	ps.Changes = p.lists.ChangesOf(changes)
	p.layout(s, ps, targets, nil)
	if slices.ContainsFunc(targets, func(t target) bool { return t.shared }) {
		// Laid out again once the owner of each shared component on
		// its BMC is known (shared.go).
		p.targets[ps.Address] = targets
	} else {
		// What the BMC said of its updates is in the steps now.
		o.Updates = nil
	}
}

// sameCounts returns counts, or an equal map kept before: the servers
// of a fleet have a handful of distinct member counts.
func (p *planning) sameCounts(counts map[string]int) map[string]int {
	var key strings.Builder
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&key, "%s\x00%d\x00", name, counts[name])
	}
	if kept, ok := p.counts[key.String()]; ok {
		return kept
	}
	p.counts[key.String()] = counts
	return counts
}

// membersWithSigns names members with their state and the sign that said
// so: "Previous-159-1.2.4__BIOS.Setup.1-1 1.2.4 previous (Id prefix
// Previous-)".
func membersWithSigns(cs []providers.Component) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = providers.MemberText(c)
		if c.StateSign != "" {
			parts[i] += " (" + c.StateSign + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// target is one component a server's steps move, with how its BMC said
// it takes the image (nil when the provider did not say).
type target struct {
	c      *config.Component
	up     *providers.UpdatePlan
	shared bool
	// moving are the ids of the active members not at the target: those
	// the update is for.
	moving []string
}

// layout sets a server's steps, reboots and estimate from its targets;
// elsewhere are shared components another server on its BMC flashes
// (no step here, and not expected by its wait_ready).
func (p *planning) layout(s *config.Server, ps *plan.Server, targets []target, elsewhere map[string]bool) {
	steps, reboots := p.steps(s, targets, elsewhere)
	ps.Steps, ps.Reboots = p.lists.StepsOf(steps), reboots
	ps.Estimate = 0
	for _, st := range ps.Steps {
		ps.Estimate += st.Estimate
	}
}

// notUpdateable returns the first of found its BMC marks as not updateable.
func notUpdateable(found []providers.Component) (string, bool) {
	for _, c := range found {
		if !c.Updateable {
			return c.ID, true
		}
	}
	return "", false
}

// isShared reports whether a component is the BMC's own (or its
// chassis'), shared by every system behind it.
func isShared(found []providers.Component) bool {
	for _, c := range found {
		if c.Shared {
			return true
		}
	}
	return false
}

// updatePlan is the provider's answer for a release component, or nil.
func updatePlan(o *providers.Observation, component string) *providers.UpdatePlan {
	for i := range o.Updates {
		if o.Updates[i].Component == component {
			return &o.Updates[i]
		}
	}
	return nil
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
	if r, err := c.Version.Format().Parse(reported); err == nil && r.Lineage() != c.Version.Lineage() {
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
