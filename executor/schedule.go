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

// scheduler walks the run tree and applies the rollout rules
// (executor/rollout) to it: what starts, waits, pauses or ends now. What it
// decides it journals through the runner (set), and the servers it starts
// it hands to the runner's per-server decisions (ready).
type scheduler struct{ r *runner }

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
func (sch *scheduler) reconcile(ctx context.Context) {
	for i := 0; sch.r.err == nil; i++ {
		if i == 100000 {
			// Decisions converge in a few passes; this only guards against
			// a journal edited into a contradiction.
			sch.r.err = fmt.Errorf("plan %s: the scheduler did not settle; the journal may be inconsistent", plan.ShortSHA(sch.r.sha))
			return
		}
		sch.r.changed = false
		sch.r.deadline = time.Time{}
		for ; sch.r.skipsAt < len(sch.r.m.skips); sch.r.skipsAt++ {
			if n := sch.r.m.nodes[sch.r.m.skips[sch.r.skipsAt]]; n != nil {
				sch.skipFailed(ctx, n)
				sch.skipTree(ctx, n)
			}
		}
		sch.r.crew.unholdStarts()
		sch.stepRun(ctx)
		// Servers waiting for the others on their BMC are decided again:
		// any record may have brought one of those down.
		sch.r.ready = append(sch.r.ready, sch.r.barred...)
		sch.r.barred = nil
		for len(sch.r.ready) > 0 && sch.r.err == nil {
			sv := sch.r.ready[0]
			sch.r.ready = sch.r.ready[1:]
			sch.r.decide(ctx, sv)
		}
		if !sch.r.changed {
			sch.r.flush(ctx)
			if sch.r.changed && sch.r.err == nil {
				continue // the flush read others' records (workers.go): decide on them
			}
			return
		}
	}
}

func (sch *scheduler) skipTree(ctx context.Context, n *node) {
	if n.st.Name.Terminal() {
		sch.clearBreaches(n)
		if sch.r.w != nil && n.st.Name == Skipped {
			// Several workers: the leader skipped the stage, the groups
			// under it are their claimants' to record (workers.go).
			for _, k := range n.kids {
				sch.skipTree(ctx, k)
			}
		}
		return
	}
	n.skip = true
	for _, k := range n.kids {
		sch.skipTree(ctx, k)
	}
	if n.kind == KindScope {
		for _, k := range []*node{n.wait, n.pause} {
			if k != nil {
				sch.skipTree(ctx, k)
			}
		}
	}
	if n.kind == KindServer && (sch.r.ops.of(n) != nil || n.sv.begun) {
		// Its steps began: skipped once its operation in flight returned
		// and its safety steps brought it back (skipServer).
		sch.r.ready = append(sch.r.ready, n)
		return
	}
	sch.r.set(ctx, n, State{Name: Skipped, Reason: ReasonUser, Message: "skipped by the operator"})
}

// clearBreaches stops failed(threshold) scopes under a skipped node from
// holding the run: the operator skipped past them (a stage paused by its
// on_breach = "pause" is resumed by skipping it).
func (sch *scheduler) clearBreaches(n *node) {
	if n.kind == KindScope && isBreach(n, n.st) && !n.cleared {
		n.cleared = true
		sch.r.m.breaches--
	}
	for _, k := range n.kids {
		sch.clearBreaches(k)
	}
}

func (sch *scheduler) stepRun(ctx context.Context) {
	run := sch.r.m.run
	if run.st.Name.Terminal() {
		return
	}
	for _, st := range run.kids {
		if !sch.stepStage(ctx, st) {
			break
		}
	}
	switch {
	case sch.r.graceful:
	case sch.r.m.stopRequested():
		if sch.r.ops.inflight() > 0 {
			sch.r.set(ctx, run, State{Name: Stopping, Message: "stop requested: operations in flight finish, nothing new starts"})
		}
	default:
		sch.refresh(ctx, run)
	}
}

