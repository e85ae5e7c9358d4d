package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Executor applies one plan. Run drives it; Continue, Approve, Stop and Skip
// record control requests that a running or later Run obeys; Status reads
// the state. Every method replays the journal from the backend, so any
// process with the same backend sees the same state.
type Executor struct {
	o Options
}

// New checks the options and the plan's run tree. It does no I/O.
func New(opts Options) (*Executor, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	if _, err := buildModel(opts.Plan); err != nil {
		return nil, fmt.Errorf("plan %s: %w", short(opts.PlanSHA256), err)
	}
	return &Executor{o: opts}, nil
}

// load rebuilds the model from the plan and the journal. It returns the
// position of the last record read.
func (e *Executor) load(ctx context.Context) (*model, int64, error) {
	m, err := buildModel(e.o.Plan)
	if err != nil {
		return nil, 0, err
	}
	entries, err := e.o.Backend.Read(ctx, e.o.PlanSHA256, -1)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, 0, fmt.Errorf("reading the journal of plan %s: %w", short(e.o.PlanSHA256), err)
	}
	cursor := int64(-1)
	for i, en := range entries {
		cursor = en.Pos
		if crashDebris(en.Data) {
			continue
		}
		r, err := decodeRecord(en.Data)
		if err != nil {
			if i == len(entries)-1 {
				// The last line of a crashed writer; it announced nothing
				// that was acted on (actions follow the fsync).
				e.o.Logger.Warn("ignoring an unreadable last journal record", "plan", short(e.o.PlanSHA256), "pos", en.Pos)
				continue
			}
			return nil, 0, fmt.Errorf("journal of plan %s is corrupt at position %d: %w", short(e.o.PlanSHA256), en.Pos, err)
		}
		if err := m.apply(r, en.Pos); err != nil {
			return nil, 0, fmt.Errorf("journal of plan %s at position %d: %w", short(e.o.PlanSHA256), en.Pos, err)
		}
	}
	return m, cursor, nil
}

// opKind is what a worker does.
type opKind int

const (
	opObserve opKind = iota // pre-flight observation (drift, already at target)
	opApply                 // a provider step
	opHook                  // drain or uncordon
	opPoll                  // resume: poll the recorded BMC task
	opVerify                // resume: observe whether an unconfirmed step took effect
)

// opRun is one unit of provider or hook work for one server.
type opRun struct {
	sv    *node
	kind  opKind
	op    string // journal op ("step:3"…); "" for observe
	step  *plan.Step
	pstep providers.Step
	// last: pstep is the server's last provider step (see lastProviderStep).
	last     bool
	hook     Hook
	uri      string
	deadline time.Time
	cancel   context.CancelFunc
	timedOut bool
	// taskRecorded: the op's BMC task URI is journaled.
	taskRecorded bool
	// abandoned: given up at the first interrupt (see abandonable).
	abandoned bool
	// peers: the other control-plane members' health, observed with a
	// member's pre-flight for the quorum guard (quorum.go).
	peers []peerHealth
}

// msg is what workers send to the scheduler.
type msg struct {
	o        *opRun
	done     bool
	err      error
	message  string
	obs      *providers.Observation
	verified bool
	// interrupted: the provider failed under the op (its plugin exited);
	// down says why the provider is unavailable for good, when it is.
	interrupted bool
	down        string

	task    string
	ack     chan error
	prog    bool
	percent int
	progMsg string
}

// runner is one Run: the single scheduler loop owns the model; workers only
// call providers and hooks and report back on msgs.
type runner struct {
	e   *Executor
	o   *Options
	m   *model
	sha string

	cursor int64
	own    map[int64]bool
	// pending records are applied but not yet durable; launchQ holds the
	// operations they announce, started only after the flush.
	pending []pendingRecord
	launchQ []*opRun

	ops      map[*node]*opRun
	timed    map[*opRun]bool
	inflight int
	syncQ    []*opRun
	msgs     chan msg
	ready    []*node
	skipsAt  int

	workers sync.WaitGroup

	graceful bool
	changed  bool
	deadline time.Time
	err      error

	// down holds, by provider name, why a provider is unavailable (its
	// plugin could not be restarted): nothing of it starts again, and the
	// run stops once nothing is in flight, its servers resumable.
	down map[string]string
	// interrupts counts, per "server op", the provider failures under it.
	interrupts map[string]int
	// remNoted: the server's skipped remediation actions were announced.
	remNoted map[*node]bool
	// barred are servers whose next step waits for the other servers on
	// their BMC (a shared component's update): decided again on every
	// pass, in plan order.
	barred   []*node
	barNoted map[*node]bool
	// downMember, by cluster: a member the quorum guard found down, for
	// an armed spare takeover to replace (spare.go).
	downMember map[string]string
	// w: this apply is one of the workers of the run (workers.go); nil
	// when the backend is not a Claimer.
	w *workerMode
	// v is the clock when it is virtual (virtual.go), else nil.
	v Virtual
}

