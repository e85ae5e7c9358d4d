package executor

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

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
	// Since: on step_stalled, when the task's percent last moved.
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

// JSONSink writes events as JSON lines (the `-json` stream).
type JSONSink struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewJSONSink writes to w.
func NewJSONSink(w io.Writer) *JSONSink {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &JSONSink{enc: enc}
}

// Event implements Sink. Write errors are dropped: the journal, not the
// event stream, is the record.
func (s *JSONSink) Event(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.enc.Encode(e)
}

// verb names a state transition in event types: "server_started",
// "scope_paused", "run_resumed"…
func verb(old, new State) string {
	switch new.Name {
	case Running:
		if old.Name == Paused || old.Name == Stopped || old.Name == Stopping {
			return "resumed"
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
