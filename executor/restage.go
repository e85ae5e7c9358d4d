package executor

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Staged updates a BMC restart lost (rule 40). An update staged for the
// next reset shows only after it; when the plan's wait_ready then finds
// it at its old version on a server that is on and healthy, and something
// says the BMC lost the image rather than refused it, the update is sent
// once more, as the plan sent it, with the host reset again:
//
//	retry_staged      the wait_ready op ends; Steps: the updates sent again
//	restage:shutdown  the host is powered off, as by the plan's shutdown
//	step:N            each update sent again (step_started retry 1)
//	restage:reset     the host is booted (reset On, as the plan's reset)
//	step:W            the plan's wait_ready, run again
//
// Every op is journaled before it starts, and a crash resumes it as any
// other (a resent update is verified, or its task polled, before it is
// sent again). An update that still does not show fails the server as
// one that did not take effect, never a remediation trigger; a server is
// retried so at most once. A server that does not come back on and
// healthy from the retry's reset is remediated as after the plan's own.
//
// What says the image was lost (unconfirmedUpdate.lost), the signs of a
// BMC restart between the staging and the reset:
//   - the update's own task vanished (the restart took the task, and
//     nothing says the image was ever staged);
//   - a later update before the reset was lost in flight: its task
//     vanished and its version had not moved, so it was sent again;
//   - a later staged update before the reset whose task vanished, when it
//     did not show after the reset either (one that did show says the
//     staged images survived).
//
// Not signs: an update accepted with no task to follow (nothing was ever
// confirmed, or lost), and a staged update whose task completed with no
// restart after it: the reset did not apply it, and sending it again
// would meet the same refusal. Those fail at once, as before.

// Actions of the ops of a retry ("restage:<action>").
const (
	restageShutdown = "shutdown"
	restageReset    = "reset"
)

func restageOp(action string) string { return "restage:" + action }

// retryStaged applies a retry_staged record: the wait_ready op ended, and
// the updates it lists are to be sent again.
func (s *serverRun) retryStaged(r *Record) error {
	if len(r.Steps) == 0 {
		return fmt.Errorf("journal: server %s: a retry of staged updates names none", s.p.Address)
	}
	for _, n := range r.Steps {
		if i, ok := s.posOf(n); !ok || s.p.Steps[i].Kind != plan.StepUpdate {
			return fmt.Errorf("journal: server %s has no update step %d to send again", s.p.Address, n)
		}
	}
	st := s.status(r.Op)
	st.State, st.Message = Pending, "runs again once the updates that did not take effect are sent again: "+r.Message
	s.inflight, s.taskURI, s.inflightSince = "", "", time.Time{}
	s.restage, s.resent, s.restageWhy, s.restaged = slices.Clone(r.Steps), map[int]bool{}, r.Message, true
	// Sent again in the plan's order, each once.
	slices.SortFunc(s.restage, func(a, b int) int { return s.posOfIndex(a) - s.posOfIndex(b) })
	s.restage = slices.Compact(s.restage)
	return nil
}

// resending reports whether step n is an update a retry sends again and
// has not sent yet: its completion moves the retry on, not the plan.
func (s *serverRun) resending(n int) bool {
	return slices.Contains(s.restage, n) && !s.resent[n]
}

// nextRestage is the next op of the server's retry of staged updates, or
// "" when there is none (no retry, or its ops are done: the plan's
// wait_ready runs again).
func (s *serverRun) nextRestage() string {
	if len(s.restage) == 0 {
		return ""
	}
	if s.shutdownStep() != nil && !s.completed(restageOp(restageShutdown)) {
		return restageOp(restageShutdown)
	}
	for _, n := range s.restage {
		if !s.resent[n] {
			return stepOp(n)
		}
	}
	if !s.completed(restageOp(restageReset)) {
		return restageOp(restageReset)
	}
	return ""
}

