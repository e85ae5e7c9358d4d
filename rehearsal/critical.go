package rehearsal

import (
	"slices"
	"time"

	"github.com/rackform/rackform/executor/rollout"
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
// It is computed from the plan alone, without running the executor, by
// the rule functions the executor itself calls (executor/rollout), on a
// moment-by-moment account of the plan of its own: stages in turn (1); a
// stage's before-gates, its groups side by side (2), then its after-wait
// beside its after-gates (19, rollout.GateAfter); a group's clusters one
// at a time, the next chosen by window priority and started only inside a
// window (20, rollout.ClusterOrder); a cluster waiting for its release
// blocks (35, rollout.AwaitsRelease); phases in turn, scopes in turn (3,
// 6); a scope's servers on its slots in plan order (7, 4: rollout.Slots);
// the next scope when the scope met its threshold (13: rollout.Met), or,
// with a wait or a pause after it, when every server is done and the wait
// is over (16: rollout.WaitOver), and the pause, which begins then
// (17: rollout.PausesAfter, After.PauseBegins), continued
// (rollout.NextScopeMayStart decides).
//
// A pause holds the whole run, not only its group (rule 12, rollout.Hold:
// nothing new starts anywhere while the run is paused): from the moment it begins no
// server, scope or cluster starts in any group; the servers in flight
// finish; once none is, the run is continued approveAfter later, and every
// group goes on from there (a wait that ended meanwhile, a window that
// opened, are seen then). At one moment, what the executor decides first
// comes first: what time allows (a wait's end, a window), then what the
// servers finishing then allow, each group in plan order; a pause begun by
// one group holds the groups after it.
func CriticalPath(p *plan.Plan, start time.Time, approveAfter time.Duration) (end time.Time, blocked bool) {
	cp := &path{servers: map[string]*plan.Server{}, approveAfter: approveAfter}
	for i := range p.Servers {
		cp.servers[p.Servers[i].Address] = &p.Servers[i]
	}
	t := start
	for _, st := range p.Run.Stages {
		if hasGate(st, false) {
			t = t.Add(approveAfter)
		}
		groupsEnd, b := cp.stageEnd(st, t)
		blocked = blocked || b
		t = groupsEnd
		after := t.Add(time.Duration(st.AfterWait))
		if hasGate(st, true) && t.Add(approveAfter).After(after) {
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

// hasGate reports whether a stage has a gate after it (after), or before.
func hasGate(st plan.Stage, after bool) bool {
	return slices.ContainsFunc(st.Gates, func(g plan.Gate) bool { return rollout.GateAfter(g) == after })
}

func eligible(c *plan.Cluster) int {
	n := 0
	for _, sc := range c.Scopes() {
		n += sc.Eligible
	}
	return n
}

// serverDuration is a server's steps back to back: each its estimate; a
// drain or uncordon without a hook none; a shutdown of a server observed
// off neither.
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

// A stage's groups are simulated together, moment by moment, because a
// pause in one holds them all.

// stageSim is one stage's groups at one moment.
type stageSim struct {
	cp     *path
	groups []*groupSim
	// paused counts the pauses begun and not yet continued: while it is
	// above zero nothing new starts (the run is halted).
	paused []*scopeSim
	// inflight are the servers started and not yet done, by end.
	inflight []time.Time
}

type groupSim struct {
	left    []*plan.Cluster
	cluster *plan.Cluster
	phase   int
	scopes  []*scopeSim
	first   int
	done    bool
	end     time.Time
	// wake is when a window of a cluster waiting to start opens (zero:
	// none is waiting).
	wake time.Time
}

// Pause states.
const (
	pauseNone = iota
	pauseNotStarted
	pausePaused
	pauseDone
)

type scopeSim struct {
	sc     *plan.Scope
	durs   []time.Duration
	ends   []time.Time        // of the servers started, each until it is done
	next   int                // the next server to start
	done   int                // servers done
	state  rollout.ScopeState // ScopeWaiting: not started
	wait   time.Duration
	waitAt time.Time // when the wait ends (zero: not started)
	waited bool
	pause  int
}

func (cp *path) newScopes(c *plan.Cluster, ph plan.Phase) []*scopeSim {
	var out []*scopeSim
	for i := range ph.Scopes {
		sc := &ph.Scopes[i]
		s := &scopeSim{sc: sc, wait: time.Duration(sc.WaitAfter)}
		for _, a := range sc.Servers {
			if sv := cp.servers[a]; sv != nil && sv.Action == plan.ActionUpgrade {
				s.durs = append(s.durs, serverDuration(c, sv))
			}
		}
		if rollout.PausesAfter(&ph, i) {
			s.pause = pauseNotStarted
		}
		out = append(out, s)
	}
	return out
}

// after is the scope's wait and pause, as the rules read them.
func (s *scopeSim) after() rollout.After {
	return rollout.After{Wait: s.wait > 0, WaitOver: s.waited, Pause: s.pause != pauseNone, PauseOver: s.pause == pauseDone}
}

// stageEnd runs a stage's groups from t and returns when the last of them
// is done; blocked: a cluster can never start.
func (cp *path) stageEnd(st plan.Stage, t time.Time) (time.Time, bool) {
	sim := &stageSim{cp: cp}
	for _, g := range st.Groups {
		gs := &groupSim{}
		for i := range g.Clusters {
			c := &g.Clusters[i]
			if rollout.AwaitsRelease(c) {
				return t, true // waits for its release at its site: never in a rehearsal
			}
			if eligible(c) > 0 {
				gs.left = append(gs.left, c)
			}
		}
		if len(gs.left) == 0 {
			gs.done, gs.end = true, t
		}
		sim.groups = append(sim.groups, gs)
	}
	for {
		sim.moment(t)
		end, done := t, true
		for _, g := range sim.groups {
			done = done && g.done
			if g.end.After(end) {
				end = g.end
			}
		}
		if done {
			return end, false
		}
		next, ok := sim.next(t)
		if !ok {
			return t, true
		}
		if len(sim.paused) > 0 && len(sim.inflight) == 0 {
			// The run is quiet and paused: apply ends here, and the
			// pauses are continued approveAfter later; what ends or
			// opens meanwhile is seen then.
			for _, s := range sim.paused {
				s.pause = pauseDone
			}
			sim.paused = nil
		}
		t = next
	}
}

// next is the moment after t at which something happens: a server ends,
// a wait ends, a window opens; with the run paused and quiet, its
// continue.
func (sim *stageSim) next(t time.Time) (time.Time, bool) {
	if len(sim.paused) > 0 && len(sim.inflight) == 0 {
		return t.Add(sim.cp.approveAfter), true
	}
	next := earliest{after: t}
	for _, e := range sim.inflight {
		next.consider(e)
	}
	for _, g := range sim.groups {
		if len(sim.paused) == 0 {
			next.consider(g.wake)
		}
		for _, s := range g.scopes {
			if !s.waitAt.IsZero() && !s.waited {
				next.consider(s.waitAt)
			}
		}
	}
	return next.at, !next.at.IsZero()
}

// earliest is the earliest moment after a time of those it considered
// (at: zero when none was).
type earliest struct{ after, at time.Time }

func (e *earliest) consider(x time.Time) {
	if x.After(e.after) && (e.at.IsZero() || x.Before(e.at)) {
		e.at = x
	}
}

// moment makes every decision at t, in the executor's order: first what
// time allows, each group in plan order; then, the servers ending at t
// done, what that allows, until nothing changes.
func (sim *stageSim) moment(t time.Time) {
	sim.pass(t)
	for {
		finished := false
		for _, g := range sim.groups {
			for _, s := range g.scopes {
				for i := 0; i < len(s.ends); {
					if s.ends[i].After(t) {
						i++
						continue
					}
					s.ends = slices.Delete(s.ends, i, i+1)
					s.done++
					finished = true
				}
			}
		}
		if !finished {
			return
		}
		sim.inflight = slices.DeleteFunc(sim.inflight, func(e time.Time) bool { return !e.After(t) })
		sim.pass(t)
	}
}

// pass steps every group in plan order.
func (sim *stageSim) pass(t time.Time) {
	for _, g := range sim.groups {
		sim.stepGroup(g, t)
	}
}

// halted: nothing new starts anywhere (rule 12).
func (sim *stageSim) halted() bool { return rollout.Hold{Pauses: len(sim.paused)}.Halted() }

// stepGroup runs a group's clusters one after another, choosing the next
// by window priority and starting it only inside a window.
func (sim *stageSim) stepGroup(g *groupSim, t time.Time) {
	for !g.done {
		if g.cluster != nil {
			sim.stepPhase(g, t)
			if g.first < len(g.scopes) {
				return
			}
			g.phase++
			if g.phase < len(g.cluster.Phases) {
				g.scopes, g.first = sim.cp.newScopes(g.cluster, g.cluster.Phases[g.phase]), 0
				continue
			}
			g.left = slices.DeleteFunc(g.left, func(c *plan.Cluster) bool { return c == g.cluster })
			g.cluster, g.scopes = nil, nil
			if len(g.left) == 0 {
				g.done, g.end = true, t
			}
			continue
		}
		if sim.halted() {
			return
		}
		g.wake = time.Time{}
		for _, cd := range rollout.ClusterOrder(g.left, t) {
			if cd.Class.MayStart() {
				g.cluster = cd.Cluster
				break
			}
			if !cd.Opens.IsZero() && (g.wake.IsZero() || cd.Opens.Before(g.wake)) {
				g.wake = cd.Opens
			}
		}
		if g.cluster == nil {
			return
		}
		g.wake = time.Time{}
		g.phase, g.first = 0, 0
		g.scopes = sim.cp.newScopes(g.cluster, g.cluster.Phases[0])
	}
}

// stepPhase runs a phase's scopes in order: the next starts when the
// previous is done with its wait and pause over, or, with neither, as
// soon as it met its threshold.
func (sim *stageSim) stepPhase(g *groupSim, t time.Time) {
	for i := g.first; i < len(g.scopes); i++ {
		s := g.scopes[i]
		sim.stepScope(g, s, t)
		a := s.after()
		done := (s.state == rollout.ScopeCompleted || s.state == rollout.ScopeSkipped) && len(s.ends) == 0 && a.Over()
		if i == g.first && done {
			g.first++
		}
		met := rollout.Met(s.sc, rollout.Counts{Eligible: len(s.durs), Succeeded: s.done})
		if !rollout.NextScopeMayStart(s.state, len(s.ends), a, met) {
			return
		}
	}
}

func (sim *stageSim) stepScope(g *groupSim, s *scopeSim, t time.Time) {
	if s.state == rollout.ScopeWaiting {
		if sim.halted() {
			return
		}
		if len(s.durs) == 0 {
			s.state = rollout.ScopeSkipped
			return
		}
		s.state = rollout.ScopeRunning
	}
	if s.state == rollout.ScopeRunning {
		width := rollout.Slots(s.sc, len(s.durs))
		for !sim.halted() && s.next < len(s.durs) && len(s.ends) < width {
			e := t.Add(s.durs[s.next])
			s.ends = append(s.ends, e)
			sim.inflight = append(sim.inflight, e)
			s.next++
		}
		if s.next == len(s.durs) && len(s.ends) == 0 {
			s.state = rollout.ScopeCompleted
		}
	}
	if s.state != rollout.ScopeCompleted {
		return
	}
	if s.wait > 0 && !s.waited {
		if s.waitAt.IsZero() {
			s.waitAt = t.Add(s.wait)
		}
		if !rollout.WaitOver(s.waitAt, t) {
			return
		}
		s.waited = true
	}
	if s.pause == pauseNotStarted && s.after().PauseBegins() {
		s.pause = pausePaused
		sim.paused = append(sim.paused, s)
	}
}
