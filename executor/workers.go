package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// Several workers on one run (Claimer). Every apply of the run is a
// worker: it joins with a lease, claims rollout groups (the units the
// strategy lets run in parallel: groups of a stage run in parallel, and
// everything inside a group — its clusters one after another, their phases,
// racks, thresholds, pauses — is decided by the one worker that claimed
// it), and polls the journal for the others' records. The scopes above the
// groups (the run, the stages, their gates and waits) are written only by
// the leader, the worker holding the state lock; another worker takes the
// lock over when the leader's lease expires.

// workerMode is a runner's part in a run shared by several workers; nil
// when the backend is not a Claimer.
type workerMode struct {
	c      Claimer
	info   LockInfo
	leader bool
	held   map[string]bool
	// last claim pass, and the candidates it saw.
	claimedAt time.Time
	seen      []string
	ledAt     time.Time
	checkedAt time.Time
	busy      bool
	// parked: servers recorded started whose first action was held back
	// because another worker's record halted the run meanwhile.
	parked []*node
}

// crew is the runner's dealings with the other workers of a shared run:
// claiming groups, taking over the lead, holding starts that another
// worker's record halted, and whether the run may end.
type crew struct{ r *runner }

// unitOf is the group n belongs to (n itself for a group); nil above.
func unitOf(n *node) *node { return ancestor(n, KindGroup) }

// writes reports whether this worker may record n's state changes: a node
// of a group it claimed, or, for the leader, a node above the groups.
func (r *runner) writes(n *node) bool {
	if r.w == nil {
		return true
	}
	if u := unitOf(n); u != nil {
		return r.w.held[u.id]
	}
	return r.w.leader
}

// mine: this worker drives n's group.
func (r *runner) mine(n *node) bool {
	if r.w == nil {
		return true
	}
	u := unitOf(n)
	return u != nil && r.w.held[u.id]
}

// workerLabel names this worker in step records.
func (r *runner) workerLabel() string {
	if r.w == nil {
		return ""
	}
	return r.o.Holder + " worker " + r.w.info.ID
}

// candidates are the groups that may run now or next: the groups not yet
// ended of the stages up to the first stage that has not ended.
func (cw *crew) candidates() []*node {
	var out []*node
	for _, st := range cw.r.m.run.kids {
		if st.kind != KindStage {
			continue
		}
		for _, g := range st.groups {
			if !g.st.Name.Terminal() {
				out = append(out, g)
			}
		}
		if !st.st.Name.Terminal() {
			break
		}
	}
	return out
}

// workerPass takes the leader's role when it is free or its holder's lease
// expired, releases ended groups, gives up groups not started beyond its
// fair share when more workers are live (rebalance), and claims groups up
// to a fair share.
// It reports whether this worker now holds a group it did not hold, or
// read records: either way, the runner decides again.
func (cw *crew) workerPass(ctx context.Context) bool {
	from := cw.r.j.cursor
	grew := cw.claimPass(ctx)
	return cw.r.err == nil && (grew || cw.r.j.cursor != from)
}

