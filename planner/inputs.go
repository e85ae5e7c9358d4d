package planner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

// snapshot records every configuration file's text, named relative to the
// configuration directory so the plan does not depend on where it was made,
// and every file the configuration read with a function (file,
// templatefile), byte for byte: apply evaluates the configuration from
// these alone. Data files are configuration, reviewed like the HCL; files
// read through a sensitive path are never recorded (run refuses them).
func snapshot(cfg *config.Config) plan.Snapshot {
	out := plan.Snapshot{Dir: cfg.Path}
	for _, f := range cfg.Files {
		name := f.Name
		if rel, err := filepath.Rel(cfg.Dir, f.Name); err == nil {
			name = filepath.ToSlash(rel)
		}
		sum := sha256.Sum256(f.Bytes)
		out.Files = append(out.Files, plan.File{Name: name, SHA256: hex.EncodeToString(sum[:]), Content: string(f.Bytes)})
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Name < out.Files[j].Name })
	for _, f := range cfg.DataFiles {
		out.DataFiles = append(out.DataFiles, plan.NewFile(f.Name, f.Bytes))
	}
	sort.Slice(out.DataFiles, func(i, j int) bool { return out.DataFiles[i].Name < out.DataFiles[j].Name })
	return out
}

// inputs records the non-sensitive variable values, the names of the
// sensitive ones and the environment variables env() reads. Values of
// sensitive variables and of env() are never looked at here.
func inputs(cfg *config.Config) plan.Inputs {
	var out plan.Inputs
	for name, v := range cfg.InputValues() {
		b, err := ctyjson.Marshal(v, v.Type())
		if err != nil {
			continue // unknown values cannot occur after a successful load
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var val any
		if dec.Decode(&val) != nil {
			continue
		}
		if out.Variables == nil {
			out.Variables = map[string]any{}
		}
		out.Variables[name] = val
	}
	out.Sensitive = cfg.SensitiveVariables()
	out.Env = append([]string(nil), cfg.EnvReferences...)
	return out
}

// summarize counts the headline numbers: servers to upgrade, skipped, the
// racks they sit in and the run's estimate.
func summarize(p *plan.Plan) plan.Summary {
	var s plan.Summary
	racks := map[string]bool{}
	for _, srv := range p.Servers {
		switch srv.Action {
		case plan.ActionUpgrade:
			s.Upgrade++
			racks[srv.Cluster+"/"+srv.Rack] = true
		default:
			s.Skip++
		}
		cause, unseen := srv.NotObservedCause()
		switch {
		case unseen:
			s.Count(cause)
		case srv.Reason == plan.ReasonHeldBack:
			s.HeldBack++
		}
		for _, st := range srv.Steps {
			if st.Shared && st.Kind == plan.StepUpdate {
				s.SharedUpdates++
			}
		}
	}
	s.Racks = len(racks)
	for _, st := range p.Run.Stages {
		s.Estimate += st.Estimate
	}
	return s
}

// minSecretLen is the shortest sensitive value the leak check looks for:
// shorter ones ("", "x") would match by accident and reveal nothing.
const minSecretLen = 4

// secrets returns the sensitive values of cfg by where they come from:
// sensitive variables, sensitive provider attributes, server passwords.
func secrets(cfg *config.Config) map[string]string {
	out := map[string]string{}
	var walk func(from string, v cty.Value)
	walk = func(from string, v cty.Value) {
		v, _ = v.UnmarkDeep()
		switch {
		case v == cty.NilVal || v.IsNull() || !v.IsKnown():
		case v.Type() == cty.String:
			if s := v.AsString(); len(s) >= minSecretLen {
				out[s] = from
			}
		case v.CanIterateElements():
			for it := v.ElementIterator(); it.Next(); {
				_, e := it.Element()
				walk(from, e)
			}
		}
	}
	for _, v := range cfg.Variables {
		if v.Sensitive {
			walk("sensitive variable "+v.Name, v.Value)
		}
	}
	for _, p := range cfg.Providers {
		for _, a := range p.SensitiveAttrs {
			if p.Attrs.Type().IsObjectType() && p.Attrs.Type().HasAttribute(a) {
				walk(fmt.Sprintf("attribute %s of provider %q", a, p.Name), p.Attrs.GetAttr(a))
			}
		}
	}
	for _, s := range cfg.Servers() {
		if s.Credentials != nil && len(s.Credentials.Password.Reveal()) >= minSecretLen {
			out[s.Credentials.Password.Reveal()] = "the password of server " + s.Name
		}
	}
	return out
}

// checkSnapshot refuses a plan whose configuration snapshot would contain
// a secret: the plan file is archived and reviewed, and must never hold
// one. A secret is a value marked sensitive (a sensitive variable, a
// sensitive provider attribute) or read with env(); what is looked for is
// where such a value was written into the configuration's text:
//
//   - where a sensitive value is defined in the text (the default of a
//     sensitive variable): always a leak;
//   - anywhere but as a whole value of its own: in a comment, inside a
//     longer string ("pw=…"), in a heredoc, in a data file's prose: copied
//     there, a leak;
//   - as a whole string literal or identifier of the HCL, or a whole field
//     of a data file (a CSV cell, a quoted JSON string): a value the
//     configuration uses that happens to equal the secret (the user name
//     "admin" when the password is "admin" too), not a leak, since the
//     configuration holds it as its own value, not as the secret.
//
// The message names where the value comes from and the file and line,
// never the value.
func (p *planning) checkSnapshot(snap plan.Snapshot) {
	sec := secrets(p.cfg)
	if len(sec) == 0 {
		return
	}
	values := make([]string, 0, len(sec))
	for v := range sec {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool { return sec[values[i]] < sec[values[j]] })
	report := func(value, name string, line int) {
		p.report.errorf(nil, "Secret in the configuration text",
			"The value of %s appears in %s line %d. The plan records every configuration file's text, so it would contain the secret: set the value with -var, a -var-file outside the configuration, or RACKFORM_VAR_ (and env() for credentials) instead of writing it in the configuration.",
			sec[value], name, line)
	}
	for _, f := range p.cfg.Files {
		name := f.Name
		if rel, err := filepath.Rel(p.cfg.Dir, f.Name); err == nil {
			name = filepath.ToSlash(rel)
		}
		whole := hclValues(f.Name, f.Bytes)
		defined := definedSecrets(p.cfg.SensitiveSources, f.Name)
		for _, value := range values {
			if line := leakLine(f.Bytes, value, func(start, end int) bool {
				return whole[[2]int{start, end}] && !within(defined, start, end)
			}); line > 0 {
				report(value, name, line)
			}
		}
	}
	for _, f := range snap.DataFiles {
		b, err := f.Bytes()
		if err != nil {
			b = []byte(f.Content)
		}
		for _, value := range values {
			if line := leakLine(b, value, func(start, end int) bool { return wholeField(b, start, end) }); line > 0 {
				report(value, f.Name, line)
			}
		}
	}
}

// leakLine returns the 1-based line of the first occurrence of value in b
// that ok does not accept as a value of its own, or 0 when there is none.
func leakLine(b []byte, value string, ok func(start, end int) bool) int {
	v := []byte(value)
	for from := 0; ; {
		i := bytes.Index(b[from:], v)
		if i < 0 {
			return 0
		}
		start := from + i
		if !ok(start, start+len(v)) {
			return bytes.Count(b[:start], []byte("\n")) + 1
		}
		from = start + 1
	}
}

// hclValues returns the byte spans of the whole values written in an HCL
// file: identifiers, and string literals that are a complete quoted
// string ("admin", not the parts of "pw=${x}").
func hclValues(filename string, src []byte) map[[2]int]bool {
	toks, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	out := map[[2]int]bool{}
	for i, t := range toks {
		span := [2]int{t.Range.Start.Byte, t.Range.End.Byte}
		switch {
		case t.Type == hclsyntax.TokenIdent:
			out[span] = true
		case t.Type == hclsyntax.TokenQuotedLit && i > 0 && i+1 < len(toks) &&
			toks[i-1].Type == hclsyntax.TokenOQuote && toks[i+1].Type == hclsyntax.TokenCQuote:
			out[span] = true
		}
	}
	return out
}

// definedSecrets are the byte spans of file filename where a sensitive
// value is defined.
func definedSecrets(ranges []hcl.Range, filename string) [][2]int {
	var out [][2]int
	for _, r := range ranges {
		if r.Filename == filename {
			out = append(out, [2]int{r.Start.Byte, r.End.Byte})
		}
	}
	return out
}

func within(spans [][2]int, start, end int) bool {
	for _, s := range spans {
		if start >= s[0] && end <= s[1] {
			return true
		}
	}
	return false
}

// wholeField reports whether b[start:end] is a whole field of a data
// file: a CSV cell, a line, a quoted string. Spaces, ':' and '=' do not
// delimit, so "password: …" in a note is not a field of its own.
func wholeField(b []byte, start, end int) bool {
	const delims = "\n\r,;\t\"'"
	before := start == 0 || strings.IndexByte(delims, b[start-1]) >= 0
	after := end == len(b) || strings.IndexByte(delims, b[end]) >= 0
	return before && after
}
