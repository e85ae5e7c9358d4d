package planner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

// testNow is the fixed clock of every planner test.
var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// testEnv is the environment configs under test see; the password is
// what the no-secret test greps for.
func testEnv(name string) string {
	switch name {
	case "BMC_PASSWORD":
		return "hunter2-env-secret"
	case "RACKFORM_VAR_ipmi_secret":
		return "s3cret-variable-value"
	}
	return ""
}

// loadDir loads a configuration directory, failing the test on errors.
func loadDir(t testing.TB, dir string) *config.Config {
	t.Helper()
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: testEnv}).Load(dir)
	if diags.HasErrors() {
		t.Fatalf("loading %s: %s", dir, diags.Error())
	}
	return cfg
}

// loadText writes src as main.rf.hcl in a temporary directory and loads it.
func loadText(t testing.TB, src string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadDir(t, dir)
}

// fakes returns fake providers for cfg, state deciding what each server reports.
func fakes(cfg *config.Config, state func(i int, s *config.Server) plannertest.State) (map[string]providers.Provider, map[string]*plannertest.Provider) {
	fs := plannertest.FromConfig(cfg, state)
	out := map[string]providers.Provider{}
	for n, f := range fs {
		out[n] = f
	}
	return out, fs
}

func allBehind(int, *config.Server) plannertest.State { return plannertest.Behind }

// planWith plans cfg with every server behind unless state says otherwise.
func planWith(t testing.TB, cfg *config.Config, state func(int, *config.Server) plannertest.State, mod func(*Options)) (*plan.Plan, hcl.Diagnostics) {
	t.Helper()
	if state == nil {
		state = allBehind
	}
	provs, _ := fakes(cfg, state)
	opts := Options{Providers: provs, Now: testNow, RackformVersion: "0.0.0-test",
		ProviderInfo: []plan.Provider{{Name: "redfish", Version: "0.0.0", Source: "builtin", SHA256: "ab"}}}
	if mod != nil {
		mod(&opts)
	}
	p, diags := Plan(context.Background(), cfg, opts)
	// What plan writes, show and apply accept: its steps make the changes
	// it lists (rule 48).
	if p != nil && !diags.HasErrors() {
		if err := plan.CheckSteps(p); err != nil {
			t.Errorf("show and apply would refuse the plan: %v", err)
		}
	}
	return p, diags
}

// mustPlan is planWith that fails on error diagnostics.
func mustPlan(t testing.TB, cfg *config.Config, state func(int, *config.Server) plannertest.State, mod func(*Options)) *plan.Plan {
	t.Helper()
	p, diags := planWith(t, cfg, state, mod)
	if diags.HasErrors() {
		t.Fatalf("plan: %s", diags.Error())
	}
	return p
}

// scopeServers lists, per scope of the phase of kind, "NAME: server names".
func scopeServers(p *plan.Plan, kind plan.PhaseKind) []string {
	var out []string
	for _, st := range p.Run.Stages {
		for _, g := range st.Groups {
			for _, c := range g.Clusters {
				for _, ph := range c.Phases {
					if ph.Kind != kind {
						continue
					}
					for _, sc := range ph.Scopes {
						var names []string
						for _, a := range sc.Servers {
							names = append(names, a[strings.LastIndex(a, "/")+1:])
						}
						out = append(out, sc.Name+": "+strings.Join(names, " "))
					}
				}
			}
		}
	}
	return out
}

func errorSummaries(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d.Summary)
		}
	}
	return out
}

// writeTemp writes src as main.rf.hcl in a temporary directory.
func writeTemp(t testing.TB, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
