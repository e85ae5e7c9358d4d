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

// twoClusters is a fixture with clusters c (from fixture) and d, and the
// rollout given.
func twoClusters(rollout string) string {
	return fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "x:cp"}}}.String() + `
cluster "d" {
  strategy = strategy.s
  release  = release.r
  rack "r1" {
    server "d1" {
      bmc  = "https://127.4.0.1:8443"
      role = "control_plane"
    }
    server "d2" {
      bmc  = "https://127.4.0.2:8443"
      role = "control_plane"
    }
    server "d3" {
      bmc  = "https://127.4.0.3:8443"
      role = "control_plane"
    }
  }
}
` + rollout
}

func TestRule1And02StagesGroupsAndGates(t *testing.T) {
	src := twoClusters(`
rollout "ro" {
  stage "canary" {
    after_stage_wait = "2h"
    approval "qa" {
      when        = "after"
      description = "QA signs off"
    }
    group "first" {
      clusters = [cluster.c]
    }
  }
  stage "rest" {
    group "g1" {
      clusters = [cluster.d]
    }
  }
}
`)
	p := mustPlan(t, loadText(t, src), nil, nil)
	type stage struct {
		ID     string
		Gates  []plan.Gate
		Wait   plan.Duration
		Groups []string
	}
	var got []stage
	for _, st := range p.Run.Stages {
		s := stage{ID: st.ID, Gates: st.Gates, Wait: st.AfterWait}
		for _, g := range st.Groups {
			s.Groups = append(s.Groups, g.ID)
		}
		got = append(got, s)
	}
	want := []stage{
		{ID: "stage.canary", Gates: []plan.Gate{{ID: "stage.canary.gate.qa", Name: "qa", When: "after", Description: "QA signs off"}}, Wait: plan.Duration(2 * time.Hour), Groups: []string{"stage.canary.group.first"}},
		{ID: "stage.rest", Groups: []string{"stage.rest.group.g1"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	// Stage estimate: its group plus the after-stage wait; the run sums stages.
	st := p.Run.Stages[0]
	if st.Estimate != st.Groups[0].Estimate+plan.Duration(2*time.Hour) {
		t.Errorf("stage estimate %s, want group %s + 2h", st.Estimate, st.Groups[0].Estimate)
	}
	if p.Summary.Estimate != p.Run.Stages[0].Estimate+p.Run.Stages[1].Estimate {
		t.Errorf("total %s is not the sum of the stages", p.Summary.Estimate)
	}
}

func TestGroupsRunInParallelForTheEstimate(t *testing.T) {
	src := twoClusters(`
rollout "ro" {
  stage "all" {
    group "g1" {
      clusters = [cluster.c]
    }
    group "g2" {
      clusters = [cluster.d]
    }
  }
}
`)
	p := mustPlan(t, loadText(t, src), nil, nil)
	st := p.Run.Stages[0]
	if st.Estimate != max(st.Groups[0].Estimate, st.Groups[1].Estimate) {
		t.Errorf("stage estimate %s, want the longest group (%s, %s)", st.Estimate, st.Groups[0].Estimate, st.Groups[1].Estimate)
	}
}

func TestRule8ClusterInTwoGroupsIsAnError(t *testing.T) {
	// The configuration check refuses this too; the planner checks again
	// because a plan must never upgrade a server twice, whoever built the
	// model.
	src := twoClusters(`
rollout "ro" {
  stage "s1" {
    group "g1" {
      clusters = [cluster.c]
    }
  }
  stage "s2" {
    group "g2" {
      clusters = [cluster.d]
    }
  }
}
`)
	cfg := loadText(t, src)
	_, diags := planWith(t, cfg, nil, nil)
	if diags.HasErrors() {
		t.Fatalf("valid rollout: %s", diags.Error())
	}
	cfg.Rollouts[0].Stages[1].Groups[0].Clusters = append(cfg.Rollouts[0].Stages[1].Groups[0].Clusters, cfg.Cluster("c"))
	_, diags = planWith(t, cfg, nil, nil)
	if diff := cmp.Diff([]string{"Cluster in two rollout groups"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
}

func TestServerStepsAndEstimate(t *testing.T) {
	cfg := loadDir(t, "testdata/nexus")
	p := mustPlan(t, cfg, nil, nil)
	var s plan.Server
	for _, x := range p.Servers {
		if x.Name == "c1a" {
			s = x
		}
	}
	type step struct {
		Kind      plan.StepKind
		Component string
		Timeout   plan.Duration
		Estimate  plan.Duration
	}
	var got []step
	var sum plan.Duration
	for i, st := range s.Steps {
		if st.Index != i+1 {
			t.Errorf("step %d has index %d", i+1, st.Index)
		}
		got = append(got, step{st.Kind, st.Component, st.Timeout, st.Estimate})
		sum += st.Estimate
	}
	m := func(d time.Duration) plan.Duration { return plan.Duration(d) }
	want := []step{
		{plan.StepDrain, "", m(20 * time.Minute), m(plan.TypicalDrain)},
		{plan.StepShutdown, "", m(10 * time.Minute), m(plan.TypicalShutdown)},
		{plan.StepUpdate, "bios", 0, m(plan.TypicalFirmwareUpdate)},
		{plan.StepUpdate, "bmc", 0, m(plan.TypicalFirmwareUpdate)},
		{plan.StepReimage, "runtime", 0, m(plan.TypicalReimage)},
		{plan.StepWaitReady, "", m(time.Hour), m(plan.TypicalWaitReady)},
		{plan.StepUncordon, "", m(10 * time.Minute), m(plan.TypicalUncordon)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if s.Estimate != sum || s.Reboots != 1 {
		t.Errorf("estimate %s (steps sum %s), reboots %d", s.Estimate, sum, s.Reboots)
	}
}

func TestStepsWithoutReboot(t *testing.T) {
	cfg := loadDir(t, "testdata/nexus")
	// Only the BMC (Immediate, no reboot) is behind: no drain, no shutdown.
	provs, fs := fakes(cfg, func(int, *config.Server) plannertest.State { return plannertest.AtTarget })
	for _, o := range fs["redfish"].Servers {
		for i, c := range o.Components {
			if c.ID == "BMC" {
				o.Components[i].Version = "1.11"
			}
		}
	}
	p := mustPlan(t, cfg, nil, func(o *Options) { o.Providers = provs })
	var kinds []plan.StepKind
	for _, st := range p.Servers[0].Steps {
		kinds = append(kinds, st.Kind)
	}
	if diff := cmp.Diff([]plan.StepKind{plan.StepUpdate, plan.StepWaitReady}, kinds); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if p.Servers[0].Reboots != 0 {
		t.Errorf("reboots %d, want 0", p.Servers[0].Reboots)
	}
}

func TestScopeEstimateIsTheMakespan(t *testing.T) {
	racks := withCP([]string{"r1", "a:c", "b:c", "c:c", "d:c", "e:c"})
	cfg := loadText(t, fixture{strategy: "compute {\nmax_unavailable = 2\n}", racks: racks}.String())
	p := mustPlan(t, cfg, nil, nil)
	sc := computeScopes(p)[0]
	// Five equal servers two at a time: three rounds.
	if sc.Estimate != 3*p.Servers[len(p.Servers)-1].Estimate {
		t.Errorf("rack estimate %s, want 3 × %s", sc.Estimate, p.Servers[len(p.Servers)-1].Estimate)
	}
}

func TestRule20ServerWindowsAreInThePlan(t *testing.T) {
	extra := `maintenance_window "nightly" {
  start      = "2026-11-20T22:00:00Z"
  duration   = "4h"
  recurrence = "daily"
}
`
	src := fixture{racks: withCP([]string{"r1", "a:c", "b:c"}), extra: extra}.String()
	// Give server b its own window.
	src = strings.Replace(src, "server \"b\" {\n", "server \"b\" {\n      maintenance_window = maintenance_window.nightly\n", 1)
	p := mustPlan(t, loadText(t, src), nil, nil)
	for _, s := range p.Servers {
		switch s.Name {
		case "b":
			want := []plan.Interval{
				{Start: time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)},
				{Start: time.Date(2026, 11, 22, 22, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)},
				{Start: time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)},
			}
			if diff := cmp.Diff(want, s.Windows); diff != "" {
				t.Errorf("b's windows (-want +got):\n%s", diff)
			}
		default:
			if s.Windows != nil {
				t.Errorf("%s has windows %v but no window of its own", s.Name, s.Windows)
			}
		}
	}
}

func TestWindowThatNeverOpensBeforeExpiryIsAnError(t *testing.T) {
	extra := `maintenance_window "later" {
  start    = "2026-12-24T22:00:00Z"
  duration = "4h"
}
`
	src := fixture{racks: withCP([]string{"r1", "a:c"}), extra: extra, cluster: "maintenance_window = maintenance_window.later"}.String()
	_, diags := planWith(t, loadText(t, src), nil, nil)
	if diff := cmp.Diff([]string{"Window does not open before the plan expires"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	p := mustPlan(t, loadText(t, src), nil, func(o *Options) { o.NotAfter = 40 * 24 * time.Hour })
	if len(p.Warnings) != 0 || len(p.Run.Stages[0].Groups[0].Clusters[0].Windows) != 1 {
		t.Errorf("with a long validity the window opens once: %+v", p.Warnings)
	}
}

func TestStrategyStagesReplaceTheDefaultPhases(t *testing.T) {
	racks := withCP([]string{"r1", "m1:m", "a:c", "b:c", "c:c"}, []string{"r2", "m2:m", "d:c", "e:c"})
	strategy := `stage "management" {
  roles = ["management"]
}
stage "canary" {
  racks       = ["r2"]
  batch_size  = 1
  pause_after = true
}
stage "rest" {
  batch_size = "50%"
  wait_after = "10m"
}`
	p := mustPlan(t, loadText(t, fixture{strategy: strategy, racks: racks}.String()), nil, nil)
	type scope struct {
		Phase   string
		Scope   string
		Servers string
		Pause   bool
		Wait    time.Duration
	}
	var got []scope
	for _, ph := range p.Run.Stages[0].Groups[0].Clusters[0].Phases {
		if ph.Kind != plan.PhaseStage {
			t.Errorf("phase %s has kind %s, want stage", ph.ID, ph.Kind)
		}
		for _, sc := range ph.Scopes {
			var names []string
			for _, a := range sc.Servers {
				names = append(names, a[strings.LastIndex(a, "/")+1:])
			}
			got = append(got, scope{ph.Name, sc.Name, strings.Join(names, " "), sc.PauseAfter, time.Duration(sc.WaitAfter)})
		}
	}
	want := []scope{
		{"management", "batch 1", "m1 m2", false, 0},
		// The canary stage takes what is left of r2, one server at a time.
		{"canary", "batch 1", "d", false, 0},
		{"canary", "batch 2", "e", true, 0},
		// The rest: the control plane one at a time first (spare first),
		// then batches of ⌊50% of 3⌋ = 1 of what is left.
		{"rest", "control plane", "spare cp1 cp2 cp3", false, 0},
		{"rest", "batch 1", "a", false, 0},
		{"rest", "batch 2", "b", false, 0},
		{"rest", "batch 3", "c", false, 10 * time.Minute},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scopes (-want +got):\n%s", diff)
	}

	t.Run("a server no stage selects is an error", func(t *testing.T) {
		strategy := `stage "compute" {
  roles = ["compute"]
}`
		_, diags := planWith(t, loadText(t, fixture{strategy: strategy, racks: racks}.String()), nil, nil)
		if diff := cmp.Diff([]string{"Server in no strategy stage"}, errorSummaries(diags)); diff != "" {
			t.Fatalf("errors (-want +got):\n%s", diff)
		}
		if !strings.Contains(diags[0].Detail, "c/x-cp1/cp1") || !strings.Contains(diags[0].Detail, "c/r1/m1") {
			t.Errorf("detail: %s", diags[0].Detail)
		}
	})
}

func TestServerWindowThatNeverOpensIsAnError(t *testing.T) {
	extra := `maintenance_window "far" {
  start    = "2027-01-01T00:00:00Z"
  duration = "4h"
}
`
	src := fixture{racks: withCP([]string{"r1", "a:c", "b:c"}), extra: extra}.String()
	src = strings.Replace(src, "server \"b\" {\n", "server \"b\" {\n      maintenance_window = maintenance_window.far\n", 1)
	_, diags := planWith(t, loadText(t, src), nil, nil)
	if diff := cmp.Diff([]string{"Window does not open before the plan expires"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	if !strings.Contains(diags[0].Detail, "c/r1/b") {
		t.Errorf("detail: %s", diags[0].Detail)
	}
}
