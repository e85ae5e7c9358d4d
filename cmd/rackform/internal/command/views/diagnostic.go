// Package views renders what commands produce, for people and for machines,
// from one data model each, so the text and the JSON forms cannot disagree.
package views

import (
	"bufio"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcled"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// Severities as they appear in JSON, the same words Terraform uses.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityUnknown = "unknown"
)

// Diagnostic is one hcl.Diagnostic resolved against the source it points
// at. Its JSON form is the diagnostic object of Terraform's machine-readable
// output, so tools that read `terraform validate -json` read ours.
type Diagnostic struct {
	Severity string   `json:"severity"`
	Summary  string   `json:"summary"`
	Detail   string   `json:"detail"`
	Range    *Range   `json:"range,omitempty"`
	Snippet  *Snippet `json:"snippet,omitempty"`

	// sourceHidden is true when the snippet was left out because the
	// source holds a secret, so the text view can say so.
	sourceHidden bool
}

// Pos is a position in a source file.
type Pos struct {
	// Line is one-based.
	Line int `json:"line"`
	// Column is one-based, counted in Unicode characters.
	Column int `json:"column"`
	// Byte is a zero-based offset into the file.
	Byte int `json:"byte"`
}

// Range is the highlighted part of a file: Start inclusive, End exclusive.
type Range struct {
	Filename string `json:"filename"`
	Start    Pos    `json:"start"`
	End      Pos    `json:"end"`
}

// Snippet is the source around a diagnostic: whole lines, with the
// highlighted range given as byte offsets into Code.
type Snippet struct {
	// Context names the enclosing block, e.g. `server "r01-c01"`; nil when
	// the diagnostic is at the top level of a file.
	Context *string `json:"context"`
	// Code is the source lines that the range (and its context range, if the
	// diagnostic has one) covers, without the final newline.
	Code string `json:"code"`
	// StartLine is the line number of Code's first line.
	StartLine            int `json:"start_line"`
	HighlightStartOffset int `json:"highlight_start_offset"`
	HighlightEndOffset   int `json:"highlight_end_offset"`
	// Values describes the variables of the failing expression as they
	// were when it was evaluated. Always a list, never null, so consumers
	// need not special-case it.
	Values []ExpressionValue `json:"values"`
}

// ExpressionValue is a statement about one reference in an expression,
// e.g. Traversal "var.role" with Statement `is "computer"`.
type ExpressionValue struct {
	Traversal string `json:"traversal"`
	Statement string `json:"statement"`
}

// NewDiagnostics resolves every diagnostic in diags against files (the
// parsed files by filename, as config.Loader.Files returns them).
func NewDiagnostics(diags hcl.Diagnostics, files map[string]*hcl.File) []*Diagnostic {
	shown := diags[:min(len(diags), MaxDiagnostics)]
	out := make([]*Diagnostic, 0, len(shown)+1)
	for _, d := range shown {
		out = append(out, NewDiagnostic(d, files))
	}
	if rest := diags[len(shown):]; len(rest) > 0 {
		sev := SeverityWarning
		if rest.HasErrors() {
			sev = SeverityError
		}
		out = append(out, &Diagnostic{Severity: sev, Summary: "More problems not shown",
			Detail: fmt.Sprintf("%d more problems are not shown; fix the ones above and run again.", len(rest))})
	}
	return out
}

// MaxDiagnostics bounds the diagnostics NewDiagnostics renders; the rest
// are counted in one more. The first ones are enough to fix a file, and
// each is rendered with a scan of its file: 300,000 mistakes in a 600 KB
// configuration took minutes and gigabytes, to print gigabytes.
const MaxDiagnostics = 100

// NewDiagnostic resolves d against files. A diagnostic whose file is not in
// files keeps its range but has no snippet.
func NewDiagnostic(d *hcl.Diagnostic, files map[string]*hcl.File) *Diagnostic {
	out := &Diagnostic{Severity: severity(d.Severity), Summary: d.Summary, Detail: d.Detail}
	if d.Subject == nil {
		return out
	}
	highlight := *d.Subject
	// Some diagnostics carry only a start position.
	if highlight.End == (hcl.Pos{}) {
		highlight.End = highlight.Start
	}
	snip := highlight
	if d.Context != nil {
		snip = hcl.RangeOver(*d.Context, highlight)
	}
	// An empty range would highlight nothing and snippet no line; widen
	// it to the character at its start, as Terraform does.
	for _, r := range []*hcl.Range{&snip, &highlight} {
		if r.Empty() {
			r.End.Byte++
			r.End.Column++
		}
	}
	out.Range = &Range{
		Filename: highlight.Filename,
		Start:    Pos{Line: highlight.Start.Line, Column: highlight.Start.Column, Byte: highlight.Start.Byte},
		End:      Pos{Line: highlight.End.Line, Column: highlight.End.Column, Byte: highlight.End.Byte},
	}

	if isSensitiveSource(d) {
		out.sourceHidden = true
		return out
	}
	file := files[highlight.Filename]
	if file == nil || file.Bytes == nil {
		return out
	}
	src := file.Bytes
	s := &Snippet{StartLine: snip.Start.Line, Values: []ExpressionValue{}}

	if ctx := contextString(file, highlight.Start.Byte); ctx != "" {
		s.Context = &ctx
	}

	var code strings.Builder
	codeStart := -1
	var last hcl.Range
	sc := hcl.NewRangeScanner(src, highlight.Filename, bufio.ScanLines)
	for sc.Scan() {
		line := sc.Range()
		last = line
		if !line.Overlaps(snip) {
			continue
		}
		if codeStart < 0 {
			codeStart = line.Start.Byte
			s.StartLine = line.Start.Line
		}
		code.Write(line.SliceBytes(src))
		code.WriteByte('\n')
	}
	if codeStart < 0 {
		if len(src) == 0 {
			return out // an empty file: nothing to show but the position
		}
		// "found the end of the file": the range is past the last line, so
		// show that line, where the reader has to add what is missing.
		codeStart, s.StartLine = last.Start.Byte, last.Start.Line
		code.Write(last.SliceBytes(src))
	}
	s.Code = strings.TrimSuffix(code.String(), "\n")
	// Ranges that start or end on a newline can fall just outside Code;
	// clamp so consumers never index out of bounds.
	start := clamp(highlight.Start.Byte-codeStart, 0, len(s.Code))
	end := clamp(start+highlight.End.Byte-highlight.Start.Byte, start, len(s.Code))
	s.HighlightStartOffset, s.HighlightEndOffset = start, end
	s.Values = expressionValues(d)
	out.Snippet = s
	return out
}

