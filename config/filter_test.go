package config

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// TestIndexedFilterSameAsGeneric: the per-rack filter answered from an
// index gives exactly what HCL's own evaluation gives, and shapes the index
// cannot decide the same way (a missing attribute, a number, a sensitive
// key, another operator) are left to HCL.
func TestIndexedFilterSameAsGeneric(t *testing.T) {
	row := func(name, rack string) cty.Value {
		return cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal(name), "rack": cty.StringVal(rack)})
	}
	inv := cty.ListVal([]cty.Value{row("a", "r1"), row("b", "r2"), row("c", "r1")})
	mixed := cty.TupleVal([]cty.Value{row("a", "r1"), cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("x")})})
	numbers := cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"rack": cty.NumberIntVal(1)})})
	ctxFor := func(coll cty.Value, key cty.Value) *hcl.EvalContext {
		return &hcl.EvalContext{Variables: map[string]cty.Value{
			"local": cty.ObjectVal(map[string]cty.Value{"inventory": coll}),
			"each":  cty.ObjectVal(map[string]cty.Value{"key": key}),
		}}
	}
	cases := []struct {
		name    string
		src     string
		coll    cty.Value
		key     cty.Value
		indexed bool
	}{
		{"rack r1", `[for s in local.inventory : s if s.rack == each.key]`, inv, cty.StringVal("r1"), true},
		{"reversed operands", `[for s in local.inventory : s if each.key == s.rack]`, inv, cty.StringVal("r2"), true},
		{"no match", `[for s in local.inventory : s if s.rack == each.key]`, inv, cty.StringVal("r9"), true},
		{"an element without the attribute", `[for s in local.inventory : s if s.rack == each.key]`, mixed, cty.StringVal("r1"), false},
		{"a number attribute", `[for s in local.inventory : s if s.rack == each.key]`, numbers, cty.StringVal("1"), false},
		{"a sensitive key", `[for s in local.inventory : s if s.rack == each.key]`, inv, cty.StringVal("r1").Mark("sensitive"), false},
		{"another operator", `[for s in local.inventory : s if s.rack != each.key]`, inv, cty.StringVal("r1"), false},
		{"a projection", `[for s in local.inventory : s.name if s.rack == each.key]`, inv, cty.StringVal("r1"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expr, diags := hclsyntax.ParseExpression([]byte(c.src), "x.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			ctx := ctxFor(c.coll, c.key)
			s := &loadState{}
			got, ok := s.indexedFilter(expr, ctx)
			if ok != c.indexed {
				t.Fatalf("indexed = %v, want %v", ok, c.indexed)
			}
			if !ok {
				return
			}
			want, diags := expr.Value(ctx)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if !got.RawEquals(want) {
				t.Errorf("indexed %#v, HCL %#v", got, want)
			}
		})
	}
}

// TestDistinctSameAsStdlib: the linear distinct answers what cty's stdlib
// answers, for the shapes it handles itself and those it passes on.
func TestDistinctSameAsStdlib(t *testing.T) {
	s := cty.StringVal
	for _, in := range []cty.Value{
		cty.TupleVal([]cty.Value{s("r1"), s("r2"), s("r1"), s("r3"), s("r2")}),
		cty.ListVal([]cty.Value{s("a"), s("a")}),
		cty.TupleVal([]cty.Value{cty.True, cty.False, cty.True}),
		cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(1), cty.NumberIntVal(2)}),
		cty.TupleVal([]cty.Value{s("a"), cty.NumberIntVal(1), s("a")}),
		cty.ListValEmpty(cty.String),
		cty.TupleVal([]cty.Value{s("x").Mark("sensitive"), s("x")}),
	} {
		// HCL converts the argument to the parameter's type first.
		lv, err := convert.Convert(in, cty.List(cty.DynamicPseudoType))
		if err != nil {
			t.Fatal(err)
		}
		want, werr := stdlib.DistinctFunc.Call([]cty.Value{lv})
		got, gerr := distinctFunc.Call([]cty.Value{in})
		if (werr != nil) != (gerr != nil) || (werr == nil && !got.RawEquals(want)) {
			t.Errorf("distinct(%#v) = %#v, %v; stdlib %#v, %v", in, got, gerr, want, werr)
		}
	}
}
