package config

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/zclconf/go-cty/cty"
)

var clusterSchema = &hcl.BodySchema{
	Attributes: optional("strategy", "release", "maintenance_window", "provider", "labels", "site", "region"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "rack", LabelNames: []string{"name"}}},
}

var rackSchema = &hcl.BodySchema{
	Attributes: optional("for_each", "count", "name", "labels", "maintenance_window"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "server", LabelNames: []string{"name"}}, {Type: "device", LabelNames: []string{"name"}}},
}

var serverSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "for_each"}, {Name: "count"}, {Name: "name"},
		{Name: "bmc", Required: true}, {Name: "role", Required: true},
		{Name: "node_name"}, {Name: "labels"}, {Name: "maintenance_window"},
		{Name: "system"}, {Name: "update_method"}, {Name: "upgrade_when_critical"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "credentials"}},
}

var credentialsSchema = &hcl.BodySchema{Attributes: required("username", "password")}

const maxCount = 100_000

// maxInstances caps the racks and servers one load may expand to, since
// nested count/for_each multiply; 20× the largest fleet rackform targets.
const maxInstances = 200_000

// instance is one expansion of a block under for_each or count.
type instance struct {
	ctx *hcl.EvalContext
	// key is each.key, or the count index as a decimal.
	key     string
	counted bool
	// value is each.value (cty.NilVal under count or without for_each).
	value cty.Value
}

// expander expands the for_each and count of racks and servers, counting
// the instances against one load's cap.
type expander struct {
	// maxInstances overrides the maxInstances cap when positive (tests).
	maxInstances int
	filters      *filterIndexes
	origins      *origins
	// instances counts expanded racks and servers; tooMany is set once
	// the cap was reported.
	instances int
	tooMany   bool
	// unexpanded counts the blocks whose for_each or count could not be
	// evaluated: it failed (reported there), or what it reads already
	// failed (or has no value in validate).
	unexpanded int
}

// expand evaluates the for_each or count meta-argument of a block and
// returns one evaluation context per instance, in a stable order (for_each
// over a map or object: key order; over a set: element order; count:
// index order). Without either, the block is one instance in ctx.
func (ex *expander) expand(b *hcl.Block, attrs hcl.Attributes, ctx *hcl.EvalContext, diags *hcl.Diagnostics) []instance {
	if ex.tooMany {
		return nil
	}
	out := ex.expandInstances(b, attrs, ctx, diags)
	ex.instances += len(out)
	limit := maxInstances
	if ex.maxInstances > 0 {
		limit = ex.maxInstances
	}
	if ex.instances > limit {
		if !ex.tooMany {
			ex.tooMany = true
			*diags = append(*diags, errorAt(b.DefRange, "Too many instances", "The configuration expands to more than %d racks and servers; check the count and for_each arguments.", limit))
		}
		return nil
	}
	return out
}

