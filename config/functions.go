package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// sensitiveMark is the cty mark carried by values derived from env() or a
// sensitive variable. Marks propagate through expressions and functions,
// so anything computed from a secret stays marked.
type markKind string

const sensitiveMark = markKind("sensitive")

// functionEnv is what the configuration's functions read from and record
// in one load: file, templatefile and env see its directory, file system
// and environment; what they read is kept for the Config (DataFiles,
// EnvReferences, SensitiveDataReads), for scrubbing (secrets) and for
// naming inventory lines (origins).
type functionEnv struct {
	fsys    fs.FS  // LoadOptions.FS
	fsLabel string // LoadOptions.FSName
	baseDir string
	getenv  func(string) string
	secrets *secretSet
	origins *origins
	// sensitiveReads is Config.SensitiveDataReads.
	sensitiveReads *int
	// envRefs are the names passed to env(), and whether each was set.
	envRefs map[string]bool
	// fileTexts maps what file() returned to the path it was given, and
	// origins.csvSources are csvdecode results over such texts.
	fileTexts map[string]string
	// dataFiles are the files file() and templatefile() read, by
	// dataName, byte for byte: Config.DataFiles.
	dataFiles map[string][]byte
}

// functions returns the function table of a configuration rooted at
// baseDir. It is built per load (no package-level table) because file,
// templatefile and env close over the load's directory and environment.
func (e *functionEnv) functions() map[string]function.Function {
	fns := map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"can":             tryfunc.CanFunc,
		"ceil":            stdlib.CeilFunc,
		"chomp":           stdlib.ChompFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"csvdecode":       e.csvDecodeFunc(),
		"distinct":        distinctFunc,
		"element":         stdlib.ElementFunc,
		"endswith":        endsWithFunc,
		"flatten":         stdlib.FlattenFunc,
		"floor":           stdlib.FloorFunc,
		"format":          stdlib.FormatFunc,
		"formatdate":      stdlib.FormatDateFunc,
		"formatlist":      stdlib.FormatListFunc,
		"indent":          stdlib.IndentFunc,
		"join":            stdlib.JoinFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"keys":            stdlib.KeysFunc,
		"length":          lengthFunc,
		"log":             stdlib.LogFunc,
		"lookup":          stdlib.LookupFunc,
		"lower":           stdlib.LowerFunc,
		"max":             stdlib.MaxFunc,
		"merge":           stdlib.MergeFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"pow":             stdlib.PowFunc,
		"range":           stdlib.RangeFunc,
		"regex":           stdlib.RegexFunc,
		"regexall":        stdlib.RegexAllFunc,
		"regex_replace":   stdlib.RegexReplaceFunc,
		"replace":         stdlib.ReplaceFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setunion":        stdlib.SetUnionFunc,
		"signum":          stdlib.SignumFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"split":           stdlib.SplitFunc,
		"startswith":      startsWithFunc,
		"strlen":          stdlib.StrlenFunc,
		"strrev":          stdlib.ReverseFunc,
		"substr":          stdlib.SubstrFunc,
		"timeadd":         stdlib.TimeAddFunc,
		"title":           stdlib.TitleFunc,
		"tobool":          stdlib.MakeToFunc(cty.Bool),
		"tolist":          stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap":           stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"tonumber":        stdlib.MakeToFunc(cty.Number),
		"toset":           stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring":        stdlib.MakeToFunc(cty.String),
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"try":             tryfunc.TryFunc,
		"upper":           stdlib.UpperFunc,
		"values":          stdlib.ValuesFunc,
		"yamldecode":      ctyyaml.YAMLDecodeFunc,
		"yamlencode":      ctyyaml.YAMLEncodeFunc,
		"zipmap":          stdlib.ZipmapFunc,
		"env":             e.envFunc(),
		"file":            e.fileFunc(),
	}
	for name, fn := range fns {
		if name != "try" && name != "can" { // they take expressions, not values
			fns[name] = guardSecrets(fn)
		}
	}
	// templatefile sees every function but itself, so a template cannot
	// recurse into templatefile.
	fns["templatefile"] = guardSecrets(e.templateFileFunc(fns))
	return fns
}

// errSensitiveCall replaces the error of a function called with a sensitive
// argument: function errors often quote their arguments ("cannot parse
// \"hunter2\" as a base 10 integer"), so the message is never built
// from the values at all.
const errSensitiveCall = "the call involves a sensitive value, so the details of the error are not shown"

// guardSecrets wraps fn so that when any argument carries a mark, an error
// from fn (at type checking or at the call) is replaced with one that
// quotes nothing. Otherwise fn behaves exactly as before: the wrapper
// declares fn's parameter types, so HCL converts arguments the same way,
// and lets fn itself handle nulls, unknowns and marks.
func guardSecrets(fn function.Function) function.Function {
	passThrough := func(p function.Parameter) function.Parameter {
		p.AllowNull, p.AllowUnknown, p.AllowDynamicType, p.AllowMarked = true, true, true, true
		return p
	}
	params := fn.Params()
	for i := range params {
		params[i] = passThrough(params[i])
	}
	var varParam *function.Parameter
	if vp := fn.VarParam(); vp != nil {
		p := passThrough(*vp)
		varParam = &p
	}
	return function.New(&function.Spec{
		Description: fn.Description(),
		Params:      params,
		VarParam:    varParam,
		Type: func(args []cty.Value) (cty.Type, error) {
			ty, err := fn.ReturnTypeForValues(args)
			return ty, redactCallError(err, args)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, err := fn.Call(args)
			return v, redactCallError(err, args)
		},
	})
}