// Run applies the plan until it completes, fails, pauses, is stopped, or
// ctx is cancelled. Cancelling ctx is a graceful stop: nothing new starts,
// operations in flight finish and are journaled, and the outcome is
// interrupted. Cancelling hard returns at once; the journal stays
// consistent because every record is durable before the action it
// announces. Run takes the state lock for its duration.
func (e *Executor) Run(ctx, hard context.Context) (Outcome, error) {
	o := &e.o
	for i := range o.Plan.Servers {
		s := &o.Plan.Servers[i]
		if s.Action != plan.ActionUpgrade {
			continue
		}
		if o.Providers[s.Provider] == nil {
			return Outcome{}, fmt.Errorf("server %s uses provider %q, which is not configured", s.Address, s.Provider)
		}
	}
	info := LockInfo{ID: randomID(), Who: o.Holder, PID: os.Getpid(), PlanSHA256: o.PlanSHA256, Since: o.Clock.Now().UTC()}
	claimer, _ := o.Backend.(Claimer)
	timeout := o.LockTimeout
	if o.Join && claimer != nil {
		timeout = 0
	}
	replaced, err := acquire(hard, o.Backend, info, timeout, o.Clock, o.PollInterval, o.HolderGone)
	var le *LockedError
	if err != nil && timeout != o.LockTimeout && !(errors.As(err, &le) && le.Holder.PlanSHA256 == o.PlanSHA256) {
		// Locked for another plan: wait for it like any apply.
		replaced, err = acquire(hard, o.Backend, info, o.LockTimeout, o.Clock, o.PollInterval, o.HolderGone)
	}
	leader := err == nil
	if err != nil && !(o.Join && claimer != nil && errors.As(err, &le) && le.Holder.PlanSHA256 == o.PlanSHA256) {
		return Outcome{}, fmt.Errorf("locking the state for plan %s: %w", short(o.PlanSHA256), err)
	}
	var wm *workerMode
	if claimer != nil {
		wm = &workerMode{c: claimer, info: info, leader: leader, held: map[string]bool{}}
		if err := claimer.Join(hard, WorkerInfo{ID: info.ID, Who: o.Holder, PID: info.PID, PlanSHA256: o.PlanSHA256}); err != nil {
			if leader {
				_ = o.Backend.Unlock(context.WithoutCancel(hard), info.ID)
			}
			return Outcome{}, fmt.Errorf("joining the run of plan %s as a worker: %w", short(o.PlanSHA256), err)
		}
		defer func() {
			if err := claimer.Leave(context.WithoutCancel(hard)); err != nil {
				o.Logger.Error("leaving the run", "worker", info.ID, "err", err)
			}
		}()
		if !leader {
			o.Logger.Info("joining the run as a worker beside the apply holding the lock", "holder", le.Holder.Who, "lock", le.Holder.ID)
		}
	}
	tookOver := ""
	if replaced != nil {
		tookOver = fmt.Sprintf("took over the lock %s of %s (pid %d, since %s, plan %s): %s",
			replaced.ID, replaced.Who, replaced.PID, replaced.Since.UTC().Format(time.RFC3339), short(replaced.PlanSHA256), GoneReason(*replaced))
		o.Logger.Warn(tookOver)
	}
	defer func() {
		if wm != nil && !wm.leader {
			return
		}
		if err := o.Backend.Unlock(context.WithoutCancel(hard), info.ID); err != nil {
			o.Logger.Error("releasing the state lock", "id", info.ID, "err", err)
		}
	}()
	m, cursor, err := e.load(hard)
	if err != nil {
		return Outcome{}, err
	}
	switch m.run.st.Name {
	case Completed, Skipped:
		return Outcome{}, fmt.Errorf("plan %s: %w", short(o.PlanSHA256), ErrAlreadyApplied)
	case Failed:
		return Outcome{}, fmt.Errorf("plan %s: %w", short(o.PlanSHA256), ErrRunFailed)
	}
	// not_after is about trusting what plan observed when a run starts; a
	// started run (its journal exists) may always be resumed or continued:
	// every server is observed again before its first step anyway.
	if na := o.Plan.NotAfter; !na.IsZero() && m.records == 0 && o.Clock.Now().After(na) && !o.AllowExpired {
		return Outcome{}, fmt.Errorf("plan %s: %w (not_after %s); plan again", short(o.PlanSHA256), ErrExpired, na.UTC().Format(time.RFC3339))
	}
	if m.records == 0 {
		// A run already started from an older plan may be resumed; a new
		// one needs what 1.3 records (methods, identities).
		if err := plan.Applicable(o.Plan); err != nil {
			return Outcome{}, fmt.Errorf("plan %s: %w", short(o.PlanSHA256), err)
		}
	}
	if o.PlanFile != nil {
		if err := o.Backend.SavePlan(hard, o.PlanSHA256, o.PlanFile); err != nil {
			return Outcome{}, fmt.Errorf("storing plan %s: %w", short(o.PlanSHA256), err)
		}
	}
	o.Logger.Info("applying plan", "plan", short(o.PlanSHA256), "resumed", m.records > 0, "holder", o.Holder)
	r := &runner{e: e, o: o, m: m, sha: o.PlanSHA256, cursor: cursor, own: map[int64]bool{},
		ops: map[*node]*opRun{}, timed: map[*opRun]bool{}, msgs: make(chan msg, 256), skipsAt: 0,
		down: map[string]string{}, interrupts: map[string]int{}, remNoted: map[*node]bool{}, barNoted: map[*node]bool{}, w: wm}
	if v, ok := o.Clock.(Virtual); ok {
		// Unbuffered: a parked worker counts as parked until the
		// scheduler has its message, never while it goes on running.
		r.v, r.msgs = v, make(chan msg)
	}
	resumed := m.records > 0
	if wm == nil || wm.leader {
		r.emit(hard, &Record{Type: recRunStarted, PlanSHA256: o.PlanSHA256, PID: os.Getpid(), By: o.Holder, Message: tookOver})
	} else {
		r.event(Event{Type: "worker_joined", By: r.workerLabel(), Message: "joined the run beside the apply of " + le.Holder.Who + " (pid " + fmt.Sprint(le.Holder.PID) + "), which holds the state lock; this worker drives the groups it claims"})
	}
	if !resumed {
		r.set(hard, m.run, State{Name: Running})
	} else if m.run.st.Name == Stopped || m.run.st.Name == Stopping {
		r.set(hard, m.run, State{Name: Running})
	}
	for _, sv := range m.servers {
		if sv.st.Name == Running {
			r.ready = append(r.ready, sv)
		}
	}
	// Map iteration order is random; resume in plan order.
	slices.SortFunc(r.ready, func(a, b *node) int { return strings.Compare(a.id, b.id) })
	if r.err != nil {
		return Outcome{}, r.err
	}
	out, err := r.loop(ctx, hard)
	r.waitWorkers()
	return out, err
}

