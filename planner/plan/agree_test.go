package plan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rackform/rackform/config/version"
)

// A plan whose steps do not make the changes it lists is refused, naming
// the server and both values (issue: a reviewer read "bmc 7.08.12 →
// 7.10.30" while apply would flash 7.99.99).
func TestCheckSteps(t *testing.T) {
	// sharedPair is two servers on one BMC: s1 flashes the shared bmc for
	// both, s5 lists it as flashed by s1.
	sharedPair := func() *Plan {
		p := samplePlan13()
		s5 := p.Servers[0]
		s5.Address, s5.Name = "a/r01/s5", "s5"
		s5.Changes = []Change{p.Servers[0].Changes[0], {Component: "bmc", Kind: "firmware", From: "7.10", To: "7.20", Shared: true, FlashedBy: "a/r01/s1"}}
		s5.Steps = s5.Steps[:2]
		p.Servers = append(p.Servers, s5)
		return p
	}
	for _, tt := range []struct {
		name string
		edit func(p *Plan)
		want []string // "" for none: the plan is consistent
	}{
		{"as planned", func(*Plan) {}, nil},
		{"a shared component flashed by another server", func(p *Plan) { *p = *sharedPair() }, nil},
		{"an update step's version edited", func(p *Plan) { p.Servers[0].Steps[1].Target.Version = "9.9" },
			[]string{"server a/r01/s1 lists bios 1.0 → 1.1, but its update step flashes bios 9.9", "run rackform plan again"}},
		{"a change's target edited", func(p *Plan) { p.Servers[0].Changes[1].To = "7.30" },
			[]string{"server a/r01/s1 lists bmc 7.10 → 7.30, but its update step flashes bmc 7.20"}},
		{"a step removed", func(p *Plan) { p.Servers[0].Steps = p.Servers[0].Steps[:2] },
			[]string{"server a/r01/s1 lists bmc 7.10 → 7.20, but none of its steps flashes bmc"}},
		{"a step added", func(p *Plan) {
			p.Servers[0].Steps = append(p.Servers[0].Steps, Step{Index: 4, Kind: StepReimage, Component: "runtime", Target: version.Target{Version: "6.6.6"}})
		}, []string{"server a/r01/s1 has a reimage step flashing runtime 6.6.6 that none of its changes lists"}},
		{"the flashing server's step edited", func(p *Plan) {
			*p = *sharedPair()
			p.Servers[0].Steps[2].Target.Version = "7.99"
		}, []string{
			"server a/r01/s1 lists bmc 7.10 → 7.20, but its update step flashes bmc 7.99",
			"server a/r01/s5 lists bmc 7.10 → 7.20 (flashed by a/r01/s1), but a/r01/s1's update step flashes bmc 7.99",
		}},
		// Issue 33 item 3: a second step of a listed component, inserted
		// before the real one (steps renumbered), flashed a version no
		// change lists while the check read only the component's last step.
		{"a second step of a listed component inserted before it", func(p *Plan) {
			insertStep(p, 0, 2, "7.99")
		}, []string{"server a/r01/s1 lists bmc 7.10 → 7.20, but its update step 3 flashes bmc 7.99"}},
		{"a listed component's step repeated", func(p *Plan) { insertStep(p, 0, 2, "7.20") },
			[]string{"server a/r01/s1 lists bmc 7.10 → 7.20 once, but steps 3 and 4 flash bmc; several steps flash one component only when each updates other members"}},
		{"member batches naming a member twice", func(p *Plan) {
			insertStep(p, 0, 2, "7.20")
			p.Servers[0].Steps[2].Members = []string{"BMC"}
			p.Servers[0].Steps[3].Members = []string{"BMC"}
		}, []string{"server a/r01/s1 lists bmc 7.10 → 7.20 once, but steps 3 and 4 flash bmc"}},
		{"member batches naming more members than move", func(p *Plan) {
			insertStep(p, 0, 2, "7.20")
			p.Servers[0].Changes[1].Members, p.Servers[0].Changes[1].Moving = 2, 1
			p.Servers[0].Steps[2].Members = []string{"BMC"}
			p.Servers[0].Steps[3].Members = []string{"BMC2"}
		}, []string{"server a/r01/s1 lists bmc 7.10 → 7.20 once, but steps 3 and 4 flash bmc"}},
		{"the flashing server's step doubled", func(p *Plan) {
			*p = *sharedPair()
			insertStep(p, 0, 2, "7.99")
		}, []string{
			"server a/r01/s1 lists bmc 7.10 → 7.20, but its update step 3 flashes bmc 7.99",
			"server a/r01/s5 lists bmc 7.10 → 7.20 (flashed by a/r01/s1), but a/r01/s1's update step 3 flashes bmc 7.99",
		}},
		// The steps that flash nothing are shown as the server's reboots;
		// one more of them, or one out of place, is a step no view shows.
		{"a second shutdown after the update", func(p *Plan) {
			s := &p.Servers[0]
			s.Steps = append(s.Steps, Step{Index: 4, Kind: StepShutdown})
		}, []string{"server a/r01/s1 has a shutdown step 4 after its update step 3: plan lays out drain, shutdown, updates, reimage or reset, wait_ready, uncordon, each but the updates at most once"}},
		{"a step of a kind rackform does not plan", func(p *Plan) {
			s := &p.Servers[0]
			s.Steps = append(s.Steps, Step{Index: 4, Kind: "erase"})
		}, []string{"server a/r01/s1 has a step 4 of kind \"erase\", which plan never writes"}},
		{"a second reset", func(p *Plan) {
			s := &p.Servers[0]
			s.Steps = append(s.Steps, Step{Index: 4, Kind: StepReset, ResetType: "On"}, Step{Index: 5, Kind: StepReset, ResetType: "ForceRestart"})
		}, []string{"server a/r01/s1 has a reset step 5 after its reset step 4"}},
		{"a reset and a reimage", func(p *Plan) {
			s := &p.Servers[0]
			s.Changes = append(s.Changes, Change{Component: "runtime", Kind: "runtime", From: "4.5", To: "4.6"})
			s.Steps = append(s.Steps, Step{Index: 4, Kind: StepReimage, Component: "runtime", Target: version.Target{Version: "4.6"}}, Step{Index: 5, Kind: StepReset, ResetType: "On"})
		}, []string{"server a/r01/s1 has a reset step 5 after its reimage step 4"}},
		{"steps numbered out of order", func(p *Plan) { p.Servers[0].Steps[1].Index = 7 },
			[]string{"server a/r01/s1's step 2 is numbered 7"}},
		// Apply runs the steps of every server the plan does not skip.
		{"an action plan never writes", func(p *Plan) { p.Servers[0].Action = "Upgrade" },
			[]string{`server a/r01/s1 has the action "Upgrade", which plan never writes: apply would run its steps`}},
		{"an action plan never writes, with an edited step", func(p *Plan) {
			p.Servers[0].Action = ""
			p.Servers[0].Steps[1].Target.Version = "9.9"
		}, []string{"server a/r01/s1 lists bios 1.0 → 1.1, but its update step flashes bios 9.9"}},
		{"flashed by a server not in the plan", func(p *Plan) {
			*p = *sharedPair()
			p.Servers[len(p.Servers)-1].Changes[1].FlashedBy = "a/r09/gone"
		}, []string{"server a/r01/s5 lists bmc 7.10 → 7.20 as flashed by a/r09/gone, which is not in the plan"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := samplePlan13()
			tt.edit(p)
			err := CheckSteps(p)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("a consistent plan refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("the plan was not refused")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// A plan of updates split by members (a BMC that takes a few Targets per
// request) flashes one component in several steps, each for other members
// of those the change moves: that is as planned.
func TestCheckStepsAcceptsMemberBatches(t *testing.T) {
	p := samplePlan13()
	insertStep(p, 0, 2, "7.20")
	s := &p.Servers[0]
	s.Changes[1].Members, s.Changes[1].Moving = 3, 3
	s.Steps[2].Members, s.Steps[3].Members = []string{"BMC1", "BMC2"}, []string{"BMC3"}
	if err := CheckSteps(p); err != nil {
		t.Fatalf("updates split by members refused: %v", err)
	}
}

// insertStep inserts a copy of step i of server si flashing version before
// it and numbers the steps again, as an edit of a plan file would.
func insertStep(p *Plan, si, i int, version string) {
	s := &p.Servers[si]
	st := s.Steps[i]
	st.Target.Version = version
	s.Steps = slices.Insert(slices.Clone(s.Steps), i, st)
	for j := range s.Steps {
		s.Steps[j].Index = j + 1
	}
}

// Many disagreements are named up to a few, the rest counted.
func TestCheckStepsCountsTheRest(t *testing.T) {
	p := samplePlan()
	for i := 0; i < 8; i++ {
		s := p.Servers[0]
		s.Address = "a/r01/x" + string(rune('0'+i))
		s.Steps = []Step{{Index: 1, Kind: StepUpdate, Component: "bios", Target: version.Target{Version: "6.6"}}}
		p.Servers = append(p.Servers, s)
	}
	err := CheckSteps(p)
	if err == nil || !strings.Contains(err.Error(), "; and 3 more.") || strings.Contains(err.Error(), "a/r01/x7") {
		t.Errorf("want five named and 3 more: %v", err)
	}
}

// Every plan the repository keeps (every format, and the views' fixtures
// made by the planner) passes: the check refuses edits, not plans.
func TestCheckStepsAcceptsStoredPlans(t *testing.T) {
	for f, p := range storedPlans(t) {
		if err := CheckSteps(p); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// storedPlans decodes every plan the repository keeps: every format, and
// the views' fixtures made by the planner.
func storedPlans(t *testing.T) map[string]*Plan {
	t.Helper()
	files, _ := filepath.Glob("testdata/*.plan.json")
	views, _ := filepath.Glob("../../cmd/rackform/internal/command/views/*/testdata/*.plan.json")
	files = append(files, views...)
	if len(files) < 5 {
		t.Fatalf("only %d stored plans found", len(files))
	}
	plans := make(map[string]*Plan, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		plans[f] = p
	}
	return plans
}
