package config

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// EnvVarPrefix prefixes environment variables that set input variables.
const EnvVarPrefix = "RACKFORM_VAR_"

var variableSchema = &hcl.BodySchema{
	Attributes: optional("type", "default", "description", "sensitive", "nullable"),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{Attributes: required("condition", "error_message")}

type variableDecl struct {
	v           *Variable
	defaults    *typeexpr.Defaults
	validations []*hcl.Block
	// valueRange is where the winning value was set, for diagnostics.
	valueRange *hcl.Range
	// defaultRange is the default attribute, nil without one.
	defaultRange *hcl.Range
	set          bool
}

// inputValue is a value given from outside the configuration.
type inputValue struct {
	raw    string         // -var or env: raw text
	expr   hcl.Expression // var-file: an expression
	source string
	rng    *hcl.Range
}

func (s *loadState) loadVariables(blocks []*hcl.Block) hcl.Diagnostics {
	var diags hcl.Diagnostics
	decls := map[string]*variableDecl{}
	var order []*variableDecl
	for _, b := range blocks {
		name := b.Labels[0]
		if first, ok := decls[name]; ok {
			diags = append(diags, errorAt(b.DefRange, "Duplicate variable name", "A variable named %q was already declared at %s. Names must be unique within their kind.", name, posString(first.v.DeclRange)))
			continue
		}
		if !hclsyntax.ValidIdentifier(name) {
			diags = append(diags, errorAt(b.LabelRanges[0], "Invalid name", "%q is not a valid variable name: a name starts with a letter or underscore and contains only letters, digits, underscores and dashes.", name))
			continue
		}
		vd, d := decodeVariable(b)
		diags = append(diags, d...)
		if vd.v.Sensitive && vd.defaultRange != nil {
			s.secrets.addSensitiveSource(*vd.defaultRange)
		}
		decls[name] = vd
		order = append(order, vd)
	}

	// Inputs, lowest precedence first: environment, var files in order,
	// -var in order. A later value replaces an earlier one.
	inputs := map[string][]inputValue{}
	if s.getenv != nil {
		for _, vd := range order {
			if raw := s.getenv(EnvVarPrefix + vd.v.Name); raw != "" {
				inputs[vd.v.Name] = append(inputs[vd.v.Name], inputValue{raw: raw, source: "env " + EnvVarPrefix + vd.v.Name})
			}
		}
	}
	for _, path := range s.l.opts.VarFiles {
		attrs, src, d := readVarFile(s.l.parser, path)
		diags = append(diags, d...)
		if d.HasErrors() {
			// The file is malformed (a syntax error, a duplicate), so which
			// line sets what is uncertain: if it may set a sensitive
			// variable, show none of it.
			for _, vd := range order {
				if vd.v.Sensitive && bytes.Contains(src, []byte(vd.v.Name)) {
					s.secrets.addSensitiveSource(wholeFile(path, src))
					break
				}
			}
		}
		for _, a := range attrs {
			if vd := decls[a.Name]; vd != nil && vd.v.Sensitive {
				s.secrets.addSensitiveSource(a.Range)
			}
		}
		for _, a := range attrs {
			if decls[a.Name] == nil {
				diags = append(diags, warningAt(a.NameRange, "Value for undeclared variable", "The file %s sets %q, but no variable of that name is declared; the value is ignored.", path, a.Name))
				continue
			}
			inputs[a.Name] = append(inputs[a.Name], inputValue{expr: a.Expr, source: "var-file " + path, rng: a.Expr.Range().Ptr()})
		}
	}
	for _, arg := range s.l.opts.Vars {
		name, raw, ok := strings.Cut(arg, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid -var option",
				// The text is not echoed: a mistyped -var may hold a secret.
				Detail: "A -var option is not of the form NAME=VALUE.",
			})
			continue
		}
		if decls[name] == nil {
			diags = append(diags, plainError("Value for undeclared variable", "A -var option sets %q, but no variable of that name is declared.", name))
			continue
		}
		inputs[name] = append(inputs[name], inputValue{raw: raw, source: "-var"})
	}

	for _, vd := range order {
		v := vd.v
		// Every declared variable is listed, even one whose value failed,
		// so its sensitivity is known to callers.
		s.cfg.Variables = append(s.cfg.Variables, v)
		val := v.Default
		v.Source = "default"
		if in := inputs[v.Name]; len(in) > 0 {
			last := in[len(in)-1]
			if v.Sensitive && last.expr == nil {
				s.secrets.addSensitiveSource(wholeFile(inputFilename(v.Name), []byte(last.raw)))
			}
			got, d := parseInput(v, last)
			diags = append(diags, d...)
			if d.HasErrors() {
				s.vars[v.Name] = cty.DynamicVal
				continue
			}
			val, v.Source, vd.valueRange, vd.set = got, last.source, last.rng, true
		}
		if val == cty.NilVal && s.l.opts.UnsetVariablesUnknown {
			// Unknown, but still sensitive: what reads it (a provider's
			// password) is checked as it will be once it has a value.
			unknown := cty.UnknownVal(v.Type)
			if v.Sensitive {
				unknown = unknown.Mark(sensitiveMark)
			}
			s.vars[v.Name] = unknown
			continue
		}
		if val == cty.NilVal {
			diags = append(diags, errorAt(v.DeclRange, "No value for required variable", "The variable %q has no default, so it must be set with -var, -var-file or the environment variable %s%s.", v.Name, EnvVarPrefix, v.Name))
			s.vars[v.Name] = cty.DynamicVal
			continue
		}
		conv, err := convert.Convert(val, v.Type)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid value for input variable",
				Detail:   fmt.Sprintf("The value for variable %q (from %s) does not match its type %s: %s.", v.Name, v.Source, typeexpr.TypeString(v.Type), convertErr(err, v.Sensitive)),
				Subject:  firstRange(vd.valueRange, &v.DeclRange),
			})
			s.vars[v.Name] = cty.DynamicVal
			continue
		}
		if vd.defaults != nil {
			conv = vd.defaults.Apply(conv)
		}
		if conv.IsNull() && !v.Nullable {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid value for input variable",
				Detail:   fmt.Sprintf("The variable %q is not nullable, but its value (from %s) is null.", v.Name, v.Source),
				Subject:  firstRange(vd.valueRange, &v.DeclRange),
			})
		}
		v.Value = conv
		if v.Sensitive {
			s.secrets.addSecrets(conv)
			conv = conv.Mark(sensitiveMark)
		}
		s.vars[v.Name] = conv
	}

	// Validation rules see every variable, after all are resolved.
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{kindVar: cty.ObjectVal(s.vars)}, Functions: s.fns}
	for _, vd := range order {
		if s.vars[vd.v.Name] == cty.DynamicVal {
			continue
		}
		for _, vb := range vd.validations {
			diags = append(diags, checkValidation(vd, vb, ctx, s.l.opts.UnsetVariablesUnknown)...)
		}
	}
	return diags
}

