package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/rackform/rackform/executor/rollout"
	"github.com/rackform/rackform/planner/plan"
)

// Scheduling from the run down to the scopes: level-triggered decisions
// ("given this state, what may start now?"), the same after a crash.

func (r *runner) wake(t time.Time) {
	if r.deadline.IsZero() || t.Before(r.deadline) {
		r.deadline = t
	}
}

func (r *runner) halted() bool {
	return rollout.Hold{
		Pauses: r.m.pauses, Breaches: r.m.breaches,
		Interrupted: r.graceful, Stopping: r.m.stopRequested(), ProviderDown: len(r.down) > 0,
		Ended: r.m.run.st.Name.Terminal(), GroupFailed: r.groupFailed(),
	}.Halted()
}

// reconcile makes every decision the current state allows, until nothing
// changes. Decisions are level-triggered: after a crash the same function
// picks up from the replayed state.
func (r *runner) reconcile(ctx context.Context) {
	for i := 0; r.err == nil; i++ {
		if i == 100000 {
			// Decisions converge in a few passes; this only guards against
			// a journal edited into a contradiction.
			r.err = fmt.Errorf("plan %s: the scheduler did not settle; the journal may be inconsistent", short(r.sha))
			return
		}
		r.changed = false
		r.deadline = time.Time{}
		for ; r.skipsAt < len(r.m.skips); r.skipsAt++ {
			if n := r.m.nodes[r.m.skips[r.skipsAt]]; n != nil {
				r.skipFailed(ctx, n)
				r.skipTree(ctx, n)
			}
		}
		r.unholdStarts()
		r.stepRun(ctx)
		// Servers waiting for the others on their BMC are decided again:
		// any record may have brought one of those down.
		r.ready = append(r.ready, r.barred...)
		r.barred = nil
		for len(r.ready) > 0 && r.err == nil {
			sv := r.ready[0]
			r.ready = r.ready[1:]
			r.decide(ctx, sv)
		}
		if !r.changed {
			r.flush(ctx)
			if r.changed && r.err == nil {
				continue // the flush read others' records (workers.go): decide on them
			}
			return
		}
	}
}

func (r *runner) skipTree(ctx context.Context, n *node) {
	if n.st.Name.Terminal() {
		r.clearBreaches(n)
		if r.w != nil && n.st.Name == Skipped {
			// Several workers: the leader skipped the stage, the groups
			// under it are their claimants' to record (workers.go).
			for _, k := range n.kids {
				r.skipTree(ctx, k)
			}
		}
		return
	}
	n.skip = true
	for _, k := range n.kids {
		r.skipTree(ctx, k)
	}
	if n.kind == KindScope {
		for _, k := range []*node{n.wait, n.pause} {
			if k != nil {
				r.skipTree(ctx, k)
			}
		}
	}
	if n.kind == KindServer && (r.ops.of(n) != nil || n.sv.begun) {
		// Its steps began: skipped once its operation in flight returned
		// and its safety steps brought it back (skipServer).
		r.ready = append(r.ready, n)
		return
	}
	r.set(ctx, n, State{Name: Skipped, Reason: ReasonUser, Message: "skipped by the operator"})
}

// clearBreaches stops failed(threshold) scopes under a skipped node from
// holding the run: the operator skipped past them (a stage paused by its
// on_breach = "pause" is resumed by skipping it).
func (r *runner) clearBreaches(n *node) {
	if n.kind == KindScope && isBreach(n, n.st) && !n.cleared {
		n.cleared = true
		r.m.breaches--
	}
	for _, k := range n.kids {
		r.clearBreaches(k)
	}
}

func (r *runner) stepRun(ctx context.Context) {
	run := r.m.run
	if run.st.Name.Terminal() {
		return
	}
	for _, st := range run.kids {
		if !r.stepStage(ctx, st) {
			break
		}
	}
	switch {
	case r.graceful:
	case r.m.stopRequested():
		if r.ops.inflight() > 0 {
			r.set(ctx, run, State{Name: Stopping, Message: "stop requested: operations in flight finish, nothing new starts"})
		}
	default:
		r.refresh(ctx, run)
	}
}

