package rehearsal

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// journalUntil rehearses p until stop says so of an event (then it is
// interrupted there, as a killed apply is) or until it ends, and returns
// its journal.
func journalUntil(t *testing.T, o Options, stop func(executor.Event) bool) []executor.Entry {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Backend = state.NewMemory()
	if o.PlanSHA256 == "" {
		o.PlanSHA256 = strings.Repeat("ab", 32)
	}
	if o.Start.IsZero() {
		o.Start = start
	}
	if stop != nil {
		o.Events = executor.SinkFunc(func(e executor.Event) {
			if stop(e) {
				cancel()
			}
		})
	}
	if _, err := Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	entries, err := o.Backend.Read(context.Background(), o.PlanSHA256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func bars(s *schedule.Schedule) map[string]schedule.Bar {
	out := map[string]schedule.Bar{}
	for _, b := range s.Bars {
		out[b.ID] = b
	}
	return out
}

// A rehearsal takes a run over from its journal (what status -format=html
// draws): stopped at the canary gate, the run resumed from its journal
// there ends exactly as the uninterrupted rehearsal does, bar for bar,
// and its schedule starts where the journal does.
func TestResumeAtAGateEndsAsTheWholeRehearsal(t *testing.T) {
	p := fleetPlan()
	whole := rehearse(t, Options{Plan: p})
	entries := journalUntil(t, Options{Plan: p, StopAtGates: true}, nil)
	gate := marks(whole.Schedule, schedule.MarkGate, "stage.canary.gate.ok")[0]
	res := rehearse(t, Options{Plan: p, Journal: entries, Start: gate.At})
	if !res.From.Equal(gate.At) || !res.Schedule.Start.Equal(start) {
		t.Errorf("taken over at %s, schedule from %s; want at the gate %s, from the run's start %s", res.From, res.Schedule.Start, gate.At, start)
	}
	if res.Outcome.Status != executor.OutcomeCompleted || res.Schedule.Total != whole.Schedule.Total {
		t.Errorf("resumed: %s after %s; the whole rehearsal: completed after %s", res.Outcome.Status, res.Schedule.Total.Human(), whole.Schedule.Total.Human())
	}
	got := bars(res.Schedule)
	for _, w := range whole.Schedule.Bars {
		g, ok := got[w.ID]
		if !ok || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || g.State != w.State {
			t.Errorf("%s: resumed %s → %s %s, whole %s → %s %s", w.ID, g.Start, g.End, g.State, w.Start, w.End, w.State)
		}
	}
	if len(got) != len(whole.Schedule.Bars) {
		t.Errorf("%d bars resumed, %d in the whole rehearsal", len(got), len(whole.Schedule.Bars))
	}
}

// Taken over mid-flight (the run interrupted while servers of rack e02
// are in their steps, updates flashed and boots done on some), the
// remainder upgrades every server: the simulated fleet is what the
// journal's finished steps made it (a server whose update was done comes
// back at its target), the steps in flight run again, and what happened
// before keeps its times.
func TestResumeMidFlightUpgradesEveryServer(t *testing.T) {
	p := fleetPlan()
	whole := rehearse(t, Options{Plan: p})
	e02 := bar(t, whole.Schedule, "cluster.east.compute.rack.e02")
	cut := e02.Start.Add(25 * time.Minute) // past the updates, before the boots are done
	entries := journalUntil(t, Options{Plan: p}, func(e executor.Event) bool { return !e.Time.Before(cut) })
	j, err := decodeJournal(entries)
	if err != nil {
		t.Fatal(err)
	}
	if j.run.Terminal() {
		t.Fatalf("the journal's run is %s: the cut did not interrupt it", j.run)
	}
	res := rehearse(t, Options{Plan: p, Journal: entries, Start: j.last})
	if res.Outcome.Status != executor.OutcomeCompleted || res.Outcome.Servers == nil || res.Outcome.Servers.Failed != 0 || res.Outcome.Servers.Upgraded != len(p.Servers) {
		t.Fatalf("resumed mid-flight: %s %+v: %s", res.Outcome.Status, res.Outcome.Servers, res.Outcome.Message)
	}
	got := bars(res.Schedule)
	for _, w := range whole.Schedule.Bars {
		if !w.End.Before(j.last) {
			continue
		}
		if g := got[w.ID]; !g.Start.Equal(w.Start) || !g.End.Equal(w.End) {
			t.Errorf("%s ended before the cut at %s → %s, resumed shows %s → %s", w.ID, w.Start, w.End, g.Start, g.End)
		}
	}
	if res.Schedule.Total < whole.Schedule.Total {
		t.Errorf("resumed total %s, shorter than the whole rehearsal's %s", res.Schedule.Total.Human(), whole.Schedule.Total.Human())
	}
	if !res.Schedule.Start.Equal(start) || !res.From.Equal(j.last) {
		t.Errorf("schedule from %s, taken over at %s; want from %s, at the journal's last record %s", res.Schedule.Start, res.From, start, j.last)
	}
}

// A run its journal shows over has nothing to rehearse: the schedule is
// what happened.
func TestResumeOfAFinishedRun(t *testing.T) {
	p := fleetPlan()
	whole := rehearse(t, Options{Plan: p})
	entries := journalUntil(t, Options{Plan: p}, nil)
	res := rehearse(t, Options{Plan: p, Journal: entries, Start: whole.Schedule.End.Add(48 * time.Hour)})
	if res.Outcome.Status != executor.OutcomeCompleted || !res.Schedule.End.Equal(whole.Schedule.End) || res.Schedule.Total != whole.Schedule.Total {
		t.Errorf("finished run: %s, ends %s (total %s); want completed, ending %s", res.Outcome.Status, res.Schedule.End, res.Schedule.Total.Human(), whole.Schedule.End)
	}
	if len(res.Schedule.Bars) != len(whole.Schedule.Bars) {
		t.Errorf("%d bars, want %d", len(res.Schedule.Bars), len(whole.Schedule.Bars))
	}
}

// A journal's retry of staged updates a BMC restart lost (the executor's
// restage ops) is done to the simulated fleet as it was to the server:
// the host powered off, the update staged again, the host booted, which
// applies it.
func TestReplayOfARetryOfStagedUpdates(t *testing.T) {
	p := fleetPlan()
	srv := &p.Servers[0]
	f := NewFleet(p, nil, nil, 1)
	s := f.servers[srv.Address]
	rec := func(op string) *executor.Record {
		return &executor.Record{Type: "step_done", Server: srv.Address, Op: op}
	}
	f.replay(&journal{recs: []*executor.Record{rec("restage:shutdown")}})
	if s.power != providers.PowerOff {
		t.Fatalf("after the retry's power off, power %s", s.power)
	}
	bios := srv.Steps[2]
	if bios.Kind != plan.StepUpdate {
		t.Fatalf("step 3 is %s", bios.Kind)
	}
	bios.ApplyTime = "OnReset"
	srv.Steps[2] = bios
	f.replay(&journal{recs: []*executor.Record{rec("step:3"), rec("restage:reset")}})
	if s.power != providers.PowerOn {
		t.Errorf("after the retry's reset, power %s", s.power)
	}
	for _, c := range s.comps {
		if c.ID == "BIOS" && c.Version != bios.Target.Version {
			t.Errorf("BIOS at %s after the retry's reset, want the staged %s", c.Version, bios.Target.Version)
		}
	}
}
