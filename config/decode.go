package config

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// attrs evaluates the attributes of one block instance with one context.
// Each getter records its diagnostics and reports whether the attribute
// was set to a usable value, so decoding continues past errors and the
// user sees every problem at once.
type attrs struct {
	// secrets records the sensitive values read, to scrub them from
	// diagnostics.
	secrets *secretSet
	m       hcl.Attributes
	ctx     *hcl.EvalContext
	diags   *hcl.Diagnostics
}

func (s *loadState) attrs(m hcl.Attributes, ctx *hcl.EvalContext, diags *hcl.Diagnostics) *attrs {
	return &attrs{secrets: s.secrets, m: m, ctx: ctx, diags: diags}
}

// required and optional list a block's attributes for its schema:
// append(required("version"), optional("scheme", "image")...).
func required(names ...string) []hcl.AttributeSchema { return attributeSchema(names, true) }

func optional(names ...string) []hcl.AttributeSchema { return attributeSchema(names, false) }

func attributeSchema(names []string, required bool) []hcl.AttributeSchema {
	out := make([]hcl.AttributeSchema, len(names))
	for i, n := range names {
		out[i] = hcl.AttributeSchema{Name: n, Required: required}
	}
	return out
}

// content is a nested block's body decoded with schema, and its
// attributes to evaluate with ctx; diagnostics go to diags.
func (s *loadState) content(body hcl.Body, schema *hcl.BodySchema, ctx *hcl.EvalContext, diags *hcl.Diagnostics) (*hcl.BodyContent, *attrs) {
	c, d := body.Content(schema)
	*diags = append(*diags, d...)
	return c, s.attrs(c.Attributes, ctx, diags)
}

// errorf reports an error at r. When r is an attribute's value (or an
// element of a list value), the diagnostic carries that expression and the
// context it was evaluated in, so renderers can say what its references
// were (each.value.role is "computer") and which instance of a for_each
// failed. Load strips sensitive values from such contexts.
func (a *attrs) errorf(r hcl.Range, summary, format string, args ...any) {
	d := &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  r.Ptr(),
	}
	if expr := a.exprAt(r); expr != nil {
		d.Expression, d.EvalContext = expr, a.ctx
	}
	*a.diags = append(*a.diags, d)
}

// exprAt returns the attribute value expression whose range is r, or the
// element of a list expression whose range is r; nil if none is.
func (a *attrs) exprAt(r hcl.Range) hcl.Expression {
	for _, at := range a.m {
		er := at.Expr.Range()
		if er.Filename != r.Filename || r.Start.Byte < er.Start.Byte || r.End.Byte > er.End.Byte {
			continue
		}
		if er == r {
			return at.Expr
		}
		if elems, diags := hcl.ExprList(at.Expr); !diags.HasErrors() {
			for _, e := range elems {
				if e.Range() == r {
					return e
				}
			}
		}
	}
	return nil
}

// rng returns the range of the attribute's value, or fallback if unset.
func (a *attrs) rng(name string, fallback hcl.Range) hcl.Range {
	if at := a.m[name]; at != nil {
		return at.Expr.Range()
	}
	return fallback
}

// elemRanges are the ranges of the n elements of the list attribute
// name: each element's own when the syntax is a literal list of n, else
// the attribute's value's (fallback when it is unset).
func (a *attrs) elemRanges(name string, n int, fallback hcl.Range) []hcl.Range {
	out := make([]hcl.Range, n)
	var exprs []hcl.Expression
	if at := a.m[name]; at != nil {
		exprs, _ = hcl.ExprList(at.Expr)
	}
	whole := a.rng(name, fallback)
	for i := range out {
		out[i] = whole
		if len(exprs) == n {
			out[i] = exprs[i].Range()
		}
	}
	return out
}

