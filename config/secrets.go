package config

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Secrets while loading: the sensitive values seen are collected so every
// diagnostic leaving Load is scrubbed of them, and the source ranges that
// hold one as text keep their snippets from being shown.

// secretSet is what one load has seen of secrets: the sensitive values,
// and the source ranges that hold one as text.
type secretSet struct {
	// values are the sensitive string values seen while loading; every
	// diagnostic is scrubbed of them before it leaves Load.
	values map[string]bool
	// sensitiveSrc are source ranges that hold a sensitive value as text:
	// var-file entries of sensitive variables, literal passwords, the
	// defaults of sensitive variables. A diagnostic whose snippet would
	// show one of their lines gets a sensitiveSource Extra.
	sensitiveSrc []hcl.Range
}

func (s *secretSet) addSecret(v string) {
	if v != "" {
		s.values[v] = true
	}
}

// addSecrets records every string inside a sensitive value.
func (s *secretSet) addSecrets(v cty.Value) {
	v, _ = v.UnmarkDeep()
	if v.IsNull() || !v.IsKnown() {
		return
	}
	switch {
	case v.Type() == cty.String:
		s.addSecret(v.AsString())
	case v.Type() == cty.Number:
		s.addSecret(v.AsBigFloat().Text('f', -1))
	case v.CanIterateElements():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			s.addSecrets(e)
		}
	}
}

