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
// a sensitive value, such as a sensitive variable whose value is its
// default written in the configuration: the plan file is archived and
// reviewed, and must never hold a secret. The message names where the
// value comes from, never the value.
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
	files := append([]plan.File(nil), snap.Files...)
	files = append(files, snap.DataFiles...)
	for _, f := range files {
		text := f.Content
		if b, err := f.Bytes(); err == nil {
			text = string(b)
		}
		for _, value := range values {
			from := sec[value]
			if strings.Contains(text, value) {
				p.errorf(nil, "Secret in the configuration text",
					"The value of %s appears in %s. The plan records every configuration file's text, so it would contain the secret: set the value with -var, a -var-file outside the configuration, or RACKFORM_VAR_ (and env() for credentials) instead of writing it in the configuration.",
					from, f.Name)
			}
		}
	}
}