// value evaluates name converted to ty. Sensitive values are refused
// unless allowSensitive, because only credentials may carry secrets; the
// returned value keeps its marks.
func (a *attrs) value(name string, ty cty.Type, allowSensitive bool) (cty.Value, bool) {
	at := a.m[name]
	if at == nil {
		return cty.NilVal, false
	}
	v, d := at.Expr.Value(a.ctx)
	*a.diags = append(*a.diags, d...)
	if d.HasErrors() {
		return cty.NilVal, false
	}
	if v.IsNull() {
		return cty.NilVal, false
	}
	if !v.IsWhollyKnown() {
		// Only a variable or local that already failed is unknown; its
		// error was reported where it failed.
		return cty.NilVal, false
	}
	if v.ContainsMarked() && !allowSensitive {
		a.errorf(at.Expr.Range(), "Sensitive value not allowed",
			"The value of %q is derived from a sensitive value (env() or a sensitive variable). Only credentials and provider attributes may hold sensitive values, because everything else can be shown in a plan.", name)
		return cty.NilVal, false
	}
	unmarked, marks := v.UnmarkDeep()
	conv, err := convert.Convert(unmarked, ty)
	if err != nil {
		detail := err.Error()
		if len(marks) > 0 {
			detail = "the value is sensitive and not shown"
		}
		a.errorf(at.Expr.Range(), "Incorrect attribute value type", "Inappropriate value for attribute %q: %s.", name, detail)
		return cty.NilVal, false
	}
	if len(marks) > 0 {
		a.secrets.addSecrets(conv)
		conv = conv.Mark(sensitiveMark)
	}
	return conv, true
}

func (a *attrs) str(name string) (string, bool) {
	v, ok := a.value(name, cty.String, false)
	if !ok {
		return "", false
	}
	return v.AsString(), true
}

// oneOf reads a string that must be one of allowed; def when unset.
func (a *attrs) oneOf(name, def string, allowed ...string) string {
	v, ok := a.str(name)
	if !ok {
		return def
	}
	for _, x := range allowed {
		if v == x {
			return v
		}
	}
	a.errorf(a.m[name].Expr.Range(), "Invalid value for "+name,
		"%q is not a valid %s: it must be %s.", v, name, orList(allowed))
	return def
}

func orList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func (a *attrs) boolean(name string, def bool) bool {
	v, ok := a.value(name, cty.Bool, false)
	if !ok {
		return def
	}
	return v.True()
}

// integer reads a whole number within [lo, hi].
func (a *attrs) integer(name string, def, lo, hi int) int {
	v, ok := a.value(name, cty.Number, false)
	if !ok {
		return def
	}
	bf := v.AsBigFloat()
	i, acc := bf.Int64()
	if acc != big.Exact || i < int64(lo) || i > int64(hi) {
		a.errorf(a.m[name].Expr.Range(), "Invalid value for "+name, "%s must be a whole number from %d to %d; got %s.", name, lo, hi, bf.Text('g', -1))
		return def
	}
	return int(i)
}

func (a *attrs) strList(name string) ([]string, bool) {
	v, ok := a.value(name, cty.List(cty.String), false)
	if !ok {
		return nil, false
	}
	var out []string
	for _, e := range v.AsValueSlice() {
		if e.IsNull() {
			a.errorf(a.m[name].Expr.Range(), "Invalid value for "+name, "The list %q must not contain null.", name)
			return nil, false
		}
		out = append(out, e.AsString())
	}
	return out, true
}

func (a *attrs) strMap(name string) map[string]string {
	v, ok := a.value(name, cty.Map(cty.String), false)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for k, e := range v.AsValueMap() {
		if e.IsNull() {
			continue
		}
		out[k] = e.AsString()
	}
	return out
}

// duration reads a Go duration string ("15m", "1h30m"); "0" and "0s" mean zero.
func (a *attrs) duration(name string, def time.Duration) time.Duration {
	v, ok := a.str(name)
	if !ok {
		return def
	}
	d, err := parseDuration(v)
	if err != nil {
		a.errorf(a.m[name].Expr.Range(), "Invalid duration", "%s", err.Error())
		return def
	}
	return d
}

