package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
)

func computeScopes(p *plan.Plan) []plan.Scope {
	var out []plan.Scope
	for _, st := range p.Run.Stages {
		for _, g := range st.Groups {
			for _, c := range g.Clusters {
				for _, ph := range c.Phases {
					if ph.Kind == plan.PhaseCompute {
						out = append(out, ph.Scopes...)
					}
				}
			}
		}
	}
	return out
}

func rackNames(scopes []plan.Scope) []string {
	var out []string
	for _, s := range scopes {
		out = append(out, s.Name)
	}
	return out
}

func TestRule6AlphanumericRackOrder(t *testing.T) {
	racks := withCP([]string{"rack2", "a:c"}, []string{"rack10", "b:c"}, []string{"rack1", "d:c"}, []string{"rack02", "e:c"})
	cases := []struct {
		name     string
		strategy string
		want     []string
	}{
		{"default is byte-wise", "", []string{"rack02", "rack1", "rack10", "rack2"}},
		{"alphanumeric explicitly", `compute { order = "alphanumeric" }`, []string{"rack02", "rack1", "rack10", "rack2"}},
		{"natural sorts numbers by value", `compute { order = "natural" }`, []string{"rack1", "rack2", "rack02", "rack10"}},
		{"canary first, then alphanumeric", `compute { canary_rack = "rack2" }`, []string{"rack2", "rack02", "rack1", "rack10"}},
		{"canary first, then natural", "compute {\n order = \"natural\"\n canary_rack = \"rack10\"\n}", []string{"rack10", "rack1", "rack2", "rack02"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := loadText(t, fixture{strategy: c.strategy, racks: racks}.String())
			p := mustPlan(t, cfg, nil, nil)
			if diff := cmp.Diff(c.want, rackNames(computeScopes(p))); diff != "" {
				t.Errorf("rack order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRule7MaxUnavailable(t *testing.T) {
	rack := []string{"r1", "a:c", "b:c", "c:c", "d:c", "e:c"}
	cases := []struct {
		name     string
		compute  string
		want     int
		wantErrs []string
	}{
		{"default is all", ``, 5, nil},
		{"percent floors", `max_unavailable = "50%"`, 2, nil},
		{"percent is at least one", `max_unavailable = "10%"`, 1, nil},
		{"count", `max_unavailable = 3`, 3, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := loadText(t, fixture{strategy: "compute {\n" + c.compute + "\n}", racks: withCP(rack)}.String())
			p := mustPlan(t, cfg, nil, nil)
			if got := computeScopes(p)[0].MaxUnavailable; got != c.want {
				t.Errorf("max_unavailable = %d, want %d", got, c.want)
			}
		})
	}
	t.Run("count above the servers left to upgrade is an error", func(t *testing.T) {
		cfg := loadText(t, fixture{strategy: "compute {\nmax_unavailable = 4\n}", racks: withCP(rack)}.String())
		// Two servers already at target leave N = 3 < 4.
		_, diags := planWith(t, cfg, func(_ int, s *config.Server) plannertest.State {
			if s.Name == "a" || s.Name == "b" {
				return plannertest.AtTarget
			}
			return plannertest.Behind
		}, nil)
		if diff := cmp.Diff([]string{"max_unavailable larger than the rack"}, errorSummaries(diags)); diff != "" {
			t.Fatalf("errors (-want +got):\n%s", diff)
		}
		if !strings.Contains(diags[0].Detail, "rack r1 of cluster c") {
			t.Errorf("the error does not name the rack: %s", diags[0].Detail)
		}
	})
}

func TestRule9PercentThresholdRoundsUp(t *testing.T) {
	cases := []struct {
		value, servers, atTarget int
		wantN, wantRequired      int
	}{
		{75, 3, 0, 3, 3}, // 2.25 → 3
		{50, 3, 0, 3, 2}, // 1.5 → 2
		{34, 3, 0, 3, 2}, // 1.02 → 2
		{33, 3, 0, 3, 1}, // 0.99 → 1
		{100, 4, 0, 4, 4},
		{50, 5, 2, 3, 2}, // skipped servers leave N
		{50, 2, 2, 0, 0}, // N = 0: the rack is empty
	}
	for _, c := range cases {
		name := strings.NewReplacer(" ", "").Replace(
			strings.Join([]string{itoa(c.value), "%of", itoa(c.servers), "minus", itoa(c.atTarget)}, "_"))
		t.Run(name, func(t *testing.T) {
			rack := []string{"r1"}
			for i := 0; i < c.servers; i++ {
				rack = append(rack, "s"+itoa(i)+":c")
			}
			strategy := "compute {\nthreshold {\ntype = \"percent\"\nvalue = " + itoa(c.value) + "\n}\n}"
			cfg := loadText(t, fixture{strategy: strategy, racks: withCP(rack)}.String())
			p := mustPlan(t, cfg, func(_ int, s *config.Server) plannertest.State {
				if s.Rack.Name == "r1" && s.Name < "s"+itoa(c.atTarget) {
					return plannertest.AtTarget
				}
				return plannertest.Behind
			}, nil)
			sc := computeScopes(p)[0]
			if sc.Eligible != c.wantN || sc.Required != c.wantRequired {
				t.Errorf("N = %d, required = %d; want %d, %d", sc.Eligible, sc.Required, c.wantN, c.wantRequired)
			}
		})
	}
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return fmtInt(i/10) + string(rune('0'+i%10))
}

func TestRule9CountThresholdAboveEligibleIsAnError(t *testing.T) {
	strategy := "compute {\nthreshold {\ntype = \"count\"\nvalue = 2\n}\n}"
	racks := withCP([]string{"r1", "a:c", "b:c"}, []string{"r2", "c:c", "d:c"})
	cfg := loadText(t, fixture{strategy: strategy, racks: racks}.String())
	// Both racks have 2 compute servers: the config is fine statically,
	// but with one server of r2 at target only one is left to upgrade.
	_, diags := planWith(t, cfg, func(_ int, s *config.Server) plannertest.State {
		if s.Name == "c" {
			return plannertest.AtTarget
		}
		return plannertest.Behind
	}, nil)
	if diff := cmp.Diff([]string{"Threshold cannot be met"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	d := diags[0]
	if !strings.Contains(d.Detail, "rack r2 of cluster c") || d.Subject == nil || !strings.HasSuffix(d.Subject.Filename, "main.rf.hcl") {
		t.Errorf("the error must name rack r2 and point at the threshold: %s (%v)", d.Detail, d.Subject)
	}
	// All at target in r2: N = 0, the rack is empty and nothing is wrong.
	_, diags = planWith(t, cfg, func(_ int, s *config.Server) plannertest.State {
		if s.Name == "c" || s.Name == "d" {
			return plannertest.AtTarget
		}
		return plannertest.Behind
	}, nil)
	if diags.HasErrors() {
		t.Errorf("an empty rack must not fail its threshold: %s", diags.Error())
	}
	p, _ := planWith(t, cfg, func(_ int, s *config.Server) plannertest.State {
		if s.Name == "c" || s.Name == "d" {
			return plannertest.AtTarget
		}
		return plannertest.Behind
	}, nil)
	if sc := computeScopes(p)[1]; sc.Eligible != 0 || sc.Required != 0 || sc.Budget != 0 {
		t.Errorf("empty rack: N %d, required %d, budget %d; want all 0", sc.Eligible, sc.Required, sc.Budget)
	}
}

func TestRule10FailureBudget(t *testing.T) {
	rack := []string{"r1", "a:c", "b:c", "c:c", "d:c"}
	cases := []struct {
		compute string
		want    int
	}{
		{"", 0}, // 100% of 4 → required 4 → budget 0
		{"threshold {\ntype = \"percent\"\nvalue = 50\n}", 2},                           // N − required
		{"threshold {\ntype = \"count\"\nvalue = 1\n}", 3},                              // N − required
		{"failure_budget = \"50%\"\nthreshold {\ntype = \"percent\"\nvalue = 50\n}", 2}, // ⌊50·4/100⌋
		{"failure_budget = \"60%\"", 2},                                                 // ⌊2.4⌋
		{"failure_budget = 1", 1},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.compute, "\n", " "), func(t *testing.T) {
			cfg := loadText(t, fixture{strategy: "compute {\n" + c.compute + "\n}", racks: withCP(rack)}.String())
			p := mustPlan(t, cfg, nil, nil)
			if got := computeScopes(p)[0].Budget; got != c.want {
				t.Errorf("budget = %d, want %d", got, c.want)
			}
		})
	}
}

func TestRule12OnBreachDefaults(t *testing.T) {
	cfg := loadText(t, fixture{racks: withCP([]string{"r1", "m1:m", "a:c"})}.String())
	p := mustPlan(t, cfg, nil, nil)
	st := p.Run.Stages[0]
	if st.OnBreach != "fail" {
		t.Errorf("stage on_breach = %q, want fail", st.OnBreach)
	}
	for _, ph := range st.Groups[0].Clusters[0].Phases {
		for _, sc := range ph.Scopes {
			if sc.OnBreach != "pause" {
				t.Errorf("%s on_breach = %q, want pause", sc.ID, sc.OnBreach)
			}
		}
	}
	cfg = loadText(t, fixture{strategy: "compute {\non_breach = \"fail\"\n}", racks: withCP([]string{"r1", "a:c"})}.String())
	p = mustPlan(t, cfg, nil, nil)
	if got := computeScopes(p)[0].OnBreach; got != "fail" {
		t.Errorf("configured on_breach = %q, want fail", got)
	}
}

func TestRule16And17WaitAndPauseAfterEveryRackButTheLast(t *testing.T) {
	racks := withCP([]string{"r1", "a:c"}, []string{"r2", "b:c"}, []string{"r3", "c:c"}, []string{"r4", "d:c"})
	type got struct {
		Name  string
		Wait  time.Duration
		Pause bool
	}
	collect := func(p *plan.Plan) []got {
		var out []got
		for _, s := range computeScopes(p) {
			out = append(out, got{s.Name, time.Duration(s.WaitAfter), s.PauseAfter})
		}
		return out
	}
	t.Run("defaults", func(t *testing.T) {
		p := mustPlan(t, loadText(t, fixture{racks: racks}.String()), nil, nil)
		want := []got{{"r1", 15 * time.Minute, false}, {"r2", 15 * time.Minute, false}, {"r3", 15 * time.Minute, false}, {"r4", 0, false}}
		if diff := cmp.Diff(want, collect(p)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("pause_after_rack and wait", func(t *testing.T) {
		strategy := "compute {\npause_after_rack = true\nwait_after_rack = \"5m\"\n}"
		p := mustPlan(t, loadText(t, fixture{strategy: strategy, racks: racks}.String()), nil, nil)
		want := []got{{"r1", 5 * time.Minute, true}, {"r2", 5 * time.Minute, true}, {"r3", 5 * time.Minute, true}, {"r4", 0, false}}
		if diff := cmp.Diff(want, collect(p)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("racks with nothing to do cost no wait or pause", func(t *testing.T) {
		strategy := "compute {\npause_after_rack = true\n}"
		p := mustPlan(t, loadText(t, fixture{strategy: strategy, racks: racks}.String()), func(_ int, s *config.Server) plannertest.State {
			if s.Name == "b" || s.Name == "d" {
				return plannertest.AtTarget
			}
			return plannertest.Behind
		}, nil)
		want := []got{{"r1", 15 * time.Minute, true}, {"r2", 0, false}, {"r3", 0, false}, {"r4", 0, false}}
		if diff := cmp.Diff(want, collect(p)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestRule4ControlPlaneSerialSpareFirst(t *testing.T) {
	racks := [][]string{{"ra", "zz-cp:cp", "a:c"}, {"rb", "aa-cp:cp", "b:c"}, {"rc", "mm-cp:cp", "spare-z:spare", "c:c"}}
	cases := []struct {
		name     string
		strategy string
		phase    plan.PhaseKind
	}{
		{"default phases", `compute { max_unavailable = "100%" }`, plan.PhaseControlPlane},
		// A generic stage that would batch everything together still
		// takes the control plane one at a time.
		{"generic stage cannot parallelise the control plane", `stage "all" { batch_size = "100%" }`, plan.PhaseStage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustPlan(t, loadText(t, fixture{strategy: c.strategy, racks: racks}.String()), nil, nil)
			var cp *plan.Scope
			for _, ph := range p.Run.Stages[0].Groups[0].Clusters[0].Phases {
				for i, sc := range ph.Scopes {
					if sc.Kind == "serial" && ph.Kind == c.phase {
						cp = &ph.Scopes[i]
					}
				}
			}
			if cp == nil {
				t.Fatal("no serial control-plane scope")
			}
			want := []string{"c/rc/spare-z", "c/rb/aa-cp", "c/rc/mm-cp", "c/ra/zz-cp"}
			if diff := cmp.Diff(want, cp.Servers); diff != "" {
				t.Errorf("control-plane order (-want +got):\n%s", diff)
			}
			if cp.MaxUnavailable != 1 || cp.Required != 4 || cp.Budget != 0 {
				t.Errorf("max_unavailable %d, required %d, budget %d; want 1, 4, 0", cp.MaxUnavailable, cp.Required, cp.Budget)
			}
			for _, ph := range p.Run.Stages[0].Groups[0].Clusters[0].Phases {
				for _, sc := range ph.Scopes {
					if sc.Kind == "serial" {
						continue
					}
					for _, a := range sc.Servers {
						if strings.Contains(a, "cp") || strings.Contains(a, "spare") {
							t.Errorf("control-plane server %s is in scope %s, outside the serial scope", a, sc.ID)
						}
					}
				}
			}
		})
	}
}

func TestRule5ManagementAlternatingGroupsAndBatches(t *testing.T) {
	racks := withCP(
		[]string{"r1", "m1a:m", "m1b:m"},
		[]string{"r2", "m2a:m", "m2b:m", "m2c:m"},
		[]string{"r3", "m3a:m"},
		[]string{"r4", "m4a:m"},
	)
	p := mustPlan(t, loadText(t, fixture{racks: racks}.String()), nil, nil)
	// A = r1, r3 (3 servers: 2 + 1); B = r2, r4 (4 servers: 2 + 2).
	want := []string{
		"group A batch 1: m1a m1b",
		"group A batch 2: m3a",
		"group B batch 1: m2a m2b",
		"group B batch 2: m2c m4a",
	}
	if diff := cmp.Diff(want, scopeServers(p, plan.PhaseManagement)); diff != "" {
		t.Errorf("management scopes (-want +got):\n%s", diff)
	}
	for _, ph := range p.Run.Stages[0].Groups[0].Clusters[0].Phases {
		if ph.Kind != plan.PhaseManagement {
			continue
		}
		for _, sc := range ph.Scopes {
			if sc.Threshold != (plan.Threshold{Type: "percent", Value: 50}) || sc.Required != (sc.Eligible+1)/2 {
				t.Errorf("%s: threshold %+v required %d of %d; want 50%% rounded up", sc.ID, sc.Threshold, sc.Required, sc.Eligible)
			}
		}
	}
}

func TestRule3UpgradeScopes(t *testing.T) {
	racks := withCP([]string{"r1", "m1:m", "a:c"})
	t.Run("control_plane_only keeps only the control-plane phase", func(t *testing.T) {
		extra := "rollout \"ro\" {\nscope = \"control_plane_only\"\nstage \"one\" {\ngroup \"g\" {\nclusters = [cluster.c]\n}\n}\n}\n"
		p := mustPlan(t, loadText(t, fixture{racks: racks, extra: extra}.String()), nil, nil)
		var kinds []plan.PhaseKind
		for _, ph := range p.Run.Stages[0].Groups[0].Clusters[0].Phases {
			kinds = append(kinds, ph.Kind)
		}
		if diff := cmp.Diff([]plan.PhaseKind{plan.PhaseControlPlane}, kinds); diff != "" {
			t.Errorf("phases (-want +got):\n%s", diff)
		}
		for _, s := range p.Servers {
			if s.Role != config.RoleControlPlane && s.Role != config.RoleControlPlaneSpare {
				t.Errorf("server %s (%s) is in a control_plane_only plan", s.Address, s.Role)
			}
		}
	})
	t.Run("firmware_only drops the runtime", func(t *testing.T) {
		extra := "rollout \"ro\" {\nscope = \"firmware_only\"\nstage \"one\" {\ngroup \"g\" {\nclusters = [cluster.c]\n}\n}\n}\n"
		p := mustPlan(t, loadText(t, fixture{racks: racks, extra: extra}.String()), nil, nil)
		if p.Run.Scope != "firmware_only" {
			t.Errorf("run scope %q", p.Run.Scope)
		}
		if len(p.Run.Stages[0].Groups[0].Clusters[0].Phases) != 3 {
			t.Errorf("firmware_only must keep every phase")
		}
		for _, s := range p.Servers {
			var kinds []string
			for _, st := range s.Steps {
				kinds = append(kinds, string(st.Kind))
			}
			if diff := cmp.Diff([]string{"shutdown", "update", "reset", "wait_ready"}, kinds); diff != "" {
				t.Errorf("%s steps (-want +got):\n%s", s.Address, diff)
			}
			for _, c := range s.Changes {
				if c.Kind == "runtime" {
					t.Errorf("%s changes the runtime under firmware_only", s.Address)
				}
			}
		}
	})
}

func TestRule20WindowPriorityOrdersClusters(t *testing.T) {
	// testNow is 12:00 UTC. open: 11:00–13:00; soon: opens 14:00; closed:
	// opened and closed earlier today, opens again tomorrow.
	src := `provider "redfish" {}
release "r" {
  version = "4.6.1"
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bios.bin"
    match {
      software_id = "BIOS"
    }
  }
}
maintenance_window "open" {
  start    = "2026-11-21T11:00:00Z"
  duration = "2h"
}
maintenance_window "soon" {
  start    = "2026-11-21T14:00:00Z"
  duration = "2h"
}
maintenance_window "closed" {
  start      = "2026-11-20T01:00:00Z"
  duration   = "2h"
  recurrence = "daily"
}
`
	clusters := []struct{ name, window string }{
		{"k-closed", "closed"}, {"k-none1", ""}, {"k-soon", "soon"}, {"k-none2", ""}, {"k-open", "open"},
	}
	var names []string
	for i, c := range clusters {
		w := ""
		if c.window != "" {
			w = "maintenance_window = maintenance_window." + c.window
		}
		src += "cluster \"" + c.name + "\" {\n release = release.r\n " + w + "\n rack \"r\" {\n"
		for j := 0; j < 3; j++ {
			src += "server \"" + c.name + "-" + itoa(j) + "\" {\nbmc = \"https://127.3." + itoa(i) + "." + itoa(j+1) + ":8443\"\nrole = \"control_plane\"\n}\n"
		}
		src += "}\n}\n"
		names = append(names, "cluster."+c.name)
	}
	src += "rollout \"ro\" {\nstage \"s\" {\ngroup \"g\" {\nclusters = [" + strings.Join(names, ", ") + "]\n}\n}\n}\n"
	p := mustPlan(t, loadText(t, src), nil, nil)
	type got struct{ Name, Priority string }
	var order []got
	for _, c := range p.Run.Stages[0].Groups[0].Clusters {
		order = append(order, got{c.Name, c.WindowPriority})
	}
	want := []got{{"k-open", "open"}, {"k-soon", "opening"}, {"k-none1", "none"}, {"k-none2", "none"}, {"k-closed", "closed"}}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("cluster order (-want +got):\n%s", diff)
	}
	// The windows are in the plan as intervals from now to not_after.
	for _, c := range p.Run.Stages[0].Groups[0].Clusters {
		if c.Name != "k-closed" {
			continue
		}
		if len(c.Windows) != 3 {
			t.Fatalf("a daily window over 72 h has 3 openings, got %d: %+v", len(c.Windows), c.Windows)
		}
		first := plan.Interval{Start: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}
		if c.Windows[0] != first {
			t.Errorf("first opening %+v, want %+v", c.Windows[0], first)
		}
	}
}
