package config

import (
	"fmt"
	"path"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/zclconf/go-cty/cty"

	"github.com/rackform/rackform/config/version"
)

var releaseSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "version", Required: true},
		{Name: "scheme"},
		{Name: "allow_downgrade"},
		{Name: "upgrade_from"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "component", LabelNames: []string{"name"}}},
}

var componentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "version", Required: true},
		{Name: "scheme"},
		{Name: "image"},
		{Name: "apply_time"},
		{Name: "reboot"},
		{Name: "method"},
		{Name: "kind"},
		{Name: "allow_downgrade"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "match"}},
}

var matchSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "software_id"}, {Name: "id"}, {Name: "name"},
}}

func schemeNames() []string {
	out := make([]string, len(version.Schemes))
	for i, s := range version.Schemes {
		out[i] = string(s)
	}
	return out
}

// parseVersion reads attribute name as a version under scheme.
func (a *attrs) version(name string, scheme version.Scheme) (version.Version, bool) {
	v, ok := a.str(name)
	if !ok {
		return version.Version{}, false
	}
	parsed, err := version.Parse(v, scheme)
	if err != nil {
		a.errorf(a.m[name].Expr.Range(), "Invalid version", "%s does not parse under the %q scheme: %v.", name, scheme, err)
		return version.Version{}, false
	}
	return parsed, true
}

func (s *loadState) decodeRelease(b *hcl.Block, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := dynblock.Expand(b.Body, ctx).Content(releaseSchema)
	a := s.attrs(content.Attributes, ctx, &diags)
	r := &Release{Name: b.Labels[0], DeclRange: b.DefRange}
	r.Scheme = version.Scheme(a.oneOf("scheme", string(version.Semver), schemeNames()...))
	r.Version, _ = a.version("version", r.Scheme)
	r.VersionRange = a.rng("version", b.DefRange)
	r.AllowDowngrade = a.boolean("allow_downgrade", false)
	if from, ok := a.strList("upgrade_from"); ok {
		exprs, _ := hcl.ExprList(content.Attributes["upgrade_from"].Expr)
		for i, f := range from {
			v, err := version.Parse(f, r.Scheme)
			if err != nil {
				rng := a.rng("upgrade_from", b.DefRange)
				if len(exprs) == len(from) {
					rng = exprs[i].Range()
				}
				a.errorf(rng, "Invalid version", "upgrade_from[%d] does not parse under the %q scheme: %v.", i, r.Scheme, err)
				continue
			}
			r.UpgradeFrom = append(r.UpgradeFrom, v)
			rng := a.rng("upgrade_from", b.DefRange)
			if len(exprs) == len(from) {
				rng = exprs[i].Range()
			}
			r.upgradeFromRanges = append(r.upgradeFromRanges, rng)
		}
	}

	seen := map[string]*Component{}
	var runtime *Component
	for _, cb := range content.Blocks {
		c := s.decodeComponent(cb, r, ctx, &diags)
		if first := seen[c.Name]; first != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate component name",
				Detail:   fmt.Sprintf("Release %q already has a component named %q at %s.", r.Name, c.Name, posString(first.DeclRange)),
				Subject:  cb.DefRange.Ptr(),
			})
			continue
		}
		seen[c.Name] = c
		if c.Kind == KindRuntime {
			if runtime != nil {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "More than one runtime component",
					Detail:   fmt.Sprintf("Release %q already has the runtime component %q at %s; a release carries at most one runtime image.", r.Name, runtime.Name, posString(runtime.DeclRange)),
					Subject:  cb.DefRange.Ptr(),
				})
			} else {
				runtime = c
			}
		}
		r.Components = append(r.Components, c)
	}
	s.releases[r.Name] = r
	s.setObject(kindRelease, r.Name, map[string]cty.Value{"version": cty.StringVal(r.Version.String())})
	return diags
}