func (ex *expander) expandInstances(b *hcl.Block, attrs hcl.Attributes, ctx *hcl.EvalContext, diags *hcl.Diagnostics) []instance {
	fe, cnt := attrs["for_each"], attrs["count"]
	if fe != nil && cnt != nil {
		*diags = append(*diags, errorAt(cnt.NameRange, "Invalid combination of \"count\" and \"for_each\"", "The %s block sets both count and for_each; use one.", b.Type))
		return nil
	}
	child := func(vars map[string]cty.Value) *hcl.EvalContext {
		c := ctx.NewChild()
		c.Variables = vars
		return c
	}
	switch {
	case cnt != nil:
		v, d := cnt.Expr.Value(ctx)
		*diags = append(*diags, d...)
		if d.HasErrors() {
			ex.unexpanded++ // as for for_each below
			return nil
		}
		v, _ = v.Unmark()
		if !v.IsKnown() {
			ex.unexpanded++ // what it reads failed: reported there
			return nil
		}
		if v.IsNull() || v.Type() != cty.Number {
			*diags = append(*diags, invalidMeta(cnt, "The count argument must be a whole number."))
			return nil
		}
		n, acc := v.AsBigFloat().Int64()
		// The cap is ten times the largest fleet rackform is built for; a
		// typo like count = 1e9 must not exhaust memory while loading.
		if acc != big.Exact || n < 0 || n > maxCount {
			*diags = append(*diags, invalidMeta(cnt, fmt.Sprintf("The count argument must be a whole number from 0 to %d.", maxCount)))
			return nil
		}
		out := make([]instance, n)
		for i := range out {
			out[i] = instance{
				ctx:     child(map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(int64(i))})}),
				key:     fmt.Sprint(i),
				counted: true,
			}
		}
		return out
	case fe != nil:
		v, d := ex.filters.value(fe.Expr, ctx)
		*diags = append(*diags, d...)
		if d.HasErrors() {
			// Reported here; the rules on the whole cluster (an empty
			// one, its placement) would only echo it.
			ex.unexpanded++
			return nil
		}
		isPlain := plain(v)
		if !isPlain && v.ContainsMarked() {
			*diags = append(*diags, invalidMeta(fe, "The for_each value is derived from a sensitive value, and its keys would become names shown in plans."))
			return nil
		}
		if !isPlain && !v.IsNull() && !v.IsWhollyKnown() {
			// Only what already failed (a local, a variable, a file
			// or function it reads) or a variable validate has no value
			// for is unknown: reported there, or not an error yet.
			ex.unexpanded++
			return nil
		}
		if v.IsNull() {
			*diags = append(*diags, invalidMeta(fe, "The for_each value must not be null."))
			return nil
		}
		ty := v.Type()
		var out []instance
		add := func(k string, val cty.Value) {
			each := cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(k), "value": val})
			out = append(out, instance{ctx: child(map[string]cty.Value{"each": each}), key: k, value: val})
		}
		switch {
		case ty.IsMapType() || ty.IsObjectType():
			m := v.AsValueMap()
			for _, k := range slices.Sorted(maps.Keys(m)) {
				add(k, m[k])
			}
		case ty.IsSetType():
			if !ty.ElementType().Equals(cty.String) {
				*diags = append(*diags, invalidMeta(fe, "A for_each set must contain strings; use a map (for example with a for expression) to iterate over other values."))
				return nil
			}
			for it := v.ElementIterator(); it.Next(); {
				_, e := it.Element()
				add(e.AsString(), e)
			}
		case ty.IsListType() || ty.IsTupleType():
			// Terraform refuses lists because their indexes make unstable
			// names; here each element must carry its name, so a list of
			// objects with a "name" attribute (what csvdecode returns) is
			// keyed by that name and keeps the file's order.
			i := 0
			for it := v.ElementIterator(); it.Next(); i++ {
				_, e := it.Element()
				et := e.Type()
				if !(et.IsObjectType() && et.HasAttribute("name")) && !(et.IsMapType()) {
					if src := ex.origins.csvSourceOf(et); src != nil {
						*diags = append(*diags, invalidMeta(fe, fmt.Sprintf("The for_each list holds rows of %s, which has no \"name\" column: its columns are %s. Each row needs a name column, which names the instance it makes.", src.path, joinAnd(src.header()))))
						return nil
					}
					*diags = append(*diags, invalidMeta(fe, fmt.Sprintf("Element %d of the for_each list has no \"name\" attribute. A for_each list must hold objects with a name (such as csvdecode rows with a name column); otherwise use a map or a set of strings.", i)))
					return nil
				}
				var name cty.Value
				if et.IsObjectType() {
					name = e.GetAttr("name")
				} else {
					name = e.Index(cty.StringVal("name"))
				}
				if name.IsNull() || name.Type() != cty.String {
					*diags = append(*diags, invalidMeta(fe, fmt.Sprintf("Element %d of the for_each list has a name that is not a string.", i)))
					return nil
				}
				add(name.AsString(), e)
			}
		default:
			*diags = append(*diags, invalidMeta(fe, fmt.Sprintf("The for_each value must be a map, an object, a set of strings or a list of objects with a name; got %s.", ty.FriendlyName())))
			return nil
		}
		return out
	}
	return []instance{{ctx: ctx}}
}