// stepStage advances a stage; it reports whether the next stage may start
// (rule 1: completed or skipped, with its after-wait and gates done).
func (r *runner) stepStage(ctx context.Context, s *node) bool {
	switch s.st.Name {
	case Completed, Skipped:
		return true
	case Failed:
		return false
	}
	for _, g := range s.before {
		r.stepGate(ctx, g)
	}
	for _, g := range s.before {
		if !g.st.Name.Terminal() {
			if s.st.Name == NotStarted || s.st.Name == Pending {
				r.set(ctx, s, State{Name: Pending, Reason: ReasonApproval, Message: "waiting for approval: rackform approve " + g.id})
			}
			return false
		}
	}
	groupsDone, groupFailed := true, false
	for _, g := range s.groups {
		if r.mine(g) {
			r.stepGroup(ctx, g)
		}
		if !g.st.Name.Terminal() {
			groupsDone = false
		}
		if g.st.Name == Failed {
			groupFailed = true
		}
	}
	if groupsDone && !groupFailed {
		// Rule 19: the after-stage wait and gates start together.
		for _, g := range s.after {
			r.stepGate(ctx, g)
		}
		if s.wait != nil {
			r.stepWait(ctx, s.wait, time.Duration(s.stage.AfterWait))
		}
	}
	r.refresh(ctx, s)
	return s.st.Name == Completed || s.st.Name == Skipped
}

func (r *runner) stepGate(ctx context.Context, g *node) {
	switch g.st.Name {
	case NotStarted:
		r.set(ctx, g, State{Name: Pending, Reason: ReasonApproval, Message: "run: rackform approve " + g.id})
		if r.m.approved[g.id] {
			r.set(ctx, g, State{Name: Completed, Message: "approved"})
		}
	case Pending:
		if r.m.approved[g.id] {
			r.set(ctx, g, State{Name: Completed, Message: "approved"})
		}
	}
}

func (r *runner) stepWait(ctx context.Context, w *node, d time.Duration) {
	now := r.o.Clock.Now()
	switch w.st.Name {
	case NotStarted:
		until := now.Add(d).UTC()
		r.set(ctx, w, State{Name: Running, Message: "waiting " + d.String(), Until: &until})
		r.wake(until)
	case Running:
		if w.st.Until == nil || rollout.WaitOver(*w.st.Until, now) {
			r.set(ctx, w, State{Name: Completed})
		} else {
			r.wake(*w.st.Until)
		}
	}
}

// stepGroup runs the group's clusters one after another, choosing the next
// by window priority and starting a cluster only inside a window (rule 20).
func (r *runner) stepGroup(ctx context.Context, g *node) {
	if g.st.Name.Terminal() {
		return
	}
	for r.err == nil {
		var active *node
		for _, c := range g.clusters {
			if !c.st.Name.Terminal() && c.st.Name != NotStarted && c.st.Name != Pending {
				active = c
				break
			}
		}
		if active != nil {
			r.stepCluster(ctx, active)
			if !active.st.Name.Terminal() {
				break
			}
			continue
		}
		if r.halted() {
			break
		}
		var waiting []*plan.Cluster
		nodes := map[*plan.Cluster]*node{}
		for _, c := range g.clusters {
			if c.st.Name == NotStarted || c.st.Name == Pending {
				waiting = append(waiting, c.cluster)
				nodes[c.cluster] = c
			}
		}
		var started *node
		for _, cd := range rollout.ClusterOrder(waiting, r.o.Clock.Now()) {
			c := nodes[cd.Cluster]
			if r.awaitsRelease(ctx, c) {
				continue // pending(availability): the next member is tried
			}
			if cd.Class.MayStart() {
				started = c
				break
			}
			st := State{Name: Pending, Reason: ReasonWindow, Message: "maintenance window closed; no opening before the plan expires"}
			if !cd.Opens.IsZero() {
				u := cd.Opens.UTC()
				st.Until, st.Message = &u, "maintenance window closed; opens "+u.Format(time.RFC3339)
				r.wake(cd.Opens)
			}
			r.set(ctx, c, st)
		}
		if started == nil {
			break
		}
		r.startChain(ctx, started)
	}
	r.refresh(ctx, g)
}

