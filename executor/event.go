package executor

import "time"

// EventVersion is the event schema version ("v").
const EventVersion = 1

// Event is one line of the event stream. Type says which fields are set;
// see doc.go for the list.
type Event struct {
	V    int       `json:"v"`
	Time time.Time `json:"time"`
	Type string    `json:"type"`

	ID     string     `json:"id,omitempty"`
	Kind   Kind       `json:"kind,omitempty"`
	Parent string     `json:"parent,omitempty"`
	State  StateName  `json:"state,omitempty"`
	Reason string     `json:"reason,omitempty"`
	Until  *time.Time `json:"until,omitempty"`
	// Since: on step_stalled, when the task's percent last moved; on
	// quorum_wait, since when the peer has not answered.
	Since *time.Time `json:"since,omitempty"`

	Server    string `json:"server,omitempty"`
	Op        string `json:"op,omitempty"`
	StepKind  string `json:"step_kind,omitempty"`
	Component string `json:"component,omitempty"`
	TaskURI   string `json:"task_uri,omitempty"`
	Percent   *int   `json:"percent,omitempty"`

	Message string `json:"message,omitempty"`
	// Counts are the scope's numbers on scope and server events, so a view
	// can draw per-rack bars without keeping the tree.
	Counts *Counts `json:"counts,omitempty"`

	PlanSHA256 string   `json:"plan_sha256,omitempty"`
	Target     string   `json:"target,omitempty"`
	By         string   `json:"by,omitempty"`
	Outcome    *Outcome `json:"outcome,omitempty"`
}

// verb names a state transition in event types: "server_started",
// "scope_paused", "run_resumed"…
func verb(old, new State) string {
	switch new.Name {
	case Running:
		switch old.Name {
		case Paused, Stopped, Stopping:
			return "resumed"
		case Running:
			// Still running, saying something new (a server whose
			// quorum check waits for a peer, and no longer).
			return "running"
		}
		return "started"
	case NotStarted:
		return "reset"
	}
	return string(new.Name)
}

func eventType(k Kind, old, new State) string {
	if k == KindPause {
		switch new.Name {
		case Paused:
			return "rack_pause"
		case Completed:
			return "rack_pause_released"
		}
	}
	return string(k) + "_" + verb(old, new)
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
		if sv := r.m.servers[rec.Server]; sv != nil && sv.srv.UpgradeWhenCritical != nil {
			e.Message += "; upgraded although its BMC reports health Critical, as its configuration says: " + sv.srv.UpgradeWhenCritical.Reason
		}
	case recStepStarted, recStepDone, recStepFailed, recTaskURI, recRetryStaged:
		e.Type = map[string]string{recStepStarted: "step_started", recStepDone: "step_completed", recStepFailed: "step_failed", recTaskURI: "step_task",
			recRetryStaged: "step_retry"}[rec.Type]
		e.Server, e.Op, e.TaskURI = rec.Server, rec.Op, rec.TaskURI
		e.Message = rec.Message
		if rec.Error != "" {
			e.Message = rec.Error
		}
		if rec.Type == recRetryStaged {
			e.Message = "sending the staged updates again, then resetting the host again: " + rec.Message
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
