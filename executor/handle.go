package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Handling what a worker reports, on the scheduler.

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
	r.ops.remove(o)
	if o.cancel != nil {
		o.cancel()
	}
	sv := o.sv
	defer func() { r.ready = append(r.ready, sv) }()
	if m.interrupted || (o.abandoned && !m.done) {
		r.interrupted(sv, o, m)
		return
	}
	if m.nt != nil {
		r.handleNotTaken(ctx, sv, o, m.nt) // nottaken.go
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
			r.emit(ctx, &Record{Type: recStepDone, Server: sv.id, Op: o.op, Message: "verified after a restart: " + o.step.Component + " is at " + o.step.Target.Version})
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
	rec := &Record{Type: recStepDone, Server: sv.id, Op: o.op, Message: m.message}
	switch {
	case m.gone:
		rec.TaskState = providers.TaskGone
	case m.noTask:
		rec.TaskState = taskNone
	}
	r.emit(ctx, rec)
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
	if m.provider != "" {
		name = m.provider
	}
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
		if !r.quorum.quorumHolds(ctx, sv, m.o) {
			return
		}
		if sv.st.Name == Running && strings.HasPrefix(sv.st.Message, quorumWait) {
			r.set(ctx, sv, State{Name: Running}) // the quorum check no longer waits (sayQuorumWaits)
		}
		r.emit(ctx, &Record{Type: recObserved, Server: sv.id, Fingerprint: m.obs.Fingerprint})
	}
}

// outcomeText names an observation outcome in a sentence.
func outcomeText(outcome string) string { return providers.WordingOf(outcome).BMC }

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