func (cw *crew) claimPass(ctx context.Context) bool {
	w := cw.r.w
	if w == nil || cw.r.err != nil || cw.r.graceful {
		return false
	}
	now := cw.r.o.Clock.Now()
	if !w.leader && now.Sub(w.ledAt) >= cw.r.o.PollInterval {
		w.ledAt = now
		cw.tryLead(ctx)
	}
	var done []string
	for id := range w.held {
		if n := cw.r.m.nodes[id]; n != nil && n.st.Name.Terminal() && !cw.unitActive(n) {
			done = append(done, id)
		}
	}
	if len(done) > 0 {
		slices.Sort(done)
		if err := w.c.Release(ctx, cw.r.sha, done); err != nil {
			cw.r.err = fmt.Errorf("releasing groups of plan %s: %w", plan.ShortSHA(cw.r.sha), err)
			return false
		}
		for _, id := range done {
			delete(w.held, id)
		}
	}
	cands := cw.candidates()
	var ids []string
	want := false
	for _, g := range cands {
		ids = append(ids, g.id)
		if !w.held[g.id] {
			want = true
		}
	}
	if slices.Equal(ids, w.seen) && now.Sub(w.claimedAt) < cw.r.o.PollInterval {
		return false
	}
	// Groups this worker could give up to a worker that joined: held, and
	// nothing of them started yet.
	var spare []string
	mine := 0
	for _, g := range cands {
		if w.held[g.id] {
			mine++
			if cw.untouched(g) {
				spare = append(spare, g.id)
			}
		}
	}
	if !want && (mine < 2 || len(spare) == 0) {
		return false
	}
	w.seen, w.claimedAt = ids, now
	_, live, err := w.c.Claims(ctx, cw.r.sha)
	if err != nil {
		cw.r.err = fmt.Errorf("reading the claims of plan %s: %w", plan.ShortSHA(cw.r.sha), err)
		return false
	}
	live = max(live, 1)
	share := (len(ids) + live - 1) / live
	if !cw.rebalance(ctx, mine-share, spare, live) || !want {
		return false
	}
	held, adopted, err := w.c.Claim(ctx, cw.r.sha, ids, share)
	if err != nil {
		cw.r.err = fmt.Errorf("claiming groups of plan %s: %w", plan.ShortSHA(cw.r.sha), err)
		return false
	}
	var fresh []string
	for _, id := range held {
		if !w.held[id] {
			fresh = append(fresh, id)
		}
	}
	if len(fresh) == 0 {
		return false
	}
	// What the previous holder recorded up to its release (or its lease's
	// expiry) is durable by now: read it before deciding anything for
	// these groups, or a step it finished would look in flight.
	cw.r.poll(ctx)
	if cw.r.err != nil {
		return false
	}
	var ended []string
	grew := false
	for _, id := range fresh {
		if g := cw.r.m.nodes[id]; g == nil || g.st.Name.Terminal() {
			ended = append(ended, id)
			continue
		}
		w.held[id], grew = true, true
		msg := "claimed by this worker"
		if slices.Contains(adopted, id) {
			msg = "adopted by this worker: the worker that had claimed it stopped renewing its lease; its servers in flight resume from the journal"
		}
		cw.r.event(Event{Type: "group_claimed", ID: id, Kind: KindGroup, By: cw.r.workerLabel(), Message: msg})
		// Its servers already started (by a worker gone, or by this one
		// before a restart) resume from the journal: a recorded BMC task is
		// polled, a versioned step verified, never run blindly again.
		for _, n := range cw.r.m.order {
			if u := unitOf(n); u == nil || u.id != id {
				continue
			}
			n.dirty = true
			if n.kind == KindServer && !n.st.Name.Terminal() && n.st.Name != NotStarted && n.st.Name != Pending {
				cw.r.ready = append(cw.r.ready, n)
			}
		}
	}
	if grew {
		// Skips recorded before: their effect on these groups was not this
		// worker's to write then (skipTree is idempotent).
		cw.r.skipsAt = 0
	}
	if len(ended) > 0 {
		if err := w.c.Release(ctx, cw.r.sha, ended); err != nil {
			cw.r.err = fmt.Errorf("releasing groups of plan %s: %w", plan.ShortSHA(cw.r.sha), err)
			return false
		}
	}
	return grew
}

