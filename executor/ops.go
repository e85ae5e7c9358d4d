package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Defaults when neither the step nor the cluster settings say (rule 21).
const (
	defaultDrainTimeout    = 20 * time.Minute
	defaultShutdownTimeout = 10 * time.Minute
	defaultHookTimeout     = 5 * time.Minute
)

func firstDuration(ds ...plan.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return time.Duration(d)
		}
	}
	return 0
}

func (r *runner) settings(sv *node) plan.Settings { return clusterOf(sv).cluster.Settings }

// decide starts a running server's next operation, or ends it.
func (r *runner) decide(ctx context.Context, sv *node) {
	if sv.st.Name.Terminal() || sv.st.Name == Pending || r.ops[sv] != nil || r.graceful || !r.mine(sv) {
		return // pending: held for quorum until continue starts it again
	}
	if r.down[sv.srv.Provider] != "" {
		return // resumable: the run stops once nothing is in flight
	}
	s := sv.sv
	if sv.skip {
		r.skipServer(ctx, sv)
		return
	}
	if s.inflight != "" {
		r.resume(ctx, sv)
		return
	}
	if !s.observed {
		r.launch(ctx, r.observeOp(sv)) // quorum.go: a member observes its peers too
		return
	}
	if s.failMsg != "" {
		r.set(ctx, sv, State{Name: Failed, Reason: ReasonStep, Message: s.failMsg})
		return
	}
	if s.remActive {
		if s.rem == 0 && !s.remWait && len(s.skippedActions) > 0 && !r.remNoted[sv] {
			// A remediation the role calls for but this plan cannot do
			// is said, not left out silently.
			r.remNoted[sv] = true
			for _, a := range s.skippedActions {
				r.event(Event{Type: "remediation_skipped", Server: sv.id, StepKind: a, Message: a + " remediation skipped: " + skippedWhy(a)})
			}
		}
		if s.remWait {
			r.start(ctx, sv, remedyOp(s.rem, "wait_ready"))
			return
		}
		if k := s.rem + 1; k <= len(s.actions) {
			r.start(ctx, sv, remedyOp(k, s.actions[k-1]))
			return
		}
		if sv.srv.Role == "compute" && !s.poweredOff {
			r.start(ctx, sv, opPowerOff)
			return
		}
		msg := fmt.Sprintf("did not come back healthy and at target (%s)", s.remErr)
		if n := len(s.actions); n > 0 {
			msg += fmt.Sprintf(" after remediation (%s)", strings.Join(s.actions, ", then "))
		}
		for _, a := range s.skippedActions {
			msg += "; " + a + " remediation skipped: " + skippedWhy(a)
		}
		if sv.srv.Role == "compute" {
			// Only what the BMC confirmed is claimed.
			if st := s.steps[opPowerOff]; st != nil && st.State == Completed && s.offConfirmed {
				msg += "; powered off"
			} else if st != nil && st.State == Failed {
				msg += "; power off was asked and failed: " + st.Message
			} else if st != nil {
				msg += "; power off was asked: " + st.Message
			}
		}
		r.set(ctx, sv, State{Name: Failed, Reason: ReasonUnhealthy, Message: msg + "; the server is unhealthy and needs a replace"})
		return
	}
	if s.pc < len(sv.srv.Steps) {
		st := &sv.srv.Steps[s.pc]
		if wait := r.barrier(st); len(wait) > 0 {
			// A shared component of the BMC: flashed once every other
			// server on it is down as its strategy requires.
			if !slices.Contains(r.barred, sv) {
				r.barred = append(r.barred, sv)
				if !r.barNoted[sv] {
					r.barNoted[sv] = true
					r.event(Event{Type: "step_waiting", Server: sv.id, Op: stepOp(st.Index), StepKind: string(st.Kind), Component: st.Component,
						Message: fmt.Sprintf("%s is shared by every server on this BMC: waiting until %s %s drained and shut down (or done)", st.Component, strings.Join(wait, ", "), isAreVerb(len(wait)))})
				}
			}
			return
		}
		r.start(ctx, sv, stepOp(st.Index))
		return
	}
	msg := ""
	if len(s.warnings) > 0 {
		msg = strings.Join(s.warnings, "; ")
	}
	r.set(ctx, sv, State{Name: Completed, Message: msg})
}

