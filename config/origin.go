package config

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// csvSource is what one csvdecode call over a whole file returned, kept so
// a diagnostic about a server generated from a row can name the file's
// line. The line index is built the first time a diagnostic needs it, so a
// valid configuration pays nothing but the bookkeeping.
type csvSource struct {
	path string // as written in file(PATH)
	text string
	rows cty.Value
	// lines maps a row's key (rowKey) to its line in the file.
	lines map[string]int
}

// origins say where servers came from, for diagnostics: the for_each
// instance each generated server was made from, and what csvdecode made of
// whole files ("inventory.csv line 17"). (Side tables keep the model's
// structs comparable.)
type origins struct {
	generated  map[*Server]instance
	csvSources []*csvSource
}

// csvDecodeFunc is csvdecode, remembering results whose input is exactly
// what file() read (csvdecode(file("inventory.csv"))).
func (e *functionEnv) csvDecodeFunc() function.Function {
	inner := stdlib.CSVDecodeFunc
	return function.New(&function.Spec{
		Description: inner.Description(),
		Params:      inner.Params(),
		Type: func(args []cty.Value) (cty.Type, error) {
			return inner.ReturnTypeForValues(withoutBOM(args))
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, err := inner.Call(withoutBOM(args))
			if !args[0].IsKnown() || args[0].IsNull() || args[0].IsMarked() {
				return v, err
			}
			text := args[0].AsString()
			path, ok := e.fileTexts[text]
			switch {
			case err != nil && ok:
				// Name the file: "CSV parse error on line 2" alone does
				// not say which.
				return v, fmt.Errorf("%s: %w", path, err)
			case err == nil && ok && (plain(v) || v.IsWhollyKnown()):
				e.origins.csvSources = append(e.origins.csvSources, &csvSource{path: path, text: text, rows: v})
			}
			return v, err
		},
	})
}

// rowKey identifies a row of strings by its values in attribute order; ok
// is false for anything that is not an object of known strings.
func rowKey(v cty.Value) (string, bool) {
	if v.IsNull() || !v.IsWhollyKnown() || v.ContainsMarked() || !v.Type().IsObjectType() {
		return "", false
	}
	names := make([]string, 0, len(v.Type().AttributeTypes()))
	for n, ty := range v.Type().AttributeTypes() {
		if ty != cty.String {
			return "", false
		}
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		e := v.GetAttr(n)
		if e.IsNull() {
			b.WriteString("\x01")
		} else {
			b.WriteString(e.AsString())
		}
		b.WriteString("\x00")
	}
	return b.String(), true
}

// index fills src.lines: data row i is CSV record i+1, and the reader
// knows on which line each record starts (quoted fields can span lines).
func (src *csvSource) index() {
	src.lines = map[string]int{}
	r := csv.NewReader(strings.NewReader(src.text))
	if _, err := r.Read(); err != nil { // the header
		return
	}
	rows := src.rows.AsValueSlice()
	for i := 0; i < len(rows); i++ {
		if _, err := r.Read(); err == io.EOF || err != nil {
			return
		}
		line, _ := r.FieldPos(0)
		if key, ok := rowKey(rows[i]); ok {
			if _, dup := src.lines[key]; !dup {
				src.lines[key] = line
			}
		}
	}
}

// origin describes where a for_each instance came from: "inventory.csv
// line 17" when its each.value is a row of csvdecode(file(...)), else
// `for_each key "k"` when the key is not already its name; "" otherwise.
func (o *origins) origin(value cty.Value, key, name string) string {
	if k, ok := rowKey(value); ok {
		for _, src := range o.csvSources {
			if !src.rows.Type().ElementType().Equals(value.Type()) {
				continue
			}
			if src.lines == nil {
				src.index()
			}
			if line, ok := src.lines[k]; ok {
				return fmt.Sprintf("%s line %d", src.path, line)
			}
		}
	}
	if key != "" && key != name {
		return fmt.Sprintf("for_each key %q", key)
	}
	return ""
}

// serverOrigin is origin for a server ("" unless for_each made it).
func (o *origins) serverOrigin(sv *Server) string {
	in, ok := o.generated[sv]
	if !ok {
		return ""
	}
	return o.origin(in.value, in.key, sv.Name)
}

// serverRef names a server in messages: "r01-s03", followed by where a
// generated server came from: "r01-s03" (from inventory.csv line 4).
func (o *origins) serverRef(sv *Server) string {
	if from := o.serverOrigin(sv); from != "" {
		return fmt.Sprintf("%q (from %s)", sv.Name, from)
	}
	return fmt.Sprintf("%q", sv.Name)
}