// scrub is the last line of defence for diagnostic texts: messages are
// built without sensitive values (attributes refuse marked values,
// functions called with one report a fixed error, variable errors say
// "not shown"), and whatever still embeds one whole has it replaced here.
// Only whole tokens are replaced, so a short secret ("x") cannot maul the
// words around it ("extra.vars").
func (s *secretSet) scrub(diags hcl.Diagnostics) hcl.Diagnostics {
	// Renderers (HCL's, Terraform-style views) print the values of the
	// variables an expression uses from its EvalContext. Each context is
	// replaced by one holding only what the expression refers to, with
	// every sensitive part replaced by a marked unknown: renderers show
	// the rest (each.value.role is "computer") and cannot show a secret,
	// which is no longer there.
	roots := map[rootKey]cty.Value{}
	for _, d := range diags {
		if d.EvalContext != nil {
			d.EvalContext = safeContext(d.Expression, d.EvalContext, roots)
		}
	}
	for _, d := range diags {
		if s.showsSensitiveSource(d) {
			d.Extra = sensitiveSource{wrapped: d.Extra}
		}
	}
	if len(s.values) == 0 {
		return diags
	}
	// Longest first, so a secret containing another is replaced whole.
	secrets := slices.SortedFunc(maps.Keys(s.values), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	for _, d := range diags {
		d.Summary = redactTokens(d.Summary, secrets)
		d.Detail = redactTokens(d.Detail, secrets)
	}
	return diags
}

// sensitiveSource is the Extra of a diagnostic whose source lines hold a
// sensitive value, such as a var-file line setting a sensitive variable.
// Renderers show its range but no snippet (views.SensitiveSource); it
// wraps any Extra the diagnostic already had.
type sensitiveSource struct{ wrapped any }

// DiagnosticSourceIsSensitive implements views.SensitiveSource.
func (sensitiveSource) DiagnosticSourceIsSensitive() bool { return true }

// UnwrapDiagnosticExtra lets hcl.DiagnosticExtra find the wrapped Extra.
func (s sensitiveSource) UnwrapDiagnosticExtra() any { return s.wrapped }

// SourceIsSensitive reports whether d's source lines hold a sensitive
// value, so that no snippet of them may be shown.
func SourceIsSensitive(d *hcl.Diagnostic) bool {
	x, ok := hcl.DiagnosticExtra[interface{ DiagnosticSourceIsSensitive() bool }](d)
	return ok && x.DiagnosticSourceIsSensitive()
}

// addSensitiveSource records a range whose text holds a secret.
func (s *secretSet) addSensitiveSource(r hcl.Range) {
	s.sensitiveSrc = append(s.sensitiveSrc, r)
}

// showsSensitiveSource reports whether a snippet of d, which shows whole
// lines of its subject and context, would show a line of a sensitive range.
func (s *secretSet) showsSensitiveSource(d *hcl.Diagnostic) bool {
	if d.Subject == nil {
		return false
	}
	shown := []hcl.Range{*d.Subject}
	if d.Context != nil {
		shown = append(shown, *d.Context)
	}
	for _, r := range shown {
		for _, sr := range s.sensitiveSrc {
			if r.Filename == sr.Filename && linesOverlap(r, sr) {
				return true
			}
		}
	}
	return false
}

func linesOverlap(a, b hcl.Range) bool {
	lines := func(r hcl.Range) (int, int) {
		return r.Start.Line, max(r.End.Line, r.Start.Line)
	}
	as, ae := lines(a)
	bs, be := lines(b)
	return as <= be && bs <= ae
}

// redacted replaces a sensitive value in a message.
const redacted = "(sensitive value)"

// redactTokens replaces every occurrence of a secret in text that stands
// as a token of its own: an end of the occurrence that is a letter, digit
// or underscore must not touch another one. "x" is replaced in `"x"` and
// `x.vars` but not in "extra"; "pw" in `(pw)` but not in "pwd".
func redactTokens(text string, secrets []string) string {
	var present []string
	for _, sec := range secrets {
		if sec != "" && strings.Contains(text, sec) {
			present = append(present, sec)
		}
	}
	if len(present) == 0 {
		return text
	}
	secrets = present
	var b strings.Builder
	changed := false
	prev := rune(-1) // the rune before i, -1 at the start
	for i := 0; i < len(text); {
		if sec := tokenAt(text, i, prev, secrets); sec != "" {
			b.WriteString(redacted)
			changed = true
			i += len(sec)
			prev, _ = utf8.DecodeLastRuneInString(sec)
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		b.WriteString(text[i : i+size])
		prev = r
		i += size
	}
	if !changed {
		return text
	}
	return b.String()
}

// tokenAt returns the longest secret (secrets are sorted longest first)
// that starts at text[i] as a token of its own, or "".
func tokenAt(text string, i int, prev rune, secrets []string) string {
	for _, sec := range secrets {
		if sec == "" || !strings.HasPrefix(text[i:], sec) {
			continue
		}
		first, _ := utf8.DecodeRuneInString(sec)
		last, _ := utf8.DecodeLastRuneInString(sec)
		if prev >= 0 && isWordRune(prev) && isWordRune(first) {
			continue
		}
		if next, _ := utf8.DecodeRuneInString(text[i+len(sec):]); i+len(sec) < len(text) && isWordRune(next) && isWordRune(last) {
			continue
		}
		return sec
	}
	return ""
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// rootKey identifies a variable of one evaluation context, so a value
// shared by many diagnostics (var, local) is made safe once.
type rootKey struct {
	ctx  *hcl.EvalContext
	name string
}

// safeContext returns a context with the variables expr refers to, looked
// up through ctx and its parents, each with its sensitive parts replaced
// (withoutSecrets). Without an expression there is nothing to describe.
func safeContext(expr hcl.Expression, ctx *hcl.EvalContext, cache map[rootKey]cty.Value) *hcl.EvalContext {
	if expr == nil {
		return nil
	}
	vars := map[string]cty.Value{}
	for _, tr := range expr.Variables() {
		name := tr.RootName()
		if _, done := vars[name]; done {
			continue
		}
		for c := ctx; c != nil; c = c.Parent() {
			v, ok := c.Variables[name]
			if !ok {
				continue
			}
			key := rootKey{c, name}
			safe, ok := cache[key]
			if !ok {
				safe = withoutSecrets(v)
				cache[key] = safe
			}
			vars[name] = safe
			break
		}
	}
	if len(vars) == 0 {
		return nil
	}
	return &hcl.EvalContext{Variables: vars}
}

// withoutSecrets returns v with every marked part replaced by an unknown
// value of its type carrying the same marks: the structure stays (so
// each.value.role can still be described) but no secret is left in it.
func withoutSecrets(v cty.Value) cty.Value {
	if !v.ContainsMarked() {
		return v
	}
	if v.IsMarked() {
		_, marks := v.Unmark()
		return cty.UnknownVal(v.Type()).WithMarks(marks)
	}
	if v.IsNull() || !v.IsKnown() {
		return v
	}
	ty := v.Type()
	switch {
	case ty.IsObjectType():
		attrs := map[string]cty.Value{}
		for k, e := range v.AsValueMap() {
			attrs[k] = withoutSecrets(e)
		}
		return cty.ObjectVal(attrs)
	case ty.IsTupleType():
		elems := v.AsValueSlice()
		for i, e := range elems {
			elems[i] = withoutSecrets(e)
		}
		return cty.TupleVal(elems)
	case ty.IsMapType() && v.LengthInt() > 0:
		m := v.AsValueMap()
		for k, e := range m {
			m[k] = withoutSecrets(e)
		}
		return cty.MapVal(m)
	case ty.IsListType() && v.LengthInt() > 0:
		elems := v.AsValueSlice()
		for i, e := range elems {
			elems[i] = withoutSecrets(e)
		}
		return cty.ListVal(elems)
	}
	// A set cannot hold unknowns that stay distinct; make it all unknown.
	return cty.UnknownVal(ty).Mark(sensitiveMark)
}