// contextString names the block a diagnostic is in, e.g. `server "r01-c01"`.
// hcled's version names only top-level blocks, which for rackform is the
// cluster of ten thousand servers; this one names the innermost block that
// has labels (a `threshold` block reads better as its labelled strategy).
// It looks one byte before offset, so a subject that is a block header is
// reported in the block around it (a duplicate server "in rack ..."), as
// Terraform does.
func contextString(file *hcl.File, offset int) string {
	offset--
	if offset < 0 {
		return ""
	}
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		return hcled.ContextString(file, offset) // JSON syntax
	}
	var found *hclsyntax.Block
	for body != nil {
		var inner *hclsyntax.Block
		for _, b := range body.Blocks {
			if b.Range().ContainsOffset(offset) {
				inner = b
				break
			}
		}
		if inner == nil {
			break
		}
		if found == nil || len(inner.Labels) > 0 {
			found = inner
		}
		body = inner.Body
	}
	if found == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(found.Type)
	for _, l := range found.Labels {
		fmt.Fprintf(&b, " %q", l)
	}
	return b.String()
}

// SensitiveSource is implemented by the Extra of a diagnostic whose source
// range itself holds a secret, such as a var-file line that sets a
// sensitive variable. Such a diagnostic keeps its range but gets no
// snippet, so the secret is not copied from the file into a CI log. The
// loader (package config) implements it; hcl.DiagnosticExtra finds it
// through wrapping extras.
type SensitiveSource interface {
	DiagnosticSourceIsSensitive() bool
}

func isSensitiveSource(d *hcl.Diagnostic) bool {
	s, ok := hcl.DiagnosticExtra[SensitiveSource](d)
	return ok && s.DiagnosticSourceIsSensitive()
}

func severity(s hcl.DiagnosticSeverity) string {
	switch s {
	case hcl.DiagError:
		return SeverityError
	case hcl.DiagWarning:
		return SeverityWarning
	default:
		return SeverityUnknown
	}
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }

// expressionValues describes the variables an expression referred to when
// it failed, which tells the reader which of many for_each instances broke.
// Values carrying any cty mark are left out: config marks sensitive values,
// and a diagnostic must never print a secret.
func expressionValues(d *hcl.Diagnostic) []ExpressionValue {
	values := []ExpressionValue{}
	if d.Expression == nil || d.EvalContext == nil {
		return values
	}
	seen := map[string]bool{}
	for _, t := range d.Expression.Variables() {
		// The longest prefix that evaluates is the most specific thing we
		// can say: for var.servers[9] on a list of 3, say what var.servers is.
		// A bare root (var, local, each) says nothing useful, so stop at two steps.
		for ; len(t) > 1; t = t[:len(t)-1] {
			v, diags := t.TraverseAbs(d.EvalContext)
			if diags.HasErrors() {
				continue
			}
			name := traversalString(t)
			if seen[name] || v.ContainsMarked() || !v.IsWhollyKnown() {
				break
			}
			seen[name] = true
			values = append(values, ExpressionValue{Traversal: name, Statement: "is " + compactValue(v)})
			break
		}
	}
	sort.Slice(values, func(i, j int) bool { return values[i].Traversal < values[j].Traversal })
	return values
}

// traversalString renders t as it would be written in a configuration.
func traversalString(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			b.WriteString("[" + string(hclwrite.TokensForValue(s.Key).Bytes()) + "]")
		default:
			b.WriteString("[…]")
		}
	}
	return b.String()
}

// compactValue is a one-line description of v: the value itself for
// primitives, the type and size for collections, which could be huge.
func compactValue(v cty.Value) string {
	ty := v.Type()
	switch {
	case v.IsNull():
		return "null"
	case ty.IsPrimitiveType():
		return string(hclwrite.TokensForValue(v).Bytes())
	case ty.IsListType() || ty.IsSetType() || ty.IsMapType():
		return fmt.Sprintf("%s with %s", ty.FriendlyName(), Plural(v.LengthInt(), "element"))
	case ty.IsTupleType():
		return fmt.Sprintf("tuple with %s", Plural(v.LengthInt(), "element"))
	case ty.IsObjectType():
		return fmt.Sprintf("object with %s", Plural(len(ty.AttributeTypes()), "attribute"))
	default:
		return ty.FriendlyName()
	}
}

// Plural is "1 server", "2 servers": n and one, or the plural, which is
// one with an "s" unless given ("1 server is", "2 servers are").
func Plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}
