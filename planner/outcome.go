package planner

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// misconfiguration reports whether an outcome is a configuration problem
// (credentials, a BMC without usable inventory, a system the server does
// not name): the plan fails for it whatever on_unreachable says.
func misconfiguration(outcome string) bool {
	switch outcome {
	case providers.OutcomeCredentialsRefused, providers.OutcomeInventoryUnavailable, providers.OutcomeSystemUnresolved:
		return true
	}
	return false
}

// unavailableServer is a server that was not observed, or observed
// unhealthy: never upgraded, never dropped silently.
type unavailableServer struct {
	addr, cause, why string
	// common is why with the server's own BMC address written as
	// "{bmc}", so servers failing the same way share one line (the key
	// only: messages show a real address).
	common  string
	subject *hcl.Range
	// emptyPassword says where the empty password the BMC refused came
	// from (a variable set to nothing); "" when it was not empty.
	emptyPassword string
	// block: the plan fails for it (on_unreachable = block, or a
	// configuration problem without -hold-back-errored).
	block bool
	// device: a rack member that is not a server, reported apart from
	// the servers (its words and its way forward differ).
	device bool
}

// unavailable records a server that cannot be upgraded now. Unreachable
// servers, servers whose BMC answered without what the plan needs, and
// unhealthy servers follow on_unreachable (skip: planned as skipped;
// block: a plan error); configuration problems fail the plan unless
// -hold-back-errored holds them back. Reported grouped by cause in
// reportUnavailable.
func (p *planning) unavailable(s *config.Server, ps *plan.Server, cause, why string) {
	u := unavailableServer{addr: ps.Address, cause: cause, why: why, common: commonWhy(why, s.BMC), subject: rangePtr(s.DeclRange), device: s.IsDevice()}
	switch {
	case misconfiguration(cause):
		u.block = !p.opts.HoldBackErrored
	default:
		u.block = p.onUnreachable(s) == OnUnreachableBlock
	}
	if !u.block {
		ps.Action, ps.Reason = plan.ActionSkip, cause
	}
	if cause == providers.OutcomeCredentialsRefused {
		if from, empty := emptyPassword(s, p.provider(s.Cluster)); empty {
			u.emptyPassword = from
			why = strings.TrimSuffix(why, ".") + ". The password sent was empty: it comes from " + from + "."
		}
	}
	ps.Problems = append(ps.Problems, why)
	p.unavail = append(p.unavail, u)
}

// reportUnavailable adds one diagnostic per cause (and severity), naming
// every server, grouped by what its BMC answered: a fleet behind a broken
// VPN is one line, not one per server. It comes first, because a server
// not seen hides everything else about it.
func (p *planning) reportUnavailable() {
	type group struct {
		cause         string
		block, device bool
	}
	by := map[group][]unavailableServer{}
	for _, u := range p.unavail {
		g := group{u.cause, u.block, u.device}
		by[g] = append(by[g], u)
	}
	// Devices are counted apart from the servers: "1 of 2 devices
	// unreachable".
	total := map[bool]int{}
	for _, s := range p.inScope {
		total[s.IsDevice()]++
	}
	var out hcl.Diagnostics
	// An outcome this rackform does not know (a newer plugin) is still
	// reported, after the known ones: never dropped.
	causes := map[string]bool{}
	for g := range by {
		causes[g.cause] = true
	}
	for _, cause := range plan.CausesInOrder(causes) {
		for _, g := range []group{{cause, true, false}, {cause, false, false}, {cause, true, true}, {cause, false, true}} {
			list := by[g]
			if len(list) == 0 {
				continue
			}
			d := &hcl.Diagnostic{Severity: hcl.DiagWarning}
			if g.block {
				d.Severity = hcl.DiagError
			}
			noun := "servers"
			if g.device {
				noun = "devices"
			}
			d.Summary = fmt.Sprintf("%d of %d %s %s", len(list), total[g.device], noun, causeSummary(cause))
			d.Detail = whyGroups(list) + emptyPasswords(list) + " " + causeAdvice(cause, g.block, g.device, p.opts.HoldBackErrored)
			if len(list) == 1 {
				d.Subject = list[0].subject
			}
			out = append(out, d)
		}
	}
	p.report.diags = append(p.report.diags, out...)
}

// causeSummary words cause after a count of servers.
func causeSummary(cause string) string {
	if cause == plan.ReasonUnhealthy {
		return "unhealthy"
	}
	return providers.WordingOf(cause).Servers
}

// whyGroups lists servers by the reason their BMC gave: "connection
// refused: a, b; TLS handshake timeout: c."
func whyGroups(list []unavailableServer) string {
	var order []string
	by := map[string][]string{}
	own := map[string]string{}
	for _, u := range list {
		if _, ok := by[u.common]; !ok {
			order = append(order, u.common)
			own[u.common] = u.why
		}
		by[u.common] = append(by[u.common], u.addr)
	}
	parts := make([]string, len(order))
	for i, common := range order {
		// The first server's own message, its address and all; the others
		// failed alike at their own addresses.
		why := strings.TrimSuffix(own[common], ".")
		if len(by[common]) > 1 && common != own[common] {
			why += ", and likewise at each other server's own BMC address"
		}
		parts[i] = fmt.Sprintf("%s (%s)", strings.Join(by[common], ", "), why)
	}
	return strings.Join(parts, "; ") + "."
}

