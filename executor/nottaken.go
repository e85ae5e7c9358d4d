package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
//   - sent Immediate but staged by the BMC all the same (a pending member
//     the rule selects reports the version: Lenovo's UEFI-Pending):
//     treated as staged below, never sent at once again.
//   - staged for the next boot: its version shows only after the plan's
//     reset, so the step is done with its task recorded gone (step_done
//     "task_state"), and the plan's wait_ready reads it: a server that is
//     on and healthy with such a component not at target did not take
//     it, and is never remediated: neither a reboot nor a reimage brings
//     back firmware that was never flashed, and the server is not
//     unhealthy. The vanished task says the BMC lost it: it is sent once
//     more with the host reset again (restage.go); not at target after
//     that, the server fails the same way.
//   - staged for the next boot, its task completed: the same, as a BMC
//     that restarts before the reset (watchdog, its own firmware's
//     activation) can discard the image it staged: sent once more with
//     the host reset again when a later update's loss says the BMC
//     restarted (restage.go), else (refused at the reset) failed at once,
//     in those words, never as provisioning, not reimaged or powered off.
//   - accepted with no task to follow at all (a BMC that answers 204):
//     nothing says whether the flash was done, and nothing can be polled;
//     the plan's wait_ready reads it (step_done task_state "None"), and
//     the server fails the same way; nothing says it was lost, and it is
//     not sent again.

// maxUpdateRetries is how often an update that did not take is sent again.
const maxUpdateRetries = 1

// taskNone is step_done's task_state for an update accepted with no task
// to follow.
const taskNone = "None"

// unconfirmedUpdate is an update no task confirmed, and why.
type unconfirmedUpdate struct {
	step *plan.Step
	why  string
	// again: if it did not show, it may be sent again with the host reset
	// again (restage.go), when the BMC lost it: lost and lostIf are the
	// signs of that (lossSigns).
	again  bool
	lost   bool
	lostIf []*plan.Step
}

// notTaken is a worker's finding that updates did not take effect.
type notTaken struct {
	// steps are the plan step indexes of the updates.
	steps []int
	// read says what the BMC reports instead: "bios reads 1.0, expected 2.0".
	read string
	// why says why nothing confirmed them (vanishedWhy, noTaskWhy).
	why string
	// retry: every one of them is a staged update the BMC lost, to be
	// sent again with the host reset again (restage.go).
	retry bool
}

// staged reports whether a step's version may show only after the next
// boot: an apply time other than Immediate, or none at all (the BMC lists
// none and applies the image as it does by default, often at the reset).
func staged(st *plan.Step) bool { return st.ApplyTime != "Immediate" }

// pendingAtTarget reports whether a member the update's rule selects is
// staged for the next reset at the update's version: Lenovo's
// UEFI-Pending, an iDRAC's pending image.
func pendingAtTarget(st *plan.Step, obs *providers.Observation) bool {
	if st.Match == nil || st.Target.Version == "" {
		return false
	}
	t := st.Target
	for _, c := range st.Match.Members(obs.Components) {
		if c.State != providers.StatePending {
			continue
		}
		if ok, err := t.Matches(c.Version); err == nil && ok {
			return true
		}
	}
	return false
}

// readBack says what obs shows for the component of an update step, read
// when ("" or " after the reset").
func readBack(st *plan.Step, obs *providers.Observation, when string) string {
	_, why, err := versionOf(st, obs)
	m := providers.Match{}
	if st.Match != nil {
		m = *st.Match
	}
	switch active := m.Active(obs.Components); {
	case err != nil:
		why = err.Error()
	case len(active) == 1:
		// One member: its version says it all.
		why = active[0].Version
	case why == "":
		why = "no active member"
	}
	return fmt.Sprintf("%s reads %s%s, expected %s", st.Component, why, when, st.Target.Version)
}

// taskGone decides a versioned op whose BMC task vanished before it said
// how it ended, by reading the version back; verified is the op's message
// when it is at target. It runs on the worker.
func (wk *worker) taskGone(ctx context.Context, prov providers.Provider, o *opRun, uri, verified string) msg {
	obs, err := observe(ctx, prov, wk.r.target(o.sv))
	if errors.As(err, new(*providerError)) {
		return wk.providerFault(ctx, prov, o, err)
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
	case pendingAtTarget(o.step, obs):
		// Sent Immediate, the BMC staged it for the next reset all the
		// same (a pending member at the version): sending it again would
		// flash it twice. The plan's wait_ready reads it after the reset.
		return msg{o: o, done: true, gone: true, message: verified}
	case verr != nil:
		return msg{o: o, err: fmt.Errorf("task %s is gone and %s cannot be verified at %s: %w", uri, o.step.Component, o.step.Target.Version, verr)}
	case o.pstep.Kind == providers.StepUpdate:
		return msg{o: o, nt: &notTaken{steps: []int{o.step.Index}, read: readBack(o.step, obs, ""), why: vanishedWhy}}
	}
	return msg{o: o, err: fmt.Errorf("task %s is gone and %s is not at %s", uri, o.step.Component, o.step.Target.Version)}
}

