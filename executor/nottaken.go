package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// An update that did not take effect. A BMC that restarts during a flash
// loses the task it was running: the task monitor vanishes (TaskGone) and
// nothing says whether the flash was done. Such an update is not trusted
// until its version is read back:
//   - applied at once (Immediate): read now. At target, it is done. Not at
//     target, it is sent once more, the retry journaled first (a
//     step_started with "retry"): a crash after it resumes like any update
//     in flight, verified by reading the version before anything is sent
//     again, so an update that did apply is never flashed twice. A second
//     update that does not take fails the server: "update did not take
//     effect", naming the component, the version expected and the one read.
//   - staged for the next boot: its version shows only after the plan's
//     reset, so the step is done with its task recorded gone (step_done
//     "task_state"), and the plan's wait_ready reads it: a server that is
//     on and healthy with such a component not at target fails the same
//     way, with no remediation: neither a reboot nor a reimage brings back
//     firmware that was never flashed, and the server is not unhealthy.

// maxUpdateRetries is how often an update that did not take is sent again.
const maxUpdateRetries = 1

// notTaken is a worker's finding that updates did not take effect.
type notTaken struct {
	// steps are the plan step indexes of the updates.
	steps []int
	// read says what the BMC reports instead: "bios reads 1.0, expected 2.0".
	read string
}

// staged reports whether a step's version shows only after the next boot.
func staged(st *plan.Step) bool { return st.ApplyTime != "" && st.ApplyTime != "Immediate" }

// readBack says what obs shows for the component of an update step, read
// when ("" or " after the reset").
func readBack(st *plan.Step, obs *providers.Observation, when string) string {
	c, ok := reported(st, obs)
	if !ok {
		return fmt.Sprintf("%s is not reported%s, expected %s", st.Component, when, st.Version)
	}
	return fmt.Sprintf("%s reads %s%s, expected %s", st.Component, c.Version, when, st.Version)
}

// taskGone decides a versioned op whose BMC task vanished before it said
// how it ended, by reading the version back; verified is the op's message
// when it is at target. It runs on the worker.
func (r *runner) taskGone(ctx context.Context, prov providers.Provider, o *opRun, uri, verified string) msg {
	obs, err := observe(ctx, prov, r.target(o.sv))
	if errors.As(err, new(*providerError)) {
		return r.providerFault(ctx, prov, o, err)
	}
	if err != nil {
		return msg{o: o, err: err}
	}
	at, verr := hasVersion(o.step, obs)
	switch {
	case at:
		return msg{o: o, done: true, message: verified}
	case staged(o.step):
		// Only the reset shows it; the plan's wait_ready reads it then.
		return msg{o: o, done: true, gone: true, message: verified}
	case verr != nil:
		return msg{o: o, err: fmt.Errorf("task %s is gone and %s cannot be verified at %s: %w", uri, o.step.Component, o.step.Version, verr)}
	case o.pstep.Kind == providers.StepUpdate:
		return msg{o: o, nt: &notTaken{steps: []int{o.step.Index}, read: readBack(o.step, obs, "")}}
	}
	return msg{o: o, err: fmt.Errorf("task %s is gone and %s is not at %s", uri, o.step.Component, o.step.Version)}
}

// checkTaken runs when the plan's wait_ready of a server with staged
// updates whose task vanished did not succeed: a server on and healthy on
// which one of them is not at target did not take it. It reports false
// when that is not what holds the server (the wait then fails as before).
// It runs on the worker.
func (r *runner) checkTaken(ctx context.Context, prov providers.Provider, o *opRun) (msg, bool) {
	if len(o.unconfirmed) == 0 || ctx.Err() != nil {
		return msg{}, false
	}
	obs, err := observe(ctx, prov, r.target(o.sv))
	if errors.As(err, new(*providerError)) {
		return r.providerFault(ctx, prov, o, err), true
	}
	if err != nil || obs.PowerState != providers.PowerOn || obs.NotHealthy() != "" {
		return msg{}, false
	}
	nt := &notTaken{}
	var read []string
	for _, st := range o.unconfirmed {
		if at, _ := hasVersion(st, obs); !at {
			nt.steps = append(nt.steps, st.Index)
			read = append(read, readBack(st, obs, " after the reset"))
		}
	}
	if len(nt.steps) == 0 {
		return msg{}, false
	}
	nt.read = strings.Join(read, "; ")
	return msg{o: o, nt: nt}, true
}

// unconfirmed lists the staged updates of sv whose task vanished, for the
// plan's wait_ready op to check (scheduler side).
func unconfirmed(sv *node, op string) []*plan.Step {
	s := sv.sv
	if st := s.stepFor(op); st == nil || st.Kind != plan.StepWaitReady || !strings.HasPrefix(op, "step:") {
		return nil
	}
	var out []*plan.Step
	for _, n := range s.vanished {
		if i, ok := s.pos[n]; ok {
			out = append(out, &s.p.Steps[i])
		}
	}
	return out
}

// vanishedWhy is the cause every message of a not-taken update gives.
const vanishedWhy = "its BMC task vanished before it finished (as when the BMC restarts during the flash)"

// handleNotTaken journals an update that did not take effect: sent once
// more, or failed (scheduler side).
func (r *runner) handleNotTaken(ctx context.Context, sv *node, o *opRun, nt *notTaken) {
	s := sv.sv
	if o.step.Kind == plan.StepWaitReady {
		// Staged updates that did not show after the reset. The updates
		// fail first: a crash between the two records then leaves the
		// server failed, never in remediation.
		why := "update did not take effect: " + nt.read + "; " + vanishedWhy + "; check the BMC, then plan again"
		for _, n := range nt.steps {
			r.emit(ctx, &Record{Type: recStepFailed, Server: sv.id, Op: stepOp(n), Error: why})
		}
		r.emit(ctx, &Record{Type: recStepFailed, Server: sv.id, Op: o.op, Error: "the server is on and healthy, but " + why})
		return
	}
	switch {
	case s.retries[o.op] >= maxUpdateRetries:
		r.emit(ctx, &Record{Type: recStepFailed, Server: sv.id, Op: o.op, Error: fmt.Sprintf(
			"update did not take effect: %s; sent %d times, and each time %s; check the BMC, then plan again", nt.read, maxUpdateRetries+1, vanishedWhy)})
	case sv.skip:
		r.emit(ctx, &Record{Type: recStepFailed, Server: sv.id, Op: o.op, Error: "update did not take effect: " + nt.read + "; not sent again: the server was skipped"})
	case r.graceful:
		// Nothing new at an interrupt: in flight in the journal, the
		// next apply finds the task gone, reads the version, and retries.
		r.interrupted(sv, o, msg{o: o})
	default:
		n := s.retries[o.op] + 1
		r.startRecorded(ctx, sv, o.op, n, "sending the update again: it did not take effect: "+nt.read+"; "+vanishedWhy)
	}
}
