package applyview

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/uijson"
	"github.com/rackform/rackform/executor"
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
// says both: the UI version and "@timestamp").
type event struct {
	executor.Event
	V    int        `json:"v,omitempty"`
	Time *time.Time `json:"time,omitempty"`
}

// applySummary is change_summary's payload at the end of an apply.
type applySummary struct {
	Operation string `json:"operation"`
	*executor.Outcome
}

// Event implements executor.Sink.
func (j *JSON) Event(e executor.Event) {
	typ, level := Classify(e)
	payload := struct {
		Event   event         `json:"event"`
		Changes *applySummary `json:"changes,omitempty"`
	}{Event: event{Event: e}}
	if e.Type == "apply_ended" && e.Outcome != nil {
		payload.Changes = &applySummary{Operation: "apply", Outcome: e.Outcome}
	}
	_ = j.w.Write(typ, level, EventMessage(e), e.Time, payload)
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
			switch e.Outcome.Status {
			case executor.OutcomeFailed:
				level = uijson.LevelError
			case executor.OutcomeCompleted:
			default:
				level = uijson.LevelWarn
			}
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
			b.WriteString("; next: " + strings.Join(executor.NextCommands(e.Outcome.Next), ", "))
		}
	case e.Type == "apply_started" || e.Type == "apply_resumed":
		b.WriteString(strings.ReplaceAll(e.Type, "_", " ") + " plan " + ShortSHA(e.PlanSHA256))
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