// stepStage advances a stage; it reports whether the next stage may start
// (rule 1: completed or skipped, with its after-wait and gates done).
func (sch *scheduler) stepStage(ctx context.Context, s *node) bool {
	switch s.st.Name {
	case Completed, Skipped:
		return true
	case Failed:
		return false
	}
	for _, g := range s.before {
		sch.stepGate(ctx, g)
	}
	for _, g := range s.before {
		if !g.st.Name.Terminal() {
			if s.st.Name == NotStarted || s.st.Name == Pending {
				sch.r.set(ctx, s, State{Name: Pending, Reason: ReasonApproval, Message: "waiting for approval: " + NextAction{Kind: NextApprove, Gate: g.id}.Ref()})
			}
			return false
		}
	}
	groupsDone, groupFailed := true, false
	for _, g := range s.groups {
		if sch.r.mine(g) {
			sch.stepGroup(ctx, g)
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
			sch.stepGate(ctx, g)
		}
		if s.wait != nil {
			sch.stepWait(ctx, s.wait, time.Duration(s.stage.AfterWait))
		}
	}
	sch.refresh(ctx, s)
	return s.st.Name == Completed || s.st.Name == Skipped
}

func (sch *scheduler) stepGate(ctx context.Context, g *node) {
	switch g.st.Name {
	case NotStarted:
		sch.r.set(ctx, g, State{Name: Pending, Reason: ReasonApproval, Message: "run: " + NextAction{Kind: NextApprove, Gate: g.id}.Ref()})
		fallthrough
	case Pending:
		if sch.r.m.approved[g.id] {
			sch.r.set(ctx, g, State{Name: Completed, Message: "approved"})
		}
	}
}

func (sch *scheduler) stepWait(ctx context.Context, w *node, d time.Duration) {
	now := sch.r.o.Clock.Now()
	switch w.st.Name {
	case NotStarted:
		until := now.Add(d).UTC()
		sch.r.set(ctx, w, State{Name: Running, Message: "waiting " + d.String(), Until: &until})
		sch.r.wake(until)
	case Running:
		if w.st.Until == nil || rollout.WaitOver(*w.st.Until, now) {
			sch.r.set(ctx, w, State{Name: Completed})
		} else {
			sch.r.wake(*w.st.Until)
		}
	}
}

// stepGroup runs the group's clusters one after another, choosing the next
// by window priority and starting a cluster only inside a window (rule 20).
func (sch *scheduler) stepGroup(ctx context.Context, g *node) {
	if g.st.Name.Terminal() {
		return
	}
	for sch.r.err == nil {
		var active *node
		for _, c := range g.clusters {
			if !c.st.Name.Terminal() && c.st.Name != NotStarted && c.st.Name != Pending {
				active = c
				break
			}
		}
		if active != nil {
			sch.stepCluster(ctx, active)
			if !active.st.Name.Terminal() {
				break
			}
			continue
		}
		if sch.r.halted() {
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
		for _, cd := range rollout.ClusterOrder(waiting, sch.r.o.Clock.Now()) {
			c := nodes[cd.Cluster]
			if sch.awaitsRelease(ctx, c) {
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
				sch.r.wake(cd.Opens)
			}
			sch.r.set(ctx, c, st)
		}
		if started == nil {
			break
		}
		sch.startChain(ctx, started)
	}
	sch.refresh(ctx, g)
}

// startChain sets n running, and first its ancestors that are not yet:
// they would derive running anyway, but setting them top-down keeps the
// event stream in tree order for views.
func (sch *scheduler) startChain(ctx context.Context, n *node) {
	var chain []*node
	for p := n; p != nil; p = p.parent {
		if p.st.Name == NotStarted || p.st.Name == Pending || p == n {
			chain = append(chain, p)
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		sch.r.set(ctx, chain[i], State{Name: Running})
	}
}

func (sch *scheduler) stepCluster(ctx context.Context, c *node) {
	for _, ph := range c.kids {
		sch.stepPhase(ctx, ph)
		if !ph.st.Name.Terminal() {
			break
		}
	}
	sch.refresh(ctx, c)
}

// refresh derives a container's state from its children.
func (sch *scheduler) refresh(ctx context.Context, n *node) {
	if n.st.Name.Terminal() || !n.dirty || !sch.r.writes(n) {
		return
	}
	n.dirty = false
	st := sch.runState(n, derive(n)) // runstate.go: fail fast, skip accounting
	if st.Name == NotStarted && (n.st.Name == Pending || n.st.Name == Running) {
		return // explicit: waiting for a window or approval, or just started
	}
	sch.r.set(ctx, n, st)
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
			return State{Name: Paused, Reason: ReasonThreshold, Message: msg + "; skip it or plan again, then " + NextAction{Kind: NextContinue}.Ref()}
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