func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write a number with a unit, such as \"90s\", \"15m\" or \"1h30m\".", v)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative: a duration must be zero or more.", v)
	}
	return d, nil
}

// quantity reads a count (2) or a percentage ("25%").
func (a *attrs) quantity(name string, fallback hcl.Range) Quantity {
	at := a.m[name]
	if at == nil {
		return Quantity{Unset: true, Range: fallback}
	}
	q := Quantity{Range: at.Expr.Range()}
	v, ok := a.value(name, cty.String, false)
	if !ok {
		q.Unset = true
		return q
	}
	s := strings.TrimSpace(v.AsString())
	if p, isPct := strings.CutSuffix(s, "%"); isPct {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > 100 {
			a.errorf(q.Range, "Invalid value for "+name, "%q is not a valid percentage: it must be a whole number from 1%% to 100%%.", s)
			q.Unset = true
			return q
		}
		q.Value, q.Percent = n, true
		return q
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		a.errorf(q.Range, "Invalid value for "+name, "%q is not a valid %s: write a count such as 2 or a percentage such as \"25%%\".", s, name)
		q.Unset = true
		return q
	}
	q.Value = n
	return q
}

// ref resolves an attribute that must refer to a block of kind, such as
// strategy = strategy.nexus. The expression is evaluated, so conditionals
// between references work; the value's kind and name identify the target.
func (a *attrs) ref(name, kind string) (string, hcl.Range, bool) {
	at := a.m[name]
	if at == nil {
		return "", hcl.Range{}, false
	}
	v, d := at.Expr.Value(a.ctx)
	*a.diags = append(*a.diags, d...)
	if d.HasErrors() || v.IsNull() {
		return "", at.Expr.Range(), false
	}
	n, ok := refName(v, kind)
	if !ok {
		a.errorf(at.Expr.Range(), "Invalid reference", "%q must refer to a %s, as in %s = %s.NAME.", name, kindNoun(kind), name, kind)
		return "", at.Expr.Range(), false
	}
	return n, at.Expr.Range(), true
}

// refList resolves a list of references, such as clusters = [cluster.a].
func (a *attrs) refList(name, kind string) ([]string, []hcl.Range, bool) {
	at := a.m[name]
	if at == nil {
		return nil, nil, false
	}
	v, d := at.Expr.Value(a.ctx)
	*a.diags = append(*a.diags, d...)
	if d.HasErrors() || v.IsNull() {
		return nil, nil, false
	}
	v, _ = v.UnmarkDeep()
	if !v.CanIterateElements() || v.Type().IsMapType() || v.Type().IsObjectType() {
		a.errorf(at.Expr.Range(), "Invalid reference", "%q must be a list of %s references, as in [%s.NAME].", name, kindNoun(kind), kind)
		return nil, nil, false
	}
	elems := a.elemRanges(name, v.LengthInt(), at.Expr.Range())
	var names []string
	var ranges []hcl.Range
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, e := it.Element()
		r := elems[i]
		n, ok := refName(e, kind)
		if !ok {
			a.errorf(r, "Invalid reference", "Each element of %q must refer to a %s, as in %s.NAME.", name, kindNoun(kind), kind)
			continue
		}
		names = append(names, n)
		ranges = append(ranges, r)
	}
	return names, ranges, true
}

func refName(v cty.Value, kind string) (string, bool) {
	v, _ = v.UnmarkDeep()
	if v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() {
		return "", false
	}
	if !v.Type().HasAttribute("kind") || !v.Type().HasAttribute("name") {
		return "", false
	}
	k, n := v.GetAttr("kind"), v.GetAttr("name")
	if k.Type() != cty.String || n.Type() != cty.String || k.IsNull() || n.IsNull() || k.AsString() != kind {
		return "", false
	}
	return n.AsString(), true
}