// barrier lists the servers a step still waits for: for the update of a
// shared component (Step.After), each other server on its BMC that has
// neither ended nor completed its shutdown step. A server whose plan
// does not shut it down is never waited for; nor is one not in this run.
func (r *runner) barrier(st *plan.Step) []string {
	var wait []string
	for _, addr := range st.After {
		n := r.m.servers[addr]
		if n == nil || n.st.Name.Terminal() {
			continue
		}
		down := true
		for _, x := range n.srv.Steps {
			if x.Kind == plan.StepShutdown {
				xs := n.sv.steps[stepOp(x.Index)]
				down = xs != nil && xs.State == Completed
			}
		}
		if !down {
			wait = append(wait, addr)
		}
	}
	return wait
}

func isAreVerb(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// skippedWhy says why a remediation action was left out.
func skippedWhy(action string) string {
	if action == "reimage" {
		return "this plan carries no runtime image to reimage with (its scope upgrades firmware only)"
	}
	return "not possible in this plan"
}

// skipServer skips a server the operator skipped. One whose steps have not
// begun is skipped at once. One whose steps began is never left powered
// off or drained silently: the operation in flight finishes (a flash is
// never cut short), then its safety steps run (power on, wait until
// healthy, uncordon), and only then is it skipped, with what could not be
// brought back reported.
func (r *runner) skipServer(ctx context.Context, sv *node) {
	s := sv.sv
	if !s.begun {
		r.set(ctx, sv, State{Name: Skipped, Reason: ReasonUser, Message: "skipped by the operator"})
		return
	}
	if s.inflight != "" {
		r.resume(ctx, sv)
		return
	}
	if op := s.nextSafety(); op != "" {
		r.start(ctx, sv, op)
		return
	}
	msg := "skipped by the operator after its steps began"
	var back, failed []string
	for _, a := range []string{safetyPowerOn, safetyWaitReady, safetyUncordon} {
		st := s.steps[safetyOp(a)]
		switch {
		case st == nil:
		case st.State == Completed:
			back = append(back, map[string]string{safetyPowerOn: "powered on", safetyWaitReady: "healthy", safetyUncordon: "uncordoned"}[a])
		case st.State == Failed:
			failed = append(failed, a+" failed: "+st.Message)
		}
	}
	if len(back) > 0 {
		msg += "; brought back: " + strings.Join(back, ", ")
	}
	if len(failed) > 0 {
		msg += "; " + strings.Join(failed, "; ")
	}
	if s.off || s.drained || len(s.staged) > 0 {
		msg += "; left " + (Stranded{PoweredOff: s.off, Drained: s.drained, Staged: s.staged}).What()
	}
	r.set(ctx, sv, State{Name: Skipped, Reason: ReasonUser, Message: msg})
}

// start journals step_started and launches the op: the record is durable
// before the provider or hook is called.
func (r *runner) start(ctx context.Context, sv *node, op string) {
	o := r.opFor(sv, op)
	r.emit(ctx, &Record{Type: recStepStarted, Server: sv.id, Op: op, Kind: opLabel(o), By: r.workerLabel()})
	if r.err != nil {
		return
	}
	r.launch(ctx, o)
}

func opLabel(o *opRun) string {
	if o.kind == opHook {
		return o.hook.Name
	}
	return string(o.pstep.Kind)
}

// opFor builds the provider step or hook for an op.
func (r *runner) opFor(sv *node, op string) *opRun {
	set := r.settings(sv)
	st := sv.sv.stepFor(op)
	o := &opRun{sv: sv, op: op, step: st, kind: opApply}
	switch {
	case op == opPowerOff:
		o.pstep = providers.Step{Kind: providers.StepShutdown, Timeout: firstDuration(set.ShutdownTimeout, plan.Duration(defaultShutdownTimeout))}
		return o
	case strings.HasSuffix(op, ":reboot"):
		o.pstep = providers.Step{Kind: providers.StepReset}
		return o
	case op == safetyOp(safetyPowerOn):
		o.pstep = providers.Step{Kind: providers.StepPowerOn}
		return o
	case op == safetyOp(safetyWaitReady):
		// On and healthy; no version is expected of a skipped server.
		o.pstep = providers.Step{Kind: providers.StepWaitReady, Timeout: firstDuration(set.VerifyTimeout)}
		return o
	case strings.HasPrefix(op, opTakeover): // spare.go
		o.kind, o.hook = opHook, r.takeoverHook(sv, op)
		return o
	case op == safetyOp(safetyUncordon):
		o.kind = opHook
		o.hook = Hook{Name: string(plan.StepUncordon), Argv: set.UncordonHook, Env: hookEnv(sv),
			Timeout: firstDuration(set.HookTimeout, plan.Duration(defaultHookTimeout))}
		return o
	}
	if st == nil {
		o.pstep = providers.Step{Kind: providers.StepReset}
		return o
	}
	if st.IsHook() {
		o.kind = opHook
		h := Hook{Name: string(st.Kind), Env: hookEnv(sv)}
		if st.Kind == plan.StepDrain {
			h.Argv = set.DrainHook
			h.Timeout = firstDuration(st.Timeout, set.DrainTimeout, plan.Duration(defaultDrainTimeout))
		} else {
			h.Argv = set.UncordonHook
			h.Timeout = firstDuration(st.Timeout, set.HookTimeout, plan.Duration(defaultHookTimeout))
		}
		o.hook = h
		return o
	}
	o.pstep = st.ProviderStep()
	o.last = lastProviderStep(sv.srv, st)
	if s := sv.sv; s.inflight == op && s.taskURI == "" && (o.pstep.Kind == providers.StepUpdate || o.pstep.Kind == providers.StepReimage) {
		// Run again after a crash that left no task URI: the BMC may have
		// accepted the earlier attempt; the provider looks for it first.
		o.pstep.ResumeSince = s.inflightSince
	}
	switch st.Kind {
	case plan.StepShutdown:
		o.pstep.Timeout = firstDuration(st.Timeout, set.ShutdownTimeout, plan.Duration(defaultShutdownTimeout))
	case plan.StepWaitReady:
		o.pstep.Timeout = firstDuration(st.Timeout, set.VerifyTimeout)
	}
	return o
}

// lastProviderStep says st is s's last step a provider performs (hooks may
// follow): the provider may then end the server's BMC session instead of
// keeping it for steps that will not come.
func lastProviderStep(s *plan.Server, st *plan.Step) bool {
	for i := len(s.Steps) - 1; i >= 0; i-- {
		if !s.Steps[i].IsHook() {
			return s.Steps[i].Index == st.Index
		}
	}
	return false
}

func nodeName(s *plan.Server) string {
	if s.NodeName != "" {
		return s.NodeName
	}
	return s.Name
}

// resume continues an op the journal shows in flight after a crash: poll
// its BMC task when one was recorded, otherwise verify whether a versioned
// step already took effect before running it again. A completed step is
// never run twice.
func (r *runner) resume(ctx context.Context, sv *node) {
	s := sv.sv
	o := r.opFor(sv, s.inflight)
	if s.taskURI != "" {
		o.kind, o.uri = opPoll, s.taskURI
		r.event(Event{Type: "step_resumed", Server: sv.id, Op: o.op, TaskURI: o.uri, Message: "polling the task recorded before the restart"})
		r.launch(ctx, o)
		return
	}
	// Only plan steps are verified by version: a remediation reimage
	// rewrites a version that is already there, so it is run again.
	if o.kind == opApply && o.step != nil && o.step.Version != "" && strings.HasPrefix(o.op, "step:") {
		o.kind = opVerify
		r.event(Event{Type: "step_resumed", Server: sv.id, Op: o.op, Message: "checking whether the step took effect before the restart"})
		r.launch(ctx, o)
		return
	}
	// Idempotent steps (hooks, power, wait_ready) are simply run again.
	r.start(ctx, sv, s.inflight)
}

// launch counts an op as in flight at once; it starts after the next
// flush, when the records announcing it are durable.
func (r *runner) launch(ctx context.Context, o *opRun) {
	r.ops[o.sv] = o
	r.inflight++
	r.launchQ = append(r.launchQ, o)
}

func (r *runner) begin(ctx context.Context, o *opRun) {
	if o.kind == opHook && o.hook.Timeout > 0 && !r.o.Synchronous {
		o.deadline = r.o.Clock.Now().Add(o.hook.Timeout)
		r.timed[o] = true
	}
	if r.o.Synchronous {
		r.syncQ = append(r.syncQ, o)
		return
	}
	opCtx, cancel := context.WithCancel(ctx)
	o.cancel = cancel
	if r.graceful && r.abandonable(o) {
		// Interrupted before it began: never begin it.
		o.abandoned = true
		cancel()
	}
	r.workers.Add(1)
	go func() {
		defer r.workers.Done()
		m := msg{o: o, err: opCtx.Err()}
		if m.err == nil {
			m = r.work(opCtx, o)
		}
		select {
		case r.msgs <- m:
		case <-ctx.Done():
		}
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
func (r *runner) abandonable(o *opRun) bool {
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
	if o.abandoned || !r.abandonable(o) {
		return
	}
	o.abandoned = true
	if o.cancel != nil {
		o.cancel()
	}
}

func (r *runner) target(sv *node) providers.Target {
	// Authenticated as plan found the BMC takes it (a session or Basic).
	return providers.Target{Name: sv.srv.Address, Endpoint: sv.srv.BMC, System: sv.srv.System, Auth: sv.srv.Auth}
}

// work does one op. It runs on a worker goroutine (or inline when
// Synchronous) and touches nothing but its arguments and the provider.
func (r *runner) work(ctx context.Context, o *opRun) msg {
	sv := o.sv
	prov := r.o.Providers[sv.srv.Provider]
	switch o.kind {
	case opObserve, opVerify:
		obs, err := observe(ctx, prov, r.target(sv))
		if errors.As(err, new(*providerError)) {
			return r.providerFault(ctx, prov, o, err)
		}
		if o.kind == opObserve && err == nil {
			r.observePeers(ctx, o) // quorum guard (quorum.go)
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
		err := r.o.Hooks.Run(ctx, o.hook)
		return msg{o: o, done: err == nil, err: err}
	case opPoll:
		return r.pollTask(ctx, prov, o)
	}
	if tr := r.watched(o); tr != nil {
		return r.watchReady(ctx, prov, o, tr) // remediation triggers (remediation.go)
	}
	last := ""
	res, diags := prov.Apply(ctx, &providers.ApplyRequest{Target: r.target(sv), Step: o.pstep, Last: o.last}, func(p *providers.Progress) error {
		if p.TaskURI != "" && p.TaskURI != last {
			last = p.TaskURI
			if err := r.handoff(ctx, msg{o: o, task: p.TaskURI}); err != nil {
				return err
			}
		}
		if p.Message != "" || p.Percent >= 0 {
			r.progress(ctx, msg{o: o, prog: true, percent: p.Percent, progMsg: p.Message})
		}
		return nil
	})
	if diags.Unavailable() {
		return r.providerFault(ctx, prov, o, diags.Err())
	}
	if err := diags.Err(); err != nil {
		return msg{o: o, err: err}
	}
	m := msg{o: o, done: true}
	if res != nil {
		m.message = res.Message
	}
	m.message = confirmed(o.op, o.pstep.Kind, res)
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
func (r *runner) providerFault(ctx context.Context, prov providers.Provider, o *opRun, err error) msg {
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
func (r *runner) handoff(ctx context.Context, m msg) error {
	if r.o.Synchronous {
		return r.recordTask(ctx, m)
	}
	m.ack = make(chan error, 1)
	select {
	case r.msgs <- m:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-m.ack:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *runner) progress(ctx context.Context, m msg) {
	if r.o.Synchronous {
		r.progressEvent(m)
		return
	}
	select {
	case r.msgs <- m:
	case <-ctx.Done():
	}
}

func (r *runner) recordTask(ctx context.Context, m msg) error {
	r.emit(ctx, &Record{Type: recTaskURI, Server: m.o.sv.id, Op: m.o.op, TaskURI: m.task})
	r.flush(ctx)
	if r.err == nil {
		m.o.taskRecorded = true
		if r.graceful {
			// The BMC took the request; polling its task is left to the
			// next apply.
			r.abandon(m.o)
		}
	}
	return r.err
}

func (r *runner) progressEvent(m msg) {
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

// pollTask polls a recorded BMC task until it is terminal. A task that is
// gone (BMCs delete finished tasks) is verified by observing.
func (r *runner) pollTask(ctx context.Context, prov providers.Provider, o *opRun) msg {
	for {
		ts, diags := prov.Task(ctx, &providers.TaskRequest{Target: r.target(o.sv), TaskURI: o.uri})
		if diags.Unavailable() {
			return r.providerFault(ctx, prov, o, fmt.Errorf("polling task %s: %w", o.uri, diags.Err()))
		}
		if err := diags.Err(); err != nil {
			return msg{o: o, err: fmt.Errorf("polling task %s: %w", o.uri, err)}
		}
		if ts.Terminal() {
			switch ts.State {
			case providers.TaskCompleted:
				return msg{o: o, done: true, message: "task " + o.uri + " completed"}
			case providers.TaskGone:
				if o.step == nil || o.step.Version == "" {
					return msg{o: o, done: true, message: "task " + o.uri + " is gone; the step is idempotent"}
				}
				obs, err := observe(ctx, prov, r.target(o.sv))
				if errors.As(err, new(*providerError)) {
					return r.providerFault(ctx, prov, o, err)
				}
				if err != nil {
					return msg{o: o, err: err}
				}
				at, verr := hasVersion(o.step, obs)
				if at || o.step.ApplyTime != "Immediate" {
					// A staged update shows its version only after the
					// reset; wait_ready verifies it later. So may one
					// sent without an apply time (the BMC lists none and
					// applies it as it does by default).
					return msg{o: o, done: true, message: "task " + o.uri + " is gone; verified by observing"}
				}
				if verr != nil {
					return msg{o: o, err: fmt.Errorf("task %s is gone and %s cannot be verified at %s: %w", o.uri, o.step.Component, o.step.Version, verr)}
				}
				return msg{o: o, err: fmt.Errorf("task %s is gone and %s is not at %s", o.uri, o.step.Component, o.step.Version)}
			}
			return msg{o: o, err: fmt.Errorf("task %s ended %s: %s", o.uri, ts.State, strings.Join(ts.Messages, "; "))}
		}
		if r.o.Synchronous {
			continue
		}
		select {
		case <-ctx.Done():
			return msg{o: o, err: ctx.Err()}
		case <-r.o.Clock.At(r.o.Clock.Now().Add(r.o.PollInterval)):
		}
	}
}

// handle applies a worker message on the scheduler goroutine.
func (r *runner) handle(ctx context.Context, m msg) {
	if m.task != "" {
		err := r.recordTask(ctx, m)
		if m.ack != nil {
			m.ack <- err
		}
		return
	}
	if m.prog {
		r.progressEvent(m)
		return
	}
	o := m.o
	delete(r.ops, o.sv)
	delete(r.timed, o)
	r.inflight--
	if o.cancel != nil {
		o.cancel()
	}
	sv := o.sv
	defer func() { r.ready = append(r.ready, sv) }()
	if m.interrupted || (o.abandoned && !m.done) {
		r.interrupted(sv, o, m)
		return
	}
	switch o.kind {
	case opObserve:
		r.preflight(ctx, sv, m)
		return
	case opVerify:
		switch {
		case m.err != nil:
			r.emit(ctx, &Record{Type: recStepFailed, Server: sv.id, Op: o.op, Error: "verifying after a restart: " + m.err.Error()})
		case m.verified:
			r.emit(ctx, &Record{Type: recStepDone, Server: sv.id, Op: o.op, Message: "verified after a restart: " + o.step.Component + " is at " + o.step.Version})
		case sv.skip:
			// Skipped meanwhile: not run again; its safety steps follow.
			r.emit(ctx, &Record{Type: recStepFailed, Server: sv.id, Op: o.op, Error: "not run again: the server was skipped"})
		default:
			r.start(ctx, sv, o.op)
		}
		return
	}
	if m.err != nil && o.kind == opHook && o.hook.Name == string(plan.StepDrain) && (o.timedOut || errors.Is(m.err, context.DeadlineExceeded)) {
		// Rule 21: drain is bounded; the upgrade proceeds.
		r.emit(ctx, &Record{Type: recStepDone, Server: sv.id, Op: o.op,
			Message: fmt.Sprintf("drain did not finish within %s; proceeding", o.hook.Timeout)})
		return
	}
	if m.err != nil {
		e := m.err.Error()
		if o.timedOut {
			e = fmt.Sprintf("%s hook did not finish within %s", o.hook.Name, o.hook.Timeout)
		}
		r.emit(ctx, &Record{Type: recStepFailed, Server: sv.id, Op: o.op, Error: e})
		return
	}
	r.emit(ctx, &Record{Type: recStepDone, Server: sv.id, Op: o.op, Message: m.message})
}

// maxInterrupts bounds how often the provider may fail under one op in one
// Run before the run stops as provider_unavailable: a plugin that crashes
// on a step every time it is restarted must not loop forever.
const maxInterrupts = 5

// interrupted handles an op that ended without an outcome: abandoned at an
// interrupt, or cut short by its provider's plugin dying. Nothing is
// journaled: the op stays in flight in the journal, and it is resumed from
// there (task polled, accepted update found, idempotent step run again),
// by this Run once the provider is back or by the next apply.
func (r *runner) interrupted(sv *node, o *opRun, m msg) {
	name := sv.srv.Provider
	why := "abandoned at the interrupt; the next apply resumes it from the journal"
	if m.interrupted {
		why = fmt.Sprintf("provider %q failed during the step (%v); resuming it from the journal", name, m.err)
		key := sv.id + " " + o.op
		r.interrupts[key]++
		if n := r.interrupts[key]; n >= maxInterrupts && r.down[name] == "" {
			r.down[name] = fmt.Sprintf("provider %q failed %d times during %s of %s", name, n, opLabelOrObserve(o), sv.id)
		}
		if m.down != "" && r.down[name] == "" {
			r.down[name] = fmt.Sprintf("provider %q is unavailable: %s", name, m.down)
		}
	}
	e := Event{Type: "step_interrupted", Server: sv.id, Op: o.op, Message: why}
	if o.op != "" {
		e.StepKind = opLabel(o)
	}
	r.event(e)
}

func opLabelOrObserve(o *opRun) string {
	if o.op == "" {
		return "the pre-flight observation"
	}
	return o.op + " (" + opLabel(o) + ")"
}

// preflight checks a server before its first step: unreachable, already at
// target (rule 24), drifted (rule 26).
func (r *runner) preflight(ctx context.Context, sv *node, m msg) {
	switch {
	case m.err != nil:
		r.set(ctx, sv, State{Name: Failed, Reason: ReasonUnreachable, Message: "not touched: observing before the first step failed: " + m.err.Error()})
	case m.obs.EffectiveOutcome() != providers.OutcomeObserved:
		msg := "not touched: " + outcomeText(m.obs.EffectiveOutcome())
		if err := m.obs.Diagnostics.Err(); err != nil {
			msg += ": " + err.Error()
		}
		r.set(ctx, sv, State{Name: Failed, Reason: ReasonUnreachable, Message: msg})
	case identityChanged(sv.srv, m.obs) != "":
		// Before anything destructive: a replaced machine, or a BMC
		// address now used by another one, is never flashed with this
		// server's plan.
		r.set(ctx, sv, State{Name: Failed, Reason: ReasonIdentity, Message: "not touched: " + identityChanged(sv.srv, m.obs)})
	case atTarget(sv.srv, m.obs):
		r.set(ctx, sv, State{Name: Skipped, Reason: ReasonAtTarget, Message: "already at target"})
	default:
		if d := drift(sv.srv, m.obs); d != "" && !(sv.sv.rerun && sv.sv.begun) {
			r.set(ctx, sv, State{Name: Failed, Reason: ReasonDrift, Message: "not touched: drifted since the plan: " + d})
			return
		}
		if !r.quorumHolds(ctx, sv, m.o) {
			return
		}
		r.emit(ctx, &Record{Type: recObserved, Server: sv.id, Fingerprint: m.obs.Fingerprint})
	}
}

// outcomeText names an observation outcome in a sentence.
func outcomeText(outcome string) string {
	switch outcome {
	case providers.OutcomeCredentialsRefused:
		return "the BMC refused the credentials"
	case providers.OutcomeInventoryUnavailable:
		return "the BMC gives no usable firmware inventory"
	case providers.OutcomeSystemUnresolved:
		return "the BMC does not serve the server's system"
	}
	return "the BMC is unreachable"
}

// identityChanged says how the server's identity differs from the one the
// plan recorded, comparing only fields recorded and reported, or "" when
// it does not (or the plan recorded none: plans before format 1.3).
func identityChanged(s *plan.Server, obs *providers.Observation) string {
	planned, found := s.Identity, obs.Identity
	var diffs []string
	for _, f := range []struct{ name, planned, found string }{
		{"serial", planned.SerialNumber, found.SerialNumber},
		{"system UUID", planned.UUID, found.UUID},
		{"manufacturer", planned.Manufacturer, found.Manufacturer},
		{"model", planned.Model, found.Model},
	} {
		if f.planned == "" || f.found == "" || strings.EqualFold(f.planned, f.found) {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s %s; the plan was made for %s %s", f.name, f.found, f.name, f.planned))
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("the BMC at %s now reports %s: was the machine replaced, or the BMC address given to another one? Plan again to upgrade the machine that is there now.",
		s.BMC, strings.Join(diffs, ", and "))
}

func (r *runner) event(e Event) {
	e.V = EventVersion
	e.Time = r.o.Clock.Now().UTC()
	r.o.Events.Event(e)
}

// recordEvent turns an applied journal record into its event.
func (r *runner) recordEvent(rec *Record, old State) {
	e := Event{Time: rec.Time}
	switch rec.Type {
	case recRunStarted:
		e.Type, e.PlanSHA256, e.By, e.Message = "apply_started", rec.PlanSHA256, rec.By, rec.Message
		if r.m.records > 1 {
			e.Type = "apply_resumed"
		}
	case recRunEnded:
		return
	case recState:
		n := r.m.nodes[rec.ID]
		e.Type = eventType(n.kind, old, n.st)
		e.ID, e.Kind, e.State, e.Reason, e.Message, e.Until = n.id, n.kind, rec.State, rec.Reason, rec.Message, rec.Until
		if n.parent != nil {
			e.Parent = n.parent.id
		}
		switch n.kind {
		case KindScope:
			e.Counts = n.counts()
		case KindServer:
			e.Counts = n.parent.counts()
		}
	case recObserved:
		e.Type, e.Server, e.Message = "server_observed", rec.Server, "no drift"
	case recStepStarted, recStepDone, recStepFailed, recTaskURI:
		e.Type = map[string]string{recStepStarted: "step_started", recStepDone: "step_completed", recStepFailed: "step_failed", recTaskURI: "step_task"}[rec.Type]
		e.Server, e.Op, e.TaskURI = rec.Server, rec.Op, rec.TaskURI
		e.Message = rec.Message
		if rec.Error != "" {
			e.Message = rec.Error
		}
		if sv := r.m.servers[rec.Server]; sv != nil {
			st := sv.sv.status(rec.Op)
			e.StepKind = st.Kind
			e.Component = st.Component
		}
	case recAvailable:
		e.Type, e.Target, e.Message = "release_available", rec.ID, rec.Message
	case recContinue, recApprove, recStop, recSkip, recRerun:
		e.Type = requestEvents[rec.Type]
		e.Target, e.By = rec.Target, rec.By
	default:
		return
	}
	e.V = EventVersion
	if e.Time.IsZero() {
		e.Time = r.o.Clock.Now().UTC()
	}
	r.o.Events.Event(e)
}