// shutdownStep is the plan's shutdown step of the server, nil if it has
// none.
func (s *serverRun) shutdownStep() *plan.Step {
	if i := slices.IndexFunc(s.p.Steps, func(st plan.Step) bool { return st.Kind == plan.StepShutdown }); i >= 0 {
		return &s.p.Steps[i]
	}
	return nil
}

// boots reports whether a plan step boots the host (reset, power on,
// reimage): what applies the images staged for the next reset.
func boots(st *plan.Step) bool {
	return st.Kind == plan.StepReset || st.Kind == plan.StepPowerOn || st.Kind == plan.StepReimage
}

// canRestage reports whether the update at position i, found not taken
// by the wait_ready at position wait, may be sent again with the host
// reset again: no retry of the server yet, the update never sent again,
// and the plan powered the host off before it and booted it after it, as
// the retry does again.
func (s *serverRun) canRestage(i, wait int) bool {
	if i >= wait || s.restaged || s.retries[stepOp(s.p.Steps[i].Index)] > 0 {
		return false
	}
	off := slices.ContainsFunc(s.p.Steps[:i], func(st plan.Step) bool { return st.Kind == plan.StepShutdown })
	booted := slices.ContainsFunc(s.p.Steps[i+1:wait], func(st plan.Step) bool { return boots(&st) })
	return off && booted
}

// lossSigns lists what says the BMC restarted between the staging of the
// update at position from and the reset that followed it (before the
// wait_ready at position to): lost, a later update lost in flight (its
// task vanished and its version had not moved: it was sent again);
// lostIf, later staged updates whose task vanished, signs only if they
// did not show after the reset either.
func (s *serverRun) lossSigns(from, to int) (lost bool, lostIf []*plan.Step) {
	end := to
	for k := from + 1; k < to; k++ {
		if boots(&s.p.Steps[k]) {
			end = k
			break
		}
	}
	for k := from + 1; k < end; k++ {
		u := &s.p.Steps[k]
		if u.Kind != plan.StepUpdate {
			continue
		}
		switch {
		case s.retries[stepOp(u.Index)] > 0:
			lost = true
		case slices.Contains(s.vanished, u.Index) && !s.noTask[u.Index]:
			lostIf = append(lostIf, u)
		}
	}
	return lost, lostIf
}

// lostIn reports whether obs, read after the reset, bears out a sign that
// the BMC lost u's image.
func (u unconfirmedUpdate) lostIn(obs *providers.Observation) bool {
	return u.lost || slices.ContainsFunc(u.lostIf, func(st *plan.Step) bool {
		at, _ := hasVersion(st, obs)
		return !at
	})
}

// restage starts an op of a retry of staged updates (scheduler side).
func (r *runner) restage(ctx context.Context, sv *node, op string) {
	s := sv.sv
	switch op {
	case restageOp(restageShutdown):
		r.startRecorded(ctx, sv, op, 0, "as the plan did, to send again the staged updates that did not take effect")
	case restageOp(restageReset):
		r.startRecorded(ctx, sv, op, 0, "as the plan did, so that the staged updates sent again apply")
	default:
		r.startRecorded(ctx, sv, op, 1, "sending the update again: "+s.restageWhy)
	}
}

// restageStep is the provider step of a retry's op: the plan's shutdown,
// with its timeout; a reset On after it, as the plan's reset boots the
// host it shut down (the provider's default restart when the plan has no
// shutdown).
func restageStep(sv *node, action string) providers.Step {
	set := clusterOf(sv).cluster.Settings
	off := sv.sv.shutdownStep()
	if action == restageShutdown && off != nil {
		return providers.Step{Kind: providers.StepShutdown, Timeout: firstDuration(off.Timeout, set.ShutdownTimeout, plan.Duration(defaultShutdownTimeout))}
	}
	st := providers.Step{Kind: providers.StepReset}
	if off != nil {
		st.ResetType = "On"
	}
	return st
}
