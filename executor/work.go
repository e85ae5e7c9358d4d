package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/providers"
)

// Workers: launching operations and doing them (provider calls, hooks,
// task polls). A worker touches nothing but its op and the provider.

// worker does operations on worker goroutines (inline when Synchronous):
// it calls providers and hooks, polls tasks and watches readiness, and
// hands what it learns to the runner's loop (send, handoff, progress). It
// reads the runner's options and clock, never the model.
type worker struct{ r *runner }

// launch counts an op as in flight at once; it starts after the next
// flush, when the records announcing it are durable.
func (r *runner) launch(ctx context.Context, o *opRun) {
	r.ops.add(o)
	r.j.announce(o)
}

func (r *runner) begin(ctx context.Context, o *opRun) {
	if o.kind == opHook && o.hook.Timeout > 0 && !r.o.Synchronous {
		r.ops.time(o, r.o.Clock.Now().Add(hookTimeout(r.o.Clock, o.hook.Timeout)))
	}
	if r.o.Synchronous {
		r.ops.enqueue(o)
		return
	}
	opCtx, cancel := context.WithCancel(ctx)
	o.cancel = cancel
	if r.graceful && o.abandonable() {
		// Interrupted before it began: never begin it.
		o.abandoned = true
		cancel()
	}
	r.workers.Add(1)
	if r.v != nil {
		r.v.Start()
	}
	go func() {
		if r.v != nil {
			defer r.v.Done() // last: the run's drain relies on workers.Done before
		}
		defer r.workers.Done()
		m := msg{o: o, err: opCtx.Err()}
		if m.err == nil {
			m = r.worker.work(opCtx, o)
		}
		r.worker.send(ctx, m)
	}()
}

// abandonable reports whether an op may be given up at the first interrupt
// and resumed by the next apply from the journal: pure reads and polls
// (observe, verify, task polls, wait_ready), hooks and the power steps,
// which are run again on resume and do no harm twice, and an update or
// reset whose BMC task is journaled (the request that changed the BMC has
// returned; what is left is polling the task). An update or reset before
// its task is journaled, and a reimage (media, boot override and reset:
// several changes), are waited for.
func (o *opRun) abandonable() bool {
	switch o.kind {
	case opObserve, opVerify, opPoll, opHook:
		return true
	}
	switch o.pstep.Kind {
	case providers.StepWaitReady, providers.StepShutdown, providers.StepPowerOn:
		return true
	case providers.StepUpdate, providers.StepReset:
		return o.taskRecorded
	}
	return false
}

// abandon gives up an abandonable op in flight at the first interrupt.
func (r *runner) abandon(o *opRun) {
	if o.abandoned || !o.abandonable() {
		return
	}
	o.abandoned = true
	if o.cancel != nil {
		o.cancel()
	}
}

// work does one op. It runs on a worker goroutine (or inline when
// Synchronous) and touches nothing but its arguments and the provider.
func (wk *worker) work(ctx context.Context, o *opRun) msg {
	sv := o.sv
	prov := wk.r.o.Providers[sv.srv.Provider]
	switch o.kind {
	case opObserve, opVerify:
		obs, err := observe(ctx, prov, wk.r.target(sv))
		if errors.As(err, new(*providerError)) {
			return wk.providerFault(ctx, prov, o, err)
		}
		if o.kind == opObserve && err == nil {
			if name, perr := wk.observePeers(ctx, o); perr != nil { // quorum guard (quorum.go)
				m := wk.providerFault(ctx, wk.r.o.Providers[name], o, perr)
				m.provider = name
				return m
			}
		}
		m := msg{o: o, done: err == nil, err: err, obs: obs}
		if o.kind == opVerify && err == nil {
			// Unreadable is not verified: the step runs again.
			m.verified, _ = hasVersion(o.step, obs)
		}
		return m
	case opHook:
		if len(o.hook.Argv) == 0 {
			return msg{o: o, done: true, message: "no " + o.hook.Name + " hook configured"}
		}
		err := wk.r.o.Hooks.Run(ctx, o.hook)
		return msg{o: o, done: err == nil, err: err}
	case opPoll:
		return wk.pollTask(ctx, prov, o)
	}
	if tr := watched(o); tr != nil {
		return wk.watchReady(ctx, prov, o, tr) // remediation triggers (remediation.go)
	}
	last := ""
	var still stall
	res, diags := prov.Apply(ctx, &providers.ApplyRequest{Target: wk.r.target(sv), Step: o.pstep, Last: o.last}, func(p *providers.Progress) error {
		if p.TaskURI != "" && p.TaskURI != last {
			last = p.TaskURI
			if err := wk.handoff(ctx, msg{o: o, task: p.TaskURI}); err != nil {
				return err
			}
		}
		if p.Message != "" || p.Percent >= 0 {
			wk.progress(ctx, msg{o: o, prog: true, percent: p.Percent, progMsg: p.Message})
		}
		if now := wk.r.o.Clock.Now(); last != "" && still.see(p.Percent, now) {
			wk.progress(ctx, still.msg(o, last, now))
		}
		return nil
	})
	if diags.Unavailable() {
		return wk.providerFault(ctx, prov, o, diags.Err())
	}
	if err := diags.Err(); err != nil {
		if m, ok := wk.checkTaken(ctx, prov, o); ok {
			return m // an update no task confirmed did not show
		}
		return msg{o: o, err: err}
	}
	m := msg{o: o, done: true, message: cameBack(o, res, confirmed(o.op, o.pstep.Kind, res))}
	if res != nil && o.pstep.Kind == providers.StepUpdate && o.step != nil && o.step.Target.Version != "" {
		switch {
		case res.TaskState == providers.TaskGone:
			return wk.taskGone(ctx, prov, o, res.TaskURI, m.message)
		case res.TaskURI == "":
			// Accepted with nothing to follow: only the plan's
			// wait_ready, reading the version, confirms it (nottaken.go).
			m.noTask = true
		}
	}
	return m
}

