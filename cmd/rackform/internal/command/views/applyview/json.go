package applyview

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/uijson"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
)

// JSON is the `apply -json` (and -json-into) stream: the executor's
// events in the machine-readable UI's envelope (package uijson), one line
// each. Every apply message carries the event itself under "event" (its
// own "type" such as "step_started", and the fields that type uses);
// the envelope's "type" sorts it the way Terraform's does (apply_start,
// apply_progress, apply_complete, apply_errored for servers;
// rollout_state for the run tree; operator_request; run_start, log;
// change_summary at the end). docs/json.md has the table.
type JSON struct {
	w *uijson.Writer
}

// NewJSON returns the stream writing to w. Write errors are dropped: the
// journal, not the event stream, is the record.
func NewJSON(w io.Writer) *JSON { return &JSON{w: uijson.New(w)} }

// Version writes the stream's first line.
func (j *JSON) Version(rackform string) { _ = j.w.Version(rackform) }

// event is an executor event without its "v" and "time" (the envelope
// says both: the UI version and "@timestamp"), its outcome as OutcomeJSON
// ("outcome" is the event's last field, so it stays in its place).
type event struct {
	executor.Event
	V       int          `json:"v,omitempty"`
	Time    *time.Time   `json:"time,omitempty"`
	Outcome *OutcomeJSON `json:"outcome,omitempty"`
}

// applySummary is change_summary's payload at the end of an apply.
type applySummary struct {
	Operation string `json:"operation"`
	*OutcomeJSON
}

// Event implements executor.Sink.
func (j *JSON) Event(e executor.Event) {
	e = CanonicalEvent(e)
	typ, level := Classify(e)
	payload := struct {
		Event   event         `json:"event"`
		Changes *applySummary `json:"changes,omitempty"`
	}{Event: event{Event: e}}
	if e.Outcome != nil {
		o := NewOutcomeJSON(*e.Outcome)
		payload.Event.Outcome = &o
		if e.Type == "apply_ended" {
			payload.Changes = &applySummary{Operation: "apply", OutcomeJSON: &o}
		}
	}
	_ = j.w.Write(typ, level, EventMessage(e), e.Time, payload)
}

// CanonicalEvent is e with the actions its messages name (its own, its
// outcome's) as canonical command lines (CanonicalText): how the views
// show a state's message. It copies what it changes: the other sinks of
// a run get the executor's event.
func CanonicalEvent(e executor.Event) executor.Event {
	e.Message = views.CanonicalText(e.Message)
	if e.Outcome != nil {
		o := *e.Outcome
		o.Message = views.CanonicalText(o.Message)
		e.Outcome = &o
	}
	return e
}

// OutcomeJSON is an executor.Outcome as the JSON outputs write it: what
// its next actions and stranded servers' recoveries name as canonical
// command lines (docs/json.md). It has Outcome's fields, in its order
// (TestOutcomeJSONFields).
type OutcomeJSON struct {
	Status   executor.OutcomeStatus `json:"status"`
	Reason   string                 `json:"reason,omitempty"`
	Message  string                 `json:"message,omitempty"`
	Next     []string               `json:"next,omitempty"`
	Servers  *executor.ServerCounts `json:"servers,omitempty"`
	Stranded []executor.Stranded    `json:"stranded,omitempty"`
}

// NewOutcomeJSON is o as the JSON outputs write it.
func NewOutcomeJSON(o executor.Outcome) OutcomeJSON {
	return OutcomeJSON{Status: o.Status, Reason: o.Reason, Message: views.CanonicalText(o.Message), Next: views.Commands(o.Next),
		Servers: o.Servers, Stranded: CanonicalStranded(o.Stranded)}
}

// CanonicalStranded is st with what brings each server back in canonical
// command lines (a copy).
func CanonicalStranded(st []executor.Stranded) []executor.Stranded {
	if st == nil {
		return nil
	}
	out := make([]executor.Stranded, len(st))
	for i, s := range st {
		s.Recover = views.CanonicalText(s.Recover)
		out[i] = s
	}
	return out
}