func invalidMeta(a *hcl.Attribute, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Invalid %s argument", a.Name),
		Detail:   detail,
		Subject:  a.Expr.Range().Ptr(),
	}
}

// instanceName is the name of an expanded block: its name attribute, else
// each.key, else "LABEL-INDEX" under count, else the label. Names are
// addresses on the command line (skip, -target) and in plans, so they are
// checked like labels.
func instanceName(b *hcl.Block, a *attrs, in instance) string {
	n := rawInstanceName(b, a, in)
	if !validObjectName(n) {
		rng := a.rng("name", b.LabelRanges[0])
		a.errorf(rng, "Invalid name", "%q is not a valid %s name: a name starts with a letter or digit and contains only letters, digits, '-', '_', '.' and ':'.", n, b.Type)
	}
	return n
}

func validObjectName(n string) bool {
	if n == "" || len(n) > 253 {
		return false
	}
	for i, r := range n {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case i > 0 && (r == '-' || r == '_' || r == '.' || r == ':'):
		default:
			return false
		}
	}
	return true
}

func rawInstanceName(b *hcl.Block, a *attrs, in instance) string {
	if n, ok := a.str("name"); ok {
		return n
	}
	switch {
	case in.counted:
		return fmt.Sprintf("%s-%s", b.Labels[0], in.key)
	case in.key != "":
		return in.key
	}
	return b.Labels[0]
}

func (s *loadState) decodeCluster(b *hcl.Block, ctx *hcl.EvalContext) hcl.Diagnostics {
	// dynamic "rack" and dynamic "server" blocks expand here; the
	// iterators they bind are visible to nested for_each and attributes.
	content, diags := dynblock.Expand(b.Body, ctx).Content(clusterSchema)
	a := s.attrs(content.Attributes, ctx, &diags)
	c := &Cluster{Name: b.Labels[0], DeclRange: b.DefRange, Labels: a.strMap("labels")}
	c.Strategy = s.cfg.DefaultStrategy
	decodedRef(a, kindStrategy, s.strategies, &c.Strategy)
	decodedRef(a, kindRelease, s.releases, &c.Release)
	if content.Attributes["release"] == nil && !s.anyChannel {
		diags = append(diags, errorAt(b.DefRange, "Missing release", "Cluster %q needs a target: set release = release.NAME.", c.Name))
	} else if content.Attributes["release"] == nil {
		// Fine when a channel rollout selects its release; checked once
		// the rollouts are decoded (checkChannels).
		s.noRelease = append(s.noRelease, c)
	}
	c.Site, _ = a.str("site")
	if region, ok := a.str("region"); ok {
		// A region is a site by another name (Fleet speaks of regions).
		if content.Attributes["site"] != nil {
			a.errorf(a.rng("region", b.DefRange), "Both site and region",
				"Cluster %q sets site and region; they are one attribute by two names: keep one.", c.Name)
		}
		c.Site = region
	}
	decodedRef(a, kindMaintenanceWindow, s.windows, &c.MaintenanceWindow)
	decodedRef(a, kindProvider, s.providers, &c.Provider)
	if content.Attributes["provider"] == nil {
		// Provider blocks may be decoded after this cluster (they are not
		// its dependencies), so the default is chosen once all are known.
		s.defaultProvider = append(s.defaultProvider, c)
	}

	unexpanded := s.expander.unexpanded
	defer func() {
		if s.expander.unexpanded > unexpanded {
			s.partial[c] = true
		}
	}()
	for _, rb := range content.Blocks {
		rc, d := rb.Body.Content(rackSchema)
		diags = append(diags, d...)
		for _, in := range s.expander.expand(rb, rc.Attributes, ctx, &diags) {
			ra := s.attrs(rc.Attributes, in.ctx, &diags)
			r := &Rack{Name: instanceName(rb, ra, in), Cluster: c, DeclRange: rb.DefRange, Labels: ra.strMap("labels")}
			r.MaintenanceWindow = c.MaintenanceWindow
			decodedRef(ra, kindMaintenanceWindow, s.windows, &r.MaintenanceWindow)
			for _, sb := range rc.Blocks {
				schema, decode := serverSchema, s.decodeServer
				if sb.Type == "device" {
					schema, decode = deviceSchema, s.decodeDevice
				}
				sc, d := sb.Body.Content(schema)
				diags = append(diags, d...)
				for _, sin := range s.expander.expand(sb, sc.Attributes, in.ctx, &diags) {
					r.Servers = append(r.Servers, decode(sb, sc, sin, r, &diags))
				}
			}
			c.Racks = append(c.Racks, r)
		}
	}
	s.clusters[c.Name] = c
	labels := cty.MapValEmpty(cty.String)
	if len(c.Labels) > 0 {
		m := map[string]cty.Value{}
		for k, v := range c.Labels {
			m[k] = cty.StringVal(v)
		}
		labels = cty.MapVal(m)
	}
	s.setObject(kindCluster, c.Name, map[string]cty.Value{"labels": labels})
	return diags
}

