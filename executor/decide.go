package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rackform/rackform/executor/rollout"
	"github.com/rackform/rackform/internal/words"
	"github.com/rackform/rackform/planner/plan"
)

// A server's next operation, decided on the scheduler.

// decide starts a running server's next operation, or ends it.
func (r *runner) decide(ctx context.Context, sv *node) {
	if sv.st.Name.Terminal() || sv.st.Name == Pending || r.ops.of(sv) != nil || r.graceful || !r.mine(sv) {
		return // pending: held for quorum until continue starts it again
	}
	s := sv.sv
	if r.down[sv.srv.Provider] != "" || (len(r.down) > 0 && !s.observed && s.inflight == "") {
		// Resumable: the run stops once nothing is in flight. A server
		// not yet observed waits too: its pre-flight may need the
		// provider that is down (a quorum peer's).
		return
	}
	if sv.skip {
		r.skipServer(ctx, sv)
		return
	}
	if s.inflight != "" {
		r.resume(ctx, sv)
		return
	}
	if !s.observed {
		r.launch(ctx, r.quorum.observeOp(sv)) // quorum.go: a member observes its peers too
		return
	}
	if s.failMsg != "" {
		r.set(ctx, sv, State{Name: Failed, Reason: ReasonStep, Message: s.failMsg})
		return
	}
	if op := s.nextRestage(); op != "" {
		r.restage(ctx, sv, op) // staged updates a BMC restart lost (restage.go)
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
		switch rm := rollout.NextRemedy(sv.srv.Role, s.actions, s.rem, s.remWait, s.poweredOff); rm.Kind {
		case rollout.RemedyWaitReady:
			r.start(ctx, sv, remedyOp(rm.Round, "wait_ready"))
			return
		case rollout.RemedyAction:
			r.start(ctx, sv, remedyOp(rm.Round, rm.Action))
			return
		case rollout.RemedyPowerOff:
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
			if st := s.step(opPowerOff); st != nil && st.State == Completed && s.offConfirmed {
				msg += "; powered off"
			} else if st != nil && st.State == Failed {
				msg += "; power off was asked and failed: " + st.Message
			} else if st != nil {
				msg += "; power off was asked: " + st.Message
			}
		}
		what := "server"
		if sv.srv.IsDevice() {
			what = "device"
		}
		r.set(ctx, sv, State{Name: Failed, Reason: ReasonUnhealthy, Message: msg + "; the " + what + " is unhealthy and needs a replace"})
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
						Message: fmt.Sprintf("%s is shared by every server on this BMC: waiting until %s %s drained and shut down (or done)", st.Component, strings.Join(wait, ", "), words.Plural(len(wait), "is", "are"))})
				}
			}
			return
		}
		r.start(ctx, sv, stepOp(st.Index))
		return
	}
	msg := strings.Join(s.warnings, "; ")
	if o := sv.srv.UpgradeWhenCritical; o != nil {
		// Said first: the reviewed exception and how it ended (rule 50).
		msg = strings.TrimSuffix(criticalNote(o.Reason, s.cameBack)+"; "+msg, "; ")
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
				xs := n.sv.step(stepOp(x.Index))
				down = xs != nil && xs.State == Completed
			}
		}
		if !down {
			wait = append(wait, addr)
		}
	}
	return wait
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
		st := s.step(safetyOp(a))
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
func (r *runner) start(ctx context.Context, sv *node, op string) { r.startRecorded(ctx, sv, op, 0, "") }

// startRecorded is start with the record's retry count and message.
func (r *runner) startRecorded(ctx context.Context, sv *node, op string, retry int, message string) {
	o := r.opFor(sv, op)
	r.emit(ctx, &Record{Type: recStepStarted, Server: sv.id, Op: op, Kind: opLabel(o), By: r.workerLabel(), Retry: retry, Message: message})
	if r.err != nil {
		return
	}
	r.launch(ctx, o)
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
	if o.kind == opApply && o.step != nil && o.step.Target.Version != "" && strings.HasPrefix(o.op, "step:") {
		o.kind = opVerify
		r.event(Event{Type: "step_resumed", Server: sv.id, Op: o.op, Message: "checking whether the step took effect before the restart"})
		r.launch(ctx, o)
		return
	}
	// Idempotent steps (hooks, power, wait_ready) are simply run again.
	r.start(ctx, sv, s.inflight)
}