func convertErr(err error, sensitive bool) string {
	if sensitive {
		return "the value is sensitive and not shown"
	}
	return err.Error()
}

func firstRange(rs ...*hcl.Range) *hcl.Range {
	for _, r := range rs {
		if r != nil {
			return r
		}
	}
	return nil
}

func decodeVariable(b *hcl.Block) (*variableDecl, hcl.Diagnostics) {
	v := &Variable{Name: b.Labels[0], Type: cty.DynamicPseudoType, Nullable: true, DeclRange: b.DefRange}
	vd := &variableDecl{v: v}
	content, diags := b.Body.Content(variableSchema)
	if a := content.Attributes["type"]; a != nil {
		ty, defaults, d := typeexpr.TypeConstraintWithDefaults(a.Expr)
		diags = append(diags, d...)
		if !d.HasErrors() {
			v.Type, vd.defaults = ty, defaults
		}
	}
	for name, dst := range map[string]*string{"description": &v.Description} {
		if a := content.Attributes[name]; a != nil {
			diags = append(diags, decodeConst(a, cty.String, func(c cty.Value) { *dst = c.AsString() })...)
		}
	}
	for name, dst := range map[string]*bool{"sensitive": &v.Sensitive, "nullable": &v.Nullable} {
		if a := content.Attributes[name]; a != nil {
			diags = append(diags, decodeConst(a, cty.Bool, func(c cty.Value) { *dst = c.True() })...)
		}
	}
	if a := content.Attributes["default"]; a != nil {
		vd.defaultRange = a.Range.Ptr()
		val, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if !d.HasErrors() {
			conv, err := convert.Convert(val, v.Type)
			if err != nil {
				diags = append(diags, errorAt(a.Expr.Range(), "Invalid default value for variable", "The default value does not match the variable's type %s: %s.", typeexpr.TypeString(v.Type), convertErr(err, v.Sensitive)))
			} else {
				if vd.defaults != nil {
					conv = vd.defaults.Apply(conv)
				}
				v.Default = conv
			}
		}
	}
	for _, blk := range content.Blocks {
		vc, d := blk.Body.Content(validationSchema)
		diags = append(diags, d...)
		if !d.HasErrors() {
			_ = vc
			vd.validations = append(vd.validations, blk)
		}
	}
	return vd, diags
}