func redactCallError(err error, args []cty.Value) error {
	if err == nil {
		return nil
	}
	for _, a := range args {
		if a.ContainsMarked() {
			var argErr function.ArgError
			if errors.As(err, &argErr) {
				return function.NewArgErrorf(argErr.Index, errSensitiveCall)
			}
			return errors.New(errSensitiveCall)
		}
	}
	return err
}

// lengthFunc is Terraform's length: the number of characters (grapheme
// clusters) of a string, elements of a list, set or map, or elements or
// attributes of a tuple or object. cty's stdlib version refuses strings
// and objects. The result keeps the argument's marks, so the length of a
// secret is itself sensitive.
var lengthFunc = function.New(&function.Spec{
	Description: "Returns the length of a string, collection or structural value.",
	Params: []function.Parameter{{
		Name:             "value",
		Type:             cty.DynamicPseudoType,
		AllowDynamicType: true,
		AllowUnknown:     true,
		AllowMarked:      true,
	}},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		switch {
		case ty == cty.String, ty == cty.DynamicPseudoType, ty.IsListType(), ty.IsSetType(), ty.IsMapType(), ty.IsTupleType(), ty.IsObjectType():
			return cty.Number, nil
		}
		return cty.Number, function.NewArgErrorf(0, "argument must be a string, a collection type or a structural type, not %s", ty.FriendlyName())
	},
	RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder {
		return b.NotNull().NumberRangeLowerBound(cty.Zero, true)
	},
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v, marks := args[0].Unmark()
		ty := v.Type()
		switch {
		case ty == cty.DynamicPseudoType:
			return cty.UnknownVal(cty.Number).WithMarks(marks), nil
		case ty.IsTupleType():
			return cty.NumberIntVal(int64(len(ty.TupleElementTypes()))).WithMarks(marks), nil
		case ty.IsObjectType():
			return cty.NumberIntVal(int64(len(ty.AttributeTypes()))).WithMarks(marks), nil
		case ty == cty.String:
			n, err := stdlib.Strlen(v)
			return n.WithMarks(marks), err
		}
		return v.Length().WithMarks(marks), nil
	},
})

var (
	startsWithFunc = affixFunc("Reports whether a string starts with a prefix.", "prefix", strings.HasPrefix)
	endsWithFunc   = affixFunc("Reports whether a string ends with a suffix.", "suffix", strings.HasSuffix)
)

// affixFunc is startswith or endswith: whether str has the affix, as has
// tells.
func affixFunc(description, affix string, has func(s, affix string) bool) function.Function {
	return function.New(&function.Spec{
		Description: description,
		Params:      []function.Parameter{{Name: "str", Type: cty.String}, {Name: affix, Type: cty.String}},
		Type:        function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(has(args[0].AsString(), args[1].AsString())), nil
		},
	})
}

// envFunc returns env(NAME): the value of an environment variable, marked
// sensitive because env is how credentials are referenced. An unset
// variable yields "" and is recorded in Config.MissingEnv rather than
// failing, so validate and fmt work without credentials; plan and apply,
// which need them, refuse a configuration with missing ones.
func (e *functionEnv) envFunc() function.Function {
	return function.New(&function.Spec{
		Description: "Reads an environment variable; the result is sensitive.",
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			if name == "" {
				return cty.UnknownVal(cty.String), function.NewArgErrorf(0, "the environment variable name is empty")
			}
			v := ""
			if e.getenv != nil {
				v = e.getenv(name)
			}
			e.envRefs[name] = v != ""
			e.secrets.addSecret(v)
			return cty.StringVal(v).Mark(sensitiveMark), nil
		},
	})
}

// dataName is the name a file read by file() or templatefile() is known
// by in Config.DataFiles and in a configuration snapshot: the path as
// written, cleaned and slash-separated, relative to the configuration
// directory ("./inventory.csv" and "inventory.csv" are one file; a path
// leaving the directory keeps its "../", an absolute path stays absolute).
func dataName(p string) string {
	if filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	return path.Clean(filepath.ToSlash(p))
}