// emptyPasswords says which of the servers' BMCs refused an empty
// password and where it came from, or "": a refused login with nothing
// typed is a variable set to nothing, not a wrong password.
func emptyPasswords(list []unavailableServer) string {
	var order []string
	by := map[string][]string{}
	for _, u := range list {
		if u.emptyPassword == "" {
			continue
		}
		if by[u.emptyPassword] == nil {
			order = append(order, u.emptyPassword)
		}
		by[u.emptyPassword] = append(by[u.emptyPassword], u.addr)
	}
	var out string
	for _, from := range order {
		hint := ""
		if strings.HasSuffix(from, "(set with -var)") {
			hint = ` (-var NAME="$VAR" with the shell variable unset sets it to nothing)`
		}
		out += fmt.Sprintf(" The password sent for %s was empty: it comes from %s. Give it a value%s.", strings.Join(by[from], ", "), from, hint)
	}
	return out
}

// emptyPassword reports whether the password server s logs in with (its
// own credentials', else its provider's) is empty, and says where it comes
// from.
func emptyPassword(s *config.Server, prov *config.Provider) (from string, empty bool) {
	if c := s.Credentials; c != nil {
		return orWords(c.PasswordFrom, "server "+s.Name+"'s credentials"), c.Password.Reveal() == ""
	}
	if prov == nil || !prov.Attrs.Type().IsObjectType() || !prov.Attrs.Type().HasAttribute("password") {
		return "", false
	}
	v := prov.Attrs.GetAttr("password")
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return "", false
	}
	return orWords(prov.PasswordFrom, "provider "+prov.Name+"'s password"), v.AsString() == ""
}

func orWords(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// commonWhy writes a server's own BMC address (URL, host:port, host) in
// why as "{bmc}".
func commonWhy(why, bmc string) string {
	u, err := url.Parse(bmc)
	if err != nil || u.Host == "" {
		return why
	}
	base := strings.TrimRight(u.Scheme+"://"+u.Host, "/")
	why = strings.ReplaceAll(why, base, "{bmc}")
	why = strings.ReplaceAll(why, u.Host, "{bmc}")
	if h := u.Hostname(); h != "" && h != u.Host {
		why = strings.ReplaceAll(why, h, "{bmc}")
	}
	return why
}

func causeAdvice(cause string, block, device, holdBack bool) string {
	if cause == plan.ReasonUnhealthy && device {
		// A device block takes no upgrade_when_critical (rule 50 is for
		// servers): the way forward is the device's own health.
		return causeAdvice("", block, device, holdBack) + " A device is held back while its controller reports health Critical: a device block takes no upgrade_when_critical, which is for servers. Clear the fault its controller reports, then plan again (or -exclude it to plan the rest)."
	}
	if cause == plan.ReasonUnhealthy {
		// Firmware is often the fix for the very fault: the way forward
		// is a reviewed override per server (rule 50).
		return causeAdvice("", block, device, holdBack) + " To upgrade such a server anyway, give it upgrade_when_critical = \"why, and the ticket\" in the configuration: the plan then records the reason and lists the server first."
	}
	switch {
	case misconfiguration(cause) && block:
		what := map[string]string{
			providers.OutcomeCredentialsRefused:   "Check the provider's (or the server's) credentials",
			providers.OutcomeInventoryUnavailable: "Check that the BMC serves its UpdateService firmware inventory, or the System's BiosVersion and the Manager's FirmwareVersion",
			providers.OutcomeSystemUnresolved:     "Name the server's system (system = Id or UUID of one the BMC lists)",
		}[cause]
		return what + ": this is a configuration problem, so the plan fails. -exclude the servers, or plan with -hold-back-errored to plan the rest of the fleet without them."
	case misconfiguration(cause):
		return "Held back (-hold-back-errored): planned as skipped, counted for no threshold, and the plan is not \"no changes\"."
	case block && cause == providers.OutcomeUnusableAnswer:
		return "Their BMCs answer, so the network is not the problem: check that each is a server's BMC (a switch or chassis controller serves no ComputerSystem) and that it serves what the message names, or reset a BMC that fails its requests. -exclude them, or plan with -on-unreachable=skip to plan them as skipped."
	case block:
		return "Fix them, -exclude them, or plan with -on-unreachable=skip to plan them as skipped."
	}
	return "They are planned as skipped and count for no threshold; the plan is not \"no changes\" while they are unseen."
}

// checkClustersObserved fails the plan for a cluster none of whose
// in-scope servers could be observed: nothing it says about that cluster
// would be true.
func (p *planning) checkClustersObserved() {
	type tally struct {
		n, seen int
		causes  map[string]int
		c       *config.Cluster
	}
	var order []*config.Cluster
	by := map[*config.Cluster]*tally{}
	for _, s := range p.inScope {
		t := by[s.Cluster]
		if t == nil {
			t = &tally{causes: map[string]int{}, c: s.Cluster}
			by[s.Cluster] = t
			order = append(order, s.Cluster)
		}
		t.n++
		o := p.observed[address(s)]
		if o != nil && o.EffectiveOutcome() == providers.OutcomeObserved {
			t.seen++
		} else if o == nil {
			t.causes[providers.OutcomeUnreachable]++
		} else {
			t.causes[o.EffectiveOutcome()]++
		}
	}
	for _, c := range order {
		t := by[c]
		if prov := p.provider(c); t.seen > 0 || prov == nil || p.failedProviders[prov.Name] {
			continue
		}
		fix := "Restore access to its BMCs"
		if len(t.causes) != 1 || t.causes[providers.OutcomeUnreachable] == 0 {
			// Some BMCs answered: access is not (all) the problem.
			fix = "Fix what the warnings above say of its servers"
		}
		p.report.errorf(rangePtr(c.DeclRange), "No server of cluster "+c.Name+" observed",
			"None of the %d in-scope servers of cluster %q could be observed (%s), so nothing this plan would say about it is known. %s, or -exclude %s.",
			t.n, c.Name, plan.CauseCounts(t.causes), fix, c.Name)
	}
}
