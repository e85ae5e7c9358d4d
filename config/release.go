package config

import (
	"fmt"
	"path"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/zclconf/go-cty/cty"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/internal/words"
)

var releaseSchema = &hcl.BodySchema{
	Attributes: append(required("version"), optional(
		"scheme", "version_pattern", "allow_downgrade", "upgrade_from",
	)...),
	Blocks: []hcl.BlockHeaderSchema{{Type: "component", LabelNames: []string{"name"}}},
}

var componentSchema = &hcl.BodySchema{
	Attributes: append(required("version"), optional(
		"scheme", "version_pattern", "image", "sha256", "apply_time", "reboot", "method", "kind",
		"allow_downgrade", "allow_change", "devices",
	)...),
	Blocks: []hcl.BlockHeaderSchema{{Type: "match"}},
}

var matchSchema = &hcl.BodySchema{Attributes: optional("software_id", "id", "name", "count")}

// maxMatchCount bounds a match block's count: more members than any
// server carries is a typo.
const maxMatchCount = 4096

func schemeNames() []string {
	out := make([]string, len(version.Schemes))
	for i, s := range version.Schemes {
		out[i] = string(s)
	}
	return out
}

// format reads the scheme and version_pattern attributes of a release,
// component or catalog. Unset, both are inherited (a component's from its
// release); a version_pattern alone means scheme = "pattern". explicit
// reports whether the block set either.
func (a *attrs) format(inherit version.Format, fallback hcl.Range) (f version.Format, explicit bool) {
	_, hasScheme := a.m["scheme"]
	pat, hasPattern := a.str("version_pattern")
	scheme := version.Scheme(a.oneOf("scheme", "", schemeNames()...))
	switch {
	case hasScheme && scheme == "":
		return version.Format{}, true // reported by oneOf
	case !hasScheme && !hasPattern:
		if inherit.Scheme == "" {
			return version.Format{}, false
		}
		f, err := version.NewFormat(inherit.Scheme, inherit.Pattern)
		if err != nil {
			return version.Format{}, false // reported where it was declared
		}
		return f, false
	case !hasScheme:
		scheme = version.Pattern
	case scheme == version.Pattern && !hasPattern:
		if inherit.Scheme != version.Pattern {
			a.errorf(a.rng("scheme", fallback), "Missing version_pattern",
				"scheme = %q reads versions with a regular expression: set version_pattern, whose capture groups say what is compared (see the language reference).", version.Pattern)
			return version.Format{}, true
		}
		pat = inherit.Pattern
	case hasPattern && scheme != version.Pattern:
		a.errorf(a.rng("version_pattern", fallback), "version_pattern without the pattern scheme",
			"version_pattern is read only by scheme = %q, but this block has scheme = %q: remove one of them.", version.Pattern, scheme)
		return version.Format{}, true
	}
	f, err := version.NewFormat(scheme, pat)
	if err != nil {
		a.errorf(a.rng("version_pattern", fallback), "Invalid version_pattern", "%s.", words.Capitalize(err.Error()))
		return version.Format{}, true
	}
	return f, true
}

// versionIn reads attribute name as a version under f. from says where an
// inherited scheme came from ("" when the block declared it), so the error
// can suggest declaring one that reads the value.
func (a *attrs) versionIn(name string, f version.Format, from string) (version.Version, bool) {
	v, ok := a.str(name)
	if !ok || f.Scheme == "" {
		return version.Version{}, false
	}
	parsed, err := f.Parse(v)
	if err != nil {
		a.errorf(a.m[name].Expr.Range(), "Invalid version", "%s does not parse under the %q scheme%s: %v.%s", name, f.Scheme, from, err, suggestScheme(v))
		return version.Version{}, false
	}
	return parsed, true
}

