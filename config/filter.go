package config

import (
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/customdecode"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// An inventory split into clusters and racks filters one collection once
// per cluster and once per rack:
//
//	for_each = toset(distinct([for s in local.inventory : s.rack if s.cluster == "c001"]))
//	for_each = [for s in local.inventory : s if s.rack == each.key]
//
// Evaluated by HCL, each filter walks the whole inventory, so a fleet
// costs clusters × rows plus racks × rows. Instead such a filter is
// answered from an index of the collection by the compared attribute,
// built once per load and shared by every block that filters that
// collection (a local or a variable has one value for the whole load, so
// its path is the key, whichever expression names it). The answer is
// exactly HCL's: the matching elements, that attribute of each, or
// whatever the for expression makes of them; a one-argument function
// around the filter (toset, distinct) is called as HCL calls it. Any other shape, and any collection
// or key the index cannot decide the same way (unknown, sensitive, an
// element without the attribute or with a non-string one), takes HCL's
// own evaluation, which also produces its diagnostics.

// filterKey names one index: the collection's path ("local.inventory")
// and the attribute compared.
type filterKey struct {
	coll, attr string
}

// filterIndex is a collection's elements grouped by one attribute's
// value; nil when the collection cannot be indexed by it.
type filterIndex map[string][]cty.Value

// filterIndexes are one load's indexes, built as filters first ask for
// them. The zero value is ready to use.
type filterIndexes struct {
	built map[filterKey]filterIndex
}

// value evaluates expr, from an index when it is a filter of that shape.
func (ix *filterIndexes) value(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if v, ok := ix.indexedValue(expr, ctx); ok {
		return v, nil
	}
	return expr.Value(ctx)
}

// indexedValue is expr's value when the index answers it: a filter, or a
// call of a one-parameter function on one.
func (ix *filterIndexes) indexedValue(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, bool) {
	switch e := expr.(type) {
	case *hclsyntax.ForExpr:
		return ix.indexedFilter(e, ctx)
	case *hclsyntax.FunctionCallExpr:
		return ix.indexedCall(e, ctx)
	}
	return cty.NilVal, false
}

// indexedCall is f(FILTER) evaluated the way HCL evaluates a call (find
// f in the context, convert the argument to the parameter's type, call),
// with the argument from the index. An error is left to HCL to report.
func (ix *filterIndexes) indexedCall(e *hclsyntax.FunctionCallExpr, ctx *hcl.EvalContext) (cty.Value, bool) {
	if len(e.Args) != 1 || e.ExpandFinal {
		return cty.NilVal, false
	}
	arg, ok := ix.indexedValue(e.Args[0], ctx)
	if !ok {
		return cty.NilVal, false
	}
	for c := ctx; c != nil; c = c.Parent() {
		f, found := c.Functions[e.Name]
		if !found {
			continue
		}
		params := f.Params()
		if len(params) != 1 || f.VarParam() != nil || customdecode.CustomExpressionDecoderForType(params[0].Type) != nil {
			return cty.NilVal, false
		}
		arg, err := convert.Convert(arg, params[0].Type)
		if err != nil {
			return cty.NilVal, false
		}
		v, err := f.Call([]cty.Value{arg})
		return v, err == nil
	}
	return cty.NilVal, false
}

// indexedFilter answers a for expression over a local or a variable
// whose condition is V.A == KEY (or KEY == V.A), KEY not depending on V:
// [for V in COLL : V if …] and [for V in COLL : V.B if …] straight from
// the index; any other result ({for V in COLL : V.B => V... if …},
// [for V in COLL : upper(V.B) if …]) by HCL over only the elements the
// index matched, which is the same, since an element HCL leaves out
// contributes nothing when the collection is plain. An error there is
// left to HCL over the whole collection to report.
func (ix *filterIndexes) indexedFilter(fe *hclsyntax.ForExpr, ctx *hcl.EvalContext) (cty.Value, bool) {
	if fe.KeyVar != "" || fe.CondExpr == nil {
		return cty.NilVal, false // an element's index would change
	}
	coll, ok := fe.CollExpr.(*hclsyntax.ScopeTraversalExpr)
	if !ok {
		return cty.NilVal, false
	}
	path, ok := loadWidePath(coll.Traversal, ctx)
	if !ok {
		return cty.NilVal, false
	}
	cond, ok := fe.CondExpr.(*hclsyntax.BinaryOpExpr)
	if !ok || cond.Op != hclsyntax.OpEqual {
		return cty.NilVal, false
	}
	attr, other := elementAttr(cond.LHS, fe.ValVar), cond.RHS
	if attr == "" {
		attr, other = elementAttr(cond.RHS, fe.ValVar), cond.LHS
	}
	if attr == "" || refersTo(other, fe.ValVar) {
		return cty.NilVal, false
	}
	key, diags := other.Value(ctx)
	if diags.HasErrors() || key.IsNull() || !key.IsKnown() || key.IsMarked() || key.Type() != cty.String {
		return cty.NilVal, false
	}
	fk := filterKey{coll: path, attr: attr}
	index, built := ix.built[fk]
	if !built {
		index = buildFilterIndex(coll, attr, ctx)
		if ix.built == nil {
			ix.built = map[filterKey]filterIndex{}
		}
		ix.built[fk] = index
	}
	if index == nil {
		return cty.NilVal, false
	}
	matched := index[key.AsString()]

	if ve, ok := fe.ValExpr.(*hclsyntax.ScopeTraversalExpr); ok && fe.KeyExpr == nil && !fe.Group && ve.Traversal.RootName() == fe.ValVar {
		if len(matched) == 0 {
			return cty.EmptyTupleVal, true
		}
		if len(ve.Traversal) == 1 {
			return cty.TupleVal(matched), true
		}
		if project := elementAttr(ve, fe.ValVar); project != "" {
			vals := make([]cty.Value, len(matched))
			for i, e := range matched {
				if !e.Type().HasAttribute(project) {
					return cty.NilVal, false // HCL's error, from HCL
				}
				vals[i] = e.GetAttr(project)
			}
			return cty.TupleVal(vals), true
		}
	}
	sub := *fe
	sub.CollExpr = &hclsyntax.LiteralValueExpr{Val: cty.EmptyTupleVal, SrcRange: fe.CollExpr.Range()}
	if len(matched) > 0 {
		sub.CollExpr = &hclsyntax.LiteralValueExpr{Val: cty.TupleVal(matched), SrcRange: fe.CollExpr.Range()}
	}
	v, diags := sub.Value(ctx)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	return v, true
}

// loadWidePath is the path of a traversal of a local or a variable
// ("local.inventory"), whose value is the same wherever in the load it is
// evaluated; ok is false for anything else, including a local or var
// shadowed by a nested context (a dynamic block's iterator so named).
func loadWidePath(tr hcl.Traversal, ctx *hcl.EvalContext) (string, bool) {
	root := tr.RootName()
	if root != kindLocal && root != kindVar {
		return "", false
	}
	for c := ctx; c != nil; c = c.Parent() {
		if _, ok := c.Variables[root]; ok {
			if c.Parent() != nil {
				return "", false
			}
			break
		}
	}
	parts := []string{root}
	for _, step := range tr[1:] {
		switch st := step.(type) {
		case hcl.TraverseAttr:
			parts = append(parts, st.Name)
		case hcl.TraverseIndex:
			if st.Key.Type() != cty.String || !st.Key.IsKnown() || st.Key.IsNull() || st.Key.IsMarked() {
				return "", false
			}
			parts = append(parts, st.Key.AsString())
		default:
			return "", false
		}
	}
	return strings.Join(parts, "\x00"), true
}

// buildFilterIndex groups the collection's elements by attr, or returns
// nil when the collection is not a known list, tuple or set of objects
// each with attr a known, non-sensitive string or null (null never equals
// a string key, so such an element is in no group, as in HCL).
func buildFilterIndex(coll *hclsyntax.ScopeTraversalExpr, attr string, ctx *hcl.EvalContext) filterIndex {
	v, diags := coll.Value(ctx)
	if diags.HasErrors() || v.IsNull() || !plain(v) {
		return nil
	}
	ty := v.Type()
	if !ty.IsListType() && !ty.IsTupleType() && !ty.IsSetType() {
		return nil
	}
	index := filterIndex{}
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || !e.Type().IsObjectType() || !e.Type().HasAttribute(attr) {
			return nil
		}
		a := e.GetAttr(attr)
		if a.IsNull() {
			continue
		}
		if a.Type() != cty.String {
			return nil
		}
		k := a.AsString()
		index[k] = append(index[k], e)
	}
	return index
}