// decodedRef sets *target to the block of kind that attribute kind
// (strategy = strategy.NAME) refers to, when it is set and a reference;
// requireDecoded reports a target that failed to decode, and *target is
// then nil.
func decodedRef[T any](a *attrs, kind string, decoded map[string]*T, target **T) {
	if n, rng, ok := a.ref(kind, kind); ok {
		*target = decoded[n]
		requireDecoded(*target == nil, rng, kind, n, a.diags)
	}
}

// requireDecoded reports a reference whose target failed to decode, which
// only happens after the target's own errors; it keeps nil pointers from
// passing silently.
func requireDecoded(missing bool, rng hcl.Range, kind, name string, diags *hcl.Diagnostics) {
	if missing {
		*diags = append(*diags, errorAt(rng, "Reference to undeclared "+kindNoun(kind), "There is no usable %s named %q.", kindNoun(kind), name))
	}
}

func (s *loadState) decodeServer(b *hcl.Block, c *hcl.BodyContent, in instance, r *Rack, diags *hcl.Diagnostics) *Server {
	sv, a := s.decodeMember(b, c, in, r, diags)
	sv.RoleRange = a.rng("role", b.DefRange)
	if role, ok := a.str("role"); ok {
		if !validRole(role) {
			a.errorf(sv.RoleRange, "Unknown role", "Server %s has role %q; a role must be %s.", s.origins.serverRef(sv), role, orList(Roles))
		}
		sv.Role = role
	}
	sv.NodeName, _ = a.str("node_name")
	if sv.NodeName == "" {
		sv.NodeName = sv.Name
	}
	sv.Labels = a.strMap("labels")
	if sys, ok := a.str("system"); ok {
		switch {
		case strings.TrimSpace(sys) == "":
			a.errorf(a.rng("system", b.DefRange), "Invalid system", "Server %s has an empty system: name the ComputerSystem behind its BMC by Id (\"Node0\") or UUID, or leave system out when the BMC serves one system.", s.origins.serverRef(sv))
		case strings.Contains(sys, "/"):
			a.errorf(a.rng("system", b.DefRange), "Invalid system", "Server %s names system %q: give the ComputerSystem's Id (the last part of /redfish/v1/Systems/ID) or its UUID, not a path.", s.origins.serverRef(sv), sys)
			sv.System = sys // named, if badly: no "names no system" echo
		default:
			sv.System = sys
		}
	}
	if why, ok := a.str("upgrade_when_critical"); ok {
		rng := a.rng("upgrade_when_critical", b.DefRange)
		if strings.TrimSpace(why) == "" {
			a.errorf(rng, "Missing reason", "Server %s has upgrade_when_critical without a reason. Say why it is upgraded although its BMC reports health Critical, and where that was decided (a ticket), such as upgrade_when_critical = \"INC-4711: the PSU fault is fixed by BMC 7.20\": the reason is recorded in the plan and shown first when it is reviewed. Leave the attribute out for a server that must be held back while it is Critical.", s.origins.serverRef(sv))
		} else {
			sv.UpgradeWhenCritical = &CriticalOverride{Reason: strings.TrimSpace(why), Range: rng}
		}
	}
	s.decodeMemberRest(b, c, in, sv, a, diags)
	return sv
}

