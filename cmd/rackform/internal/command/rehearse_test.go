package command

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/rehearsal"
)

// examplePlan plans an example with every server one release behind.
func examplePlan(t *testing.T, name string) *plan.Plan {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "..", "examples", name)
	getenv := func(k string) string {
		if strings.Contains(k, "PASSWORD") || strings.HasSuffix(k, "bmc_password") {
			return "pw"
		}
		return ""
	}
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: getenv}).Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	fakes := plannertest.FromConfig(cfg, func(int, *config.Server) plannertest.State { return plannertest.Behind })
	provs := map[string]providers.Provider{}
	for n, f := range fakes {
		provs[n] = f
	}
	p, pd := planner.Plan(context.Background(), cfg, planner.Options{Providers: provs, Now: time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC), RackformVersion: "test"})
	if pd.HasErrors() {
		t.Fatal(pd.Error())
	}
	return p
}

// Every scenario in examples/scenarios is valid for the example its name
// starts with, and rehearses: its faults name that example's servers,
// racks and components, and they change the rehearsal.
func TestExampleScenarios(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "scenarios", "*.hcl"))
	if len(files) < 3 {
		t.Fatalf("only %d scenarios in examples/scenarios", len(files))
	}
	plans := map[string]*plan.Plan{}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			example := ""
			for _, ex := range []string{"nexus-lab", "fleet", "pause-rack", "channels"} {
				if strings.HasPrefix(name, ex+"-") {
					example = ex
				}
			}
			if example == "" {
				t.Fatalf("%s does not start with the name of the example it is for", name)
			}
			if _, err := os.Stat(filepath.Join("..", "..", "..", "..", "examples", example)); err != nil {
				t.Fatal(err)
			}
			p := plans[example]
			if p == nil {
				p = examplePlan(t, example)
				plans[example] = p
			}
			start := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)
			sc, diags := rehearsal.LoadScenario(f)
			if sc != nil {
				_, more := sc.Resolve(rehearsal.PlanTargets(p), start)
				diags = append(diags, more...)
			}
			for _, d := range diags {
				t.Errorf("%s: %s: %s", d.Subject, d.Summary, d.Detail)
			}
			if t.Failed() {
				return
			}
			if sc.Description == "" {
				t.Error("no description")
			}
			faults, _ := sc.Resolve(rehearsal.PlanTargets(p), start)
			sha := strings.Repeat("ab", 32)
			plain, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: sha, Start: start})
			if err != nil {
				t.Fatal(err)
			}
			faulty, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: sha, Start: start, Faults: faults, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			if faulty.Schedule.Total == plain.Schedule.Total && faulty.Outcome.String() == plain.Outcome.String() {
				t.Errorf("the scenario changes nothing: %s after %s either way", plain.Outcome.Status, plain.Schedule.Total)
			}
			t.Logf("without faults: %s after %s; with: %s after %s", plain.Outcome.Status, plain.Schedule.Total.Human(), faulty.Outcome, faulty.Schedule.Total.Human())
		})
	}
}

// The scenario docs/rehearsal.md shows is valid for examples/fleet.
func TestRehearsalDocScenario(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "rehearsal.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "```hcl\n")
	if i < 0 {
		t.Fatal("docs/rehearsal.md has no hcl block")
	}
	src := doc[i+len("```hcl\n"):]
	src = src[:strings.Index(src, "```")]
	sc, diags := rehearsal.ParseScenario([]byte(src), "docs/rehearsal.md")
	p := examplePlan(t, "fleet")
	faults, more := sc.Resolve(rehearsal.PlanTargets(p), time.Now())
	for _, d := range append(diags, more...) {
		t.Errorf("%s: %s: %s", d.Subject, d.Summary, d.Detail)
	}
	kinds := map[string]bool{}
	for _, f := range faults.List {
		kinds[f.Kind] = true
	}
	for _, k := range rehearsal.FaultKinds() {
		if !kinds[k] {
			t.Errorf("the documentation's scenario shows no %s fault", k)
		}
	}
}

// The executor's own overhead, on the virtual clock: a fault-free
// rehearsal of each example takes exactly the plan's critical path, which
// is computed from the plan alone by the rules (rehearsal.CriticalPath),
// with gates and pauses answered at once or after 90 minutes.
func TestRehearsalTakesTheCriticalPath(t *testing.T) {
	for _, ex := range []string{"fleet", "nexus-lab", "pause-rack"} {
		p := examplePlan(t, ex)
		for _, after := range []time.Duration{0, 90 * time.Minute} {
			start := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)
			res, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: strings.Repeat("cd", 32), Start: start, ApproveAfter: after})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Schedule
			if res.Outcome.Status != "completed" || s.CriticalPath == 0 || s.Total != s.CriticalPath {
				t.Errorf("%s, gates and pauses after %v: %s after %v (%s), critical path %v", ex, after, res.Outcome.Status, time.Duration(s.Total), s.Total.Human(), time.Duration(s.CriticalPath))
				continue
			}
			t.Logf("%s, gates and pauses after %v: %s = the critical path", ex, after, s.Total.Human())
		}
	}
}