func (s *loadState) decodeComponent(b *hcl.Block, r *Release, ctx *hcl.EvalContext, diags *hcl.Diagnostics) *Component {
	content, d := b.Body.Content(componentSchema)
	*diags = append(*diags, d...)
	a := s.attrs(content.Attributes, ctx, diags)
	c := &Component{Name: b.Labels[0], Release: r, DeclRange: b.DefRange}
	c.Scheme = version.Scheme(a.oneOf("scheme", string(r.Scheme), schemeNames()...))
	c.Version, _ = a.version("version", c.Scheme)
	c.Image, _ = a.str("image")
	c.ApplyTime = a.oneOf("apply_time", ApplyOnReset, ApplyImmediate, ApplyOnReset, ApplyAtMaintenanceWindowStart, ApplyInMaintenanceWindowOnReset)
	c.Kind = a.oneOf("kind", KindFirmware, KindFirmware, KindRuntime)
	defMethod := MethodSimpleUpdate
	if c.Kind == KindRuntime {
		defMethod = MethodReimage
	}
	c.Method = a.oneOf("method", defMethod, MethodSimpleUpdate, MethodPush, MethodReimage)
	c.Reboot = a.boolean("reboot", c.ApplyTime == ApplyOnReset || c.ApplyTime == ApplyInMaintenanceWindowOnReset || c.Kind == KindRuntime)
	c.AllowDowngrade = a.boolean("allow_downgrade", r.AllowDowngrade)
	if c.Method != MethodReimage && c.Image == "" && content.Attributes["image"] == nil {
		a.errorf(b.DefRange, "Missing image", "Component %q is updated with %q, which needs an image URI: set image.", c.Name, c.Method)
	}

	switch len(content.Blocks) {
	case 0:
		a.errorf(b.DefRange, "Missing match block", "Component %q needs a match block saying how to find it in the BMC's firmware inventory: software_id, id or name.", c.Name)
	case 1:
		mb := content.Blocks[0]
		mc, d := mb.Body.Content(matchSchema)
		*diags = append(*diags, d...)
		ma := s.attrs(mc.Attributes, ctx, diags)
		c.Match.SoftwareID, _ = ma.str("software_id")
		c.Match.ID, _ = ma.str("id")
		c.Match.Name, _ = ma.str("name")
		n := 0
		for _, v := range []string{c.Match.SoftwareID, c.Match.ID, c.Match.Name} {
			if v != "" {
				n++
			}
		}
		if n != 1 {
			a.errorf(mb.DefRange, "Invalid match rule", "A match block sets exactly one of software_id, id or name; this one sets %d.", n)
		}
		if c.Match.Name != "" {
			if _, err := path.Match(c.Match.Name, ""); err != nil {
				a.errorf(ma.rng("name", mb.DefRange), "Invalid match rule", "The name pattern %q is not a valid glob: %v.", c.Match.Name, err)
			}
		}
	default:
		a.errorf(content.Blocks[1].DefRange, "Duplicate match block", "Component %q has more than one match block; combine the rule into one.", c.Name)
	}
	return c
}

var catalogSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "releases", Required: true},
	{Name: "scheme"},
}}

func (s *loadState) decodeCatalog(b *hcl.Block, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := b.Body.Content(catalogSchema)
	a := s.attrs(content.Attributes, ctx, &diags)
	c := &Catalog{DeclRange: b.DefRange}
	scheme := version.Scheme(a.oneOf("scheme", string(version.Semver), schemeNames()...))
	if list, ok := a.strList("releases"); ok {
		exprs, _ := hcl.ExprList(content.Attributes["releases"].Expr)
		for i, v := range list {
			parsed, err := version.Parse(v, scheme)
			if err != nil {
				rng := a.rng("releases", b.DefRange)
				if len(exprs) == len(list) {
					rng = exprs[i].Range()
				}
				a.errorf(rng, "Invalid version", "releases[%d] does not parse under the %q scheme: %v.", i, scheme, err)
				continue
			}
			c.Releases = append(c.Releases, parsed)
		}
	}
	s.cfg.Catalog = c
	return diags
}

func (s *loadState) decodeProvider(b *hcl.Block, ctx *hcl.EvalContext) hcl.Diagnostics {
	// The schema belongs to the plugin: take every attribute as it is and
	// let the plugin's Configure validate it.
	attrsMap, diags := b.Body.JustAttributes()
	p := &Provider{Name: b.Labels[0], DeclRange: b.DefRange}
	vals := map[string]cty.Value{}
	for _, at := range sortedAttrs(attrsMap) {
		v, d := at.Expr.Value(ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		unmarked, marks := v.UnmarkDeep()
		if len(marks) > 0 {
			s.addSecrets(unmarked)
			p.SensitiveAttrs = append(p.SensitiveAttrs, at.Name)
		} else if at.Name == "password" {
			// A literal password (an error of its own): its line is a secret.
			s.addSensitiveSource(at.Range)
		}
		vals[at.Name] = unmarked
	}
	p.Attrs = cty.ObjectVal(vals)
	s.providers[p.Name] = p
	s.setObject(kindProvider, p.Name, map[string]cty.Value{})
	return diags
}