// decodeConst evaluates a constant attribute (no references) of type ty.
func decodeConst(a *hcl.Attribute, ty cty.Type, set func(cty.Value)) hcl.Diagnostics {
	val, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return diags
	}
	conv, err := convert.Convert(val, ty)
	if err != nil || conv.IsNull() {
		msg := "null is not allowed"
		if err != nil {
			msg = err.Error()
		}
		return append(diags, errorAt(a.Expr.Range(), "Incorrect attribute value type", "Inappropriate value for attribute %q: %s.", a.Name, msg))
	}
	set(conv)
	return diags
}

// wholeFile is a range over every line of src.
func wholeFile(name string, src []byte) hcl.Range {
	return hcl.Range{
		Filename: name,
		Start:    hcl.InitialPos,
		End:      hcl.Pos{Line: bytes.Count(src, []byte("\n")) + 1, Column: 1, Byte: len(src)},
	}
}

// VarFileNames lists the variables a -var-file sets, without evaluating
// their values (apply checks that sensitive variables are given again).
func VarFileNames(path string) ([]string, hcl.Diagnostics) {
	attrs, _, diags := readVarFile(hclparse.NewParser(), path)
	names := make([]string, len(attrs))
	for i, a := range attrs {
		names[i] = a.Name
	}
	return names, diags
}

func readVarFile(parser *hclparse.Parser, path string) ([]*hcl.Attribute, []byte, hcl.Diagnostics) {
	src, err := ReadSource(path)
	if err != nil {
		return nil, nil, hcl.Diagnostics{plainError("Failed to read variables file", "Cannot read the -var-file %s: %v.", path, err)}
	}
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(path, ".json") {
		f, diags = parser.ParseJSON(src, path)
	} else {
		f, diags = parser.ParseHCL(src, path)
	}
	if diags.HasErrors() || f == nil {
		return nil, src, diags
	}
	attrs, d := f.Body.JustAttributes()
	return sortedAttrs(attrs), src, append(diags, d...)
}

