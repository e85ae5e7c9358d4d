package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/internal/words"
)

// checkBMC validates a BMC URL: http or https, a host, and no password in
// it (the URL is shown in plans; credentials go in credentials blocks).
func checkBMC(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v.", raw, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("%q must start with https:// (or http://), as in \"https://10.0.0.1:443\".", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%q has no host.", raw)
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		// Do not echo the URL: it contains the password.
		return fmt.Errorf("the BMC URL contains a password; put credentials in a credentials block or the provider, using env().")
	}
	if p := u.Port(); p != "" {
		if _, err := net.LookupPort("tcp", p); err != nil {
			return fmt.Errorf("%q has an invalid port %q.", raw, p)
		}
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must be the BMC's base address, without a path, query or fragment.", raw)
	}
	return nil
}

// bmcKey normalizes a BMC URL so two spellings of one endpoint collide.
func bmcKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

func errorAt(rng hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()}
}

// plainError is an error with no place in the configuration's text: a
// file that cannot be read, a command-line option.
func plainError(summary, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...)}
}

// claim records name, declared at rng, in seen and reports true; a name
// seen before is declared twice in one owner ("Rollout \"r\"" already
// has a stage named ...): claim reports that at the second declaration
// and returns false.
func claim(seen map[string]hcl.Range, what, name, owner string, rng hcl.Range, diags *hcl.Diagnostics) bool {
	if first, ok := seen[name]; ok {
		*diags = append(*diags, errorAt(rng, "Duplicate "+what+" name", "%s already has a %s named %q at %s.", owner, what, name, posString(first)))
		return false
	}
	seen[name] = rng
	return true
}

func warningAt(rng hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()}
}

func where(s *Server) string {
	return fmt.Sprintf("%s (cluster %q, rack %q)", posString(s.DeclRange), s.Cluster.Name, s.Rack.Name)
}

// whereFrom is where, with the inventory line a generated server came from.
func (o *origins) whereFrom(sv *Server) string {
	if from := o.serverOrigin(sv); from != "" {
		return fmt.Sprintf("%s (cluster %q, rack %q, from %s)", posString(sv.DeclRange), sv.Cluster.Name, sv.Rack.Name, from)
	}
	return where(sv)
}

// validator runs the rules that need the whole model, once every block is
// decoded; it holds what decoding left for them.
type validator struct {
	cfg     *Config
	origins *origins
	// partial are the clusters some of whose racks or servers are missing
	// for an error reported where their for_each failed.
	partial map[*Cluster]bool
	// stageRacks are the ranges of each strategy stage's racks elements.
	stageRacks map[*StrategyStage][]hcl.Range
	// noRelease are the clusters without a release attribute, badChannel
	// the rollouts whose channel was invalid (reported).
	noRelease  []*Cluster
	badChannel []*Rollout
}

// validate runs the checks that need the whole model.
func (v *validator) validate() hcl.Diagnostics {
	var diags hcl.Diagnostics
	cfg := v.cfg

	// rule 8: a server belongs to one rack of one cluster.
	byName := map[string]*Server{}
	byBMC := map[string][]*Server{}
	for _, c := range cfg.Clusters {
		racks := map[string]*Rack{}
		for _, r := range c.Racks {
			if first := racks[r.Name]; first != nil {
				diags = append(diags, errorAt(r.DeclRange, "Duplicate rack name",
					"Cluster %q already has a rack named %q, declared at %s.", c.Name, r.Name, posString(first.DeclRange)))
			} else {
				racks[r.Name] = r
			}
			for _, sv := range r.Servers {
				if first := byName[sv.Name]; first != nil {
					diags = append(diags, errorAt(sv.DeclRange, "Duplicate server",
						"A server named %s is already declared at %s. A server belongs to exactly one rack of one cluster.", v.origins.serverRef(sv), v.origins.whereFrom(first)))
				} else {
					byName[sv.Name] = sv
				}
				if sv.BMC == "" || checkBMC(sv.BMC) != nil {
					continue
				}
				key := bmcKey(sv.BMC)
				if d := v.checkSharedBMC(sv, byBMC[key]); d != nil {
					diags = append(diags, d)
				}
				byBMC[key] = append(byBMC[key], sv)
			}
		}
		if v.partial[c] {
			// Racks or servers are missing for an error reported
			// where their for_each failed; the rules on the whole
			// cluster (empty, placement, strategy) would only echo it.
			continue
		}
		diags = append(diags, checkPlacement(c)...)
		diags = append(diags, v.checkStrategyFits(c)...)
	}

	diags = append(diags, v.checkPlainHTTP()...)
	diags = append(diags, v.checkReleases()...)
	diags = append(diags, checkRollouts(cfg)...)
	diags = append(diags, v.checkChannels()...)
	for _, p := range cfg.Providers {
		if !p.Attrs.Type().HasAttribute("password") || p.IsSensitive("password") || p.passwordExpr == nil {
			continue
		}
		diags = append(diags, passwordDiagnostic(fmt.Sprintf("Provider %q", p.Name), p.passwordExpr, p.passwordExpr.Range()))
	}
	return diags
}

