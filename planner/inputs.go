package planner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

// snapshot records every configuration file's text, named relative to the
// configuration directory so the plan does not depend on where it was made.
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
	out.Env = envNames(cfg)
	return out
}

// envNames finds the env("NAME") calls with a literal name in the
// configuration's source, so apply can check those variables are set.
func envNames(cfg *config.Config) []string {
	seen := map[string]bool{}
	for _, f := range cfg.Files {
		// Parsing is what costs on large generated inventories; most
		// files never call env.
		if !bytes.Contains(f.Bytes, []byte("env")) {
			continue
		}
		file, diags := hclsyntax.ParseConfig(f.Bytes, f.Name, hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		body, ok := file.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		_ = hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
			call, ok := n.(*hclsyntax.FunctionCallExpr)
			if !ok || call.Name != "env" || len(call.Args) != 1 {
				return nil
			}
			v, d := call.Args[0].Value(nil)
			if d.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
				return nil
			}
			seen[v.AsString()] = true
			return nil
		})
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
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
