package executor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rackform/rackform/executor/rollout"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// serverRun is one server's progress through its steps, rebuilt from
// observed/step_*/task_uri records. The per-server program is: observe
// (drift, already at target), the plan's steps in order, and when a
// wait_ready step fails, the role's remediation actions each followed by
// wait_ready again (rule 30), then power off (compute) and fail.
type serverRun struct {
	p *plan.Server
	// actions are the remediation actions for the role ("reboot",
	// "reimage"), reimage only when the plan has a reimage step.
	actions []string

	observed bool
	pc       int // position in p.Steps of the next step

	remActive  bool
	rem        int  // remediation actions begun
	remWait    bool // the current action finished; wait_ready is next
	waitPos    int  // position of the wait_ready step being remediated
	poweredOff bool
	// offConfirmed: the power_off op completed and the BMC confirmed
	// power Off; only then does a message say "powered off".
	offConfirmed bool
	remErr       string
	// skippedActions are remediation actions the role calls for that
	// this plan cannot do (reimage without a runtime image): said in an
	// event and in the failure, never left out silently.
	skippedActions []string

	failMsg  string
	warnings []string
	// cameBack is how the last wait for readiness found a server upgraded
	// although Critical (critical.go), said when it completes.
	cameBack string
	// rerun: started over by a rerun of a failed run (rerun.go); its own
	// earlier steps are not drift.
	rerun bool

	// inflight is the op announced by step_started and not yet finished;
	// after a crash it is resumed (task URI) or verified, never blindly
	// repeated.
	inflight string
	taskURI  string
	// inflightSince is when the in-flight op was first started (its first
	// step_started of this unfinished stretch): a resumed update or reimage
	// passes it as Step.ResumeSince so the provider can find the work an
	// earlier attempt started on the BMC.
	inflightSince time.Time

	// stepSt is the status of each plan step, by position in p.Steps;
	// others that of every other op (remediation, safety, restage,
	// takeover, power_off), extraOps those started, in the order first
	// started: Status lists the plan's steps, then these.
	stepSt   []StepStatus
	others   map[string]*StepStatus
	extraOps []string

	// retries counts, by op, the retries of an update that did not take
	// effect; vanished lists the staged updates whose BMC task vanished:
	// only the plan's wait_ready, after the reset, tells whether they took
	// (nottaken.go).
	retries  map[string]int
	vanished []int
	// noTask marks the steps of vanished that were accepted with no task
	// to follow at all (the BMC answered 204).
	noTask map[int]bool
	// restage lists the staged updates a retry_staged record sends again
	// (restage.go): the host is powered off, they are sent, the host is
	// reset, and the plan's wait_ready runs again; resent marks those
	// sent, restageWhy is the record's reason. restaged: a server is
	// retried so at most once.
	restage    []int
	resent     map[int]bool
	restageWhy string
	restaged   bool

	// What the server's steps so far left it as: skipping a server whose
	// steps began first brings it back (safety steps), and a run reports
	// every server left out of service.
	begun bool // a step (the drain hook included) was started
	off   bool // shut down, and not powered on, reset or reimaged since
	// booting: powered on, reset or reimaged, and no wait_ready since.
	booting bool
	// drained: the drain hook started and the uncordon hook (configured:
	// hasUncordon) has not completed since.
	drained     bool
	hasUncordon bool
	// staged lists "component version" of updates that become active at
	// the next boot (apply time other than Immediate).
	staged []string
}

// Safety actions, run in this order when a server whose steps began is
// skipped (ops "safety:<action>"): power it on if it was shut down, wait
// until it is on and healthy (no version expected), uncordon it.
const (
	safetyPowerOn   = "power_on"
	safetyWaitReady = "wait_ready"
	safetyUncordon  = "uncordon"
)

func safetyOp(action string) string { return "safety:" + action }

// StepStatus is one operation on a server, for Status.
type StepStatus struct {
	Op        string    `json:"op"`
	Kind      string    `json:"kind"`
	Component string    `json:"component,omitempty"`
	State     StateName `json:"state"`
	Message   string    `json:"message,omitempty"`
	TaskURI   string    `json:"task_uri,omitempty"`
	Attempts  int       `json:"attempts,omitempty"`
}