// passwordNotSensitive reports the password attribute at of owner ("Server
// \"a1\"") whose value is not sensitive, hiding its line when that line
// holds the password itself.
func (s *loadState) passwordNotSensitive(owner string, at *hcl.Attribute) *hcl.Diagnostic {
	if !plainReference(at.Expr) {
		s.secrets.addSensitiveSource(at.Range)
	}
	return passwordDiagnostic(owner, at.Expr, at.Expr.Range())
}

// passwordDiagnostic says why a password that is not sensitive is refused,
// in the words of where it comes from: written in the file, or read from a
// variable or local not declared sensitive (the fix is then on the
// variable, not on the password line).
func passwordDiagnostic(owner string, expr hcl.Expression, rng hcl.Range) *hcl.Diagnostic {
	var vars, others []string
	for _, tr := range expr.Variables() {
		name, ok := traversalName(tr)
		switch {
		case ok && tr.RootName() == kindVar:
			vars = append(vars, name)
		case ok:
			others = append(others, tr.RootName()+"."+name)
		default:
			others = append(others, tr.RootName())
		}
	}
	switch {
	case len(vars) == 1 && len(others) == 0:
		return errorAt(rng, "Password not sensitive",
			"%s takes its password from variable %q, which is not declared sensitive: add sensitive = true to variable %q (or write password = env(\"NAME\")), so the password never appears in a configuration review or a plan.",
			owner, vars[0], vars[0])
	case len(vars)+len(others) > 0:
		return errorAt(rng, "Password not sensitive",
			"%s has a password built from %s, which is not sensitive: take it from env(\"NAME\") or a variable declared sensitive = true, so it never appears in a configuration review or a plan.",
			owner, joinAnd(append(prefixed("var.", vars), others...)))
	}
	return errorAt(rng, "Literal password",
		"%s has a password that is not a sensitive value: write it as env(\"NAME\") or a sensitive variable, so it never appears in a configuration review or a plan.", owner)
}

// plainReference reports whether expr is only a reference (var.x,
// local.y): its source line then holds no secret.
func plainReference(expr hcl.Expression) bool {
	_, diags := hcl.AbsTraversalForExpr(expr)
	return !diags.HasErrors()
}

