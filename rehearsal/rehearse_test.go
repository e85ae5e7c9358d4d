package rehearsal

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal/schedule"
)

type S = executortest.Scope

var start = executortest.Epoch

// Step estimates of the test plans: drain, shutdown, update, reimage,
// wait_ready, uncordon.
var estimates = map[plan.StepKind]time.Duration{
	plan.StepDrain: 5 * time.Minute, plan.StepShutdown: 3 * time.Minute, plan.StepUpdate: 10 * time.Minute,
	plan.StepReimage: 30 * time.Minute, plan.StepWaitReady: 10 * time.Minute, plan.StepUncordon: time.Minute,
}

const serverPath = 59 * time.Minute

// withEstimates sets every step's estimate and the remediation triggers
// the planner writes by default.
func withEstimates(p *plan.Plan) *plan.Plan {
	for i := range p.Servers {
		s := &p.Servers[i]
		var total time.Duration
		for j := range s.Steps {
			s.Steps[j].Estimate = plan.Duration(estimates[s.Steps[j].Kind])
			total += estimates[s.Steps[j].Kind]
			if s.Steps[j].Kind == plan.StepWaitReady {
				s.Steps[j].Timeout = plan.Duration(time.Hour)
			}
		}
		s.Estimate = plan.Duration(total)
	}
	return p
}

// fleetPlan: stage canary (one cluster, two racks with a 15-minute wait
// between them, a 1h soak and an approval gate after the stage), then
// stage prod with two groups in parallel: east waits for its window,
// which opens 12 hours after the start and lasts 2 hours; west has none.
func fleetPlan() *plan.Plan {
	b := executortest.NewBuilder(nil)
	st := b.Stage("canary").AfterWait(time.Hour).Gate("ok", "after")
	st.Group(b, "lab").Cluster("canary").
		Scope(S{Name: "c01", Servers: 2, WaitAfter: 15 * time.Minute}).
		Scope(S{Name: "c02", Servers: 2})
	prod := b.Stage("prod")
	var windows []plan.Interval
	for d := 0; d < 3; d++ {
		open := start.Add(time.Duration(12+24*d) * time.Hour)
		windows = append(windows, plan.Interval{Start: open, End: open.Add(2 * time.Hour)})
	}
	prod.Group(b, "east").Cluster("east", windows...).
		Scope(S{Name: "e01", Servers: 3, WaitAfter: 15 * time.Minute}).
		Scope(S{Name: "e02", Servers: 3, WaitAfter: 15 * time.Minute}).
		Scope(S{Name: "e03", Servers: 2})
	prod.Group(b, "west").Cluster("west").Scope(S{Name: "w01", Servers: 4, MaxUnavailable: 2})
	return withEstimates(b.Plan())
}

