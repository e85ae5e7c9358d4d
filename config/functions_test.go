package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// evalFn evaluates src with the function table of a load and var.secret
// bound to a sensitive string.
func evalFn(t *testing.T, src string) (cty.Value, hcl.Diagnostics) {
	t.Helper()
	s := newLoadState(NewLoader(LoadOptions{}), &Config{Dir: t.TempDir()})
	expr, diags := hclsyntax.ParseExpression([]byte(src), "test.rf.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", src, diags.Error())
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{
			"secret": cty.StringVal("hunter2").Mark(sensitiveMark),
		})},
		Functions: s.fns,
	}
	return expr.Value(ctx)
}

// TestLength: length takes strings, lists, maps, sets, tuples and objects,
// like Terraform's; the length of a sensitive value stays sensitive.
func TestLength(t *testing.T) {
	tests := []struct {
		src    string
		want   int64
		marked bool
	}{
		{src: `length("")`, want: 0},
		{src: `length("r01")`, want: 3},
		{src: `length("héllo")`, want: 5}, // characters, not bytes
		{src: `length(["a", "b"])`, want: 2},
		{src: `length(tolist(["a", "b", "c"]))`, want: 3},
		{src: `length({ a = 1 })`, want: 1},
		{src: `length(tomap({ a = 1, b = 2 }))`, want: 2},
		{src: `length(toset(["a", "a", "b"]))`, want: 2},
		{src: `length([])`, want: 0},
		{src: `length(var.secret)`, want: 7, marked: true},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			v, diags := evalFn(t, tt.src)
			if diags.HasErrors() {
				t.Fatalf("%s", diags.Error())
			}
			if v.IsMarked() != tt.marked {
				t.Errorf("marked = %v, want %v", v.IsMarked(), tt.marked)
			}
			v, _ = v.Unmark()
			if got, _ := v.AsBigFloat().Int64(); v.Type() != cty.Number || got != tt.want {
				t.Errorf("= %#v, want %d", v, tt.want)
			}
		})
	}
	for _, src := range []string{`length(1)`, `length(true)`, `length(null)`} {
		if _, diags := evalFn(t, src); !diags.HasErrors() {
			t.Errorf("%s: no error", src)
		}
	}
}

// TestLengthInValidation is the README's validation rule on a sensitive
// string variable.
func TestLengthInValidation(t *testing.T) {
	src := base + `
variable "bmc_password" {
  type      = string
  default   = ""
  sensitive = true
  validation {
    condition     = length(var.bmc_password) > 0
    error_message = "Set RACKFORM_VAR_bmc_password."
  }
}
`
	off := strings.Count(base, "\n") // lines before the variable block
	for _, tt := range []struct {
		value string
		want  []diag
	}{
		{"pw", nil},
		{"", []diag{{"error", "Invalid value for variable",
			fmt.Sprintf("Set RACKFORM_VAR_bmc_password.\n\nThis was checked by the validation rule at main.rf.hcl:%d (value from default).", off+7),
			fmt.Sprintf("main.rf.hcl:%d,1-%d,24", off+2, off+2)}}},
	} {
		env := map[string]string{"RACKFORM_VAR_bmc_password": tt.value}
		_, diags := loadFiles(t, map[string]string{"main.rf.hcl": src}, LoadOptions{Getenv: func(k string) string { return env[k] }})
		got := flatten(diags)
		if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
			t.Errorf("value %q: got %+v, want %+v", tt.value, got, tt.want)
		}
	}
}