// unknownPlain reports whether expr evaluates to an unknown value of a
// known type that is not sensitive: a variable validate has no value for.
// A variable that failed is unknown of no type; its error is reported.
func unknownPlain(expr hcl.Expression, ctx *hcl.EvalContext) bool {
	v, diags := expr.Value(ctx)
	return !diags.HasErrors() && !v.IsWhollyKnown() && !v.ContainsMarked() && v.Type() != cty.DynamicPseudoType
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// checkSharedBMC checks server sv against the servers declared before it
// with the same BMC address. Servers share a BMC only when it serves
// several systems and each names its own, distinct one (system = "Node1").
func (v *validator) checkSharedBMC(sv *Server, before []*Server) *hcl.Diagnostic {
	if len(before) == 0 {
		return nil
	}
	var unnamed []string
	for _, o := range append(before[:len(before):len(before)], sv) {
		if o.System == "" {
			unnamed = append(unnamed, fmt.Sprintf("%q", o.Name))
		}
	}
	if len(unnamed) > 0 {
		first := before[0]
		return errorAt(sv.BMCRange, "Duplicate BMC address",
			"Server %s has the BMC address %s, which server %q at %s already has. Servers share a BMC address only when the BMC serves several systems (a multi-node chassis) and each server names its own with system = \"ID\" (the ComputerSystem's Id or UUID); %s %s no system.",
			v.origins.serverRef(sv), sv.BMC, first.Name, v.origins.whereFrom(first), joinAnd(unnamed), words.Plural(len(unnamed), "names", "name"))
	}
	for _, o := range before {
		if strings.EqualFold(o.System, sv.System) {
			return errorAt(sv.BMCRange, "Duplicate system",
				"Server %s names system %q behind the BMC %s, which server %q at %s names too. Servers sharing a BMC each name a different system.",
				v.origins.serverRef(sv), sv.System, sv.BMC, o.Name, v.origins.whereFrom(o))
		}
	}
	return nil
}

// checkPlainHTTP refuses http:// BMC addresses unless the server's
// provider sets allow_http = true: over plain HTTP the BMC password
// crosses the network in clear text. Servers generated from one block
// share one diagnostic.
func (v *validator) checkPlainHTTP() hcl.Diagnostics {
	type group struct {
		rng     hcl.Range
		servers []*Server
	}
	var order []*group
	byRange := map[hcl.Range]*group{}
	for _, c := range v.cfg.Clusters {
		if AllowsHTTP(c.Provider) {
			continue
		}
		for _, sv := range c.Servers() {
			if !IsPlainHTTP(sv.BMC) {
				continue
			}
			g := byRange[sv.BMCRange]
			if g == nil {
				g = &group{rng: sv.BMCRange}
				byRange[sv.BMCRange] = g
				order = append(order, g)
			}
			g.servers = append(g.servers, sv)
		}
	}
	var diags hcl.Diagnostics
	for _, g := range order {
		first := g.servers[0]
		prov := "the cluster's provider block"
		if p := first.Cluster.Provider; p != nil {
			prov = fmt.Sprintf("provider %q", p.Name)
		}
		who := fmt.Sprintf("Server %s has the BMC address %s, which is", v.origins.serverRef(first), first.BMC)
		if n := len(g.servers); n > 1 {
			names := make([]string, 0, maxNamedServers)
			for _, sv := range g.servers[:min(n, maxNamedServers)] {
				names = append(names, fmt.Sprintf("%q", sv.Name))
			}
			more := ""
			if n > maxNamedServers {
				more = fmt.Sprintf(" and %d more", n-maxNamedServers)
			}
			who = fmt.Sprintf("Servers %s%s have BMC addresses (%s, …) that are", strings.Join(names, ", "), more, first.BMC)
		}
		diags = append(diags, errorAt(g.rng, "Plain http:// BMC address",
			"%s plain http://: the BMC password would cross the network in clear text. Use https://, or, on a network you trust, set allow_http = true in %s.", who, prov))
	}
	return diags
}

// maxNamedServers is how many servers one diagnostic names before "and N more".
const maxNamedServers = 10

// IsPlainHTTP reports whether a BMC URL is http:// (not https://).
func IsPlainHTTP(bmc string) bool {
	u, err := url.Parse(bmc)
	return err == nil && strings.EqualFold(u.Scheme, "http")
}

// AllowsHTTP reports whether provider p opts in to plain http:// BMC
// addresses with allow_http = true.
func AllowsHTTP(p *Provider) bool {
	if p == nil || p.Attrs == cty.NilVal || !p.Attrs.Type().IsObjectType() || !p.Attrs.Type().HasAttribute("allow_http") {
		return false
	}
	v, err := convert.Convert(p.Attrs.GetAttr("allow_http"), cty.Bool)
	return err == nil && v.IsKnown() && !v.IsNull() && v.True()
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// checkPlacement enforces control-plane placement
// (seeds/nexus-rack-resiliency.md): with three or more racks, three
// control-plane servers in distinct racks plus one spare; with two racks,
// one control-plane server and the spare in the other rack; with one rack,
// three control-plane servers in it. A cluster with no control-plane
// server at all is a plain fleet and has nothing to place.
func checkPlacement(c *Cluster) hcl.Diagnostics {
	cps, spares := c.ControlPlane()
	// Distinct names: a duplicated rack is reported once, as a duplicate.
	names := map[string]bool{}
	for _, r := range c.Racks {
		names[r.Name] = true
	}
	racks := len(names)
	var diags hcl.Diagnostics
	placement := func(rng hcl.Range, format string, args ...any) {
		diags = append(diags, errorAt(rng, "Invalid control-plane placement", format, args...))
	}
	at := func(ss []*Server, i int) hcl.Range {
		if i < len(ss) {
			return ss[i].RoleRange
		}
		return c.DeclRange
	}
	switch {
	case racks == 0:
		return hcl.Diagnostics{warningAt(c.DeclRange, "Empty cluster", "Cluster %q has no racks, so there is nothing to upgrade.", c.Name)}
	case len(cps) == 0 && len(spares) == 0:
		// No control plane at all: a plain fleet (storage, bare compute),
		// not a Kubernetes cluster; there is no quorum to place.
		return nil
	case racks == 1:
		if len(cps) != 3 {
			placement(at(cps, 3), "Cluster %q has one rack, so it needs exactly 3 control_plane servers in that rack to keep quorum; it has %d (%s).", c.Name, len(cps), list(cps))
		}
		if len(spares) > 1 {
			placement(spares[1].RoleRange, "Cluster %q has %d control_plane_spare servers (%s); at most one is allowed.", c.Name, len(spares), list(spares))
		}
	case racks == 2:
		if len(cps) != 1 {
			placement(at(cps, 1), "Cluster %q has two racks, so it needs exactly 1 control_plane server and 1 control_plane_spare in the other rack; it has %d control_plane servers (%s).", c.Name, len(cps), list(cps))
		}
		if len(spares) != 1 {
			placement(at(spares, 1), "Cluster %q has two racks, so it needs exactly 1 control_plane_spare, in the rack without the control_plane server; it has %d (%s).", c.Name, len(spares), list(spares))
		}
		if len(cps) == 1 && len(spares) == 1 && cps[0].Rack == spares[0].Rack {
			placement(spares[0].RoleRange, "The control_plane_spare %q is in rack %q with the control_plane server %q; with two racks the spare goes in the other rack so losing a rack keeps one control-plane node.", spares[0].Name, spares[0].Rack.Name, cps[0].Name)
		}
	default:
		if len(cps) != 3 {
			placement(at(cps, 3), "Cluster %q has %d racks, so it needs exactly 3 control_plane servers, each in a different rack; it has %d (%s).", c.Name, racks, len(cps), list(cps))
		} else {
			seen := map[*Rack]*Server{}
			for _, cp := range cps {
				if other := seen[cp.Rack]; other != nil {
					placement(cp.RoleRange, "The control_plane servers %q and %q are both in rack %q; with %d racks the 3 control-plane servers go in 3 different racks so losing a rack keeps quorum.", other.Name, cp.Name, cp.Rack.Name, racks)
				}
				seen[cp.Rack] = cp
			}
		}
		if len(spares) != 1 {
			placement(at(spares, 1), "Cluster %q has %d racks, so it needs exactly 1 control_plane_spare; it has %d (%s).", c.Name, racks, len(spares), list(spares))
		} else if racks >= 4 {
			// With four or more racks the spare gets a rack of its own
			// (the resiliency layout), so one rack failure costs at most
			// one control-plane node, spare included.
			withCP := map[string]*Server{}
			for _, cp := range cps {
				withCP[cp.Rack.Name] = cp
			}
			if other := withCP[spares[0].Rack.Name]; other != nil {
				for _, r := range c.Racks {
					if withCP[r.Name] == nil {
						diags = append(diags, warningAt(spares[0].RoleRange, "Control-plane spare shares a rack",
							"The control_plane_spare %q is in rack %q with the control_plane server %q, but rack %q has no control-plane server; with %d racks the spare belongs in a rack of its own.",
							spares[0].Name, spares[0].Rack.Name, other.Name, r.Name, racks))
						break
					}
				}
			}
		}
	}
	return diags
}

func list(ss []*Server) string {
	if len(ss) == 0 {
		return "none"
	}
	var parts []string
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%s in rack %s", s.Name, s.Rack.Name))
	}
	return strings.Join(parts, ", ")
}

// checkStrategyFits checks the cluster's strategy against its racks: a
// count threshold or max_unavailable larger than a rack's compute servers
// can never be met (rules 7, 9); a canary rack must exist.
func (v *validator) checkStrategyFits(c *Cluster) hcl.Diagnostics {
	st := c.Strategy
	if st == nil {
		return nil
	}
	var diags hcl.Diagnostics
	cp := st.Compute
	rng := func(r hcl.Range) hcl.Range {
		if st.Implicit {
			return c.DeclRange
		}
		return r
	}
	for _, r := range c.Racks {
		n := 0
		for _, sv := range r.Servers {
			if sv.Role == RoleCompute {
				n++
			}
		}
		if n == 0 {
			continue
		}
		if cp.Threshold.Type == "count" && cp.Threshold.Value > n {
			diags = append(diags, errorAt(rng(cp.Threshold.Range), "Threshold larger than the rack",
				"Strategy %q needs %d successful servers per rack, but rack %q of cluster %q has only %d compute servers, so the threshold can never be met.", st.Name, cp.Threshold.Value, r.Name, c.Name, n))
		}
		if !cp.MaxUnavailable.Percent && !cp.MaxUnavailable.Unset && cp.MaxUnavailable.Value > n {
			diags = append(diags, errorAt(rng(cp.MaxUnavailable.Range), "max_unavailable larger than the rack",
				"Strategy %q allows %d servers down at once, but rack %q of cluster %q has only %d compute servers; use a percentage or a count up to %d.", st.Name, cp.MaxUnavailable.Value, r.Name, c.Name, n, n))
		}
	}
	if cp.CanaryRack != "" && c.Rack(cp.CanaryRack) == nil {
		detail := fmt.Sprintf("Strategy %q names canary rack %q, but cluster %q has no such rack.", st.Name, cp.CanaryRack, c.Name)
		diags = append(diags, errorAt(c.DeclRange, "Unknown canary rack", "%s%s", detail, suggestRack(c, cp.CanaryRack)))
	}
	if len(st.Stages) > 0 {
		// Generic stages replace the default phases (the planner runs
		// either), so the management checks apply only without them.
		diags = append(diags, v.checkStagesFit(c, rng)...)
	} else {
		diags = append(diags, checkManagementFits(c, rng)...)
	}
	return diags
}

// suggestRack is " Did you mean "r01"?" when cluster c has a rack named
// close to name, else "".
func suggestRack(c *Cluster, name string) string {
	var names []string
	for _, r := range c.Racks {
		names = append(names, r.Name)
	}
	if sugg := didYouMean(name, names); sugg != "" {
		return fmt.Sprintf(" Did you mean %q?", sugg)
	}
	return ""
}

// checkManagementFits checks a count threshold against the management
// batches the planner makes (Cluster.ManagementBatches, rule 5). Every
// batch must reach the threshold, so a count above the smallest batch can
// never be met.
func checkManagementFits(c *Cluster, rng func(hcl.Range) hcl.Range) hcl.Diagnostics {
	st := c.Strategy
	ms := st.Management
	if ms.Threshold.Type != "count" {
		return nil
	}
	var mgmt []*Server
	for _, sv := range c.Servers() {
		if sv.Role == RoleManagement {
			mgmt = append(mgmt, sv)
		}
	}
	smallest, where := 0, ""
	for g, batches := range c.ManagementBatches(mgmt) {
		for b, batch := range batches {
			if size := len(batch); smallest == 0 || size < smallest {
				smallest, where = size, fmt.Sprintf("batch %d of management group %s", b+1, GroupLetter(g))
			}
		}
	}
	if smallest == 0 || ms.Threshold.Value <= smallest {
		return nil
	}
	return hcl.Diagnostics{errorAt(rng(ms.Threshold.Range), "Threshold larger than the batch",
		"Strategy %q needs %d successful servers per management batch, but %s in cluster %q has only %d %s, so the threshold can never be met; use a percentage or a count up to %d.",
		st.Name, ms.Threshold.Value, where, c.Name, smallest, words.Plural(smallest, "server", "servers"), smallest)}
}

// checkStagesFit checks a strategy's generic stages against cluster c:
// every rack a stage selects exists in c; a count batch_size is not larger
// than the servers the stage takes (like max_unavailable, rules
// 7); a count threshold is not larger than its smallest batch (9). A stage
// takes the servers its selectors match that no earlier stage took; its
// control-plane servers go one at a time, the others in batches of
// batch_size, the last batch holding the rest.
func (v *validator) checkStagesFit(c *Cluster, rng func(hcl.Range) hcl.Range) hcl.Diagnostics {
	st := c.Strategy
	var diags hcl.Diagnostics
	members, _ := st.StageMembers(c.Servers())
	for si, stg := range st.Stages {
		for i, name := range stg.Racks {
			if c.Rack(name) == nil {
				r := stg.DeclRange
				if rs := v.stageRacks[stg]; i < len(rs) {
					r = rs[i]
				}
				diags = append(diags, errorAt(rng(r), "Unknown rack",
					"Stage %q of strategy %q selects rack %q, but cluster %q, which uses the strategy, has no such rack.%s",
					stg.Name, st.Name, name, c.Name, suggestRack(c, name)))
			}
		}
		rest := slices.DeleteFunc(members[si], (*Server).IsControlPlane)
		n := len(rest)
		if n == 0 {
			continue
		}
		bs := stg.BatchSize
		if !bs.Percent && !bs.Unset && bs.Value > n {
			diags = append(diags, errorAt(rng(bs.Range), "batch_size larger than the stage",
				"Stage %q of strategy %q has batch_size %d, but in cluster %q it takes only %d %s besides control-plane servers; use a percentage or a count up to %d.",
				stg.Name, st.Name, bs.Value, c.Name, n, words.Plural(n, "server", "servers"), n))
			continue
		}
		batches := stg.Batches(rest)
		smallest := len(batches[len(batches)-1])
		if stg.Threshold.Type == "count" && stg.Threshold.Value > smallest {
			diags = append(diags, errorAt(rng(stg.Threshold.Range), "Threshold larger than the batch",
				"Stage %q of strategy %q needs %d successful servers per batch, but in cluster %q its %s has only %d %s, so the threshold can never be met; use a percentage or a count up to %d.",
				stg.Name, st.Name, stg.Threshold.Value, c.Name, batchName(len(batches)), smallest, words.Plural(smallest, "server", "servers"), smallest))
		}
	}
	return diags
}

func batchName(batches int) string {
	if batches == 1 {
		return "one batch"
	}
	return fmt.Sprintf("last batch (batch %d)", batches)
}

// checkReleases applies the version rules that need no observation
// (rules 27–29): component versions parse (done while decoding),
// upgrade_from versions neither skip a minor nor downgrade without
// allow_downgrade, and catalog membership.
func (v *validator) checkReleases() hcl.Diagnostics {
	var diags hcl.Diagnostics
	var known []version.Version
	if v.cfg.Catalog != nil {
		known = v.cfg.Catalog.Releases
	}
	for _, r := range v.cfg.Releases {
		if r.Version.IsZero() {
			continue
		}
		for i, from := range r.UpgradeFrom {
			rng := r.upgradeFromRanges[i]
			if skipped := version.SkippedMinors(from, r.Version, known); len(skipped) > 0 {
				diags = append(diags, errorAt(rng, "Release skips a minor version",
					"%s → %s skips %s. A runtime release moves at most one minor version per run; upgrade to %s first.",
					from.MinorString(), r.Version.MinorString(), strings.Join(skipped, ", "), skipped[0]))
			}
			c, err := version.Compare(from, r.Version)
			switch {
			case err != nil:
				diags = append(diags, errorAt(rng, "Undecidable version",
					"Release %q cannot check upgrade_from %s against its version %s: %v. List only versions its scheme can order against the release's.", r.Name, from, r.Version, err))
			case c > 0 && !r.AllowDowngrade:
				diags = append(diags, errorAt(rng, "Downgrade not allowed",
					"Release %q (%s) is older than %s, which it lists in upgrade_from; set allow_downgrade = true to allow going back.", r.Name, r.Version, from))
			}
		}
		if len(known) > 0 {
			found := false
			for _, k := range known {
				if version.Equal(k, r.Version) {
					found = true
				}
			}
			if !found {
				diags = append(diags, warningAt(r.VersionRange, "Release not in catalog",
					"Release %q has version %s, which the catalog does not list; the minor-skip rule relies on the catalog being complete.", r.Name, r.Version))
			}
		}
	}
	return diags
}

// checkRollouts: a cluster is in at most one group of a rollout
// (rule 8), and clusters left out of a rollout are reported.
func checkRollouts(cfg *Config) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, ro := range cfg.Rollouts {
		seen := map[*Cluster]*Group{}
		for _, st := range ro.Stages {
			for _, g := range st.Groups {
				for _, c := range g.Clusters {
					if first := seen[c]; first != nil {
						diags = append(diags, errorAt(g.DeclRange, "Cluster in two groups",
							"Cluster %q is already in group %q at %s; a cluster is upgraded once per rollout.", c.Name, first.Name, posString(first.DeclRange)))
						continue
					}
					seen[c] = g
				}
			}
		}
		for _, c := range cfg.Clusters {
			if seen[c] == nil {
				diags = append(diags, warningAt(ro.DeclRange, "Cluster not in rollout",
					"Cluster %q is in no group of rollout %q, so this rollout does not upgrade it.", c.Name, ro.Name))
			}
		}
	}
	return diags
}
