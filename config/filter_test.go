package config

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// TestIndexedFilterSameAsGeneric: the inventory filters answered from an
// index (a rack's rows; a cluster's rack names, alone or in a function
// call; any other for expression with such a condition) give exactly what
// HCL's own evaluation gives, and shapes the index
// cannot decide the same way (a missing attribute, a number, a sensitive or
// unknown value, another operator, a shadowed local) are left to HCL.
func TestIndexedFilterSameAsGeneric(t *testing.T) {
	str := cty.StringVal
	row := func(name, cluster, rack string) cty.Value {
		return cty.ObjectVal(map[string]cty.Value{"name": str(name), "cluster": str(cluster), "rack": str(rack)})
	}
	// Racks repeat and interleave, so order and duplicates matter.
	inv := cty.ListVal([]cty.Value{row("a", "c1", "r1"), row("b", "c2", "r2"), row("c", "c1", "r3"), row("d", "c1", "r1"), row("e", "c2", "r4")})
	obj := func(attrs map[string]cty.Value) cty.Value { return cty.ObjectVal(attrs) }
	mixed := cty.TupleVal([]cty.Value{row("a", "c1", "r1"), obj(map[string]cty.Value{"name": str("x")})})
	numbers := cty.TupleVal([]cty.Value{obj(map[string]cty.Value{"rack": cty.NumberIntVal(1)})})
	nulls := cty.TupleVal([]cty.Value{
		row("a", "c1", "r1"),
		obj(map[string]cty.Value{"name": str("n"), "cluster": cty.NullVal(cty.String), "rack": str("r9")}),
		obj(map[string]cty.Value{"name": str("m"), "cluster": str("c1"), "rack": cty.NullVal(cty.String)}),
	})
	// "x" has no rack: an error only where x matches.
	noRack := cty.TupleVal([]cty.Value{row("a", "c1", "r1"), obj(map[string]cty.Value{"name": str("x"), "cluster": str("c2")})})
	sensitiveRow := cty.TupleVal([]cty.Value{row("a", "c1", "r1"), row("b", "c1", "r2").Mark(sensitiveMark)})
	unknownRow := cty.TupleVal([]cty.Value{row("a", "c1", "r1"), obj(map[string]cty.Value{"name": str("u"), "cluster": cty.UnknownVal(cty.String), "rack": str("r2")})})
	set := cty.SetVal([]cty.Value{row("a", "c1", "r1"), row("b", "c2", "r2"), row("c", "c1", "r3")})

	cluster := `[for s in local.inventory : s.rack if s.cluster == each.key]`
	rack := `[for s in local.inventory : s if s.rack == each.key]`
	cases := []struct {
		name    string
		src     string
		coll    cty.Value
		key     cty.Value
		indexed bool
	}{
		{"a rack's rows", rack, inv, str("r1"), true},
		{"reversed operands", `[for s in local.inventory : s if each.key == s.rack]`, inv, str("r3"), true},
		{"no match", rack, inv, str("r9"), true},
		{"a cluster's racks, duplicates in order", cluster, inv, str("c1"), true},
		{"distinct", "distinct(" + cluster + ")", inv, str("c1"), true},
		{"toset of distinct", "toset(distinct(" + cluster + "))", inv, str("c2"), true},
		{"toset of none", "toset(" + cluster + ")", inv, str("c9"), true},
		{"length", "length(" + rack + ")", inv, str("r1"), true},
		{"a literal key", `[for s in local.inventory : s.name if s.cluster == "c2"]`, inv, str(""), true},
		{"a set", cluster, set, str("c1"), true},
		{"null attributes", cluster, nulls, str("c1"), true},
		{"a missing projected attribute where no row matches", cluster, noRack, str("c1"), true},
		{"a missing projected attribute where a row matches", cluster, noRack, str("c2"), false},
		{"an element without the attribute", rack, mixed, str("r1"), false},
		{"a number attribute", rack, numbers, str("1"), false},
		{"a sensitive key", rack, inv, str("r1").Mark(sensitiveMark), false},
		{"an unknown key", rack, inv, cty.UnknownVal(cty.String), false},
		{"a number key", rack, inv, cty.NumberIntVal(1), false},
		{"a sensitive row", cluster, sensitiveRow, str("c1"), false},
		{"an unknown attribute", cluster, unknownRow, str("c1"), false},
		{"another operator", `[for s in local.inventory : s if s.rack != each.key]`, inv, str("r1"), false},
		{"a computed value", `[for s in local.inventory : upper(s.name) if s.rack == each.key]`, inv, str("r1"), true},
		{"a grouping", `{ for s in local.inventory : s.rack => s... if s.cluster == each.key }`, inv, str("c1"), true},
		{"an object", `{ for s in local.inventory : s.name => s.rack if s.cluster == each.key }`, inv, str("c2"), true},
		{"an object of none", `{ for s in local.inventory : s.name => s.rack if s.cluster == each.key }`, inv, str("c9"), true},
		{"duplicate keys among the matches", `{ for s in local.inventory : s.cluster => s.name if s.cluster == each.key }`, inv, str("c1"), false},
		{"a computed value failing on a match", `[for s in local.inventory : upper(s.rack) if s.cluster == each.key]`, nulls, str("c1"), false},
		{"a computed value failing elsewhere", `[for s in local.inventory : upper(s.rack) if s.cluster == each.key]`, noRack, str("c1"), true},
		{"a key variable", `[for i, s in local.inventory : s if s.rack == each.key]`, inv, str("r1"), false},
		{"a key from the element", `[for s in local.inventory : s if s.rack == s.name]`, inv, str("r1"), false},
		{"two arguments", "concat(" + rack + ", [])", inv, str("r1"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expr, diags := hclsyntax.ParseExpression([]byte(c.src), "x.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			s := &filterIndexes{}
			root := &hcl.EvalContext{
				Variables: map[string]cty.Value{"local": cty.ObjectVal(map[string]cty.Value{"inventory": c.coll})},
				Functions: (&functionEnv{}).functions(),
			}
			ctx := root.NewChild()
			ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": c.key})}
			got, ok := s.indexedValue(expr, ctx)
			if ok != c.indexed {
				t.Fatalf("indexed = %v, want %v", ok, c.indexed)
			}
			want, wantDiags := expr.Value(ctx)
			if !ok {
				// What load uses falls back to HCL, diagnostics and all.
				v, d := s.value(expr, ctx)
				if !v.RawEquals(want) || d.Error() != wantDiags.Error() {
					t.Errorf("value %#v, %v; HCL %#v, %v", v, d, want, wantDiags)
				}
				return
			}
			if wantDiags.HasErrors() {
				t.Fatal(wantDiags)
			}
			if !got.RawEquals(want) {
				t.Errorf("indexed %#v, HCL %#v", got, want)
			}
		})
	}
}

// TestFilterIndexShared: filters of one local in different expressions
// (one per cluster or rack block of a configuration) share one index per
// attribute, and a local shadowed in a nested context is not answered
// from the index of the real one.
func TestFilterIndexShared(t *testing.T) {
	row := func(cluster, rack string) cty.Value {
		return cty.ObjectVal(map[string]cty.Value{"cluster": cty.StringVal(cluster), "rack": cty.StringVal(rack)})
	}
	inv := cty.ListVal([]cty.Value{row("c1", "r1"), row("c2", "r2")})
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"local": cty.ObjectVal(map[string]cty.Value{"inventory": inv})}}
	s := &filterIndexes{}
	for _, src := range []string{
		`[for s in local.inventory : s.rack if s.cluster == "c1"]`,
		`[for s in local.inventory : s.rack if s.cluster == "c2"]`,
		`[for x in local["inventory"] : x if x.rack == "r1"]`,
		`[for s in local.inventory : s if s.rack == "r2"]`,
	} {
		expr, diags := hclsyntax.ParseExpression([]byte(src), "x.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if _, ok := s.indexedValue(expr, ctx); !ok {
			t.Fatalf("%s: not indexed", src)
		}
	}
	if len(s.built) != 2 {
		t.Errorf("%d indexes, want one by cluster and one by rack: %v", len(s.built), s.built)
	}

	shadow := ctx.NewChild()
	shadow.Variables = map[string]cty.Value{"local": cty.ObjectVal(map[string]cty.Value{"inventory": cty.ListVal([]cty.Value{row("c1", "other")})})}
	expr, _ := hclsyntax.ParseExpression([]byte(`[for s in local.inventory : s.rack if s.cluster == "c1"]`), "x.hcl", hcl.InitialPos)
	if v, ok := s.indexedValue(expr, shadow); ok {
		t.Errorf("a shadowed local answered from the index: %#v", v)
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

// TestPlain: plain is IsWhollyKnown and not ContainsMarked, at any depth.
func TestPlain(t *testing.T) {
	str := cty.StringVal
	row := func(v cty.Value) cty.Value { return cty.ObjectVal(map[string]cty.Value{"a": str("x"), "b": v}) }
	for _, v := range []cty.Value{
		str("x"), str("x").Mark(sensitiveMark), cty.UnknownVal(cty.String), cty.NullVal(cty.String),
		cty.DynamicVal, cty.NullVal(cty.DynamicPseudoType),
		row(str("y")), row(str("y").Mark(sensitiveMark)), row(cty.UnknownVal(cty.String)), row(cty.NullVal(cty.String)),
		cty.ListVal([]cty.Value{row(str("y")), row(str("z"))}),
		cty.ListVal([]cty.Value{row(str("y")), row(str("z").Mark(sensitiveMark))}),
		cty.TupleVal([]cty.Value{row(str("y")), row(cty.ListVal([]cty.Value{cty.UnknownVal(cty.Number)}))}),
		cty.SetVal([]cty.Value{str("a"), str("b")}),
		cty.SetVal([]cty.Value{str("a"), cty.UnknownVal(cty.String)}),
		cty.MapVal(map[string]cty.Value{"k": str("v").Mark(sensitiveMark)}),
		cty.MapVal(map[string]cty.Value{"k": str("v")}),
		cty.ListVal([]cty.Value{str("a")}).Mark(sensitiveMark),
		cty.UnknownVal(cty.List(cty.String)),
		cty.TupleVal([]cty.Value{cty.TupleVal([]cty.Value{cty.MapVal(map[string]cty.Value{"k": cty.UnknownVal(cty.Bool)})})}),
	} {
		want := v.IsWhollyKnown() && !v.ContainsMarked()
		if got := plain(v); got != want {
			t.Errorf("plain(%#v) = %v, want %v", v, got, want)
		}
	}
}

// TestIndexedFilterRandom: over random inventories (repeated, missing,
// null, number, sensitive and unknown cells) and keys, what load evaluates
// (the index where it answers, HCL where not) is what HCL evaluates,
// value and diagnostics, with one filterIndexes reused as in a load.
func TestIndexedFilterRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(30, 1))
	cell := func() (cty.Value, bool) {
		switch r := rnd.IntN(40); {
		case r == 0:
			return cty.NilVal, false // missing
		case r == 1:
			return cty.NullVal(cty.String), true
		case r == 2:
			return cty.NumberIntVal(1), true
		case r == 3:
			return cty.StringVal("k1").Mark(sensitiveMark), true
		case r == 4:
			return cty.UnknownVal(cty.String), true
		default:
			return cty.StringVal(fmt.Sprintf("k%d", rnd.IntN(4))), true
		}
	}
	exprs := []string{
		`[for s in local.inventory : s if s.cluster == each.key]`,
		`[for s in local.inventory : s.rack if s.cluster == each.key]`,
		`toset(distinct([for s in local.inventory : s.rack if s.cluster == each.key]))`,
		`[for s in local.inventory : s.name if each.key == s.rack]`,
		`{ for s in local.inventory : s.name => s.rack... if s.cluster == each.key }`,
		`[for s in local.inventory : upper(s.rack) if s.cluster == each.key]`,
	}
	indexed := 0
	for i := range 250 {
		var rows []cty.Value
		for j := range 1 + rnd.IntN(8) {
			attrs := map[string]cty.Value{"name": cty.StringVal(fmt.Sprint("s", j))}
			for _, a := range []string{"cluster", "rack"} {
				if v, ok := cell(); ok {
					attrs[a] = v
				}
			}
			rows = append(rows, cty.ObjectVal(attrs))
		}
		coll := cty.TupleVal(rows)
		s := &filterIndexes{}
		root := &hcl.EvalContext{
			Variables: map[string]cty.Value{"local": cty.ObjectVal(map[string]cty.Value{"inventory": coll})},
			Functions: (&functionEnv{}).functions(),
		}
		for _, src := range exprs {
			expr, diags := hclsyntax.ParseExpression([]byte(src), "x.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			for k := range 5 {
				ctx := root.NewChild()
				ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(fmt.Sprint("k", k))})}
				if _, ok := s.indexedValue(expr, ctx); ok {
					indexed++
				}
				got, gotDiags := s.value(expr, ctx)
				want, wantDiags := expr.Value(ctx)
				if !got.RawEquals(want) || gotDiags.Error() != wantDiags.Error() {
					t.Fatalf("case %d, %s, key k%d over %#v:\n got %#v, %v\nwant %#v, %v", i, src, k, coll, got, gotDiags, want, wantDiags)
				}
			}
		}
	}
	// Both paths must be taken often for the comparison to mean much.
	if total := 250 * len(exprs) * 5; indexed < total/4 || indexed > total*3/4 {
		t.Errorf("%d of %d evaluations indexed", indexed, total)
	}
}
