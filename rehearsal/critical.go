package rehearsal

import (
	"container/heap"
	"slices"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// CriticalPath is the end of the longest chain of steps, waits, windows
// and gates a plan's rules force when the run starts at start, with every
// gate and pause answered approveAfter after it is reached and every step
// taking its estimate (a drain or uncordon step without a hook takes no
// time, as in apply; a shutdown of a server observed off neither).
// blocked: some cluster can never start (no window opening before the
// plan expires, or its release is pending).
//
// It is computed from the plan alone, by the rules as docs/rollout-rules.md
// states them, without the executor: stages in turn (1); a stage's
// before-gates, its groups in parallel (2), then its after-wait beside its
// after-gates (19); a group's clusters one at a time, the next chosen by
// window priority and started only inside a window (20); phases in turn,
// scopes in turn (3, 6); a scope's servers on max_unavailable slots in
// plan order (7), one at a time in a serial scope (4); the next scope
// when the scope met its threshold (13), or, with a wait or a pause after
// it, when every server is done and the wait is over (16, 17). It does not
// model that a pause after a rack holds the other groups of the run too
// (rule 12's "nothing new starts anywhere"): a plan with pauses in
// parallel groups rehearses longer than this bound.
func CriticalPath(p *plan.Plan, start time.Time, approveAfter time.Duration) (end time.Time, blocked bool) {
	cp := &path{servers: map[string]*plan.Server{}, approveAfter: approveAfter}
	for i := range p.Servers {
		cp.servers[p.Servers[i].Address] = &p.Servers[i]
	}
	t := start
	for _, st := range p.Run.Stages {
		if hasGate(st, "before") {
			t = t.Add(approveAfter)
		}
		groupsEnd := t
		for _, g := range st.Groups {
			e, b := cp.groupEnd(g, t)
			blocked = blocked || b
			if e.After(groupsEnd) {
				groupsEnd = e
			}
		}
		t = groupsEnd
		after := t.Add(time.Duration(st.AfterWait))
		if hasGate(st, "after") && t.Add(approveAfter).After(after) {
			after = t.Add(approveAfter)
		}
		t = after
	}
	return t, blocked
}

// path holds what the computation looks up.
type path struct {
	servers      map[string]*plan.Server
	approveAfter time.Duration
}

func hasGate(st plan.Stage, when string) bool {
	for _, g := range st.Gates {
		if (g.When == "after") == (when == "after") {
			return true
		}
	}
	return false
}

// window priority classes (rule 20), in the order a group tries them.
const (
	classOpen = iota
	classOpening
	classNone
	classClosed
)

func classify(c *plan.Cluster, t time.Time) (int, time.Time) {
	if len(c.Windows) == 0 {
		return classNone, time.Time{}
	}
	var next time.Time
	for _, w := range c.Windows {
		if w.Contains(t) {
			return classOpen, time.Time{}
		}
		if w.Start.After(t) && (next.IsZero() || w.Start.Before(next)) {
			next = w.Start
		}
	}
	if !next.IsZero() && next.Sub(t) <= 4*time.Hour {
		return classOpening, next
	}
	return classClosed, next
}

func (cp *path) groupEnd(g plan.Group, t time.Time) (time.Time, bool) {
	var left []*plan.Cluster
	for i := range g.Clusters {
		c := &g.Clusters[i]
		if c.Release != nil && c.Release.Pending != "" {
			return t, true // waits for its release at its site: never in a rehearsal
		}
		if eligible(c) > 0 {
			left = append(left, c)
		}
	}
	for len(left) > 0 {
		type cand struct {
			i, class int
			next     time.Time
		}
		var cands []cand
		for i, c := range left {
			class, next := classify(c, t)
			cands = append(cands, cand{i, class, next})
		}
		slices.SortStableFunc(cands, func(a, b cand) int { return a.class - b.class })
		started := -1
		var wake time.Time
		for _, cd := range cands {
			if cd.class == classOpen || cd.class == classNone {
				started = cd.i
				break
			}
			if !cd.next.IsZero() && (wake.IsZero() || cd.next.Before(wake)) {
				wake = cd.next
			}
		}
		if started < 0 {
			if wake.IsZero() {
				return t, true
			}
			t = wake
			continue
		}
		t = cp.clusterEnd(left[started], t)
		left = slices.Delete(left, started, started+1)
	}
	return t, false
}

func eligible(c *plan.Cluster) int {
	n := 0
	for _, ph := range c.Phases {
		for _, sc := range ph.Scopes {
			n += sc.Eligible
		}
	}
	return n
}

func (cp *path) clusterEnd(c *plan.Cluster, t time.Time) time.Time {
	for _, ph := range c.Phases {
		t = cp.phaseEnd(c, ph, t)
	}
	return t
}

// phaseEnd runs the phase's scopes in turn from t and returns when the
// last of its servers, waits and pauses is over.
func (cp *path) phaseEnd(c *plan.Cluster, ph plan.Phase, t time.Time) time.Time {
	end := t
	for i, sc := range ph.Scopes {
		done, advance, ok := cp.scopeTimes(c, sc, t)
		if !ok {
			continue // skipped: nothing eligible
		}
		pause := sc.PauseAfter && i < len(ph.Scopes)-1
		next := advance
		if sc.WaitAfter > 0 || pause {
			next = done.Add(time.Duration(sc.WaitAfter))
			if pause {
				next = next.Add(cp.approveAfter)
			}
		}
		for _, x := range []time.Time{done, next} {
			if x.After(end) {
				end = x
			}
		}
		t = next
	}
	return end
}

// scopeTimes runs a scope's eligible servers from t in plan order on
// max_unavailable slots: done is when the last ends, advance when the
// required-th success ends (rule 13).
func (cp *path) scopeTimes(c *plan.Cluster, sc plan.Scope, t time.Time) (done, advance time.Time, ok bool) {
	width := sc.MaxUnavailable
	if sc.Kind == "serial" {
		width = 1
	}
	var durs []time.Duration
	for _, a := range sc.Servers {
		s := cp.servers[a]
		if s == nil || s.Action != plan.ActionUpgrade {
			continue
		}
		durs = append(durs, serverDuration(c, s))
	}
	if len(durs) == 0 {
		return t, t, false
	}
	if width <= 0 || width > len(durs) {
		width = len(durs)
	}
	slots := &timeHeap{}
	var ends []time.Time
	for _, d := range durs {
		at := t
		if slots.Len() == width {
			at = heap.Pop(slots).(time.Time)
		}
		e := at.Add(d)
		heap.Push(slots, e)
		ends = append(ends, e)
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	done = ends[len(ends)-1]
	advance = t
	if k := sc.Required; k > 0 {
		advance = ends[min(k, len(ends))-1]
	}
	return done, advance, true
}

// serverDuration is a server's steps back to back: each its estimate; a
// drain or uncordon without a hook none; a shutdown of a server observed
// off none.
func serverDuration(c *plan.Cluster, s *plan.Server) time.Duration {
	var d time.Duration
	for _, st := range s.Steps {
		switch {
		case st.Kind == plan.StepDrain && len(c.Settings.DrainHook) == 0,
			st.Kind == plan.StepUncordon && len(c.Settings.UncordonHook) == 0,
			st.Kind == plan.StepShutdown && s.Observed.PowerState == "Off":
			continue
		}
		d += time.Duration(st.Estimate)
	}
	return d
}

type timeHeap []time.Time

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i].Before(h[j]) }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(time.Time)) }
func (h *timeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
