package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// One Run: the scheduler loop that owns the model and makes every
// decision, and how it waits (for worker messages, for time, for an
// interrupt).

// runner is one Run: the single scheduler loop owns the model; workers only
// call providers and hooks and report back on msgs.
type runner struct {
	o   *Options
	m   *model
	sha string

	// j writes and reads the journal (journal.go); ops are the
	// operations in flight (optable.go).
	j   *journal
	ops *opTable

	msgs    chan msg
	ready   []*node
	skipsAt int

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

	// sched makes the scheduling decisions (schedule.go); crew deals
	// with the run's other workers (workers.go); worker does operations
	// (work.go); quorum is the quorum guard (quorum.go); virtual waits
	// on a virtual clock (virtual.go).
	sched   *scheduler
	crew    *crew
	worker  *worker
	quorum  *quorumGuard
	virtual *virtualLoop
}

// Run applies the plan until it completes, fails, pauses, is stopped, or
// ctx is cancelled. Cancelling ctx is a graceful stop: nothing new starts,
// operations in flight finish and are journaled, and the outcome is
// interrupted. Cancelling hard returns at once; the journal stays
// consistent because every record is durable before the action it
// announces. Run takes the state lock for its duration. When a started
// run ends on an error, the Outcome returned with it lists the servers it
// leaves out of service (Stranded) and the command that resumes (Next),
// and nothing else.
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
		return Outcome{}, fmt.Errorf("locking the state for plan %s: %w", plan.ShortSHA(o.PlanSHA256), err)
	}
	var wm *workerMode
	if claimer != nil {
		wm = &workerMode{c: claimer, info: info, leader: leader, held: map[string]bool{}}
		if err := claimer.Join(hard, WorkerInfo{ID: info.ID, Who: o.Holder, PID: info.PID, PlanSHA256: o.PlanSHA256}); err != nil {
			if leader {
				_ = o.Backend.Unlock(context.WithoutCancel(hard), info.ID)
			}
			return Outcome{}, fmt.Errorf("joining the run of plan %s as a worker: %w", plan.ShortSHA(o.PlanSHA256), err)
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
		tookOver = tookOverFrom(*replaced)
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
		return Outcome{}, fmt.Errorf("plan %s: %w", plan.ShortSHA(o.PlanSHA256), ErrAlreadyApplied)
	case Failed:
		return Outcome{}, fmt.Errorf("plan %s: %w", plan.ShortSHA(o.PlanSHA256), ErrRunFailed)
	}
	// not_after is about trusting what plan observed when a run starts; a
	// started run (its journal exists) may always be resumed or continued:
	// every server is observed again before its first step anyway.
	if na := o.Plan.NotAfter; !na.IsZero() && m.records == 0 && o.Clock.Now().After(na) && !o.AllowExpired {
		return Outcome{}, fmt.Errorf("plan %s: %w (not_after %s); plan again", plan.ShortSHA(o.PlanSHA256), ErrExpired, na.UTC().Format(time.RFC3339))
	}
	if m.records == 0 {
		// A run already started from an older plan may be resumed; a new
		// one needs what 1.3 records (methods, identities).
		if err := plan.Applicable(o.Plan); err != nil {
			return Outcome{}, fmt.Errorf("plan %s: %w", plan.ShortSHA(o.PlanSHA256), err)
		}
	}
	if o.PlanFile != nil {
		if err := o.Backend.SavePlan(hard, o.PlanSHA256, o.PlanFile); err != nil {
			return Outcome{}, fmt.Errorf("storing plan %s: %w", plan.ShortSHA(o.PlanSHA256), err)
		}
	}
	o.Logger.Info("applying plan", "plan", plan.ShortSHA(o.PlanSHA256), "resumed", m.records > 0, "holder", o.Holder)
	r := &runner{o: o, m: m, sha: o.PlanSHA256, j: newJournal(o.Backend, o.PlanSHA256, m, o.Clock, cursor),
		ops: newOpTable(), msgs: make(chan msg, 256), skipsAt: 0,
		down: map[string]string{}, interrupts: map[string]int{}, remNoted: map[*node]bool{}, barNoted: map[*node]bool{}, w: wm}
	r.sched, r.crew, r.worker, r.quorum, r.virtual = &scheduler{r: r}, &crew{r: r}, &worker{r: r}, &quorumGuard{r: r}, &virtualLoop{r: r}
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
	if !resumed || m.run.st.Name == Stopped || m.run.st.Name == Stopping {
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
		return r.cutShort(), r.err
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
			r.virtual.drain()
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
		Message: "stopped at once; the journal is consistent", Next: []NextAction{{Kind: NextApply}}}
	for {
		if hard.Err() != nil {
			return interrupted, nil
		}
		if !r.graceful && ctx.Err() != nil {
			r.graceful, graceful = true, nil
			r.event(Event{Type: "apply_interrupting", Message: "interrupt: starting nothing new; polls and waits are given up (resumed by the next apply); requests that change a BMC finish"})
			for o := range r.ops.all() {
				r.abandon(o)
			}
		}
		// Claims first, then the journal read, then the decisions: a
		// record of another worker (a breach, a pause) is seen as late
		// as possible before this worker's next write.
		r.crew.workerPass(hard)
		r.poll(hard)
		r.quorum.sayQuorumWaits(hard, r.o.Clock.Now()) // quorum.go
		r.sched.reconcile(hard)
		for i := 0; i < 8 && r.crew.workerPass(hard); i++ {
			r.poll(hard)
			r.sched.reconcile(hard) // a group claimed: step it now
		}
		if r.err != nil {
			if hard.Err() != nil {
				return interrupted, nil
			}
			return r.cutShort(), r.err
		}
		if r.ops.inflight() == 0 {
			if out, done := r.outcome(); done && r.crew.mayFinish(hard, out) {
				r.finish(hard, out)
				if r.err != nil {
					return r.cutShort(), r.err
				}
				return out, nil
			}
		}
		if o, ok := r.ops.next(); ok {
			r.handle(hard, r.worker.work(hard, o)) // Synchronous
			continue
		}
		now := r.o.Clock.Now()
		r.ops.expire(now)
		if r.ops.inflight() == 0 && !r.deadline.IsZero() && r.v == nil {
			if sk, ok := r.o.Clock.(Skipper); ok {
				sk.SkipTo(r.deadline)
				continue
			}
		}
		wake := now.Add(r.o.PollInterval)
		if !r.deadline.IsZero() && r.deadline.Before(wake) {
			wake = r.deadline
		}
		wake = r.ops.wake(wake)
		if r.v != nil {
			if r.ops.inflight() == 0 && !r.deadline.IsZero() {
				// Nothing runs: only time is waited for (as a Skipper
				// clock skips it).
				wake = r.deadline
			}
			r.virtual.virtualPass(hard, r.virtual.virtualWake(now, wake))
			continue
		}
		select {
		case m := <-r.msgs:
			// Take what else has arrived, so one pass (and one fsync)
			// covers many results, and one append the task URIs that
			// arrived together (each update waits for its own to be
			// durable: work.go, handoff).
			tasks := r.take(hard, m, nil)
			for more := true; more && r.err == nil; {
				select {
				case m := <-r.msgs:
					tasks = r.take(hard, m, tasks)
				default:
					more = false
				}
			}
			r.recordTasks(hard, tasks)
		case <-r.o.Clock.At(wake):
		case <-graceful:
		case <-hard.Done():
		}
	}
}