// startChain sets n running, and first its ancestors that are not yet:
// they would derive running anyway, but setting them top-down keeps the
// event stream in tree order for views.
func (r *runner) startChain(ctx context.Context, n *node) {
	var chain []*node
	for p := n; p != nil; p = p.parent {
		if p.st.Name == NotStarted || p.st.Name == Pending || p == n {
			chain = append(chain, p)
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		r.set(ctx, chain[i], State{Name: Running})
	}
}

func (r *runner) stepCluster(ctx context.Context, c *node) {
	for _, ph := range c.kids {
		r.stepPhase(ctx, ph)
		if !ph.st.Name.Terminal() {
			break
		}
	}
	r.refresh(ctx, c)
}

// refresh derives a container's state from its children.
func (r *runner) refresh(ctx context.Context, n *node) {
	if n.st.Name.Terminal() || !n.dirty || !r.writes(n) {
		return
	}
	n.dirty = false
	st := r.runState(n, derive(n)) // runstate.go: fail fast, skip accounting
	if st.Name == NotStarted && (n.st.Name == Pending || n.st.Name == Running) {
		return // explicit: waiting for a window or approval, or just started
	}
	r.set(ctx, n, st)
}

func derive(n *node) State {
	var running, pending, paused, failed, notStarted, skipped, terminal int
	var firstPaused, firstPending, firstFailed *node
	for _, k := range n.kids {
		if k.kind == KindScope && k.st.Name == Skipped && k.sc.running > 0 {
			// Skipped by the operator with servers whose steps began: they
			// are being brought back (safety steps); nothing above them
			// ends before they do.
			running++
			continue
		}
		switch k.st.Name {
		case Running, Stopping, Stopped:
			running++
		case Pending:
			pending++
			if firstPending == nil {
				firstPending = k
			}
		case Paused:
			paused++
			if firstPaused == nil {
				firstPaused = k
			}
		case Failed:
			failed++
			terminal++
			if firstFailed == nil {
				firstFailed = k
			}
		case Skipped:
			skipped++
			terminal++
		case Completed:
			terminal++
		default:
			notStarted++
		}
	}
	switch {
	case failed > 0:
		msg := firstFailed.id + " failed"
		if n.kind == KindStage && n.stage.OnBreach == "pause" {
			return State{Name: Paused, Reason: ReasonThreshold, Message: msg + "; skip it or plan again, then rackform continue"}
		}
		return State{Name: Failed, Reason: ReasonThreshold, Message: msg}
	case paused > 0:
		return State{Name: Paused, Reason: firstPaused.st.Reason, Message: firstPaused.id + ": " + firstPaused.st.Message}
	case terminal == len(n.kids):
		if skipped == len(n.kids) {
			if n.skip {
				return State{Name: Skipped, Reason: ReasonUser, Message: "skipped by the operator"}
			}
			return State{Name: Skipped, Reason: ReasonEmpty, Message: "nothing to do"}
		}
		return State{Name: Completed}
	case running > 0 || (terminal > 0 && notStarted > 0):
		return State{Name: Running}
	case pending > 0:
		return State{Name: Pending, Reason: firstPending.st.Reason, Message: firstPending.id + ": " + firstPending.st.Message, Until: firstPending.st.Until}
	}
	return State{Name: NotStarted}
}