func newServerRun(p *plan.Server, set plan.Settings) *serverRun {
	s := &serverRun{p: p, stepSt: make([]StepStatus, len(p.Steps))}
	hasReimage := false
	for i, st := range p.Steps {
		if st.Kind == plan.StepReimage {
			hasReimage = true
		}
		s.stepSt[i] = StepStatus{Op: stepOp(st.Index), Kind: string(st.Kind), Component: st.Component, State: NotStarted}
	}
	s.actions, s.skippedActions = rollout.RemedyActions(set, p.Role, hasReimage)
	s.hasUncordon = len(set.UncordonHook) > 0
	return s
}

// parseOp splits "step:3", "remedy:1:reimage", "power_off".
func parseOp(op string) (kind string, n int, action string) {
	parts := strings.Split(op, ":")
	switch parts[0] {
	case "step":
		if len(parts) == 2 {
			n, _ = strconv.Atoi(parts[1])
		}
		return "step", n, ""
	case "remedy":
		if len(parts) == 3 {
			n, _ = strconv.Atoi(parts[1])
			return "remedy", n, parts[2]
		}
	case "safety", "restage":
		if len(parts) == 2 {
			return parts[0], 0, parts[1]
		}
	}
	return parts[0], 0, ""
}

// posOf is the position in p.Steps of the plan step numbered index.
func (s *serverRun) posOf(index int) (int, bool) {
	if i := index - 1; i >= 0 && i < len(s.p.Steps) && s.p.Steps[i].Index == index {
		return i, true // steps are numbered 1, 2, … in order
	}
	if i := slices.IndexFunc(s.p.Steps, func(st plan.Step) bool { return st.Index == index }); i >= 0 {
		return i, true
	}
	return 0, false
}

// posOfIndex is posOf's position, 0 when the plan has no such step.
func (s *serverRun) posOfIndex(index int) int {
	i, _ := s.posOf(index)
	return i
}

// step is the status of op, nil when op is no plan step and has not
// been started.
func (s *serverRun) step(op string) *StepStatus {
	if n, ok := strings.CutPrefix(op, "step:"); ok {
		if k, err := strconv.Atoi(n); err == nil {
			if i, ok := s.posOf(k); ok {
				return &s.stepSt[i]
			}
		}
	}
	return s.others[op]
}

// opStatuses calls fn with the status of each op: the plan's steps in
// order, then the others in the order first started.
func (s *serverRun) opStatuses(fn func(op string, st *StepStatus)) {
	for i := range s.stepSt {
		fn(s.stepSt[i].Op, &s.stepSt[i])
	}
	for _, op := range s.extraOps {
		fn(op, s.others[op])
	}
}

func (s *serverRun) status(op string) *StepStatus {
	st := s.step(op)
	if st == nil {
		st = &StepStatus{Op: op, State: NotStarted}
		kind, _, action := parseOp(op)
		switch {
		case kind == "remedy", kind == "safety", kind == "restage":
			st.Kind = action
		case strings.HasPrefix(op, opTakeover):
			st.Kind = "takeover"
		case op == opPowerOff:
			st.Kind = "power_off"
		}
		if s.others == nil {
			s.others = map[string]*StepStatus{}
		}
		s.others[op] = st
	}
	return st
}