// versionList reads the list attribute name as versions under f, with
// each one's range; an element that does not parse is reported at itself
// and left out.
func (a *attrs) versionList(name string, f version.Format, fallback hcl.Range) ([]version.Version, []hcl.Range) {
	list, ok := a.strList(name)
	if !ok || f.Scheme == "" {
		return nil, nil
	}
	elems := a.elemRanges(name, len(list), fallback)
	var out []version.Version
	var ranges []hcl.Range
	for i, v := range list {
		parsed, err := f.Parse(v)
		if err != nil {
			a.errorf(elems[i], "Invalid version", "%s[%d] does not parse under the %q scheme: %v.", name, i, f.Scheme, err)
			continue
		}
		out, ranges = append(out, parsed), append(ranges, elems[i])
	}
	return out, ranges
}

// suggestScheme is a sentence saying which scheme reads v.
func suggestScheme(v string) string {
	if sc := version.Deciding(v); sc != "" {
		return fmt.Sprintf(" Declare scheme = %q, which reads it.", sc)
	}
	return fmt.Sprintf(" No built-in scheme reads it: declare a version_pattern whose capture groups say what is compared, or scheme = %q to compare it for equality only.", version.Opaque)
}

// inheritedFrom is the clause naming where an inherited scheme came from.
func inheritedFrom(explicit bool, from string) string {
	if explicit {
		return ""
	}
	return " (" + from + ")"
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return true
}

// notHex names the first character of s that is not a hex digit, if any.
func notHex(s string) string {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return fmt.Sprintf(", and %q is not a hexadecimal digit", r)
		}
	}
	return ""
}

func (s *loadState) decodeRelease(b *hcl.Block, ctx *hcl.EvalContext) hcl.Diagnostics {
	r, diags := s.decodeReleaseBlock(b, ctx, releaseSchema, nil)
	s.releases[r.Name] = r
	s.setObject(kindRelease, r.Name, map[string]cty.Value{"version": cty.StringVal(r.Version.String())})
	return diags
}

// decodeReleaseBlock decodes a release block with schema; a catalog entry
// passes extra to read its own attributes (minor, sites) and may leave
// version out (it is the label).
func (s *loadState) decodeReleaseBlock(b *hcl.Block, ctx *hcl.EvalContext, schema *hcl.BodySchema, extra func(*attrs, *Release)) (*Release, hcl.Diagnostics) {
	content, diags := dynblock.Expand(b.Body, ctx).Content(schema)
	a := s.attrs(content.Attributes, ctx, &diags)
	r := &Release{Name: b.Labels[0], DeclRange: b.DefRange}
	f, explicit := a.format(version.Format{Scheme: version.Semver}, b.DefRange)
	r.Scheme, r.Pattern = f.Scheme, f.Pattern
	if _, ok := content.Attributes["version"]; ok || extra == nil {
		r.Version, _ = a.versionIn("version", f, inheritedFrom(explicit, "the default"))
	} else if f.Scheme != "" {
		v, err := f.Parse(r.Name)
		if err != nil {
			a.errorf(b.LabelRanges[0], "Invalid version", "Catalog release %q has no version attribute and its name does not parse under the %q scheme: %v. Set version.", r.Name, f.Scheme, err)
		}
		r.Version = v
	}
	if extra != nil {
		extra(a, r)
	}
	r.VersionRange = a.rng("version", b.DefRange)
	r.AllowDowngrade = a.boolean("allow_downgrade", false)
	r.UpgradeFrom, r.upgradeFromRanges = a.versionList("upgrade_from", f, b.DefRange)

	seen := map[string]hcl.Range{}
	var runtime *Component
	for _, cb := range content.Blocks {
		c := s.decodeComponent(cb, r, ctx, &diags)
		if !claim(seen, "component", c.Name, "Release "+quote(r.Name), cb.DefRange, &diags) {
			continue
		}
		if c.Kind == KindRuntime {
			if runtime != nil {
				diags = append(diags, errorAt(cb.DefRange, "More than one runtime component", "Release %q already has the runtime component %q at %s; a release carries at most one runtime image.", r.Name, runtime.Name, posString(runtime.DeclRange)))
			} else {
				runtime = c
			}
		}
		r.Components = append(r.Components, c)
	}
	return r, diags
}

