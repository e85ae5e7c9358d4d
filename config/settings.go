package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// Backend types of the rackform { backend "TYPE" { … } } settings block.
const (
	BackendLocal    = "local"
	BackendPostgres = "postgres"
)

// EnvPGConnStr holds the PostgreSQL connection string of the postgres
// backend. It may hold a password, so it is read from the environment
// only: never from the configuration, never written to a plan.
const EnvPGConnStr = "RACKFORM_PG_CONN_STR"

// Backend is the state backend the configuration selects with
//
//	rackform {
//	  backend "postgres" {
//	    lease_duration = "30s"
//	  }
//	}
//
// Like Terraform's backend block, it is settings, not configuration
// values: literals only (no variables, no functions), since the commands
// that continue a run read it from the plan's snapshot without inputs.
// Without the block the backend is the local state directory.
type Backend struct {
	// Type is BackendLocal or BackendPostgres.
	Type string
	// LeaseDuration (postgres): how long the state lock lasts without a
	// heartbeat; 0: the backend's default.
	LeaseDuration time.Duration
	// Range is the backend block's header, for messages.
	Range hcl.Range
}

var settingsSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "backend", LabelNames: []string{"type"}}}}

// backendAttrs are the attributes each backend type takes.
var backendAttrs = map[string][]string{
	BackendLocal:    {},
	BackendPostgres: {"lease_duration"},
}

// decodeSettings reads the rackform blocks of a configuration: at most one
// backend in all of them.
func decodeSettings(blocks []*hcl.Block) (*Backend, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var out *Backend
	for _, b := range blocks {
		content, d := b.Body.Content(settingsSchema)
		diags = append(diags, d...)
		for _, bb := range content.Blocks {
			if out != nil {
				diags = append(diags, errorAt(bb.DefRange, "Duplicate backend block", "A configuration has one state backend; the first is at %s.", posString(out.Range)))
				continue
			}
			be, d := decodeBackend(bb)
			diags = append(diags, d...)
			if be != nil {
				out = be
			}
		}
	}
	return out, diags
}

func decodeBackend(b *hcl.Block) (*Backend, hcl.Diagnostics) {
	typ := b.Labels[0]
	names, ok := backendAttrs[typ]
	if !ok {
		known := make([]string, 0, len(backendAttrs))
		for k := range backendAttrs {
			known = append(known, fmt.Sprintf("%q", k))
		}
		sort.Strings(known)
		return nil, hcl.Diagnostics{errorAt(b.LabelRanges[0], "Unknown state backend", "There is no state backend %q. The backends are %s.", typ, strings.Join(known, " and "))}
	}
	be := &Backend{Type: typ, Range: b.DefRange}
	attrs, diags := b.Body.JustAttributes()
	if diags.HasErrors() {
		return be, diags
	}
	allowed := map[string]bool{}
	for _, n := range names {
		allowed[n] = true
	}
	for _, a := range sortedAttrs(attrs) {
		switch {
		case typ == BackendPostgres && (a.Name == "conn_str" || a.Name == "connection_string" || a.Name == "password"):
			diags = append(diags, errorAt(a.NameRange, "Connection string in the configuration", "The postgres backend reads its connection string from the environment variable %s only: it may hold a password, and the configuration is copied into every plan. Remove %s and set %s where rackform runs.", EnvPGConnStr, a.Name, EnvPGConnStr))
			continue
		case !allowed[a.Name]:
			detail := fmt.Sprintf("The %s backend takes no attribute %q.", typ, a.Name)
			if len(names) > 0 {
				detail = fmt.Sprintf("The %s backend takes no attribute %q; it takes: %s.", typ, a.Name, strings.Join(names, ", "))
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported backend attribute", Detail: detail, Subject: a.NameRange.Ptr()})
			continue
		}
		v, d := a.Expr.Value(nil)
		if d.HasErrors() {
			diags = append(diags, errorAt(a.Expr.Range(), "Backend settings are literals", "%s must be a literal value: backend settings are read without variables or functions, so that the commands continuing a run can read them from the plan.", a.Name))
			continue
		}
		switch a.Name {
		case "lease_duration":
			s, ok := literalString(v)
			if !ok {
				diags = append(diags, errorAt(a.Expr.Range(), "Invalid lease_duration", "lease_duration is a duration string, such as \"30s\"."))
				continue
			}
			d, err := parseDuration(s)
			if err == nil && d < 3*time.Second {
				err = fmt.Errorf("%q is too short: the lease is renewed every third of it, so it must be at least 3s", s)
			}
			if err != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid lease_duration", Detail: err.Error(), Subject: a.Expr.Range().Ptr()})
				continue
			}
			be.LeaseDuration = d
		}
	}
	return be, diags
}

// ParseBackend reads the backend settings from configuration files given
// by name and contents (a plan's snapshot): nil when none selects one.
// Only the rackform blocks are looked at.
func ParseBackend(files map[string][]byte) (*Backend, hcl.Diagnostics) {
	names := make([]string, 0, len(files))
	for n := range files {
		if strings.HasSuffix(n, FileSuffix) || strings.HasSuffix(n, ".rf.json") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	p := hclparse.NewParser()
	var blocks []*hcl.Block
	var diags hcl.Diagnostics
	for _, n := range names {
		var f *hcl.File
		var d hcl.Diagnostics
		if filepath.Ext(n) == ".json" {
			f, d = p.ParseJSON(files[n], n)
		} else {
			f, d = p.ParseHCL(files[n], n)
		}
		diags = append(diags, d...)
		if f == nil {
			continue
		}
		content, _, d := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "rackform"}}})
		diags = append(diags, d...)
		blocks = append(blocks, content.Blocks...)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return decodeSettings(blocks)
}

func literalString(v cty.Value) (string, bool) {
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}
