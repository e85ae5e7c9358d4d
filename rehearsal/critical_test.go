package rehearsal

import (
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
)

// pausePlan has two groups side by side: group a's rack a1 pauses after
// itself (pause_after_rack; a2 and a3 follow) while group b's rack b1 runs
// its servers one at a time, each taking 40 minutes (a's 59), then b2. A
// pause holds the whole run (the executor's rule 17 with rule 12's
// "nothing new starts anywhere"), so when a1 ends at 59m with b's second
// server in flight until 80m, the run is paused from 59m, quiet at 80m,
// continued approveAfter later; b's third server and a2 start only then.
func pausePlan() *plan.Plan {
	b := executortest.NewBuilder(nil)
	st := b.Stage("main")
	st.Group(b, "a").Cluster("a").
		Scope(S{Name: "a1", Servers: 2, PauseAfter: true}).
		Scope(S{Name: "a2", Servers: 2}).
		Scope(S{Name: "a3", Servers: 2})
	st.Group(b, "b").Cluster("b").
		Scope(S{Name: "b1", Servers: 3, MaxUnavailable: 1}).
		Scope(S{Name: "b2", Servers: 2})
	p := withEstimates(b.Plan())
	for i := range p.Servers {
		if s := &p.Servers[i]; s.Cluster == "b" {
			// 40 minutes a server: the update takes 10 minutes less, the
			// reimage 9 less.
			for j := range s.Steps {
				switch s.Steps[j].Kind {
				case plan.StepUpdate:
					s.Steps[j].Estimate -= plan.Duration(10 * time.Minute)
				case plan.StepReimage:
					s.Steps[j].Estimate -= plan.Duration(9 * time.Minute)
				}
			}
		}
	}
	return p
}

// The critical path follows the executor: a pause after a rack in one
// group holds every group of the run (nothing new starts anywhere until
// continue), not only its own; the rehearsal takes exactly that long.
func TestCriticalPathPauseHoldsTheWholeRun(t *testing.T) {
	p := pausePlan()
	for _, after := range []time.Duration{0, 90 * time.Minute} {
		// a1 ends at 59m and pauses; b1's second server runs until 80m:
		// the run is quiet then, continued after approveAfter; a2 and a3
		// (59m each) end last, b1's third server and b2 (40m each) before.
		// Holding only its own group, a would end at 59m + approveAfter +
		// 118m, 21 minutes early.
		release := 80*time.Minute + after
		want := release + 118*time.Minute
		res := rehearse(t, Options{Plan: p, ApproveAfter: after})
		if res.Outcome.Status != executor.OutcomeCompleted {
			t.Fatalf("approve after %v: %s", after, res.Outcome)
		}
		s := res.Schedule
		if got := bar(t, s, "cluster.a.compute.rack.a2").Start.Sub(start); got != release {
			t.Errorf("approve after %v: a2 started at %v, want %v (when the quiet run was continued)", after, got, release)
		}
		if got := bar(t, s, "cluster.b.compute.rack.b2").End.Sub(start); got != release+80*time.Minute {
			t.Errorf("approve after %v: b2 ended at %v, want %v (b held by a's pause)", after, got, release+80*time.Minute)
		}
		end, blocked := CriticalPath(p, start, after)
		if blocked || end.Sub(start) != want || time.Duration(s.Total) != want {
			t.Errorf("approve after %v: critical path %v (blocked %v), rehearsal %v; want both %v", after, end.Sub(start), blocked, time.Duration(s.Total), want)
		}
	}
}

// More plans with pauses in parallel groups, some with waits after racks,
// a window, groups of equal pace (pauses and starts at the same moments,
// decided in the executor's order): the critical path is the rehearsal's
// total, exactly.
func TestCriticalPathIsTheRehearsal(t *testing.T) {
	plans := map[string]func() *plan.Plan{
		"pause in a, b slower": pausePlan,
		"pauses and waits in both groups, same pace": func() *plan.Plan {
			b := executortest.NewBuilder(nil)
			st := b.Stage("main")
			st.Group(b, "a").Cluster("a").
				Scope(S{Name: "a1", Servers: 2, PauseAfter: true, WaitAfter: 15 * time.Minute}).
				Scope(S{Name: "a2", Servers: 3, MaxUnavailable: 2, PauseAfter: true}).
				Scope(S{Name: "a3", Servers: 1})
			st.Group(b, "b").Cluster("b").
				Scope(S{Name: "b1", Servers: 3, MaxUnavailable: 1, PauseAfter: true}).
				Scope(S{Name: "b2", Servers: 2, WaitAfter: 30 * time.Minute}).
				Scope(S{Name: "b3", Servers: 2})
			st.Group(b, "c").Cluster("c").Scope(S{Name: "c1", Servers: 5, MaxUnavailable: 2})
			return withEstimates(b.Plan())
		},
		"a pause while a window opens elsewhere": func() *plan.Plan {
			b := executortest.NewBuilder(nil)
			st := b.Stage("main")
			st.Group(b, "a").Cluster("a").
				Scope(S{Name: "a1", Servers: 1, PauseAfter: true}).
				Scope(S{Name: "a2", Servers: 1, PauseAfter: true}).
				Scope(S{Name: "a3", Servers: 1})
			open := start.Add(90 * time.Minute)
			g := st.Group(b, "b")
			g.Cluster("b", plan.Interval{Start: open, End: open.Add(time.Hour)}).Scope(S{Name: "b1", Servers: 2})
			g.Cluster("b2").Scope(S{Name: "b21", Servers: 1, MaxUnavailable: 1})
			return withEstimates(b.Plan())
		},
	}
	for name, mk := range plans {
		for _, after := range []time.Duration{0, 25 * time.Minute, 3 * time.Hour} {
			p := mk()
			res := rehearse(t, Options{Plan: p, ApproveAfter: after})
			end, blocked := CriticalPath(p, start, after)
			// Held three hours by a's pauses, cluster b misses its only
			// opening: the rehearsal ends blocked, and the critical path
			// says so.
			stuck := res.Outcome.Status == executor.OutcomePaused && res.Outcome.Reason == "blocked"
			if stuck != (name == "a pause while a window opens elsewhere" && after == 3*time.Hour) {
				t.Errorf("%s, approve after %v: rehearsal %s (%s)", name, after, res.Outcome.Status, res.Outcome.Reason)
			}
			if blocked != stuck || (!stuck && (res.Outcome.Status != executor.OutcomeCompleted || end.Sub(start) != time.Duration(res.Schedule.Total))) {
				t.Errorf("%s, approve after %v: rehearsal %s after %v, critical path %v (blocked %v)", name, after, res.Outcome.Status, time.Duration(res.Schedule.Total), end.Sub(start), blocked)
			}
		}
	}
}
