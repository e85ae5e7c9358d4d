package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// filterKey names one indexed filter: the collection expression (a local
// or variable, fixed for the whole load) and the attribute compared.
type filterKey struct {
	coll *hclsyntax.ScopeTraversalExpr
	attr string
}

// forEachValue evaluates a for_each expression. The common shape of an
// inventory split into racks,
//
//	for_each = [for s in local.inventory : s if s.rack == each.key]
//
// evaluated once per rack would cost racks × rows; it is answered from an
// index of the collection by that attribute, built once per load, with
// exactly the generic result (the matching elements in order, as a tuple).
// Anything else, or any element the index cannot decide the same way
// (missing, unknown, sensitive or non-string attribute), takes the generic
// evaluation.
func (s *loadState) forEachValue(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if v, ok := s.indexedFilter(expr, ctx); ok {
		return v, nil
	}
	return expr.Value(ctx)
}

func (s *loadState) indexedFilter(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, bool) {
	fe, ok := expr.(*hclsyntax.ForExpr)
	if !ok || fe.KeyExpr != nil || fe.KeyVar != "" || fe.Group || fe.CondExpr == nil {
		return cty.NilVal, false
	}
	if ve, ok := fe.ValExpr.(*hclsyntax.ScopeTraversalExpr); !ok || len(ve.Traversal) != 1 || ve.Traversal.RootName() != fe.ValVar {
		return cty.NilVal, false
	}
	coll, ok := fe.CollExpr.(*hclsyntax.ScopeTraversalExpr)
	if !ok || (coll.Traversal.RootName() != kindLocal && coll.Traversal.RootName() != kindVar) {
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
	fk := filterKey{coll: coll, attr: attr}
	index, built := s.filterIndexes[fk]
	if !built {
		index = buildFilterIndex(coll, attr, ctx)
		if s.filterIndexes == nil {
			s.filterIndexes = map[filterKey]map[string][]cty.Value{}
		}
		s.filterIndexes[fk] = index
	}
	if index == nil {
		return cty.NilVal, false
	}
	vals := index[key.AsString()]
	if len(vals) == 0 {
		return cty.EmptyTupleVal, true
	}
	return cty.TupleVal(vals), true
}

// buildFilterIndex groups the collection's elements by attr, or returns
// nil when the collection is not a known list or tuple of objects each
// with a known, non-sensitive string attr.
func buildFilterIndex(coll *hclsyntax.ScopeTraversalExpr, attr string, ctx *hcl.EvalContext) map[string][]cty.Value {
	v, diags := coll.Value(ctx)
	if diags.HasErrors() || v.IsNull() || !v.IsWhollyKnown() || v.ContainsMarked() {
		return nil
	}
	ty := v.Type()
	if !ty.IsListType() && !ty.IsTupleType() {
		return nil
	}
	index := map[string][]cty.Value{}
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || !e.Type().IsObjectType() || !e.Type().HasAttribute(attr) {
			return nil
		}
		a := e.GetAttr(attr)
		if a.IsNull() || a.Type() != cty.String {
			return nil
		}
		k := a.AsString()
		index[k] = append(index[k], e)
	}
	return index
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
	for _, tr := range expr.Variables() {
		if tr.RootName() == name {
			return true
		}
	}
	return false
}