// plain is v.IsWhollyKnown() && !v.ContainsMarked(), without cty.Walk's
// paths and sorted attribute names: inventory-sized values are checked
// with it once per load and once per rack.
func plain(v cty.Value) bool {
	if v.IsMarked() || !v.IsKnown() {
		return false
	}
	if v.IsNull() {
		return true
	}
	ty := v.Type()
	switch {
	case ty.IsObjectType():
		for name := range ty.AttributeTypes() {
			if !plain(v.GetAttr(name)) {
				return false
			}
		}
	case ty.IsListType() || ty.IsSetType() || ty.IsMapType() || ty.IsTupleType():
		for it := v.ElementIterator(); it.Next(); {
			if _, e := it.Element(); !plain(e) {
				return false
			}
		}
	}
	return true
}

// elementAttr is A when expr is exactly VAR.A, else "".
func elementAttr(expr hclsyntax.Expression, name string) string {
	st, ok := expr.(*hclsyntax.ScopeTraversalExpr)
	if !ok || len(st.Traversal) != 2 || st.Traversal.RootName() != name {
		return ""
	}
	a, ok := st.Traversal[1].(hcl.TraverseAttr)
	if !ok {
		return ""
	}
	return a.Name
}

func refersTo(expr hclsyntax.Expression, name string) bool {
	return slices.ContainsFunc(expr.Variables(), func(tr hcl.Traversal) bool { return tr.RootName() == name })
}
