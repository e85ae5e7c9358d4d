package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/rehearsal"
)

// TestRehearseBench is the rehearsal benchmark, through the real CLI:
// rackform rehearse of examples/fleet and examples/nexus-lab, each planned
// against rackform sim -config (goal: under 5 s each), and of a generated
// 10,000-server plan (10 clusters of 25 racks of 40, a canary stage and
// three parallel groups; planned in-process from fake observations, as
// planning is not what is measured; goal: under 60 s). It prints each
// rehearsal's wall time, the rehearsed total and the executor's overhead
// (the fault-free total over the plan's critical path). It runs only with
// RACKFORM_BENCH_REHEARSE=1 (make bench-rehearse); RACKFORM_BENCH_N sets
// the generated plan's size (a multiple of 1,000).
func TestRehearseBench(t *testing.T) {
	if os.Getenv("RACKFORM_BENCH_REHEARSE") == "" {
		t.Skip("rehearsal benchmark: set RACKFORM_BENCH_REHEARSE=1 (make bench-rehearse)")
	}
	e := newE2EEnv(t)
	e.env = append(e.env, "RACKFORM_BMC_PASSWORD="+e2ePassword, "RACKFORM_VAR_bmc_password="+e2ePassword)
	type result struct {
		name    string
		servers int
		wall    time.Duration
		out     string
	}
	var results []result
	rehearse := func(name, planFile string, servers int, goal time.Duration) {
		start := time.Now()
		code, out := e.run(t, "rehearse", "-no-color", "-start", "2026-11-27T16:00:00Z", planFile)
		wall := time.Since(start)
		if code != 0 {
			t.Fatalf("rehearse %s: exit %d\n%s", name, code, lastLines(out, 30))
		}
		// The overhead, exactly: the same rehearsal in-process.
		p := readPlan(t, filepath.Join(e.work, planFile))
		res, err := rehearsal.Run(context.Background(), rehearsal.Options{Plan: p, PlanSHA256: "bench", Start: time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Schedule
		out += fmt.Sprintf("\nOverhead: total %v / critical path %v = %.6f×\n", time.Duration(s.Total), time.Duration(s.CriticalPath), float64(s.Total)/float64(s.CriticalPath))
		results = append(results, result{name, servers, wall, out})
		if wall > goal {
			t.Errorf("%s: %s rehearsed in %v, over the goal of %v", name, planFile, wall, goal)
		}
	}
	for _, ex := range []string{"fleet", "nexus-lab"} {
		t.Run(ex, func(t *testing.T) {
			if err := copyDir(filepath.Join(examplesDir, ex), filepath.Join(e.work, ex)); err != nil {
				t.Fatal(err)
			}
			startSimConfig(t, e, ex)
			if code, out := e.run(t, "plan", "-no-color", "-out", ex+".plan", ex); code != 0 {
				t.Fatalf("plan %s: exit %d\n%s", ex, code, out)
			}
			p := readPlan(t, filepath.Join(e.work, ex+".plan"))
			rehearse(ex, ex+".plan", len(p.Servers), 5*time.Second)
		})
	}
	n := envInt(t, "RACKFORM_BENCH_N", 10000)
	t.Run(fmt.Sprintf("generated-%d", n), func(t *testing.T) {
		began := time.Now()
		p := generatedPlan(t, filepath.Join(e.work, "big"), n/1000)
		b, err := plan.Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.work, "big.plan"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("planned %d servers in-process in %v (not measured)", len(p.Servers), time.Since(began).Round(time.Millisecond))
		rehearse("generated", "big.plan", len(p.Servers), 60*time.Second)
	})
	for _, r := range results {
		t.Logf("%-10s %6d servers: rehearsed in %v", r.name, r.servers, r.wall.Round(time.Millisecond))
		for _, l := range strings.Split(r.out, "\n") {
			if strings.HasPrefix(l, "Total:") || strings.HasPrefix(l, "Overhead:") || strings.HasPrefix(l, "Outcome:") {
				t.Logf("    %s", l)
			}
		}
	}
}

func readPlan(t *testing.T, path string) *plan.Plan {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// generatedPlan writes a configuration of k clusters of 25 racks of 40
// servers (nexus-lab's release and strategy) and plans it against fake
// observations, every server one release behind.
func generatedPlan(t *testing.T, dir string, k int) *plan.Plan {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"release.rf.hcl", "strategy.rf.hcl", "variables.rf.hcl"} {
		b, err := os.ReadFile(filepath.Join(examplesDir, "nexus-lab", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var hcl strings.Builder
	hcl.WriteString(`provider "redfish" {
  username = "admin"
  password = env("RACKFORM_BMC_PASSWORD")
}
`)
	// One inventory file per cluster, each read by its cluster only.
	for c := 1; c <= k; c++ {
		cluster := fmt.Sprintf("c%02d", c)
		var csv strings.Builder
		csv.WriteString("name,rack,bmc,role,node_name\n")
		for r := 1; r <= 25; r++ {
			for s := 1; s <= 40; s++ {
				role := "compute"
				switch {
				case r <= 3 && s == 1:
					role = "control_plane"
				case r == 4 && s == 1:
					role = "control_plane_spare"
				case r <= 2 && s == 2:
					role = "management"
				}
				name := fmt.Sprintf("%s-r%02d-s%02d", cluster, r, s)
				fmt.Fprintf(&csv, "%s,r%02d,https://127.%d.%d.%d:8443,%s,%s\n", name, r, 10+c, r, s, role, name)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "inventory-"+cluster+".csv"), []byte(csv.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&hcl, `
locals {
  %[1]s = csvdecode(file("inventory-%[1]s.csv"))
}

cluster %[1]q {
  strategy = strategy.nexus
  release  = release.r4_6_1
  rack "inventory" {
    for_each = toset(distinct([for s in local.%[1]s : s.rack]))
    server "inventory" {
      for_each  = [for s in local.%[1]s : s if s.rack == each.key]
      bmc       = each.value.bmc
      role      = each.value.role
      node_name = each.value.node_name
    }
  }
}
`, cluster)
	}
	// A canary stage of the first cluster, then the others in three
	// parallel groups.
	hcl.WriteString("\nrollout \"big\" {\n  stage \"canary\" {\n    group \"canary\" {\n      clusters = [cluster.c01]\n    }\n  }\n  stage \"prod\" {\n")
	groups := make([][]string, 3)
	for c := 2; c <= k; c++ {
		groups[(c-2)%3] = append(groups[(c-2)%3], fmt.Sprintf("cluster.c%02d", c))
	}
	for i, g := range groups {
		if len(g) > 0 {
			fmt.Fprintf(&hcl, "    group \"g%d\" {\n      clusters = [%s]\n    }\n", i+1, strings.Join(g, ", "))
		}
	}
	hcl.WriteString("  }\n}\n")
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(hcl.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "RACKFORM_BMC_PASSWORD" {
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
	for name, f := range fakes {
		provs[name] = f
	}
	p, pd := planner.Plan(context.Background(), cfg, planner.Options{Providers: provs, Now: time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC), RackformVersion: "bench"})
	if pd.HasErrors() {
		t.Fatal(pd.Error())
	}
	return p
}