// rebalance gives up surplus groups (at most n, the last of spare): more
// workers are live than when this worker claimed, and a group nothing of
// which has started can run on one of them instead. Only above the fair
// share (rounded up), which the others claim up to, so no group goes back
// and forth; never a group with anything started, which stays with the
// worker that started it (or is adopted once its lease expired). The
// group leaves this worker's held set before its claim is released: from
// then on this worker writes nothing of it. It reports whether the pass
// may go on (false after an error).
func (cw *crew) rebalance(ctx context.Context, n int, spare []string, live int) bool {
	if n <= 0 || len(spare) == 0 {
		return true
	}
	give := spare[max(0, len(spare)-n):]
	for _, id := range give {
		delete(cw.r.w.held, id)
	}
	if err := cw.r.w.c.Release(ctx, cw.r.sha, give); err != nil {
		cw.r.err = fmt.Errorf("releasing groups of plan %s: %w", plan.ShortSHA(cw.r.sha), err)
		return false
	}
	cw.r.o.Logger.Info(fmt.Sprintf("%d workers on the run: released %d groups not started for the others to claim: %s", live, len(give), strings.Join(give, ", ")))
	return true
}

// untouched: nothing of group g has started. The group and its clusters
// are not started or pending (waiting for a maintenance window or for
// their release), everything below them not started (or skipped), no
// server's steps begun and none in flight in this process: whoever claims
// it next decides all of it afresh from the plan and the journal.
func (cw *crew) untouched(g *node) bool {
	var walk func(n *node) bool
	walk = func(n *node) bool {
		switch st := n.st.Name; {
		case st == NotStarted, st == Skipped:
		case st == Pending && (n.kind == KindGroup || n.kind == KindCluster):
		default:
			return false
		}
		if n.sv != nil && n.sv.begun {
			return false
		}
		for _, k := range n.kids {
			if !walk(k) {
				return false
			}
		}
		return true
	}
	return walk(g) && !cw.unitActive(g)
}

// unitActive: a server of group g is in flight in this process.
func (cw *crew) unitActive(g *node) bool {
	for o := range cw.r.ops.all() {
		if unitOf(o.sv) == g {
			return true
		}
	}
	return false
}

// groupFailed: with several workers, a group that failed halts the run at
// once, as its stage's failure (or threshold pause) would, which only the
// leader records: nothing new starts on any worker meanwhile.
func (r *runner) groupFailed() bool {
	if r.w == nil {
		return false
	}
	for _, st := range r.m.run.kids {
		if st.st.Name.Terminal() {
			continue
		}
		for _, g := range st.groups {
			if g.st.Name == Failed {
				return true
			}
		}
	}
	return false
}

// tryLead takes the state lock when it is free or its holder is gone. Not
// while a stop is in force: a new leader records a run start, which would
// end the stop.
func (cw *crew) tryLead(ctx context.Context) {
	if cw.r.m.stopRequested() {
		return
	}
	replaced, err := acquire(ctx, cw.r.o.Backend, cw.r.w.info, 0, cw.r.o.Clock, cw.r.o.PollInterval, cw.r.o.HolderGone)
	var le *LockedError
	if errors.As(err, &le) {
		return
	}
	if err != nil {
		cw.r.err = fmt.Errorf("locking the state for plan %s: %w", plan.ShortSHA(cw.r.sha), err)
		return
	}
	cw.r.w.leader = true
	cw.r.poll(ctx) // the former leader's last records, before writing after them
	cw.r.skipsAt = 0
	msg := "this worker leads the run (the leader's lock was free)"
	if replaced != nil {
		msg = tookOverFrom(*replaced)
		cw.r.o.Logger.Warn(msg)
	}
	cw.r.emit(ctx, &Record{Type: recRunStarted, PlanSHA256: cw.r.sha, PID: os.Getpid(), By: cw.r.workerLabel(), Message: msg})
	for _, n := range cw.r.m.order {
		if unitOf(n) == nil {
			n.dirty = true
		}
	}
}

// mayFinish: with several workers, a worker does not end its apply while
// another live worker drives a group that is still going (the run is not
// over until that group is), nor, when it does not lead, while the leader
// still has the run's transitions to write.
func (cw *crew) mayFinish(ctx context.Context, out Outcome) bool {
	w := cw.r.w
	if w == nil || cw.r.m.run.st.Name.Terminal() || cw.r.graceful || cw.r.err != nil {
		return true
	}
	now := cw.r.o.Clock.Now()
	if now.Sub(w.checkedAt) < cw.r.o.PollInterval {
		return !w.busy
	}
	w.checkedAt = now
	w.busy = cw.othersBusy(ctx, out)
	return !w.busy
}