func (s *serverRun) apply(r *Record) error {
	switch r.Type {
	case recObserved:
		s.observed = true
		return nil
	case recStepStarted:
		if s.step(r.Op) == nil {
			s.extraOps = append(s.extraOps, r.Op)
		}
		st := s.status(r.Op)
		st.State, st.Attempts, st.TaskURI, st.Message = Running, st.Attempts+1, "", ""
		if s.inflight != r.Op || s.inflightSince.IsZero() {
			s.inflightSince = r.Time
		}
		s.begun = true
		if st.Kind == string(plan.StepDrain) && s.hasUncordon {
			s.drained = true
		}
		s.inflight, s.taskURI = r.Op, ""
		if r.Retry > 0 {
			if s.retries == nil {
				s.retries = map[string]int{}
			}
			s.retries[r.Op] = r.Retry
		}
		if kind, k, action := parseOp(r.Op); kind == "remedy" && action != "wait_ready" {
			s.remActive, s.rem, s.remWait = true, k, false
		}
		return nil
	case recTaskURI:
		s.status(r.Op).TaskURI = r.TaskURI
		if s.inflight == r.Op {
			s.taskURI = r.TaskURI
		}
		return nil
	case recRetryStaged:
		return s.retryStaged(r) // restage.go
	}
	st := s.status(r.Op)
	s.inflight, s.taskURI, s.inflightSince = "", "", time.Time{}
	kind, n, action := parseOp(r.Op)
	if r.Type == recStepDone {
		st.State, st.Message = Completed, r.Message
		s.exposure(r.Op, st.Kind)
		if s.p.UpgradeWhenCritical != nil && st.Kind == string(plan.StepWaitReady) && kind != "safety" {
			s.cameBack = r.Message
		}
		switch {
		case kind == "step":
			if s.resending(n) {
				s.resent[n] = true // the plan's steps go on after the retry
			} else if i, ok := s.posOf(n); ok {
				s.pc = i + 1
			}
			switch r.TaskState {
			case providers.TaskGone, taskNone:
				if !slices.Contains(s.vanished, n) {
					s.vanished = append(s.vanished, n)
				}
				if r.TaskState == taskNone {
					if s.noTask == nil {
						s.noTask = map[int]bool{}
					}
					s.noTask[n] = true
				}
			}
		case kind == "remedy" && action == "wait_ready":
			// Said when the server completes: the BMC confirmed it healthy
			// and at target only after these actions.
			s.warnings = append(s.warnings, fmt.Sprintf("came back healthy and at target after remediation (%s)", strings.Join(s.actions[:min(s.rem, len(s.actions))], ", then ")))
			s.remActive, s.remWait = false, false
			s.pc = s.waitPos + 1
		case kind == "remedy":
			s.remWait = true
		case r.Op == opPowerOff:
			s.poweredOff = true
			s.offConfirmed = strings.HasPrefix(r.Message, confirmedOff)
		}
		return nil
	}
	// step_failed
	st.State, st.Message = Failed, r.Error
	switch {
	case kind == "step":
		i, ok := s.posOf(n)
		if !ok {
			return fmt.Errorf("journal: server %s has no step %d", s.p.Address, n)
		}
		switch s.p.Steps[i].Kind {
		case plan.StepWaitReady:
			s.remActive, s.rem, s.remWait, s.waitPos, s.remErr = true, 0, false, i, r.Error
		case plan.StepUncordon:
			// The server is upgraded and healthy; a node left cordoned is
			// for the operator (as Nexus documents), not a failure.
			s.warnings = append(s.warnings, "uncordon failed: "+r.Error+"; uncordon the node by hand")
			s.pc = i + 1
		default:
			s.failMsg = fmt.Sprintf("step %d (%s) failed: %s", n, stepLabel(s.p.Steps[i]), r.Error)
		}
	case kind == "remedy":
		s.remWait = false
		s.remErr = r.Error
	case kind == "restage":
		s.failMsg = fmt.Sprintf("%s to send the staged updates again failed: %s", action, r.Error)
	case r.Op == opPowerOff:
		s.poweredOff = true
		s.warnings = append(s.warnings, "power off failed: "+r.Error)
	}
	return nil
}

func stepLabel(st plan.Step) string {
	if st.Component != "" {
		return string(st.Kind) + " " + st.Component
	}
	return string(st.Kind)
}

// exposure updates what a completed op leaves the server as: off,
// booting, drained, with images staged.
func (s *serverRun) exposure(op, kind string) {
	switch kind {
	case string(plan.StepShutdown), "power_off":
		s.off, s.booting = true, false
	case string(plan.StepPowerOn), string(plan.StepReset), "reboot", string(plan.StepReimage):
		// A boot: the host comes up and applies what was staged.
		s.off, s.booting, s.staged = false, true, nil
	case string(plan.StepWaitReady):
		s.off, s.booting, s.staged = false, false, nil
	case string(plan.StepUncordon):
		s.drained = false
	case string(plan.StepUpdate):
		if st := s.stepFor(op); st != nil && st.ApplyTime != "" && st.ApplyTime != "Immediate" {
			s.staged = append(s.staged, st.Component+" "+st.Target.Version)
		}
	}
}

// nextSafety is the next safety op of a skipped server whose steps began,
// or "" when it is back (or nothing more can be done for it).
func (s *serverRun) nextSafety() string {
	tried := func(a string) bool {
		st := s.step(safetyOp(a))
		return st != nil && (st.State == Completed || st.State == Failed)
	}
	failed := func(a string) bool {
		st := s.step(safetyOp(a))
		return st != nil && st.State == Failed
	}
	switch {
	case s.off && !tried(safetyPowerOn):
		return safetyOp(safetyPowerOn)
	case failed(safetyPowerOn):
		return "" // still off: reported as left out of service
	case s.booting && !tried(safetyWaitReady):
		return safetyOp(safetyWaitReady)
	case failed(safetyWaitReady):
		return "" // not healthy: never uncordoned
	case s.drained && !tried(safetyUncordon):
		return safetyOp(safetyUncordon)
	}
	return ""
}