// decodeMember decodes what a server and a device block begin with: the
// name and the BMC; decodeMemberRest what they end with: the update
// method, the maintenance window and the credentials. (In this order, so
// diagnostics keep the order of the attributes' checks.)
func (s *loadState) decodeMember(b *hcl.Block, c *hcl.BodyContent, in instance, r *Rack, diags *hcl.Diagnostics) (*Server, *attrs) {
	a := s.attrs(c.Attributes, in.ctx, diags)
	sv := &Server{
		Name:      instanceName(b, a, in),
		Cluster:   r.Cluster,
		Rack:      r,
		DeclRange: b.DefRange,
		BMCRange:  a.rng("bmc", b.DefRange),
	}
	if in.value != cty.NilVal {
		// Not its context: a diagnostic needs only the key and the
		// value, and 100,000 contexts would stay alive for nothing.
		s.origins.generated[sv] = instance{key: in.key, value: in.value}
	}
	if bmc, ok := a.str("bmc"); ok {
		if err := checkBMC(bmc); err != nil {
			a.errorf(sv.BMCRange, "Invalid BMC URL", "%s %s: %s", memberNoun(b), s.origins.serverRef(sv), err.Error())
		}
		sv.BMC = bmc
	}
	return sv, a
}

// memberNoun is what messages call a server or a device block.
func memberNoun(b *hcl.Block) string {
	if b.Type == "device" {
		return "Device"
	}
	return "Server"
}

func (s *loadState) decodeMemberRest(b *hcl.Block, c *hcl.BodyContent, in instance, sv *Server, a *attrs, diags *hcl.Diagnostics) {
	noun := memberNoun(b)
	sv.UpdateMethod = a.oneOf("update_method", "", ServerMethods...)
	sv.MaintenanceWindow = sv.Rack.MaintenanceWindow
	decodedRef(a, kindMaintenanceWindow, s.windows, &sv.MaintenanceWindow)
	if cb := single(c.Blocks, "credentials", diags); cb != nil {
		cc, ca := s.content(cb.Body, credentialsSchema, in.ctx, diags)
		cred := &Credentials{}
		if v, ok := ca.value("username", cty.String, true); ok {
			u, m := v.Unmark()
			cred.Username = NewSecret(u.AsString(), len(m) > 0)
		}
		if v, ok := ca.value("password", cty.String, true); ok {
			p, m := v.Unmark()
			if len(m) == 0 {
				*diags = append(*diags, s.passwordNotSensitive(fmt.Sprintf("%s %q", noun, sv.Name), cc.Attributes["password"]))
			}
			cred.Password = NewSecret(p.AsString(), true)
			cred.PasswordFrom = s.valueFrom(cc.Attributes["password"].Expr)
		} else if at := cc.Attributes["password"]; at != nil && unknownPlain(at.Expr, in.ctx) {
			// A variable without a value yet (validate): what it will
			// hold is not sensitive either.
			*diags = append(*diags, s.passwordNotSensitive(fmt.Sprintf("%s %q", noun, sv.Name), at))
		}
		sv.Credentials = cred
	}
}
