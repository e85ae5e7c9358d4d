package executor

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Operations: one unit of provider or hook work for one server, and the
// messages workers send back.

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
	// waiting: the peer the quorum check waits for to answer now, set by
	// the worker and read by the scheduler; said: the wait the scheduler
	// said last (quorum.go).
	waiting atomic.Pointer[peerWait]
	said    *peerWait
	// unconfirmed: for the plan's wait_ready, the updates no task
	// confirmed (it vanished, or there was none), read back if the wait
	// fails (nottaken.go).
	unconfirmed []unconfirmedUpdate
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
	// provider names the provider that failed when it is not the server's
	// own (a quorum peer's).
	provider string
	// gone: the op's BMC task vanished (journaled with step_done); nt:
	// updates that did not take effect (nottaken.go).
	gone bool
	// noTask: the op's update was accepted with no task to follow
	// (journaled with step_done, task_state "None"; nottaken.go).
	noTask bool
	nt     *notTaken

	task    string
	ack     chan error
	prog    bool
	percent int
	progMsg string
	// stalledSince, stalledTask: a progress message saying the task has
	// not moved since then (stall.go).
	stalledSince *time.Time
	stalledTask  string
}

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

func opLabel(o *opRun) string {
	if o.kind == opHook {
		return o.hook.Name
	}
	return string(o.pstep.Kind)
}

// opFor builds the provider step or hook for an op. Every wait for
// readiness of a server upgraded although Critical accepts it back with
// any health its BMC reports (rule 50).
func (r *runner) opFor(sv *node, op string) *opRun {
	o := r.buildOp(sv, op)
	if o.kind == opApply && o.pstep.Kind == providers.StepWaitReady {
		o.pstep.AcceptCritical = sv.srv.UpgradeWhenCritical != nil
	}
	return o
}

func (r *runner) buildOp(sv *node, op string) *opRun {
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
	case strings.HasPrefix(op, "restage:"): // restage.go
		_, _, action := parseOp(op)
		o.pstep = restageStep(sv, action)
		return o
	case strings.HasPrefix(op, opTakeover): // spare.go
		o.kind, o.hook = opHook, takeoverHook(sv, op)
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
	o.unconfirmed = unconfirmed(sv, op)
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

func (r *runner) target(sv *node) providers.Target {
	// Authenticated as plan found the BMC takes it (a session or Basic).
	// A device (a switch tray…) is read through its Manager: it has no
	// ComputerSystem.
	return providers.Target{Name: sv.srv.Address, Endpoint: sv.srv.BMC, System: sv.srv.System, Auth: sv.srv.Auth, Device: sv.srv.Kind}
}
