package config

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strings"

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

// csvDecodeFunc is csvdecode, remembering results whose input is exactly
// what file() read (csvdecode(file("inventory.csv"))).
func (s *loadState) csvDecodeFunc() function.Function {
	inner := stdlib.CSVDecodeFunc
	return function.New(&function.Spec{
		Description: inner.Description(),
		Params:      inner.Params(),
		Type: func(args []cty.Value) (cty.Type, error) {
			return inner.ReturnTypeForValues(withoutBOM(args))
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, err := inner.Call(withoutBOM(args))
			if err == nil && args[0].IsKnown() && !args[0].IsNull() && v.IsWhollyKnown() {
				text := args[0].AsString()
				if path, ok := s.fileTexts[text]; ok {
					s.csvSources = append(s.csvSources, &csvSource{path: path, text: text, rows: v})
				}
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
func (s *loadState) origin(value cty.Value, key, name string) string {
	if k, ok := rowKey(value); ok {
		for _, src := range s.csvSources {
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
func (s *loadState) serverOrigin(sv *Server) string {
	in, ok := s.generated[sv]
	if !ok {
		return ""
	}
	return s.origin(in.value, in.key, sv.Name)
}

// serverRef names a server in messages: "r01-s03", followed by where a
// generated server came from: "r01-s03" (from inventory.csv line 4).
func (s *loadState) serverRef(sv *Server) string {
	if o := s.serverOrigin(sv); o != "" {
		return fmt.Sprintf("%q (from %s)", sv.Name, o)
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