// waitWorkers waits for worker goroutines, whose contexts are cancelled
// once Run stops, so no provider call of this Run outlives it (a resume in
// the same process must not race an old call). Providers honour ctx; the
// bound only guards against one that does not.
func (r *runner) waitWorkers() {
	done := make(chan struct{})
	go func() {
		if r.v != nil {
			r.drain()
		}
		r.workers.Wait()
		close(done)
	}()
	// On the wall clock even under a virtual one: the bound is for a
	// provider call stuck in the real world.
	wall := RealClock()
	select {
	case <-done:
	case <-wall.At(wall.Now().Add(10 * time.Second)):
		r.o.Logger.Error("provider calls did not return after the apply stopped")
	}
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (r *runner) loop(ctx, hard context.Context) (Outcome, error) {
	graceful := ctx.Done()
	interrupted := Outcome{Status: OutcomeInterrupted, Reason: ReasonInterrupted,
		Message: "stopped at once; the journal is consistent", Next: []string{"rackform apply PLANFILE"}}
	for {
		if hard.Err() != nil {
			return interrupted, nil
		}
		if !r.graceful && ctx.Err() != nil {
			r.graceful, graceful = true, nil
			r.event(Event{Type: "apply_interrupting", Message: "interrupt: starting nothing new; polls and waits are given up (resumed by the next apply); requests that change a BMC finish"})
			for _, o := range r.ops {
				r.abandon(o)
			}
		}
		// Claims first, then the journal read, then the decisions: a
		// record of another worker (a breach, a pause) is seen as late
		// as possible before this worker's next write.
		r.workerPass(hard)
		r.poll(hard)
		r.reconcile(hard)
		for i := 0; i < 8 && r.workerPass(hard); i++ {
			r.poll(hard)
			r.reconcile(hard) // a group claimed: step it now
		}
		if r.err != nil {
			if hard.Err() != nil {
				return interrupted, nil
			}
			return Outcome{}, r.err
		}
		if r.inflight == 0 {
			if out, done := r.outcome(); done && r.mayFinish(hard, out) {
				r.finish(hard, out)
				if r.err != nil {
					return Outcome{}, r.err
				}
				return out, nil
			}
		}
		if r.o.Synchronous && len(r.syncQ) > 0 {
			o := r.syncQ[0]
			r.syncQ = r.syncQ[1:]
			r.handle(hard, r.work(hard, o))
			continue
		}
		now := r.o.Clock.Now()
		for o := range r.timed {
			if !now.Before(o.deadline) && !o.timedOut {
				o.timedOut = true
				o.cancel()
			}
		}
		if r.inflight == 0 && !r.deadline.IsZero() && r.v == nil {
			if sk, ok := r.o.Clock.(Skipper); ok {
				sk.SkipTo(r.deadline)
				continue
			}
		}
		wake := now.Add(r.o.PollInterval)
		if !r.deadline.IsZero() && r.deadline.Before(wake) {
			wake = r.deadline
		}
		for o := range r.timed {
			if !o.timedOut && o.deadline.Before(wake) {
				wake = o.deadline
			}
		}
		if r.v != nil {
			if r.inflight == 0 && !r.deadline.IsZero() {
				// Nothing runs: only time is waited for (as a Skipper
				// clock skips it).
				wake = r.deadline
			}
			r.virtualPass(hard, wake)
			continue
		}
		select {
		case m := <-r.msgs:
			r.handle(hard, m)
			// Take what else has arrived, so one pass (and one fsync)
			// covers many results.
			for more := true; more && r.err == nil; {
				select {
				case m := <-r.msgs:
					r.handle(hard, m)
				default:
					more = false
				}
			}
		case <-r.o.Clock.At(wake):
		case <-graceful:
		case <-hard.Done():
		}
	}
}

// unflushed is the position of a record applied but not yet durable: no
// continue or approval can answer it until it has its real position.
const unflushed = math.MaxInt64

type pendingRecord struct {
	rec  *Record
	data []byte
}

// emit records a state change: it is applied to the model and its event
// sent at once, and made durable by the next flush, which happens before
// any operation it announces is started (group commit: one fsync per
// scheduling pass, not per record). After the first error nothing more is
// written.
func (r *runner) emit(ctx context.Context, rec *Record) {
	if r.err != nil {
		return
	}
	if err := ctx.Err(); err != nil {
		r.err = err
		return
	}
	rec.V = JournalVersion
	rec.Time = r.o.Clock.Now().UTC()
	b, err := encodeRecord(rec)
	if err != nil {
		r.err = fmt.Errorf("encoding a journal record: %w", err)
		return
	}
	var old State
	if rec.Type == recState {
		old = r.m.nodes[rec.ID].st
	}
	if err := r.m.apply(rec, unflushed); err != nil {
		r.err = err
		return
	}
	r.pending = append(r.pending, pendingRecord{rec, b})
	r.changed = true
	r.recordEvent(rec, old)
}

// flush makes pending records durable, gives them their positions, and
// then starts the operations they announced.
func (r *runner) flush(ctx context.Context) {
	if r.err == nil && len(r.pending) > 0 {
		batch := make([][]byte, len(r.pending))
		for i, p := range r.pending {
			batch[i] = p.data
		}
		pos, err := r.o.Backend.Append(ctx, r.sha, batch...)
		if err != nil {
			r.err = fmt.Errorf("writing the journal of plan %s: %w", short(r.sha), err)
		} else {
			for i, p := range r.pending {
				r.own[pos[i]] = true
				switch p.rec.Type {
				case recState:
					r.m.nodes[p.rec.ID].at = pos[i]
				case recRunStarted:
					r.m.lastResume = pos[i]
				}
			}
		}
		r.pending = r.pending[:0]
	}
	if r.err != nil {
		return
	}
	r.holdStarts(ctx) // workers.go
	for _, o := range r.launchQ {
		r.begin(ctx, o)
	}
	r.launchQ = r.launchQ[:0]
}

// poll applies records other processes appended (stop, skip, continue,
// approve) since the last read.
func (r *runner) poll(ctx context.Context) {
	if r.err != nil {
		return
	}
	entries, err := r.o.Backend.Read(ctx, r.sha, r.cursor)
	if err != nil {
		r.err = fmt.Errorf("reading the journal of plan %s: %w", short(r.sha), err)
		return
	}
	for _, en := range entries {
		r.cursor = en.Pos
		if r.own[en.Pos] {
			delete(r.own, en.Pos)
			continue
		}
		if crashDebris(en.Data) {
			continue
		}
		rec, err := decodeRecord(en.Data)
		if err != nil {
			r.err = fmt.Errorf("journal of plan %s is corrupt at position %d: %w", short(r.sha), en.Pos, err)
			return
		}
		if err := r.m.apply(rec, en.Pos); err != nil {
			r.err = err
			return
		}
		r.changed = true
		r.recordEvent(rec, State{})
	}
}

// set changes a node's state through the journal.
func (r *runner) set(ctx context.Context, n *node, st State) {
	if n.st.equal(st) || !r.writes(n) {
		return
	}
	r.emit(ctx, &Record{Type: recState, ID: n.id, State: st.Name, Reason: st.Reason, Message: st.Message, Until: st.Until})
}

func (r *runner) wake(t time.Time) {
	if r.deadline.IsZero() || t.Before(r.deadline) {
		r.deadline = t
	}
}

func (r *runner) halted() bool {
	return r.graceful || len(r.down) > 0 || r.m.stopRequested() || r.m.breaches > 0 || r.m.pauses > 0 || r.m.run.st.Name.Terminal() || r.groupFailed()
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
	if n.kind == KindServer && (r.ops[n] != nil || n.sv.begun) {
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
		if r.inflight > 0 {
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
		if w.st.Until == nil || !now.Before(*w.st.Until) {
			r.set(ctx, w, State{Name: Completed})
		} else {
			r.wake(*w.st.Until)
		}
	}
}

// window priority classes (rule 20).
const (
	winOpen = iota
	winOpening
	winNone
	winClosed
)

func windowClass(c *plan.Cluster, now time.Time) (class int, next time.Time) {
	if len(c.Windows) == 0 {
		return winNone, time.Time{}
	}
	for _, w := range c.Windows {
		if w.Contains(now) {
			return winOpen, time.Time{}
		}
		if w.Start.After(now) && (next.IsZero() || w.Start.Before(next)) {
			next = w.Start
		}
	}
	if !next.IsZero() && next.Sub(now) <= 4*time.Hour {
		return winOpening, next
	}
	return winClosed, next
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
		now := r.o.Clock.Now()
		type cand struct {
			c     *node
			class int
			next  time.Time
		}
		var cands []cand
		for _, c := range g.clusters {
			if c.st.Name == NotStarted || c.st.Name == Pending {
				class, next := windowClass(c.cluster, now)
				cands = append(cands, cand{c, class, next})
			}
		}
		slices.SortStableFunc(cands, func(a, b cand) int { return a.class - b.class })
		var started *node
		for _, cd := range cands {
			if r.awaitsRelease(ctx, cd.c) {
				continue // pending(availability): the next member is tried
			}
			if cd.class == winOpen || cd.class == winNone {
				started = cd.c
				break
			}
			st := State{Name: Pending, Reason: ReasonWindow, Message: "maintenance window closed; no opening before the plan expires"}
			if !cd.next.IsZero() {
				u := cd.next.UTC()
				st.Until, st.Message = &u, "maintenance window closed; opens "+u.Format(time.RFC3339)
				r.wake(cd.next)
			}
			r.set(ctx, cd.c, st)
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

// afterDone: a scope's wait and pause are over.
func afterDone(sc *node) bool {
	return (sc.wait == nil || sc.wait.st.Name.Terminal()) && (sc.pause == nil || sc.pause.st.Name.Terminal())
}

// stepPhase runs scopes in order. The next scope starts when the previous
// one is terminal with its wait and pause over, or — when it has neither a
// wait nor a pause — as soon as it met its threshold (rule 13).
func (r *runner) stepPhase(ctx context.Context, ph *node) {
	for i := ph.first; i < len(ph.scopes) && r.err == nil; i++ {
		sc := ph.scopes[i]
		r.stepScope(ctx, sc)
		done := sc.st.Name.Terminal() && sc.sc.running == 0 && afterDone(sc)
		if i == ph.first && done {
			ph.first++
		}
		// A skipped scope lets the next one start once its servers whose
		// steps began are back (their safety steps): a rack at a time.
		pass := (sc.st.Name == Skipped && sc.sc.running == 0) ||
			(sc.st.Name == Completed && afterDone(sc)) ||
			(sc.st.Name == Running && sc.wait == nil && sc.pause == nil && r.advanced(sc))
		if !pass {
			break
		}
	}
	r.refresh(ctx, ph)
}

func (r *runner) advanced(sc *node) bool {
	s := sc.sc
	return s.succeeded >= required(sc.scope, s.eligible())
}

// breach reports why a scope is breached (rule 11), or "". A scope that met
// its threshold is never breached afterwards (rule 13: a straggler failing
// later raises the count but does not undo the advance).
func (r *runner) breach(sc *node) string {
	s, p := sc.sc, sc.scope
	n := s.eligible()
	req := required(p, n)
	if s.succeeded >= req {
		return ""
	}
	open := n - s.succeeded - s.failed
	switch {
	case s.failed > p.Budget:
		return fmt.Sprintf("%d failed > budget %d (N=%d, required %d, succeeded %d)", s.failed, p.Budget, n, req, s.succeeded)
	case s.succeeded+open < req:
		return fmt.Sprintf("%d succeeded + %d remaining < %d required (N=%d, %d failed)", s.succeeded, open, req, n, s.failed)
	case p.Kind == "serial" && s.down > 0 && open > 0:
		return "a server of this serial scope is down; the next starts only after the previous is back healthy"
	}
	return ""
}

func (r *runner) failedServers(sc *node) []string {
	var out []string
	for _, sv := range sc.sc.servers {
		if sv.st.Name == Failed {
			out = append(out, sv.id)
		}
	}
	return out
}

func (r *runner) stepScope(ctx context.Context, sc *node) {
	s := sc.sc
	if r.stepTakeover(ctx, sc) { // spare.go
		return
	}
	switch sc.st.Name {
	case NotStarted:
		if r.halted() {
			return
		}
		if s.eligible() == 0 {
			r.set(ctx, sc, State{Name: Skipped, Reason: ReasonEmpty, Message: "no eligible servers"})
			break
		}
		r.startChain(ctx, sc)
	case Paused:
		if (sc.st.Reason == ReasonThreshold || sc.st.Reason == ReasonQuorum) && r.m.lastContinue > sc.at {
			if why := r.breach(sc); why != "" {
				r.set(ctx, sc, State{Name: Paused, Reason: ReasonThreshold, Message: "still breached after continue: " + why + r.skipHint(sc)})
			} else {
				r.set(ctx, sc, State{Name: Running, Message: "continued"})
			}
		}
	}
	if sc.st.Name == Running {
		if why := r.breach(sc); why != "" {
			st := State{Name: Paused, Reason: ReasonThreshold, Message: why + r.skipHint(sc)}
			if sc.scope.OnBreach == "fail" {
				st = State{Name: Failed, Reason: ReasonThreshold, Message: why}
			}
			r.event(Event{Type: "breach", ID: sc.id, Kind: KindScope, Message: why, Counts: sc.counts()})
			r.set(ctx, sc, st)
		} else {
			r.startServers(ctx, sc)
			if s.notStarted == 0 && s.running == 0 && s.eligible() == 0 {
				r.set(ctx, sc, State{Name: Skipped, Reason: ReasonEmpty, Message: "no eligible servers left: every server of this scope was skipped, so there is nothing to upgrade"})
			} else if s.notStarted == 0 && s.running == 0 {
				msg := fmt.Sprintf("%d succeeded", s.succeeded)
				if s.failed > 0 {
					msg += fmt.Sprintf(", %d failed: %s", s.failed, strings.Join(r.failedServers(sc), ", "))
				}
				if s.skipped > 0 {
					msg += fmt.Sprintf(", %d skipped", s.skipped)
				}
				r.set(ctx, sc, State{Name: Completed, Message: msg})
			}
		}
	}
	switch sc.st.Name {
	case Completed:
		if sc.wait != nil {
			r.stepWait(ctx, sc.wait, time.Duration(sc.scope.WaitAfter))
		}
		// The pause after a rack begins when the wait after it has ended
		// (ROLLOUT-RULES 16, 17): continue then starts the next rack, and
		// the wait is never cut short by a pause nor spent inside one.
		if p := sc.pause; p != nil && (sc.wait == nil || sc.wait.st.Name.Terminal()) {
			switch {
			case p.st.Name == NotStarted:
				r.set(ctx, p, State{Name: Paused, Reason: ReasonAfterRack, Message: sc.id + " is done; run: rackform continue"})
			case p.st.Name == Paused && r.m.lastContinue > p.at:
				r.set(ctx, p, State{Name: Completed, Message: "continued"})
			}
		}
	case Skipped:
		for _, k := range []*node{sc.wait, sc.pause} {
			if k != nil && !k.st.Name.Terminal() {
				r.set(ctx, k, State{Name: Skipped, Reason: sc.st.Reason, Message: "its scope was skipped"})
			}
		}
	}
}

// skipHint says what the operator can do about a breached scope. A failed
// server is terminal and cannot be skipped (rule 23): what can be is the
// scope itself, or its servers that have not started.
func (r *runner) skipHint(sc *node) string {
	var b strings.Builder
	if f := r.failedServers(sc); len(f) > 0 {
		b.WriteString("; failed: " + strings.Join(f, ", ") + " (skip one to take it out of N: rackform skip ADDR)")
	}
	b.WriteString("; to go on, skip the scope (rackform skip " + sc.id + ")")
	if ns := r.notStartedServers(sc); len(ns) > 0 {
		b.WriteString(" or its servers not yet started (rackform skip ADDR: " + strings.Join(ns, ", ") + ")")
	}
	b.WriteString(", or fix the servers and plan again; then rackform continue")
	return b.String()
}

func (r *runner) notStartedServers(sc *node) []string {
	var out []string
	for _, sv := range sc.sc.servers {
		if sv.st.Name == NotStarted {
			out = append(out, sv.id)
		}
	}
	return out
}

// startServers starts servers of a running scope up to max_unavailable
// (rule 7), one at a time in serial scopes, and never a second control-plane
// server of a cluster while one is down (rule 4).
func (r *runner) startServers(ctx context.Context, sc *node) {
	if r.halted() {
		return
	}
	s := sc.sc
	limit := sc.scope.MaxUnavailable
	if limit <= 0 || limit > len(s.servers) {
		limit = len(s.servers)
	}
	serial := sc.scope.Kind == "serial"
	if serial {
		limit = 1
	}
	for s.cursor < len(s.servers) && r.err == nil {
		sv := s.servers[s.cursor]
		if sv.st.Name != NotStarted && sv.st.Name != Pending { // pending: held for quorum
			s.cursor++
			continue
		}
		if s.running >= limit || (serial && s.down > 0) {
			return
		}
		if isCP(sv.srv.Role) && clusterOf(sv).cpBusy > 0 {
			return
		}
		r.set(ctx, sv, State{Name: Running})
		r.ready = append(r.ready, sv)
		s.cursor++
	}
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

// outcome decides how Run ends once nothing is in flight; done is false
// when the run only has to wait for time to pass.
func (r *runner) outcome() (Outcome, bool) {
	run := r.m.run
	cont := []string{"rackform continue"}
	stranded := r.m.stranded(true)
	switch {
	case run.st.Name == Completed || run.st.Name == Skipped:
		counts := r.counts()
		status := OutcomeCompleted
		if counts.Failed > 0 || counts.SkippedAfterStart > 0 || len(stranded) > 0 {
			status = OutcomeCompletedWithFailures
		}
		return Outcome{Status: status, Message: r.summary(counts, len(stranded)), Servers: &counts, Stranded: stranded}, true
	case run.st.Name == Failed:
		return Outcome{Status: OutcomeFailed, Reason: run.st.Reason, Message: r.why(Failed), Stranded: stranded}, true
	case r.graceful:
		return Outcome{Status: OutcomeInterrupted, Reason: ReasonInterrupted, Message: "interrupted; requests that change a BMC finished, polls and waits were given up, and everything is journaled",
			Next: []string{"rackform apply PLANFILE"}, Stranded: stranded}, true
	case len(r.down) > 0:
		var why []string
		for _, name := range slices.Sorted(maps.Keys(r.down)) {
			why = append(why, r.down[name])
		}
		return Outcome{Status: OutcomeStopped, Reason: ReasonProviderUnavailable,
			Message:  "provider unavailable: " + strings.Join(why, "; ") + "; the servers in flight are not failed: their steps resume from the journal",
			Next:     []string{"rackform apply PLANFILE"},
			Stranded: stranded}, true
	case r.m.stopRequested():
		return Outcome{Status: OutcomeStopped, Message: "stopped by the operator", Next: cont, Stranded: stranded}, true
	case r.m.breaches > 0:
		return Outcome{Status: OutcomePaused, Reason: r.breachReason(), Message: r.why(Paused), Next: cont, Stranded: stranded}, true
	case r.m.pauses > 0:
		return Outcome{Status: OutcomePaused, Reason: ReasonAfterRack, Message: r.why(Paused), Next: cont, Stranded: stranded}, true
	}
	var gates []string
	for _, n := range r.m.order {
		if n.kind == KindGate && n.st.Name == Pending {
			gates = append(gates, "rackform approve "+n.id)
		}
	}
	if len(gates) > 0 {
		return Outcome{Status: OutcomePaused, Reason: ReasonApproval, Message: "waiting for approval", Next: gates, Stranded: stranded}, true
	}
	if !r.deadline.IsZero() {
		return Outcome{}, false
	}
	if why := r.awaiting(); why != "" {
		return Outcome{Status: OutcomePaused, Reason: ReasonAvailability, Message: why,
			Next: []string{"rackform continue"}, Stranded: stranded}, true
	}
	return Outcome{Status: OutcomePaused, Reason: ReasonBlocked, Message: r.why(Pending),
		Next: []string{"rackform status", "rackform skip ADDR"}, Stranded: stranded}, true
}

// why lists the deepest nodes in state s, for outcome messages.
func (r *runner) why(s StateName) string {
	var out []string
	for _, n := range r.m.order {
		if n.st.Name != s {
			continue
		}
		switch n.kind {
		case KindScope, KindPause, KindGate, KindWait:
		case KindCluster:
			if n.st.Reason != ReasonWindow && n.st.Reason != ReasonAvailability {
				continue
			}
		default:
			continue
		}
		out = append(out, n.id+": "+n.st.String()+" "+n.st.Message)
		if len(out) == 5 {
			break
		}
	}
	if len(out) == 0 {
		return r.m.run.st.Message
	}
	return strings.Join(out, "; ")
}

// counts counts the servers by how they ended.
func (r *runner) counts() ServerCounts {
	var c ServerCounts
	for _, sv := range r.m.servers {
		switch sv.st.Name {
		case Completed:
			c.Upgraded++
		case Failed:
			c.Failed++
		case Skipped:
			c.Skipped++
			if sv.sv.begun {
				c.SkippedAfterStart++
			}
		}
	}
	return c
}

func (r *runner) summary(c ServerCounts, stranded int) string {
	s := fmt.Sprintf("%d servers upgraded, %d failed, %d skipped", c.Upgraded, c.Failed, c.Skipped)
	if c.SkippedAfterStart > 0 {
		s += fmt.Sprintf(" (%d after their steps began)", c.SkippedAfterStart)
	}
	if stranded > 0 {
		s += fmt.Sprintf("; %d left out of service", stranded)
	}
	return s
}

func (r *runner) finish(ctx context.Context, out Outcome) {
	switch out.Status {
	case OutcomeInterrupted:
		r.set(ctx, r.m.run, State{Name: Stopped, Reason: ReasonInterrupted, Message: out.Message})
	case OutcomeStopped:
		r.set(ctx, r.m.run, State{Name: Stopped, Reason: out.Reason, Message: out.Message})
	}
	if r.w == nil || r.w.leader {
		r.emit(ctx, &Record{Type: recRunEnded, Outcome: string(out.Status), Message: out.Message})
	}
	r.flush(ctx)
	o := out
	r.event(Event{Type: "apply_ended", Outcome: &o})
}
