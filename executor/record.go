package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// JournalVersion is the journal record schema version ("v"). A reader
// refuses records of a higher version.
const JournalVersion = 1

// Record types. See doc.go for the schema.
const (
	recRunStarted  = "run_started"
	recRunEnded    = "run_ended"
	recState       = "state"
	recObserved    = "observed"
	recStepStarted = "step_started"
	recTaskURI     = "task_uri"
	recStepDone    = "step_done"
	recStepFailed  = "step_failed"
	recContinue    = "continue"
	recApprove     = "approve"
	recStop        = "stop"
	recSkip        = "skip"
	// recAvailable: a continue found a pending cluster's release available
	// at its site (ID, Message: what was checked). (availability.go)
	recAvailable = "available"
	// recRetryStaged: the plan's wait_ready (Op) found updates staged for
	// the reset (Steps) that a BMC restart lost; they are sent again, the
	// host reset again, and Op run again (restage.go).
	recRetryStaged = "retry_staged"
)

// Record is one journal line. Fields are set per Type; unset ones are
// omitted. Records never hold secrets: provider messages are diagnostics
// summaries, hook output is not recorded.
type Record struct {
	V    int       `json:"v"`
	Time time.Time `json:"time"`
	Type string    `json:"type"`

	// run_started, run_ended
	PlanSHA256 string `json:"plan_sha256,omitempty"`
	PID        int    `json:"pid,omitempty"`
	Outcome    string `json:"outcome,omitempty"`

	// state
	ID      string     `json:"id,omitempty"`
	State   StateName  `json:"state,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	Message string     `json:"message,omitempty"`
	Until   *time.Time `json:"until,omitempty"`

	// observed, step_*, task_uri
	Server      string `json:"server,omitempty"`
	Op          string `json:"op,omitempty"`
	Kind        string `json:"kind,omitempty"`
	TaskURI     string `json:"task_uri,omitempty"`
	Error       string `json:"error,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// Retry (step_started): the n-th retry of an update that did not take
	// effect (nottaken.go); TaskState (step_done): "Gone" when the op's
	// BMC task vanished before it said how it ended.
	Retry     int    `json:"retry,omitempty"`
	TaskState string `json:"task_state,omitempty"`
	// Steps (retry_staged): the plan step indexes of the updates sent
	// again.
	Steps []int `json:"steps,omitempty"`

	// continue, approve, stop, skip
	Target string `json:"target,omitempty"`
	By     string `json:"by,omitempty"`
}

func encodeRecord(r *Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// DecodeRecord reads one journal record, refusing a version this
// rackform does not read. The executor replays its journal with it, and
// so do readers outside it (rehearsal takes over a run from its journal).
func DecodeRecord(b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.V < 1 || r.V > JournalVersion {
		return nil, fmt.Errorf("journal record version %d is not supported (this rackform reads up to %d)", r.V, JournalVersion)
	}
	return &r, nil
}

// crashDebris reports whether a line is what a crash can leave behind
// (NUL bytes a file system extended the file with), safe to ignore.
func crashDebris(b []byte) bool {
	return len(bytes.Trim(b, "\x00 \t\r")) == 0
}

// Record types that readers of journals outside the executor need
// (executor/history learns step durations from them; rehearsal replays a
// run's state changes and finished steps).
const (
	RecordRunStarted  = recRunStarted
	RecordState       = recState
	RecordStepStarted = recStepStarted
	RecordStepDone    = recStepDone
	RecordStepFailed  = recStepFailed
)

// PlanStepIndex returns the index of the plan step an op runs ("step:N"),
// or false for ops that are not plan steps: remediation, safety steps and
// power-off.
func PlanStepIndex(op string) (int, bool) {
	rest, ok := strings.CutPrefix(op, "step:")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// JournalOp is what a journal record's op names, for readers that replay a
// journal outside the executor (a rehearsal does to its simulated servers
// what a run's finished steps did).
type JournalOp struct {
	// Family is OpStep (Index: the plan step), OpRemedy (Index: the
	// remediation round; Action: ActionReboot, ActionReimage or
	// wait_ready), OpSafety, OpRestage (Action: ActionShutdown or
	// ActionReset), OpPowerOff, or another op of the executor's own.
	Family string
	Index  int
	Action string
}

// Op families and actions of JournalOp.
const (
	OpStep     = "step"
	OpRemedy   = "remedy"
	OpSafety   = "safety"
	OpRestage  = "restage"
	OpPowerOff = opPowerOff

	ActionReboot   = "reboot"
	ActionReimage  = "reimage"
	ActionShutdown = restageShutdown
	ActionReset    = restageReset
)

// ParseJournalOp reads a journal op ("step:3", "remedy:1:reimage",
// "restage:reset", "power_off", …).
func ParseJournalOp(op string) JournalOp {
	family, n, action := parseOp(op)
	return JournalOp{Family: family, Index: n, Action: action}
}