// checkTaken runs when the plan's wait_ready of a server with staged
// updates whose task vanished did not succeed: a server on and healthy on
// which one of them is not at target did not take it. It reports false
// when that is not what holds the server (the wait then fails as before).
// It runs on the worker.
func (wk *worker) checkTaken(ctx context.Context, prov providers.Provider, o *opRun) (msg, bool) {
	if len(o.unconfirmed) == 0 || ctx.Err() != nil {
		return msg{}, false
	}
	obs, err := observe(ctx, prov, wk.r.target(o.sv))
	if errors.As(err, new(*providerError)) {
		return wk.providerFault(ctx, prov, o, err), true
	}
	// Healthy as its wait requires: a server upgraded although Critical
	// may be Critical (rule 50).
	healthy := obs != nil && (obs.NotHealthy() == "" || o.pstep.AcceptCritical && obs.Health == "Critical")
	if err != nil || obs.PowerState != providers.PowerOn || !healthy {
		return msg{}, false
	}
	nt := &notTaken{retry: true}
	var read, why []string
	for _, u := range o.unconfirmed {
		if at, _ := hasVersion(u.step, obs); !at {
			nt.retry = nt.retry && u.again && u.lostIn(obs)
			nt.steps = append(nt.steps, u.step.Index)
			read = append(read, readBack(u.step, obs, " after the reset"))
			if !slices.Contains(why, u.why) {
				why = append(why, u.why)
			}
		}
	}
	if len(nt.steps) == 0 {
		return msg{}, false
	}
	nt.read, nt.why = strings.Join(read, "; "), strings.Join(why, "; ")
	return msg{o: o, nt: nt}, true
}

// unconfirmed lists the updates of sv no task confirmed, for the plan's
// wait_ready op to check (scheduler side): staged ones whose task
// vanished, any accepted with no task, and every update staged for the
// next reset before this wait_ready, though its task completed: only the
// reset shows it, and a BMC that restarts before the reset can discard
// the image it staged. Each says whether it may be sent again if it did
// not show (restage.go). They are listed in the plan's order.
func unconfirmed(sv *node, op string) []unconfirmedUpdate {
	s := sv.sv
	st := s.stepFor(op)
	if st == nil || st.Kind != plan.StepWaitReady || !strings.HasPrefix(op, "step:") {
		return nil
	}
	wait := s.posOfIndex(st.Index)
	var out []unconfirmedUpdate
	for _, n := range s.vanished {
		if i, ok := s.posOf(n); ok {
			u := unconfirmedUpdate{step: &s.p.Steps[i], why: vanishedWhy, again: s.canRestage(i, wait), lost: true}
			if s.noTask[n] {
				u.why, u.lost = noTaskWhy, false
			}
			out = append(out, u)
		}
	}
	for i := range s.p.Steps[:wait] {
		u := &s.p.Steps[i]
		if u.Kind != plan.StepUpdate || !staged(u) || slices.Contains(s.vanished, u.Index) || !s.completed(stepOp(u.Index)) {
			continue
		}
		x := unconfirmedUpdate{step: u, why: stagedWhy, again: s.canRestage(i, wait)}
		if x.lost, x.lostIf = s.lossSigns(i, wait); x.lost || len(x.lostIf) > 0 {
			x.why = stagedLostWhy
		}
		out = append(out, x)
	}
	slices.SortStableFunc(out, func(a, b unconfirmedUpdate) int { return s.posOfIndex(a.step.Index) - s.posOfIndex(b.step.Index) })
	return out
}

// completed reports whether op completed.
func (s *serverRun) completed(op string) bool {
	st := s.step(op)
	return st != nil && st.State == Completed
}

// vanishedWhy and noTaskWhy are the causes the messages of a not-taken
// update give.
const (
	vanishedWhy = "its BMC task vanished before it finished (as when the BMC restarts during the flash)"
	noTaskWhy   = "the BMC accepted it with no task to follow, so nothing confirmed the flash"
	// stagedWhy and stagedLostWhy: an update staged for the next reset
	// whose task completed.
	stagedWhy     = "it was staged for the next reset, and the reset did not apply it"
	stagedLostWhy = "it was staged for the next reset, and the BMC restarted before the reset (a later update's task vanished), which can discard a staged image"
)

// handleNotTaken journals an update that did not take effect: sent once
// more, or failed (scheduler side).
func (r *runner) handleNotTaken(ctx context.Context, sv *node, o *opRun, nt *notTaken) {
	s := sv.sv
	if o.step.Kind == plan.StepWaitReady {
		// Staged updates that did not show after the reset: lost with a
		// BMC restart, sent again with the host reset again, once
		// (restage.go); else failed.
		if nt.retry && !sv.skip {
			if r.graceful {
				// In flight in the journal: the next apply waits again,
				// finds them lost again, and sends them again.
				r.interrupted(sv, o, msg{o: o})
				return
			}
			r.emit(ctx, &Record{Type: recRetryStaged, Server: sv.id, Op: o.op, Steps: nt.steps, Message: "it did not take effect: " + nt.read + "; " + nt.why})
			return
		}
		// The updates fail first: a crash between the two records then
		// leaves the server failed, never in remediation.
		why := "update did not take effect: " + nt.read + "; " + nt.why
		if s.restaged {
			why += "; sent again, with the host reset again, and it did not take either"
		}
		why += "; check the BMC, then plan again"
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
