// Package providers is the contract between rackform and the plugins that
// drive BMCs: the Provider interface and the plain data it exchanges. The
// planner and executor see only this package; providers/plugin carries it
// over gRPC, and providers/redfish implements it.
package providers

import (
	"context"
	"encoding/json"
	"time"
)

// ProtocolVersion is the major version of the provider protocol. It is also
// the suffix of the protobuf package (rackform.provider.v1) and the go-plugin
// handshake's ProtocolVersion: a plugin of another major is refused.
const ProtocolVersion = 1

// Provider drives one kind of BMC. Implementations must be safe for
// concurrent use: Observe and Apply are called for many servers at once.
type Provider interface {
	// Describe names the provider and its configuration schema.
	Describe(ctx context.Context) (*Description, Diagnostics)
	// Configure passes the provider block's evaluated attributes (a JSON
	// object, which may hold credentials: never log it).
	Configure(ctx context.Context, req *ConfigureRequest) Diagnostics
	// Observe reads every target and calls fn once per target, in any order,
	// as results arrive. A per-server failure is reported in that server's
	// Observation (Reachable=false, Diagnostics), not as a call error.
	// fn is called from one goroutine at a time, so callers need no lock;
	// an error from fn ends the call.
	Observe(ctx context.Context, req *ObserveRequest, fn func(*Observation) error) Diagnostics
	// Apply performs one step on one server, calling fn with progress. A
	// progress report carrying a TaskURI is sent before the provider waits on
	// that task, so the caller can journal it and resume with Task.
	Apply(ctx context.Context, req *ApplyRequest, fn func(*Progress) error) (*ApplyResult, Diagnostics)
	// Task polls a BMC task by URI once (used to resume after a crash).
	Task(ctx context.Context, req *TaskRequest) (*TaskStatus, Diagnostics)
	// Stop asks the provider to end in-flight work and release BMC sessions.
	Stop(ctx context.Context) Diagnostics
}

// Description is what Describe returns.
type Description struct {
	Name            string      `json:"name"`
	Version         string      `json:"version"`
	ProtocolVersion int         `json:"protocol_version"`
	Schema          []Attribute `json:"schema"`
	// Capabilities lists optional features, e.g. "simple_update",
	// "multipart_push", "reimage", "power".
	Capabilities []string `json:"capabilities"`
}