// readFile returns the bytes of the file p names (relative to the
// configuration directory) and records them in Config.DataFiles, so the
// planner can snapshot exactly what the configuration was evaluated
// with. A file read twice is read once: the second call gets the
// recorded bytes. With LoadOptions.FS the file is looked up there only.
//
// sensitive says the path itself is derived from a sensitive value: such
// a file is read but never recorded (its name is a secret, and so is
// what it holds), and Config.SensitiveDataReads counts it; a snapshot
// cannot hold it, so with LoadOptions.FS it is an error.
func (e *functionEnv) readFile(p string, sensitive bool) (string, error) {
	name := dataName(p)
	if !sensitive {
		if b, ok := e.dataFiles[name]; ok {
			return string(b), nil
		}
	}
	var b []byte
	if fsys := e.fsys; fsys != nil {
		if sensitive {
			return "", errors.New("the path is derived from a sensitive value, so the file is not in " + e.fsName())
		}
		full := name
		if !filepath.IsAbs(p) {
			full = path.Join(e.baseDir, name)
		}
		var err error
		b, err = fs.ReadFile(fsys, full)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
				return "", fmt.Errorf("%s is not in %s", name, e.fsName())
			}
			return "", fmt.Errorf("reading %s from %s: %w", name, e.fsName(), err)
		}
	} else {
		full := p
		if !filepath.IsAbs(p) {
			full = filepath.Join(e.baseDir, p)
		}
		var err error
		b, err = readRegular(full)
		if err != nil {
			if os.IsNotExist(err) {
				return "", fmt.Errorf("no file exists at %q (paths are relative to the configuration directory %q)", full, e.baseDir)
			}
			return "", fmt.Errorf("reading %q (paths are relative to the configuration directory %q): %w", full, e.baseDir, err)
		}
	}
	if sensitive {
		*e.sensitiveReads++
		return string(b), nil
	}
	e.dataFiles[name] = b
	return string(b), nil
}

// fsName says what LoadOptions.FS is, in errors.
func (e *functionEnv) fsName() string {
	if n := e.fsLabel; n != "" {
		return n
	}
	return "the configuration snapshot"
}

func (e *functionEnv) fileFunc() function.Function {
	return function.New(&function.Spec{
		Description: "Reads a file relative to the configuration directory.",
		// AllowMarked: a sensitive path is read but not recorded (readFile).
		Params: []function.Parameter{{Name: "path", Type: cty.String, AllowMarked: true}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			pathVal, marks := args[0].Unmark()
			text, err := e.readFile(pathVal.AsString(), len(marks) > 0)
			if err != nil {
				return cty.UnknownVal(cty.String).WithMarks(marks), function.NewArgError(0, err)
			}
			if len(marks) > 0 {
				return cty.StringVal(text).WithMarks(marks), nil
			}
			if _, seen := e.fileTexts[text]; !seen {
				e.fileTexts[text] = pathVal.AsString()
			}
			return cty.StringVal(text), nil
		},
	})
}

func (e *functionEnv) templateFileFunc(fns map[string]function.Function) function.Function {
	return function.New(&function.Spec{
		Description: "Renders a template file relative to the configuration directory.",
		Params: []function.Parameter{
			// AllowMarked: a sensitive path is read but not recorded (readFile).
			{Name: "path", Type: cty.String, AllowMarked: true},
			{Name: "vars", Type: cty.DynamicPseudoType, AllowMarked: true},
		},
		Type: function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			pathVal, pathMarks := args[0].Unmark()
			name := pathVal.AsString()
			text, err := e.readFile(name, len(pathMarks) > 0)
			if err != nil {
				return cty.UnknownVal(cty.String).WithMarks(pathMarks), function.NewArgError(0, err)
			}
			if err := checkTemplate(e.templateName(name), text); err != nil {
				return cty.UnknownVal(cty.String), function.NewArgError(0, err)
			}
			expr, diags := hclsyntax.ParseTemplate([]byte(text), e.templateName(name), hcl.InitialPos)
			if diags.HasErrors() {
				return cty.UnknownVal(cty.String), function.NewArgErrorf(0, "template %s: %s", name, diags.Error())
			}
			vars, marks := args[1].Unmark()
			if !vars.Type().IsObjectType() && !vars.Type().IsMapType() {
				return cty.UnknownVal(cty.String), function.NewArgErrorf(1, "vars must be an object or a map")
			}
			ctx := &hcl.EvalContext{Variables: map[string]cty.Value{}, Functions: map[string]function.Function{}}
			if !vars.IsNull() {
				for k, v := range vars.AsValueMap() {
					ctx.Variables[k] = v.WithMarks(marks)
				}
			}
			for k, f := range fns {
				ctx.Functions[k] = f
			}
			out, diags := expr.Value(ctx)
			if diags.HasErrors() {
				return cty.UnknownVal(cty.String), function.NewArgErrorf(0, "template %s: %s", name, diags.Error())
			}
			out, err = convertString(out)
			if err != nil {
				return cty.UnknownVal(cty.String), function.NewArgErrorf(0, "template %s: %v", name, err)
			}
			return out.WithMarks(pathMarks), nil
		},
	})
}

// templateName is the file name template diagnostics use.
func (e *functionEnv) templateName(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if e.fsys != nil {
		return path.Join(e.baseDir, dataName(p))
	}
	return filepath.Join(e.baseDir, p)
}

func convertString(v cty.Value) (cty.Value, error) {
	if !v.Type().Equals(cty.String) {
		return cty.NilVal, fmt.Errorf("result is %s, not a string", v.Type().FriendlyName())
	}
	return v, nil
}