// confirmedOff starts the completion message of a power_off the BMC
// confirmed (the journal keeps it, so a resumed run claims no more than
// the first one could).
const confirmedOff = "powered off"

// confirmed is the completion message of a step. A provider completes a
// power step only once it read the state it asked for (providers/redfish
// polls the power state and fails the step otherwise); when its result
// carries an observation that contradicts that, the message says what was
// asked and what the BMC reports instead of claiming the state.
func confirmed(op string, kind providers.StepKind, res *providers.ApplyResult) string {
	answer := ""
	if res != nil {
		answer = res.Message
	}
	var power string
	if res != nil && res.Observation != nil {
		power = res.Observation.PowerState
	}
	switch kind {
	case providers.StepShutdown:
		if power != "" && power != providers.PowerOff {
			return fmt.Sprintf("shutdown asked (graceful, then forced off); the BMC answered %q but reports power %s", answer, power)
		}
		if op == opPowerOff {
			return fmt.Sprintf("%s (the BMC answered %q)", confirmedOff, answer)
		}
	case providers.StepPowerOn, providers.StepReset:
		if power != "" && power != providers.PowerOn && power != providers.PowerPoweringOn {
			return fmt.Sprintf("%s asked; the BMC answered %q but reports power %s", kind, answer, power)
		}
	}
	return answer
}

// providerError is a call that failed because of the provider (its plugin
// exited), not the server.
type providerError struct{ err error }

func (e *providerError) Error() string { return e.err.Error() }

func (e *providerError) Unwrap() error { return e.err }

// providerFault reports an op the provider failed under: interrupted, not
// failed. A provider that then cannot even describe itself is down (its
// plugin could not be restarted): the run stops with its servers
// resumable.
func (wk *worker) providerFault(ctx context.Context, prov providers.Provider, o *opRun, err error) msg {
	m := msg{o: o, err: err, interrupted: true}
	if ctx.Err() != nil {
		return m
	}
	if _, d := prov.Describe(ctx); d.Unavailable() {
		for _, x := range d {
			if x.Summary == providers.SummaryUnavailable {
				m.down = strings.TrimSuffix(x.Detail, ".")
				break
			}
		}
	}
	return m
}