// stepFor returns the plan step an op runs (nil for power_off).
func (s *serverRun) stepFor(op string) *plan.Step {
	kind, n, action := parseOp(op)
	switch kind {
	case "step":
		if i, ok := s.posOf(n); ok {
			return &s.p.Steps[i]
		}
	case "remedy":
		switch action {
		case "wait_ready":
			if s.waitPos < len(s.p.Steps) {
				return &s.p.Steps[s.waitPos]
			}
		case "reimage":
			for i := range s.p.Steps {
				if s.p.Steps[i].Kind == plan.StepReimage {
					return &s.p.Steps[i]
				}
			}
		}
	}
	return nil
}

// hasVersion reports whether obs shows the component of step st at its
// target version: every active member its rule selects (or those the step
// was for, while reported), as many as the rule expects, each compared by
// the step's scheme with the one "at target" rule (version.Target: a BMC
// may report "U30 v2.54 (03/01/2023)" for the target "U30 v2.54"). A
// reported version the scheme cannot read is not at target, and the
// error says why.
func hasVersion(st *plan.Step, obs *providers.Observation) (bool, error) {
	at, _, err := versionOf(st, obs)
	return at, err
}

// versionOf is hasVersion with, when not at target, what obs shows
// instead in words ("HGX_FW_GPU_SXM_3 at 96.00.61.00.01").
func versionOf(st *plan.Step, obs *providers.Observation) (bool, string, error) {
	if st == nil || st.Target.Version == "" || obs == nil {
		return false, "", nil
	}
	m := providers.Match{}
	if st.Match != nil {
		m = *st.Match
	}
	return m.AtTargetOf(st.Target, obs.Components, st.Members)
}

// atTarget reports whether every versioned step is already satisfied
// (rule 24). A server with no versioned step is never "at target".
func atTarget(p *plan.Server, obs *providers.Observation) bool {
	n := 0
	for i := range p.Steps {
		st := &p.Steps[i]
		if st.Target.Version == "" || (st.Kind != plan.StepUpdate && st.Kind != plan.StepReimage) {
			continue
		}
		n++
		if ok, _ := hasVersion(st, obs); !ok {
			return false
		}
	}
	return n > 0
}

// drift describes what changed between the plan's observation and now
// (rule 26), or "" when nothing did.
func drift(p *plan.Server, obs *providers.Observation) string {
	if p.Fingerprint == "" || obs.Fingerprint == p.Fingerprint {
		return ""
	}
	var diffs []string
	before := map[string]providers.Component{}
	for _, c := range p.Observed.Components {
		before[c.ID] = c
	}
	// A plan of format 1.4 records the components it decides on and a
	// digest of the rest (Observed.Others): those are compared as one.
	if o := p.Observed.Others; o != nil {
		if now := plan.OthersOf(obs.Components, p.Observed.Components); now == nil || now.SHA256 != o.SHA256 {
			n := 0
			if now != nil {
				n = now.Count
			}
			diffs = append(diffs, fmt.Sprintf("other components changed (%d at plan, %d now)", o.Count, n))
		}
	}
	now := map[string]bool{}
	for _, c := range obs.Components {
		now[c.ID] = true
		b, ok := before[c.ID]
		if !ok && p.Observed.Others != nil {
			continue // one of the others, compared by their digest
		}
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s %s appeared", c.ID, c.Version))
		case b.Version != c.Version:
			diffs = append(diffs, fmt.Sprintf("%s %s → %s", c.ID, b.Version, c.Version))
		}
	}
	for _, c := range p.Observed.Components {
		if !now[c.ID] {
			diffs = append(diffs, fmt.Sprintf("%s %s disappeared", c.ID, c.Version))
		}
	}
	if p.Observed.PowerState != "" && obs.PowerState != p.Observed.PowerState {
		diffs = append(diffs, fmt.Sprintf("power %s → %s", p.Observed.PowerState, obs.PowerState))
	}
	if p.Observed.Health != "" && obs.Health != p.Observed.Health {
		diffs = append(diffs, fmt.Sprintf("health %s → %s", p.Observed.Health, obs.Health))
	}
	slices.Sort(diffs)
	if len(diffs) == 0 {
		return fmt.Sprintf("fingerprint %s → %s", plan.ShortSHA(p.Fingerprint), plan.ShortSHA(obs.Fingerprint))
	}
	return strings.Join(diffs, ", ")
}
