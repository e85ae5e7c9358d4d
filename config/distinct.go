package config

import (
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// distinctFunc is stdlib's distinct with the same results, linear on lists
// of strings and bools (such as the racks of an inventory, where stdlib's
// pairwise comparison costs rows × racks), stdlib's own elsewhere.
var distinctFunc = function.New(&function.Spec{
	Description: stdlib.DistinctFunc.Description(),
	Params:      []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type: func(args []cty.Value) (cty.Type, error) {
		if ety, ok := uniformElement(args[0].Type()); ok {
			return cty.List(ety), nil
		}
		lv, err := convert.Convert(args[0], cty.List(cty.DynamicPseudoType))
		if err != nil {
			return cty.NilType, function.NewArgError(0, err)
		}
		return stdlib.DistinctFunc.ReturnTypeForValues([]cty.Value{lv})
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		v := args[0]
		ety, ok := uniformElement(v.Type())
		if !ok || (ety != cty.String && ety != cty.Bool) || !v.IsWhollyKnown() {
			return stdlibDistinct(v)
		}
		seen := map[string]bool{}
		var out []cty.Value
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.IsNull() || e.IsMarked() {
				return stdlibDistinct(v)
			}
			k := "b"
			if ety == cty.String {
				k = "s" + e.AsString()
			} else if e.True() {
				k = "t"
			}
			if !seen[k] {
				seen[k] = true
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return cty.ListValEmpty(ety), nil
		}
		return cty.ListVal(out), nil
	},
})

// stdlibDistinct converts v to a list, as HCL does before calling a
// function, and calls stdlib's distinct.
func stdlibDistinct(v cty.Value) (cty.Value, error) {
	lv, err := convert.Convert(v, cty.List(cty.DynamicPseudoType))
	if err != nil {
		return cty.NilVal, function.NewArgError(0, err)
	}
	return stdlib.DistinctFunc.Call([]cty.Value{lv})
}

// uniformElement is the element type of a list, or of a non-empty tuple
// whose elements all have one type.
func uniformElement(ty cty.Type) (cty.Type, bool) {
	switch {
	case ty.IsListType():
		return ty.ElementType(), true
	case ty.IsTupleType():
		etys := ty.TupleElementTypes()
		if len(etys) == 0 {
			return cty.NilType, false
		}
		for _, e := range etys[1:] {
			if !e.Equals(etys[0]) {
				return cty.NilType, false
			}
		}
		return etys[0], true
	}
	return cty.NilType, false
}