// parseInput turns an input into a value. Like Terraform, a raw string
// (-var, environment) is taken literally for a primitive or unconstrained
// type and parsed as an HCL expression for collection and structural
// types, so lists and maps can be passed.
func parseInput(v *Variable, in inputValue) (cty.Value, hcl.Diagnostics) {
	if in.expr != nil {
		return in.expr.Value(nil)
	}
	if v.Type.IsPrimitiveType() || v.Type == cty.DynamicPseudoType {
		return cty.StringVal(in.raw), nil
	}
	if diags := checkInput(v.Name, in); diags.HasErrors() {
		return cty.NilVal, diags
	}
	expr, diags := hclsyntax.ParseExpression([]byte(in.raw), inputFilename(v.Name), hcl.InitialPos)
	if diags.HasErrors() {
		if v.Sensitive {
			return cty.NilVal, hcl.Diagnostics{plainError("Invalid value for input variable", "The value for variable %q (from %s) is not a valid expression; the value is sensitive and not shown.", v.Name, in.source)}
		}
		return cty.NilVal, diags
	}
	return expr.Value(nil)
}

// inputFilename names the text of a -var or environment value in the
// ranges of diagnostics about it.
func inputFilename(name string) string { return fmt.Sprintf("<value for var.%s>", name) }

func checkValidation(vd *variableDecl, b *hcl.Block, ctx *hcl.EvalContext, unsetUnknown bool) hcl.Diagnostics {
	content, _ := b.Body.Content(validationSchema)
	cond := content.Attributes["condition"]
	msgAttr := content.Attributes["error_message"]
	ok, diags := cond.Expr.Value(ctx)
	if diags.HasErrors() {
		return diags
	}
	ok, _ = ok.Unmark()
	ok, err := convert.Convert(ok, cty.Bool)
	if err == nil && !ok.IsKnown() && unsetUnknown {
		// A variable without a value (validate): its rule is checked
		// when it has one, as terraform validate does.
		return diags
	}
	if err != nil || ok.IsNull() || !ok.IsKnown() {
		return append(diags, errorAt(cond.Expr.Range(), "Invalid validation condition", "The condition of a validation rule must be true or false."))
	}
	if ok.True() {
		return diags
	}
	msg := "The value is invalid."
	if m, d := msgAttr.Expr.Value(ctx); !d.HasErrors() && m.Type() == cty.String && !m.IsNull() {
		if m.IsMarked() {
			msg = "The value is invalid (the error message depends on a sensitive value and is not shown)."
		} else {
			msg = m.AsString()
		}
	}
	return append(diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid value for variable",
		Detail:   fmt.Sprintf("%s\n\nThis was checked by the validation rule at %s (value from %s).", msg, posString(cond.Range), vd.v.Source),
		Subject:  firstRange(vd.valueRange, &vd.v.DeclRange),
	})
}

// valueFrom says where the value of expr comes from when it is one
// variable or one env() call, for messages about the value (it is never
// shown): `variable "pw" (set by RACKFORM_VAR_pw)`, `env("BMC_PW")`; ""
// for anything else.
func (s *loadState) valueFrom(expr hcl.Expression) string {
	if call, ok := expr.(*hclsyntax.FunctionCallExpr); ok && call.Name == "env" && len(call.Args) == 1 {
		if v, d := call.Args[0].Value(nil); !d.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
			return fmt.Sprintf("env(%q)", v.AsString())
		}
		return ""
	}
	tr, d := hcl.AbsTraversalForExpr(expr)
	if d.HasErrors() || tr.RootName() != kindVar {
		return ""
	}
	name, ok := traversalName(tr)
	if !ok || len(tr) != 2 {
		return ""
	}
	v := s.cfg.Variable(name)
	if v == nil {
		return ""
	}
	out := fmt.Sprintf("variable %q", name)
	switch src := v.Source; {
	case strings.HasPrefix(src, "env "):
		out += " (set by " + strings.TrimPrefix(src, "env ") + ")"
	case src == "-var":
		out += " (set with -var)"
	case src == "default":
		out += " (its default)"
	case strings.HasPrefix(src, "var-file "):
		out += " (set in " + strings.TrimPrefix(src, "var-file ") + ")"
	}
	return out
}
