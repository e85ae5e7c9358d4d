// Package uijson writes rackform's machine-readable UI: the JSON-lines
// stream of `plan -json` and `apply -json` (and `-json-into`), in the
// envelope of Terraform's machine-readable UI. Every line is one object
// with "@level", "@message", "@module" ("rackform.ui"), "@timestamp" and
// "type", and the payload that type carries; the first line has type
// "version" and names the UI version (docs/json.md lists every type;
// docs/schemas/ui-events.schema.json is the schema).
package uijson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Version is the version of the machine-readable UI. Consumers accept the
// same major version and ignore properties they do not know; a minor
// version adds properties or message types only. 2.0 put `apply -json`
// into the same envelope as `plan -json` (it was {"v":1,"time",…}); 2.1
// added the stream of `rehearse -json` and its "schedule" message.
const Version = "2.1"

// Module is every line's "@module".
const Module = "rackform.ui"

// TimestampFormat is how "@timestamp" is written: RFC 3339 with
// microseconds, as Terraform writes it.
const TimestampFormat = "2006-01-02T15:04:05.000000Z07:00"

// Levels.
const (
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// Message types. docs/json.md says what each carries.
const (
	TypeVersion       = "version"
	TypeLog           = "log"
	TypeDiagnostic    = "diagnostic"
	TypePlannedChange = "planned_change"
	TypeChangeSummary = "change_summary"
	TypePlanFile      = "plan_file"
	TypeRunStart      = "run_start"
	TypeApplyStart    = "apply_start"
	TypeApplyProgress = "apply_progress"
	TypeApplyComplete = "apply_complete"
	TypeApplyErrored  = "apply_errored"
	TypeRolloutState  = "rollout_state"
	TypeOperator      = "operator_request"
	// TypeSchedule ends `rehearse -json`: the rehearsed schedule.
	// (UI 2.1.)
	TypeSchedule = "schedule"
)

// Header is the envelope every line has.
type Header struct {
	Level     string `json:"@level"`
	Message   string `json:"@message"`
	Module    string `json:"@module"`
	Timestamp string `json:"@timestamp"`
	Type      string `json:"type"`
}

// Writer writes one message a line. It is safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
	// Now stamps messages written without a time; nil means time.Now.
	Now func() time.Time
}

// New returns a writer to w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes one message: the envelope, then payload's properties
// (payload is a struct or map encoding to a JSON object, or nil). A zero
// at is stamped with Now.
func (w *Writer) Write(typ, level, msg string, at time.Time, payload any) error {
	if at.IsZero() {
		if w.Now != nil {
			at = w.Now()
		} else {
			at = time.Now()
		}
	}
	line, err := Line(Header{Level: level, Message: msg, Module: Module, Timestamp: at.Format(TimestampFormat), Type: typ}, payload)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(line)
	return err
}

// Version writes the first line: the UI version and rackform's.
func (w *Writer) Version(rackform string) error {
	return w.Write(TypeVersion, LevelInfo, "rackform "+rackform, time.Time{}, struct {
		Rackform string `json:"rackform"`
		UI       string `json:"ui"`
	}{rackform, Version})
}

// Line encodes one message and its newline: the header's properties
// first, then the payload's.
func Line(h Header, payload any) ([]byte, error) {
	head, err := marshal(h)
	if err != nil {
		return nil, err
	}
	var body []byte
	if payload != nil {
		if body, err = marshal(payload); err != nil {
			return nil, err
		}
		if len(body) < 2 || body[0] != '{' {
			return nil, fmt.Errorf("uijson: the payload of a %s message is not an object", h.Type)
		}
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-1])
	if inner := bytes.TrimSpace(body); len(inner) > 2 {
		b.WriteByte(',')
		b.Write(inner[1:])
	} else {
		b.WriteByte('}')
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}