// Classify sorts an executor event into the machine-readable UI's message
// type and level.
func Classify(e executor.Event) (typ, level string) {
	level = uijson.LevelInfo
	switch e.State {
	case executor.Failed:
		level = uijson.LevelError
	case executor.Paused, executor.Stopped, executor.Stopping:
		level = uijson.LevelWarn
	}
	switch e.Type {
	case "apply_started", "apply_resumed":
		return uijson.TypeRunStart, level
	case "apply_interrupting":
		return uijson.TypeLog, uijson.LevelWarn
	case "apply_ended":
		if e.Outcome != nil {
			level = OutcomeLevel(string(e.Outcome.Status))
		}
		return uijson.TypeChangeSummary, level
	case "continue_requested", "gate_approved", "stop_requested", "skip_requested":
		return uijson.TypeOperator, level
	case "breach":
		return uijson.TypeRolloutState, uijson.LevelError
	case "step_failed":
		return uijson.TypeApplyProgress, uijson.LevelError
	case "step_interrupted", "step_stalled", "quorum_wait":
		return uijson.TypeApplyProgress, uijson.LevelWarn
	}
	if strings.HasPrefix(e.Type, "step_") || e.Type == "server_observed" || e.Type == "server_running" {
		return uijson.TypeApplyProgress, level
	}
	if e.Kind == executor.KindServer {
		switch e.State {
		case executor.Running:
			return uijson.TypeApplyStart, level
		case executor.Completed, executor.Skipped:
			return uijson.TypeApplyComplete, level
		case executor.Failed:
			return uijson.TypeApplyErrored, level
		}
		return uijson.TypeApplyProgress, level
	}
	return uijson.TypeRolloutState, level
}

// OutcomeLevel is the level of the line that ends a run or a rehearsal,
// by its outcome's status: info when it completed, an error when it
// failed, else a warning.
func OutcomeLevel(status string) string {
	switch executor.OutcomeStatus(status) {
	case executor.OutcomeCompleted:
		return uijson.LevelInfo
	case executor.OutcomeFailed:
		return uijson.LevelError
	}
	return uijson.LevelWarn
}

// EventMessage is an event's "@message": one line for people.
func EventMessage(e executor.Event) string {
	var b strings.Builder
	switch {
	case e.Server != "":
		b.WriteString(e.Server + ": ")
	case e.ID != "":
		b.WriteString(e.ID + ": ")
	}
	switch {
	case strings.HasPrefix(e.Type, "step_"):
		b.WriteString(stepName(e) + " " + strings.TrimPrefix(e.Type, "step_"))
		if e.Percent != nil {
			fmt.Fprintf(&b, " %d%%", *e.Percent)
		}
	case e.Type == "apply_ended" && e.Outcome != nil:
		b.WriteString("Apply " + string(e.Outcome.Status))
		if e.Outcome.Reason != "" {
			b.WriteString(" (" + e.Outcome.Reason + ")")
		}
		if len(e.Outcome.Next) > 0 {
			b.WriteString("; next: " + strings.Join(views.Commands(e.Outcome.Next), ", "))
		}
	case e.Type == "apply_started" || e.Type == "apply_resumed":
		b.WriteString(strings.ReplaceAll(e.Type, "_", " ") + " plan " + plan.ShortSHA(e.PlanSHA256))
		if e.By != "" {
			b.WriteString(" by " + e.By)
		}
	default:
		b.WriteString(strings.ReplaceAll(e.Type, "_", " "))
	}
	if e.State != "" && e.State != executor.Running && e.State != executor.Completed && !strings.HasSuffix(e.Type, string(e.State)) && !strings.HasPrefix(e.Type, "step_") {
		b.WriteString(": " + HumanState(executor.State{Name: e.State, Reason: e.Reason}))
	} else if e.Reason != "" && e.Type != "apply_ended" {
		b.WriteString(" (" + strings.ReplaceAll(e.Reason, "_", " ") + ")")
	}
	if e.Message != "" && e.Type != "apply_ended" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// CanonicalStatus renders, in st itself, the actions every node's message
// names as canonical command lines (CanonicalText): how `status` shows
// them in every format.
func CanonicalStatus(st *executor.Status) {
	for n := range Nodes(st.Run) {
		n.Message = views.CanonicalText(n.Message)
	}
}

// StatusJSON is an executor.Status as `status -json` writes it: its next
// actions and what brings each stranded server back as canonical command
// lines. It has Status's fields, in its order (TestOutcomeJSONFields);
// the nodes' messages are rendered by CanonicalStatus.
type StatusJSON struct {
	V             int                     `json:"v"`
	PlanSHA256    string                  `json:"plan_sha256"`
	StopRequested bool                    `json:"stop_requested,omitempty"`
	Next          []string                `json:"next,omitempty"`
	Stranded      []executor.Stranded     `json:"stranded,omitempty"`
	Run           *executor.Node          `json:"run"`
	Spares        []executor.SpareStatus  `json:"spares,omitempty"`
	StartedAt     *time.Time              `json:"started_at,omitempty"`
	Workers       []executor.WorkerStatus `json:"workers,omitempty"`
}

// NewStatusJSON is st as `status -json` writes it.
func NewStatusJSON(st *executor.Status) StatusJSON {
	return StatusJSON{V: st.V, PlanSHA256: st.PlanSHA256, StopRequested: st.StopRequested, Next: views.Commands(st.Next),
		Stranded: CanonicalStranded(st.Stranded), Run: st.Run, Spares: st.Spares, StartedAt: st.StartedAt, Workers: st.Workers}
}