func (cw *crew) othersBusy(ctx context.Context, out Outcome) bool {
	w := cw.r.w
	claims, _, err := w.c.Claims(ctx, cw.r.sha)
	if err != nil {
		cw.r.err = fmt.Errorf("reading the claims of plan %s: %w", plan.ShortSHA(cw.r.sha), err)
		return false
	}
	halted := cw.r.m.stopRequested() || cw.r.m.breaches > 0 || cw.r.m.pauses > 0
	for id, by := range claims {
		g := cw.r.m.nodes[id]
		if by == w.info.ID || g == nil || g.st.Name.Terminal() {
			continue
		}
		if !halted && g.st.Name != Pending && g.parent.st.Name != Pending {
			return true // the other worker is driving it
		}
		for _, sv := range cw.r.m.order {
			if sv.kind == KindServer && unitOf(sv) == g && (sv.st.Name == Running || sv.st.Name == Stopping) {
				return true // in flight there: it finishes first
			}
		}
	}
	// Groups that nobody holds yet but that will start: claimed at the
	// next pass, by this worker or another.
	if !halted {
		for _, g := range cw.candidates() {
			if claims[g.id] == "" && g.st.Name != Pending && g.parent.st.Name != Pending && !w.held[g.id] {
				return true
			}
		}
	}
	if !w.leader && out.Reason == ReasonBlocked {
		// The leader writes the stage and run transitions this worker
		// waits for; while it runs, wait for them.
		if h, err := cw.r.o.Backend.LockHolder(ctx); err == nil && h.PlanSHA256 == cw.r.sha && !cw.r.o.HolderGone(*h) {
			return true
		}
		w.ledAt = time.Time{} // the lock is free or stale: lead
		return true
	}
	// The claims were read after the journal: a worker that released a
	// group had journaled its end before. Read the journal again; if it
	// brought anything, decide again before ending.
	before := cw.r.j.cursor
	cw.r.poll(ctx)
	if cw.r.j.cursor != before {
		w.checkedAt = time.Time{}
		return true
	}
	return false
}

// holdStarts closes the window between this worker's last journal read
// and its write: another worker may have recorded a breach, a pause or a
// stop meanwhile. Once the records starting servers are durable, and
// before the first action on those servers (their pre-flight
// observation), the journal is read again; if the run is now halted, those
// servers are left untouched (recorded running, nothing done on them yet)
// until it goes on, as a single apply would not have started them.
func (cw *crew) holdStarts(ctx context.Context, launch []*opRun) []*opRun {
	if cw.r.w == nil {
		return launch
	}
	if !slices.ContainsFunc(launch, func(o *opRun) bool { return o.kind == opObserve }) {
		return launch
	}
	cw.r.poll(ctx)
	if cw.r.err != nil || !cw.r.halted() || cw.r.graceful {
		return launch
	}
	keep := launch[:0]
	for _, o := range launch {
		if o.kind != opObserve {
			keep = append(keep, o)
			continue
		}
		cw.r.ops.remove(o)
		cw.r.w.parked = append(cw.r.w.parked, o.sv)
		cw.r.event(Event{Type: "server_held", Server: o.sv.id, Message: "not started: another worker halted the run (a breach, a pause or a stop) just before; it starts when the run goes on"})
	}
	return keep
}

// unholdStarts lets held servers start once the run goes on.
func (cw *crew) unholdStarts() {
	if cw.r.w == nil || len(cw.r.w.parked) == 0 || cw.r.halted() {
		return
	}
	cw.r.ready = append(cw.r.ready, cw.r.w.parked...)
	cw.r.w.parked = nil
}