// handoff gives the scheduler a task URI to journal and waits until it is
// durable, so a crash from now on resumes by polling the task.
func (wk *worker) handoff(ctx context.Context, m msg) error {
	if wk.r.o.Synchronous {
		return wk.r.recordTask(ctx, m)
	}
	m.ack = make(chan error, 1)
	if !wk.send(ctx, m) {
		return ctx.Err()
	}
	select {
	case err := <-m.ack:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (wk *worker) progress(ctx context.Context, m msg) {
	if wk.r.o.Synchronous {
		wk.r.progressEvent(m)
		return
	}
	wk.send(ctx, m)
}

func (r *runner) recordTask(ctx context.Context, m msg) error {
	r.emit(ctx, &Record{Type: recTaskURI, Server: m.o.sv.id, Op: m.o.op, TaskURI: m.task})
	m.ack = nil // answered here, by the error returned
	r.recordTasks(ctx, []msg{m})
	return r.err
}

// take handles m, except a task hand-off on the wall clock, whose record
// is written but left for recordTasks to make durable with the others
// that arrived with it: one append for all of them instead of one each
// (a rack's updates hand their tasks over together).
func (r *runner) take(ctx context.Context, m msg, tasks []msg) []msg {
	if m.task == "" || m.ack == nil {
		r.handle(ctx, m)
		return tasks
	}
	r.emit(ctx, &Record{Type: recTaskURI, Server: m.o.sv.id, Op: m.o.op, TaskURI: m.task})
	return append(tasks, m)
}

// recordTasks makes the task records take wrote durable in one append,
// marks each task journaled if the append succeeded, then answers each
// hand-off (an ack): its update polls its task from then on.
func (r *runner) recordTasks(ctx context.Context, tasks []msg) {
	if len(tasks) == 0 {
		return
	}
	r.flush(ctx)
	for _, m := range tasks {
		if r.err == nil {
			m.o.taskRecorded = true
			if r.graceful {
				// The BMC took the request; polling its task is left to
				// the next apply.
				r.abandon(m.o)
			}
		}
		if m.ack != nil {
			m.ack <- r.err
		}
	}
}

func (r *runner) progressEvent(m msg) {
	if m.stalledSince != nil {
		r.stalledEvent(m) // stall.go
		return
	}
	e := Event{Type: "step_progress", Server: m.o.sv.id, Op: m.o.op, StepKind: opLabel(m.o), Message: m.progMsg}
	if m.percent >= 0 {
		p := m.percent
		e.Percent = &p
	}
	r.event(e)
}

func observe(ctx context.Context, p providers.Provider, t providers.Target) (*providers.Observation, error) {
	var got *providers.Observation
	diags := p.Observe(ctx, &providers.ObserveRequest{Targets: []providers.Target{t}, Concurrency: 1}, func(o *providers.Observation) error {
		got = o
		return nil
	})
	if diags.Unavailable() || (got != nil && got.Diagnostics.Unavailable()) {
		d := diags
		if !d.Unavailable() {
			d = got.Diagnostics
		}
		return nil, &providerError{err: d.Err()}
	}
	if got == nil {
		if err := diags.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the provider returned no observation for %s", t.Name)
	}
	return got, nil
}

// noAnswerLimit is how long a resumed task poll waits for a BMC that does
// not answer at all (providers.SummaryNoAnswer): a BMC restarting in the
// middle of an update is away for minutes, and only once it is back can
// it say that the task is gone.
const noAnswerLimit = 30 * time.Minute

// pollTask polls a recorded BMC task until it is terminal. A task that is
// gone (BMCs delete finished tasks) is verified by observing. A BMC that
// does not answer is polled again, up to noAnswerLimit.
func (wk *worker) pollTask(ctx context.Context, prov providers.Provider, o *opRun) msg {
	var (
		still  stall
		silent time.Time // since when the BMC has not answered; zero while it answers
	)
	for {
		ts, diags := prov.Task(ctx, &providers.TaskRequest{Target: wk.r.target(o.sv), TaskURI: o.uri})
		if diags.Unavailable() {
			return wk.providerFault(ctx, prov, o, fmt.Errorf("polling task %s: %w", o.uri, diags.Err()))
		}
		if diags.NoAnswer() && ctx.Err() == nil {
			now := wk.r.o.Clock.Now()
			if silent.IsZero() {
				silent = now
				wk.progress(ctx, msg{o: o, prog: true, percent: -1, progMsg: fmt.Sprintf(
					"the BMC does not answer (as while it restarts): %v; polling task %s again until it does, for up to %s", diags.Err(), o.uri, noAnswerLimit)})
			}
			if now.Sub(silent) >= noAnswerLimit {
				return msg{o: o, err: fmt.Errorf("polling task %s: the BMC has not answered for %s: %w", o.uri, noAnswerLimit, diags.Err())}
			}
			wk.sleepUntil(ctx, now.Add(wk.r.o.PollInterval))
			if err := ctx.Err(); err != nil {
				return msg{o: o, err: err}
			}
			continue
		}
		silent = time.Time{}
		if err := diags.Err(); err != nil {
			return msg{o: o, err: fmt.Errorf("polling task %s: %w", o.uri, err)}
		}
		if ts.Terminal() {
			switch ts.State {
			case providers.TaskCompleted:
				return msg{o: o, done: true, message: "task " + o.uri + " completed"}
			case providers.TaskGone:
				if o.step == nil || o.step.Target.Version == "" {
					return msg{o: o, done: true, message: "task " + o.uri + " is gone; the step is idempotent"}
				}
				return wk.taskGone(ctx, prov, o, o.uri, "task "+o.uri+" is gone; verified by observing")
			}
			return msg{o: o, err: fmt.Errorf("task %s ended %s: %s", o.uri, ts.State, strings.Join(ts.Messages, "; "))}
		}
		if now := wk.r.o.Clock.Now(); still.see(ts.Percent, now) {
			wk.progress(ctx, still.msg(o, o.uri, now))
		}
		if wk.r.o.Synchronous {
			continue
		}
		if err := wk.sleep(ctx, wk.r.o.Clock.Now().Add(wk.r.o.PollInterval)); err != nil {
			return msg{o: o, err: err}
		}
	}
}