func rehearse(t *testing.T, o Options) *Result {
	t.Helper()
	if o.PlanSHA256 == "" {
		o.PlanSHA256 = strings.Repeat("ab", 32)
	}
	if o.Start.IsZero() {
		o.Start = start
	}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func bar(t *testing.T, s *schedule.Schedule, id string) schedule.Bar {
	t.Helper()
	for _, b := range s.Bars {
		if b.ID == id {
			return b
		}
	}
	t.Fatalf("no bar %s", id)
	return schedule.Bar{}
}

func marks(s *schedule.Schedule, kind, id string) []schedule.Mark {
	var out []schedule.Mark
	for _, m := range s.Marks {
		if m.Kind == kind && m.ID == id {
			out = append(out, m)
		}
	}
	return out
}

// A fault-free rehearsal runs the whole plan on the virtual clock: it
// takes exactly the critical path, the gate holds prod until approved,
// east waits for its window and runs past its close.
func TestRehearsalFollowsThePlan(t *testing.T) {
	p := fleetPlan()
	res := rehearse(t, Options{Plan: p})
	s := res.Schedule
	if res.Outcome.Status != executor.OutcomeCompleted {
		t.Fatalf("outcome %s", res.Outcome)
	}
	// canary: two racks and the wait between them, then the soak.
	canary := 2*serverPath + 15*time.Minute
	if got := bar(t, s, "cluster.canary").End.Sub(start); got != canary {
		t.Errorf("canary ran %v, want %v", got, canary)
	}
	gate := marks(s, schedule.MarkGate, "stage.canary.gate.ok")
	if len(gate) != 1 || gate[0].At.Sub(start) != canary || gate[0].Held != 0 || len(gate[0].Holds) != 1 || gate[0].Holds[0] != "stage.prod" {
		t.Errorf("gate marks %+v", gate)
	}
	prodStart := canary + time.Hour
	if got := bar(t, s, "stage.prod").Start.Sub(start); got != prodStart {
		t.Errorf("prod started at %v, want %v (after the soak)", got, prodStart)
	}
	// west: 4 servers 2 at a time.
	if got := bar(t, s, "cluster.west").End.Sub(bar(t, s, "cluster.west").Start); got != 2*serverPath {
		t.Errorf("west took %v", got)
	}
	// east waits for its window at 12h, then three racks and two waits.
	win := marks(s, schedule.MarkWindow, "cluster.east")
	if len(win) != 1 || win[0].Until.Sub(start) != 12*time.Hour || win[0].At.Sub(start) != prodStart {
		t.Fatalf("window marks %+v", win)
	}
	eastEnd := 12*time.Hour + 3*serverPath + 30*time.Minute
	if got := bar(t, s, "cluster.east").End.Sub(start); got != eastEnd {
		t.Errorf("east ended at %v, want %v", got, eastEnd)
	}
	var east schedule.ClusterWindow
	for _, w := range s.Windows {
		if w.Cluster == "cluster.east" {
			east = w
		}
	}
	if east.Fits || time.Duration(east.Overrun) != eastEnd-14*time.Hour || !strings.Contains(east.Miss, "past the close of its window") {
		t.Errorf("east's window: %+v", east)
	}
	if time.Duration(s.Total) != eastEnd || s.CriticalPath != s.Total {
		t.Errorf("total %v, critical path %v, want both %v", s.Total, s.CriticalPath, eastEnd)
	}
	met := marks(s, schedule.MarkThreshold, "cluster.east.compute.rack.e02")
	if len(met) != 1 || met[0].Result != schedule.ResultMet || met[0].Counts.Succeeded != 3 || met[0].Counts.Required != 3 {
		t.Errorf("e02's threshold: %+v", met)
	}
}

// -approve-after holds each gate that long; -stop-at-gates stops there.
func TestRehearsalGates(t *testing.T) {
	p := fleetPlan()
	res := rehearse(t, Options{Plan: p, ApproveAfter: 3 * time.Hour})
	gate := marks(res.Schedule, schedule.MarkGate, "stage.canary.gate.ok")
	if len(gate) != 1 || time.Duration(gate[0].Held) != 3*time.Hour {
		t.Fatalf("gate %+v", gate)
	}
	canary := 2*serverPath + 15*time.Minute
	if got := bar(t, res.Schedule, "stage.prod").Start.Sub(start); got != canary+3*time.Hour {
		t.Errorf("prod started at %v, want after the 3h approval", got)
	}
	if res.Schedule.CriticalPath != res.Schedule.Total {
		t.Errorf("total %v, critical path %v", res.Schedule.Total, res.Schedule.CriticalPath)
	}
	res = rehearse(t, Options{Plan: p, StopAtGates: true})
	if res.Outcome.Status != executor.OutcomePaused || res.Outcome.Reason != executor.ReasonApproval {
		t.Fatalf("outcome %s", res.Outcome)
	}
	if g := marks(res.Schedule, schedule.MarkGate, "stage.canary.gate.ok"); len(g) != 1 || !g[0].Open {
		t.Errorf("gate %+v", g)
	}
}

// The same plan, scenario and seed rehearse to the same events and
// schedule, byte for byte.
func TestRehearsalIsDeterministic(t *testing.T) {
	var outs [][]byte
	for range 2 {
		p := fleetPlan()
		sc, diags := ParseScenario([]byte(`
random {
  fail   = { update = 0.2, wait_ready = 0.1 }
  slow   = { reimage = 0.5 }
  factor = 2
}
`), "random.hcl")
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		faults, diags := sc.Resolve(PlanTargets(p), start)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		res := rehearse(t, Options{Plan: p, Faults: faults, Seed: 7, Events: executor.SinkFunc(func(e executor.Event) { _ = enc.Encode(e) })})
		j, _ := json.Marshal(res.Schedule)
		b.Write(j)
		outs = append(outs, b.Bytes())
	}
	if !bytes.Equal(outs[0], outs[1]) {
		a, b := strings.Split(string(outs[0]), "\n"), strings.Split(string(outs[1]), "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("two rehearsals differ at line %d:\n%s\n%s", i+1, a[i], b[i])
			}
		}
		t.Errorf("two rehearsals differ in length: %d and %d lines", len(a), len(b))
	}
	if !bytes.Contains(outs[0], []byte(`"type":"step_failed"`)) {
		t.Errorf("no random fault hit")
	}
}

// A cluster whose window has no opening left before the plan expires
// cannot start: the rehearsal stops where apply would (blocked), and the
// schedule says the cluster misses its window.
func TestRehearsalClusterWithoutAnOpening(t *testing.T) {
	p := fleetPlan()
	late := start.Add(63 * time.Hour) // after east's last opening
	res := rehearse(t, Options{Plan: p, Start: late})
	if res.Outcome.Status != executor.OutcomePaused || res.Outcome.Reason != executor.ReasonBlocked {
		t.Errorf("outcome %s, want paused(blocked)", res.Outcome)
	}
	for _, w := range res.Schedule.Windows {
		switch w.Name {
		case "east":
			if w.Fits || !w.Start.IsZero() || !strings.Contains(w.Miss, "cannot start: its window has no opening before the plan expires") {
				t.Errorf("east: %+v", w)
			}
		case "west":
			if !w.Fits || w.Start.IsZero() {
				t.Errorf("west: %+v", w)
			}
		}
	}
	if res.Schedule.CriticalPath != 0 {
		t.Errorf("critical path %v for a plan that cannot complete", res.Schedule.CriticalPath)
	}
}