// withoutBOM drops a UTF-8 byte order mark from the start of csvdecode's
// text: spreadsheet programs write one, and it would otherwise become part
// of the first column's name ("\ufeffname").
func withoutBOM(args []cty.Value) []cty.Value {
	if len(args) != 1 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.String || args[0].IsMarked() {
		return args
	}
	s := args[0].AsString()
	if !strings.HasPrefix(s, "\ufeff") {
		return args
	}
	return []cty.Value{cty.StringVal(strings.TrimPrefix(s, "\ufeff"))}
}

// oncePerPlace drops a diagnostic that repeats an earlier one word for
// word at the same place: a block expanded by for_each reports a mistake
// in its text once per instance.
func oncePerPlace(diags hcl.Diagnostics) hcl.Diagnostics {
	type key struct {
		severity        hcl.DiagnosticSeverity
		summary, detail string
		at              hcl.Range
	}
	seen := map[key]bool{}
	out := make(hcl.Diagnostics, 0, len(diags))
	for _, d := range diags {
		if d.Subject != nil {
			k := key{d.Severity, d.Summary, d.Detail, *d.Subject}
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, d)
	}
	return out
}

// missingColumns turns HCL's "Unsupported attribute" on a row of a CSV file
// (each.value.bmc, where each.value is a row of csvdecode(file(...))) into
// one error that names the column, the file and the columns it has, once
// per reference instead of once per row: a renamed column is one mistake.
func (o *origins) missingColumns(diags hcl.Diagnostics) hcl.Diagnostics {
	if len(o.csvSources) == 0 {
		return diags
	}
	type key struct {
		file, column string
		at           hcl.Range
	}
	seen := map[key]bool{}
	out := make(hcl.Diagnostics, 0, len(diags))
	for _, d := range diags {
		src, column, ok := o.missingColumn(d)
		if !ok {
			out = append(out, d)
			continue
		}
		k := key{src.path, column, *d.Subject}
		if seen[k] {
			continue
		}
		seen[k] = true
		header := src.header()
		detail := fmt.Sprintf("There is no column %q in %s: its columns are %s.", column, src.path, joinAnd(header))
		if near := nearColumn(column, header); near != "" {
			detail += fmt.Sprintf(" Did you mean %q?", near)
		}
		detail += " Rename the column in the file's first line, or the reference here."
		out = append(out, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing CSV column", Detail: detail, Subject: d.Subject, Context: d.Context})
	}
	return out
}

// missingColumn reports whether d is a reference to an attribute a CSV row
// does not have, and which file and column.
func (o *origins) missingColumn(d *hcl.Diagnostic) (*csvSource, string, bool) {
	if d.Summary != "Unsupported attribute" || d.Subject == nil || d.EvalContext == nil {
		return nil, "", false
	}
	expr, ok := d.Expression.(*hclsyntax.ScopeTraversalExpr)
	if !ok {
		return nil, "", false
	}
	tr := expr.Traversal
	for i := 1; i < len(tr); i++ {
		step, ok := tr[i].(hcl.TraverseAttr)
		if !ok || step.SrcRange != *d.Subject {
			continue
		}
		row, diags := tr[:i].TraverseAbs(d.EvalContext)
		if diags.HasErrors() || !row.Type().IsObjectType() {
			return nil, "", false
		}
		if src := o.csvSourceOf(row.Type()); src != nil {
			return src, step.Name, true
		}
		return nil, "", false
	}
	return nil, "", false
}

// csvSourceOf is the CSV file whose rows have type ty, or nil.
func (o *origins) csvSourceOf(ty cty.Type) *csvSource {
	for _, src := range o.csvSources {
		if ty.Equals(src.rows.Type().ElementType()) {
			return src
		}
	}
	return nil
}

// header is the CSV file's column names, in the file's order.
func (src *csvSource) header() []string {
	h, _ := csv.NewReader(strings.NewReader(strings.TrimPrefix(src.text, "\ufeff"))).Read()
	return h
}

// nearColumn is the column the reference probably meant: one within two
// edits, or that starts with it or it starts with ("bmc" for "bmc_url").
func nearColumn(name string, columns []string) string {
	if c := didYouMean(name, columns); c != "" {
		return c
	}
	for _, c := range columns {
		if strings.HasPrefix(c, name) || strings.HasPrefix(name, c) {
			return c
		}
	}
	return ""
}
