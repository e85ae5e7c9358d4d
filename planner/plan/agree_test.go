package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"an update step's version edited", func(p *Plan) { p.Servers[0].Steps[1].Version = "9.9" },
			[]string{"server a/r01/s1 lists bios 1.0 → 1.1, but its update step flashes bios 9.9", "run rackform plan again"}},
		{"a change's target edited", func(p *Plan) { p.Servers[0].Changes[1].To = "7.30" },
			[]string{"server a/r01/s1 lists bmc 7.10 → 7.30, but its update step flashes bmc 7.20"}},
		{"a step removed", func(p *Plan) { p.Servers[0].Steps = p.Servers[0].Steps[:2] },
			[]string{"server a/r01/s1 lists bmc 7.10 → 7.20, but none of its steps flashes bmc"}},
		{"a step added", func(p *Plan) {
			p.Servers[0].Steps = append(p.Servers[0].Steps, Step{Index: 4, Kind: StepReimage, Component: "runtime", Version: "6.6.6"})
		}, []string{"server a/r01/s1 has a reimage step flashing runtime 6.6.6 that none of its changes lists"}},
		{"the flashing server's step edited", func(p *Plan) {
			*p = *sharedPair()
			p.Servers[0].Steps[2].Version = "7.99"
		}, []string{
			"server a/r01/s1 lists bmc 7.10 → 7.20, but its update step flashes bmc 7.99",
			"server a/r01/s5 lists bmc 7.10 → 7.20 (flashed by a/r01/s1), but a/r01/s1's update step flashes bmc 7.99",
		}},
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

// Many disagreements are named up to a few, the rest counted.
func TestCheckStepsCountsTheRest(t *testing.T) {
	p := samplePlan()
	for i := 0; i < 8; i++ {
		s := p.Servers[0]
		s.Address = "a/r01/x" + string(rune('0'+i))
		s.Steps = []Step{{Index: 1, Kind: StepUpdate, Component: "bios", Version: "6.6"}}
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
	files, _ := filepath.Glob("testdata/*.plan.json")
	views, _ := filepath.Glob("../../cmd/rackform/internal/command/views/planview/testdata/*.plan.json")
	files = append(files, views...)
	if len(files) < 5 {
		t.Fatalf("only %d stored plans found", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := CheckSteps(p); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
