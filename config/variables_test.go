package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

const varsSrc = base + `
variable "site" {
  type    = string
  default = "default"
}
variable "racks" {
  type    = list(string)
  default = []
}
variable "limit" {
  type    = number
  default = 1
}
variable "anything" {
  default = "d"
}
variable "opts" {
  type = object({
    name  = string
    extra = optional(string, "x")
  })
  default = { name = "d" }
}
`

func TestVariablePrecedence(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		varFiles map[string]string // name → content, applied in name order
		vars     []string
		want     map[string]cty.Value
		source   string // of "site"
	}{
		{
			name:   "defaults",
			want:   map[string]cty.Value{"site": cty.StringVal("default")},
			source: "default",
		},
		{
			name:   "env beats default",
			env:    map[string]string{"RACKFORM_VAR_site": "env", "RACKFORM_VAR_racks": `["a", "b"]`},
			want:   map[string]cty.Value{"site": cty.StringVal("env"), "racks": cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")})},
			source: "env RACKFORM_VAR_site",
		},
		{
			name:     "var-file beats env, later file beats earlier",
			env:      map[string]string{"RACKFORM_VAR_site": "env"},
			varFiles: map[string]string{"1.rfvars.hcl": `site = "file1"` + "\nlimit = 5\n", "2.json": `{"site": "file2"}`},
			want:     map[string]cty.Value{"site": cty.StringVal("file2"), "limit": cty.NumberIntVal(5)},
			source:   "var-file 2.json",
		},
		{
			name:     "-var beats var-file, later -var beats earlier",
			varFiles: map[string]string{"1.rfvars.hcl": `site = "file1"`},
			vars:     []string{"site=cli1", "site=cli2", "limit=7", `opts={name="n"}`, "anything=abc"},
			want: map[string]cty.Value{
				"anything": cty.StringVal("abc"),
				"site":     cty.StringVal("cli2"),
				"limit":    cty.NumberIntVal(7),
				"opts":     cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("n"), "extra": cty.StringVal("x")}),
			},
			source: "-var",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"main.rf.hcl": varsSrc}
			var varFiles []string
			for name, src := range tt.varFiles {
				files[name] = src
				varFiles = append(varFiles, name)
			}
			sortStrings(varFiles)
			writeConfig(t, files)
			l := NewLoader(LoadOptions{Vars: tt.vars, VarFiles: varFiles, Getenv: func(k string) string { return tt.env[k] }})
			cfg, diags := l.Load(".")
			if diags.HasErrors() {
				t.Fatalf("diagnostics:\n%s", renderDiags(l, diags))
			}
			in := cfg.InputValues()
			for name, want := range tt.want {
				if got := in[name]; !got.RawEquals(want) {
					t.Errorf("var.%s = %#v, want %#v", name, got, want)
				}
			}
			if got := cfg.Variable("site").Source; got != tt.source {
				t.Errorf("var.site source = %q, want %q", got, tt.source)
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestVariableInputErrors(t *testing.T) {
	tests := []struct {
		name string
		opts LoadOptions
		want []diag
	}{
		{"undeclared -var", LoadOptions{Vars: []string{"nope=1"}}, []diag{{"error", "Value for undeclared variable", `A -var option sets "nope", but no variable of that name is declared.`, ""}}},
		{"malformed -var", LoadOptions{Vars: []string{"hunter2"}}, []diag{{"error", "Invalid -var option", "A -var option is not of the form NAME=VALUE.", ""}}},
		{"wrong type", LoadOptions{Vars: []string{"limit=many"}}, []diag{{"error", "Invalid value for input variable", `The value for variable "limit" (from -var) does not match its type number: a number is required.`, "main.rf.hcl:40,1-40,17"}}},
		{"missing var-file", LoadOptions{VarFiles: []string{"missing.json"}}, []diag{{"error", "Failed to read variables file", "Cannot read the -var-file missing.json: open missing.json: no such file or directory.", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadFiles(t, map[string]string{"main.rf.hcl": varsSrc}, tt.opts)
			if diff := cmp.Diff(tt.want, flatten(diags)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestVarFileUndeclaredIsWarning(t *testing.T) {
	writeConfig(t, map[string]string{"main.rf.hcl": varsSrc, "x.rfvars.hcl": "other = 1\n"})
	_, diags := NewLoader(LoadOptions{VarFiles: []string{"x.rfvars.hcl"}}).Load(".")
	want := []diag{{"warning", "Value for undeclared variable", `The file x.rfvars.hcl sets "other", but no variable of that name is declared; the value is ignored.`, "x.rfvars.hcl:1,1-1,6"}}
	if diff := cmp.Diff(want, flatten(diags)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSensitive checks that sensitive values are tracked and never reach a
// diagnostic, whatever path the error takes.
func TestSensitive(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	src := base + `
variable "password" {
  type      = string
  sensitive = true
}
variable "pin" {
  type      = number
  sensitive = true
  default   = 0
}
provider "redfish" {
  username = "admin"
  password = var.password
  token    = env("BMC_TOKEN")
  insecure = true
}
locals {
  leak1 = tonumber(var.password)
  leak2 = upper(env("BMC_TOKEN")) + 1
  leak3 = regex("^x", var.password)
}
`
	tests := []struct {
		name string
		vars []string
	}{
		{"from -var", []string{"password=" + secret, "pin=" + secret}},
		{"from env", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"BMC_TOKEN": secret, "RACKFORM_VAR_password": secret}
			writeConfig(t, map[string]string{"main.rf.hcl": src})
			l := NewLoader(LoadOptions{Vars: tt.vars, Getenv: func(k string) string { return env[k] }})
			cfg, diags := l.Load(".")
			if len(diags) < 3 {
				t.Fatalf("want at least the three leak errors, got:\n%s", renderDiags(l, diags))
			}
			text := renderDiags(l, diags)
			for _, d := range diags {
				text += d.Summary + d.Detail
			}
			// The rendered snippet shows source text, never values.
			if strings.Contains(text, secret) {
				t.Errorf("a diagnostic contains the secret:\n%s", text)
			}
			if diff := cmp.Diff([]string{"password", "pin"}, cfg.SensitiveVariables()); diff != "" {
				t.Errorf("SensitiveVariables (-want +got):\n%s", diff)
			}
			if _, ok := cfg.InputValues()["password"]; ok {
				t.Errorf("InputValues includes a sensitive variable")
			}
			p := cfg.Provider("redfish")
			if diff := cmp.Diff([]string{"password", "token"}, p.SensitiveAttrs); diff != "" {
				t.Errorf("SensitiveAttrs (-want +got):\n%s", diff)
			}
			if got := p.Attrs.GetAttr("password").AsString(); got != secret {
				t.Errorf("provider password not passed through")
			}
			if diff := cmp.Diff([]string{"BMC_TOKEN"}, cfg.EnvReferences); diff != "" {
				t.Errorf("EnvReferences (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretRedaction(t *testing.T) {
	s := NewSecret("hunter2", true)
	c := &Credentials{Username: NewSecret("root", false), Password: s}
	for _, got := range []string{s.String(), s.GoString(), mustJSON(t, s), mustJSON(t, c),
		fmt.Sprintf("%v %+v %#v %s", *c, *c, c, c)} {
		if strings.Contains(got, "hunter2") {
			t.Errorf("secret leaked: %s", got)
		}
	}
	if s.Reveal() != "hunter2" {
		t.Errorf("Reveal = %q", s.Reveal())
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := jsonMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEvalContextsHoldNoSecrets: renderers print the values an expression
// uses from diag.EvalContext, so no context leaving Load may hold a
// secret; a sensitive value is there only as a marked unknown, while
// everything else stays describable.
func TestEvalContextsHoldNoSecrets(t *testing.T) {
	src := base + `
variable "pw" {
  sensitive = true
  default   = "pw-value"
}
variable "plain" {
  default = "abc"
}
locals {
  x = tonumber(var.pw)
  y = tonumber(var.plain)
  z = { secret = var.pw, name = "n" }
  w = tonumber(local.z.name)
}
`
	writeConfig(t, map[string]string{"main.rf.hcl": src})
	_, diags := NewLoader(LoadOptions{}).Load(".")
	if len(diags) != 3 {
		t.Fatalf("want 3 diagnostics, got %d: %v", len(diags), diags)
	}
	for _, d := range diags {
		if d.Expression == nil || d.EvalContext == nil {
			t.Fatalf("diagnostic without expression or context: %v", d)
		}
		for name, v := range d.EvalContext.Variables {
			if strings.Contains(fmt.Sprintf("%#v", v), "pw-value") {
				t.Errorf("%s: the context's %s holds the secret: %#v", d.Detail, name, v)
			}
		}
		tr := d.Expression.Variables()[0]
		v, vd := tr.TraverseAbs(d.EvalContext)
		if vd.HasErrors() {
			t.Fatalf("%s does not resolve in the context: %s", traversalText(tr), vd.Error())
		}
		switch traversalText(tr) {
		case "var.pw":
			if v.IsKnown() || !v.IsMarked() {
				t.Errorf("var.pw is %#v, want a marked unknown", v)
			}
		case "var.plain":
			if v.Equals(cty.StringVal("abc")) != cty.True {
				t.Errorf("var.plain is %#v, want \"abc\"", v)
			}
		case "local.z.name":
			if v.Equals(cty.StringVal("n")) != cty.True {
				t.Errorf("local.z.name is %#v, want \"n\"", v)
			}
		default:
			t.Errorf("unexpected traversal %s", traversalText(tr))
		}
	}
}

func traversalText(tr hcl.Traversal) string {
	out := tr.RootName()
	for _, step := range tr[1:] {
		if a, ok := step.(hcl.TraverseAttr); ok {
			out += "." + a.Name
		}
	}
	return out
}