// Attribute describes one attribute of the provider block.
type Attribute struct {
	Name string `json:"name"`
	// Type is an HCL type expression: string, number, bool, list(string), map(string).
	Type        string `json:"type"`
	Required    bool   `json:"required,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
	Description string `json:"description,omitempty"`
}

// ConfigureRequest carries the provider block's attribute values.
type ConfigureRequest struct {
	// Config is a JSON object of attribute values. It may contain secrets.
	Config json.RawMessage
}

// Credentials authenticate against one BMC. They travel only in memory and
// over the plugin's mTLS channel; String hides them.
type Credentials struct {
	Username string
	Password string
}

// String never reveals the password.
func (c Credentials) String() string { return "Credentials{" + c.Username + ", ***}" }

// GoString keeps %#v from revealing the password.
func (c Credentials) GoString() string { return c.String() }

// Target identifies one server and how to reach its BMC.
type Target struct {
	// Name is the server's address in the config, e.g. "east-1/r01/r01-c01"
	// or simply its name; it is only used in messages.
	Name string
	// Endpoint is the BMC's base URL, e.g. https://127.1.0.1:8443.
	Endpoint string
	// Credentials overrides the provider's credentials when non-nil.
	Credentials *Credentials
}

// ObserveRequest asks for the current state of many servers.
type ObserveRequest struct {
	Targets []Target
	// Concurrency bounds how many servers are read at once (0: provider default).
	Concurrency int
}

// Power states, as Redfish reports them.
const (
	PowerOn          = "On"
	PowerOff         = "Off"
	PowerPoweringOn  = "PoweringOn"
	PowerPoweringOff = "PoweringOff"
)

// Observation is the state of one server.
type Observation struct {
	Server    string `json:"server"`
	Reachable bool   `json:"reachable"`
	// PowerState is one of the Power* constants, or "" when unknown.
	PowerState string `json:"power_state,omitempty"`
	// Health is the Redfish health rollup: "OK", "Warning", "Critical" or "".
	Health     string      `json:"health,omitempty"`
	Components []Component `json:"components,omitempty"`
	// Fingerprint is a stable hash of the observed state that matters for an
	// upgrade (component ids and versions, power, health), so drift between
	// plan and apply is detectable. Equal state ⇒ equal fingerprint.
	Fingerprint string      `json:"fingerprint,omitempty"`
	Diagnostics Diagnostics `json:"diagnostics,omitempty"`
}

// Component is one firmware or software item, normalised from the BMC's
// inventory.
type Component struct {
	// ID is the inventory member id (e.g. "BMC", "BIOS", "1").
	ID string `json:"id"`
	// Name is the inventory Name ("iLO 5", "System ROM").
	Name string `json:"name,omitempty"`
	// SoftwareID is Redfish SoftwareId, the best match key when present.
	SoftwareID string `json:"software_id,omitempty"`
	Version    string `json:"version"`
	Updateable bool   `json:"updateable"`
}

// Match selects a component on a server. Exactly one field is set; NamePattern
// is a path.Match glob over Name.
type Match struct {
	SoftwareID  string `json:"software_id,omitempty"`
	ID          string `json:"id,omitempty"`
	NamePattern string `json:"name,omitempty"`
}

// StepKind names what Apply does.
type StepKind string

// Steps a provider performs. Drain and uncordon are hooks run by the
// executor, not provider steps: a BMC cannot see workloads.
const (
	// StepUpdate installs one component image (SimpleUpdate or push).
	StepUpdate StepKind = "update"
	// StepShutdown asks for a graceful shutdown, bounded by Timeout, then forces off.
	StepShutdown StepKind = "shutdown"
	// StepPowerOn powers the server on.
	StepPowerOn StepKind = "power_on"
	// StepReset resets the host (ResetType, default GracefulRestart with fallback).
	StepReset StepKind = "reset"
	// StepReimage installs the runtime image through VirtualMedia, a one-time
	// boot override and a reset.
	StepReimage StepKind = "reimage"
	// StepWaitReady waits until the server is on, healthy and reports Expect.
	StepWaitReady StepKind = "wait_ready"
)

// Step is one action on one server. Only the fields of its Kind matter.
type Step struct {
	Kind StepKind `json:"kind"`
	// Component is the release's component name, for messages.
	Component string `json:"component,omitempty"`
	Match     Match  `json:"match,omitempty"`
	Version   string `json:"version,omitempty"`
	ImageURI  string `json:"image_uri,omitempty"`
	// ApplyTime is the Redfish OperationApplyTime: "Immediate", "OnReset", ...
	ApplyTime string `json:"apply_time,omitempty"`
	// Method is "simple_update", "push", or "" for the provider's choice.
	Method string `json:"method,omitempty"`
	// ResetType is a Redfish ResetType for StepReset.
	ResetType string `json:"reset_type,omitempty"`
	// Timeout bounds the step (graceful part of a shutdown; wait_ready).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Expect lists the versions wait_ready requires.
	Expect []Expectation `json:"expect,omitempty"`
	// ResumeSince is zero for a fresh start. When set (update and reimage),
	// the step is run again after a crash that may have come after the BMC
	// accepted it but before its task URI was recorded; ResumeSince is when
	// the earlier attempt began. The provider must then not start the work
	// twice: it first looks for that work on the BMC (an update task for
	// the same image started at or after ResumeSince, less a tolerance for
	// BMC clock skew, that is not Exception/Killed; for reimage, the media
	// already inserted and the one-time boot pending or in progress) and
	// attaches to it, reporting its TaskURI in Progress as usual; only when
	// there is none does it start the step.
	ResumeSince time.Time `json:"resume_since,omitempty"`
}

// Expectation is a component that must report Version.
type Expectation struct {
	Component string `json:"component"`
	Match     Match  `json:"match"`
	Version   string `json:"version"`
}

// ApplyRequest performs Step on Target.
type ApplyRequest struct {
	Target Target
	Step   Step
}

// Progress reports what a running step does.
type Progress struct {
	Message string
	// Percent is 0–100, or -1 when unknown.
	Percent int
	// TaskURI is the BMC task monitor, set as soon as the BMC returns one.
	TaskURI string
}

// ApplyResult is a finished step.
type ApplyResult struct {
	TaskURI string
	Message string
	// Observation is the server's state after the step, when the provider read it.
	Observation *Observation
}

// TaskRequest polls TaskURI on Target.
type TaskRequest struct {
	Target  Target
	TaskURI string
}

// Task states, normalised from Redfish TaskState.
const (
	TaskNew       = "New"
	TaskStarting  = "Starting"
	TaskRunning   = "Running"
	TaskCompleted = "Completed"
	TaskException = "Exception"
	TaskKilled    = "Killed"
	// TaskGone means the task monitor answered 404: real BMCs delete
	// finished tasks. Callers verify the outcome by observing.
	TaskGone = "Gone"
)

// TaskStatus is one poll of a task.
type TaskStatus struct {
	URI      string
	State    string
	Percent  int
	Messages []string
}

// Terminal reports whether a task state will not change again.
func (s *TaskStatus) Terminal() bool {
	switch s.State {
	case TaskCompleted, TaskException, TaskKilled, TaskGone:
		return true
	}
	return false
}