func (s *loadState) decodeComponent(b *hcl.Block, r *Release, ctx *hcl.EvalContext, diags *hcl.Diagnostics) *Component {
	content, a := s.content(b.Body, componentSchema, ctx, diags)
	c := &Component{Name: b.Labels[0], Release: r, DeclRange: b.DefRange}
	f, explicit := a.format(version.Format{Scheme: r.Scheme, Pattern: r.Pattern}, b.DefRange)
	c.Scheme, c.Pattern = f.Scheme, f.Pattern
	c.Version, _ = a.versionIn("version", f, inheritedFrom(explicit, fmt.Sprintf("inherited from release %q", r.Name)))
	c.AllowChange = a.boolean("allow_change", false)
	if c.AllowChange && f.Scheme != "" && f.Scheme.Ordered() {
		a.errorf(a.rng("allow_change", b.DefRange), "allow_change needs the opaque scheme",
			"allow_change lets a component whose versions are only equal or different (scheme = %q) move to its target. Component %q has scheme = %q, whose versions are older or newer: it is upgraded, or downgraded with allow_downgrade = true.", version.Opaque, c.Name, f.Scheme)
	}
	c.Image, _ = a.str("image")
	if sum, ok := a.str("sha256"); ok {
		if !isSHA256(sum) {
			a.errorf(a.rng("sha256", b.DefRange), "Invalid sha256",
				"sha256 must be the image's SHA-256 digest as 64 hexadecimal digits (as sha256sum prints it); got %d characters%s.", len(sum), notHex(sum))
		} else {
			c.SHA256 = strings.ToLower(sum)
		}
	}
	c.ApplyTime = a.oneOf("apply_time", ApplyOnReset, ApplyImmediate, ApplyOnReset, ApplyAtMaintenanceWindowStart, ApplyInMaintenanceWindowOnReset)
	c.Kind = a.oneOf("kind", KindFirmware, KindFirmware, KindRuntime)
	defMethod := MethodAuto
	if c.Kind == KindRuntime {
		defMethod = MethodReimage
	}
	c.Method = a.oneOf("method", defMethod, ComponentMethods...)
	c.Reboot = a.boolean("reboot", c.ApplyTime == ApplyOnReset || c.ApplyTime == ApplyInMaintenanceWindowOnReset || c.Kind == KindRuntime)
	c.AllowDowngrade = a.boolean("allow_downgrade", r.AllowDowngrade)
	decodeComponentDevices(a, c, b)
	if c.Method != MethodReimage && c.Image == "" && content.Attributes["image"] == nil {
		a.errorf(b.DefRange, "Missing image", "Component %q is updated with %q, which needs an image URI: set image.", c.Name, c.Method)
	}

	switch len(content.Blocks) {
	case 0:
		a.errorf(b.DefRange, "Missing match block", "Component %q needs a match block saying how to find it in the BMC's firmware inventory: software_id, id or name.", c.Name)
	case 1:
		mb := content.Blocks[0]
		_, ma := s.content(mb.Body, matchSchema, ctx, diags)
		c.Match.SoftwareID, _ = ma.str("software_id")
		c.Match.ID, _ = ma.str("id")
		c.Match.Name, _ = ma.str("name")
		c.Match.Count = ma.integer("count", 0, 1, maxMatchCount)
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
		if at.Name == "password" {
			p.passwordExpr, p.PasswordFrom = at.Expr, s.valueFrom(at.Expr)
		}
		if len(marks) > 0 {
			s.secrets.addSecrets(unmarked)
			p.SensitiveAttrs = append(p.SensitiveAttrs, at.Name)
		} else if at.Name == "password" && !plainReference(at.Expr) {
			// A literal password (an error of its own): its line is a secret.
			s.secrets.addSensitiveSource(at.Range)
		}
		vals[at.Name] = unmarked
	}
	p.Attrs = cty.ObjectVal(vals)
	s.providers[p.Name] = p
	s.setObject(kindProvider, p.Name, map[string]cty.Value{})
	return diags
}
