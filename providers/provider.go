// Package providers is the contract between rackform and the plugins that
// drive BMCs: the Provider interface and the plain data it exchanges. The
// planner and executor see only this package; providers/plugin carries it
// over gRPC, and providers/redfish implements it.
package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/config/version"
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
	// System names the ComputerSystem behind the BMC that this server is,
	// by Id or UUID, when one BMC serves several systems (multi-node
	// chassis, blade sleds); "" when the BMC serves exactly one. Servers
	// sharing an Endpoint share one session and connection pool.
	System string
	// Updates are the release components the plan may update on this
	// server. Observe answers each in Observation.Updates: how apply would
	// deliver that image, or why it cannot. Nil at apply and when the
	// caller only wants the state.
	Updates []UpdateIntent
	// Auth is how to authenticate: "" tries a session and falls back to
	// Basic auth when the BMC refuses the session (plan); AuthSession or
	// AuthBasic is what plan found the BMC takes (Observation.Auth), and
	// apply uses exactly that.
	Auth string
	// Device is the kind of a rack member that is not a server ("switch_tray",
	// "power_shelf", "chassis_controller"…), "" for a server. A device's BMC
	// serves no ComputerSystem: it is observed through its Manager, its
	// Chassis and its UpdateService, takes only update and wait_ready steps,
	// and is ready when its Manager answers and its versions read back.
	Device string
}

// Authentication a BMC took (Observation.Auth, Target.Auth).
const (
	// AuthSession is a Redfish session (POST to the session collection,
	// then X-Auth-Token), deleted at the end.
	AuthSession = "session"
	// AuthBasic is HTTP Basic authentication on every request: the BMC has
	// no session service, or refused the session but takes Basic.
	AuthBasic = "basic"
)

// Update methods: how an image reaches a BMC.
const (
	// MethodSimpleUpdate is UpdateService.SimpleUpdate: the BMC pulls
	// ImageURI with TransferProtocol.
	MethodSimpleUpdate = "simple_update"
	// MethodHTTPPush POSTs the image bytes to UpdateService.HttpPushUri.
	MethodHTTPPush = "http_push"
	// MethodMultipartPush POSTs UpdateParameters and the image to
	// UpdateService.MultipartHttpPushUri (Redfish 2019.4+).
	MethodMultipartPush = "multipart_push"
)

// UpdateIntent is one image the plan may send to a server.
type UpdateIntent struct {
	// Component is the release's component name; UpdatePlan.Component
	// echoes it.
	Component string `json:"component"`
	Match     Match  `json:"match"`
	ImageURI  string `json:"image_uri"`
	// ApplyTime is the Redfish OperationApplyTime the release asks for.
	ApplyTime string `json:"apply_time,omitempty"`
	// Method is a configured override (a Method* constant), or "" for the
	// provider's choice from what the BMC advertises.
	Method string `json:"method,omitempty"`
}

// UpdatePlan is how apply will deliver one UpdateIntent, decided at plan
// from what the BMC advertises (UpdateService, ActionInfo), and written
// into the plan's update steps so apply does exactly that.
type UpdatePlan struct {
	Component string `json:"component"`
	// Method is a Method* constant; "" when Problem is set.
	Method string `json:"method,omitempty"`
	// TransferProtocol is SimpleUpdate's TransferProtocol ("HTTPS", ...),
	// "" for the push methods or when the BMC neither needs nor lists one.
	TransferProtocol string `json:"transfer_protocol,omitempty"`
	// Targets are the resource URIs the update names for every member in
	// Members (the inventory members, or the System or Manager for a
	// version read there); empty when the BMC takes no Targets. When it
	// holds one URI per member, Targets[i] names Members[i], and a plan
	// may name only the members that need the image.
	Targets []string `json:"targets,omitempty"`
	// Members are the ids of the active inventory members the match rule
	// selects, in inventory order: the members the image is for.
	Members []string `json:"members,omitempty"`
	// TargetsPerRequest is how many Targets one request may name (the
	// ActionInfo's ArraySizeMaximum, or 1 where Targets is a single
	// string); 0 means any number. More members take more requests.
	TargetsPerRequest int `json:"targets_per_request,omitempty"`
	// ApplyTime is the @Redfish.OperationApplyTime (or HttpPushUri apply
	// time) to send: the intent's when the BMC lists it as supported, ""
	// when it lists none or not that one (then none is sent and the
	// BMC's own default applies). ApplyTimeFrom says which, in words;
	// a plugin that leaves both empty did not decide (the intent's is
	// sent, as before).
	ApplyTime     string `json:"apply_time,omitempty"`
	ApplyTimeFrom string `json:"apply_time_from,omitempty"`
	// Problem says, in one sentence, why this image cannot be delivered to
	// this server (the component is not updateable, no advertised method
	// fits, a required parameter cannot be given). The plan fails for the
	// server instead of apply failing midway.
	Problem string `json:"problem,omitempty"`
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

// Observation outcomes: what observing one server found, named for what
// it is, so a fleet that could not be seen is never taken for one at target.
const (
	// OutcomeObserved: the server was read; Components are its versions.
	OutcomeObserved = "observed"
	// OutcomeUnreachable: nothing answered (connection refused or reset
	// before a response, DNS, TLS, timeout). A BMC that sent any HTTP
	// answer is never unreachable.
	OutcomeUnreachable = "unreachable"
	// OutcomeUnusableAnswer: the BMC answered, but without what the plan
	// needs: a resource it must read answered an HTTP error other than
	// 401/403 (404 on the Systems collection of a BMC that manages no
	// ComputerSystem, 5xx after retries), a body that is not JSON, or a
	// Systems collection without members. The diagnostic names the
	// request and the status.
	OutcomeUnusableAnswer = "unusable_answer"
	// OutcomeCredentialsRefused: the BMC answered 401/403 to the
	// credentials (session login or Basic auth).
	OutcomeCredentialsRefused = "credentials_refused"
	// OutcomeInventoryUnavailable: the BMC answers and authenticates, but
	// gives no versions (no FirmwareInventory and no fallback in the
	// System or Manager).
	OutcomeInventoryUnavailable = "inventory_unavailable"
	// OutcomeSystemUnresolved: the BMC serves several systems and the
	// target names none, or names one it does not serve; Systems lists
	// what it serves.
	OutcomeSystemUnresolved = "system_unresolved"
)

// Observation is the state of one server.
type Observation struct {
	Server string `json:"server"`
	// Reachable is true exactly when Outcome is OutcomeObserved.
	Reachable bool `json:"reachable"`
	// Outcome is one of the Outcome* constants. A plugin that leaves it
	// empty is read as OutcomeObserved when Reachable, else
	// OutcomeUnreachable (see EffectiveOutcome).
	Outcome string `json:"outcome,omitempty"`
	// PowerState is one of the Power* constants, or "" when unknown.
	PowerState string `json:"power_state,omitempty"`
	// Health is the Redfish health rollup: "OK", "Warning", "Critical" or "".
	Health     string      `json:"health,omitempty"`
	Components []Component `json:"components,omitempty"`
	// Fingerprint is a stable hash of the observed state that matters for an
	// upgrade (component ids and versions, power, health), so drift between
	// plan and apply is detectable. Equal state ⇒ equal fingerprint.
	Fingerprint string `json:"fingerprint,omitempty"`
	// System is the Id of the ComputerSystem that was read.
	System string `json:"system,omitempty"`
	// Systems lists every system the BMC serves when it serves more than
	// one (for the message when a server names none or a wrong one).
	Systems []SystemRef `json:"systems,omitempty"`
	// Identity is who the server is; apply refuses a server whose identity
	// changed since plan (an RMA, a re-used BMC address).
	Identity Identity `json:"identity,omitzero"`
	// Auth is how the BMC was authenticated (AuthSession, AuthBasic); ""
	// from plugins that do not say.
	Auth string `json:"auth,omitempty"`
	// Updates answers Target.Updates, one per intent, in the same order.
	Updates []UpdatePlan `json:"updates,omitempty"`
	// Diagnostics explain an outcome other than OutcomeObserved in one
	// readable line each (the Redfish error's message, never a raw body),
	// and carry warnings otherwise.
	Diagnostics Diagnostics `json:"diagnostics,omitempty"`
}

// EffectiveOutcome is o.Outcome, or what an older plugin's Reachable means.
func (o *Observation) EffectiveOutcome() string {
	switch {
	case o.Outcome != "":
		return o.Outcome
	case o.Reachable:
		return OutcomeObserved
	}
	return OutcomeUnreachable
}

// OutcomeWording is how messages name an outcome where they do: heading a
// diagnostic, saying it of the server's BMC, and after a count of servers.
type OutcomeWording struct {
	Summary string // "BMC refused the credentials"
	BMC     string // "the BMC refused the credentials"
	Servers string // "3 servers refused the credentials"
}

var outcomeWordings = map[string]OutcomeWording{
	OutcomeUnreachable:          {"Server unreachable", "the BMC is unreachable", "unreachable"},
	OutcomeUnusableAnswer:       {"BMC answered without what the plan needs", "the BMC answered without what the plan needs", "whose BMC answered without what the plan needs"},
	OutcomeCredentialsRefused:   {"BMC refused the credentials", "the BMC refused the credentials", "refused the credentials"},
	OutcomeInventoryUnavailable: {"No firmware inventory", "the BMC gives no usable firmware inventory", "without a usable firmware inventory"},
	OutcomeSystemUnresolved:     {"System not resolved", "the BMC does not serve the server's system", "whose system could not be resolved"},
}

// WordingOf is how messages name outcome. An outcome this version does not
// know (a newer plugin's) is named by its own words, never taken for
// unreachable.
func WordingOf(outcome string) OutcomeWording {
	if w, ok := outcomeWordings[outcome]; ok {
		return w
	}
	words := strings.ReplaceAll(outcome, "_", " ")
	return OutcomeWording{Summary: "Server not observed (" + words + ")", BMC: "the BMC could not be observed (" + words + ")", Servers: "not observed (" + words + ")"}
}

// NotHealthy says why a server does not count as a healthy member (of a
// control plane's quorum), or "" when it does: reachable, not Critical,
// and on. A nil observation (none reported) is "not observed".
func (o *Observation) NotHealthy() string {
	switch {
	case o == nil:
		return "not observed"
	case !o.Reachable:
		// Named for what it is: a BMC that answered is not unreachable.
		return strings.ReplaceAll(o.EffectiveOutcome(), "_", " ")
	case o.Health == "Critical":
		return "health Critical"
	case o.PowerState != "" && o.PowerState != PowerOn:
		return "power " + o.PowerState
	}
	return ""
}

// ReadyHealth says why a server's reported health keeps wait_ready
// waiting, or "" when it does not: OK is ready; with acceptCritical (a
// server upgraded although Critical) Warning and Critical are too. No
// health at all is never ready: the BMC has not said.
func ReadyHealth(health string, acceptCritical bool) string {
	switch {
	case health == "OK":
		return ""
	case acceptCritical && (health == "Warning" || health == "Critical"):
		return ""
	case health == "":
		return "health is unknown"
	}
	return "health is " + health
}

// SystemRef names one ComputerSystem a BMC serves.
type SystemRef struct {
	ID   string `json:"id"`
	UUID string `json:"uuid,omitempty"`
	Name string `json:"name,omitempty"`
}

// Identity is what makes a server that server, as its BMC reports it
// (ComputerSystem UUID, SerialNumber, Manufacturer, Model). A field the
// BMC does not report is "" and is not compared.
type Identity struct {
	UUID         string `json:"uuid,omitempty"`
	SerialNumber string `json:"serial_number,omitempty"`
	Manufacturer string `json:"manufacturer,omitempty"`
	Model        string `json:"model,omitempty"`
}

// IsZero reports whether nothing identifies the server.
func (id Identity) IsZero() bool { return id == Identity{} }

// Component sources: where a component's version was read.
const (
	// SourceInventory is an UpdateService FirmwareInventory or
	// SoftwareInventory member (also what "" means).
	SourceInventory = "inventory"
	// SourceSystem is ComputerSystem.BiosVersion (component id "BIOS"),
	// read where the inventory lacks the BIOS.
	SourceSystem = "system"
	// SourceManager is Manager.FirmwareVersion (component id "BMC"), read
	// where the inventory lacks the BMC.
	SourceManager = "manager"
)

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
	// Updateable is false only when the BMC says "Updateable": false; a
	// member that omits it is updateable, as many real BMCs omit it.
	Updateable bool `json:"updateable"`
	// Source is where Version was read (a Source* constant; "" means
	// SourceInventory).
	Source string `json:"source,omitempty"`
	// Shared marks a component of the BMC or its chassis rather than of
	// the server's own system (the BMC's firmware, a chassis CPLD):
	// updating it affects every system behind the BMC, so it is planned
	// and flashed once per BMC.
	Shared bool `json:"shared,omitempty"`
	// State says whether the member is the firmware that runs
	// (StateActive) or a copy beside it: the previous image kept for
	// rollback, one staged for the next reset, an image available for
	// installation, a standby or golden copy, or nothing at all (absent,
	// a disabled placeholder). Only active members are compared with a
	// target. "" is read as active: plugins that do not say.
	State string `json:"state,omitempty"`
	// StateSign is what the BMC showed that decided State, in a few words
	// ("Status.State StandbySpare", "Id prefix Previous-",
	// "Manager.Links.ActiveSoftwareImage").
	StateSign string `json:"state_sign,omitempty"`
}

// Member states (Component.State).
const (
	// StateActive is the firmware that runs now.
	StateActive = "active"
	// StatePrevious is the image before the last update, kept for rollback.
	StatePrevious = "previous"
	// StatePending is an image staged to become active at a reset or an
	// activation, or the placeholder the BMC keeps for one.
	StatePending = "pending"
	// StateAvailable is an image stored on the BMC for installation.
	StateAvailable = "available"
	// StateStandby is a redundant, backup or golden copy that does not run.
	StateStandby = "standby"
	// StateAbsent is a member with nothing behind it: the device is absent
	// or offline, or the slot is disabled or reports "Not Present".
	StateAbsent = "absent"
)

// IsActive reports whether c is the firmware that runs: its State is
// StateActive, or unset (plugins that do not say).
func (c Component) IsActive() bool { return c.State == "" || c.State == StateActive }

// Match selects a component on a server. Exactly one of SoftwareID, ID
// and NamePattern is set; NamePattern is a path.Match glob over Name. A
// rule means every active member it selects (eight GPUs of one
// SoftwareId are eight members to update and to verify).
type Match struct {
	SoftwareID  string `json:"software_id,omitempty"`
	ID          string `json:"id,omitempty"`
	NamePattern string `json:"name,omitempty"`
	// Count, when set, is how many active members the rule must select:
	// another number (a GPU missing of eight) is an error at plan and is
	// never at target at apply. Plans set it to the number they saw.
	Count int `json:"count,omitempty"`
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
	// Target is the version the step brings the component to and how a
	// reported version is read against it (version.ParseTarget), as in
	// Expectation: the provider's check that a step already took effect
	// reads versions as the planner did.
	Target   version.Target `json:"target"`
	ImageURI string         `json:"image_uri,omitempty"`
	// ApplyTime is the Redfish OperationApplyTime: "Immediate", "OnReset", ...
	ApplyTime string `json:"apply_time,omitempty"`
	// Method is how the image is delivered (a Method* constant), decided
	// at plan (UpdatePlan.Method); "" lets the provider choose, which only
	// plans of older formats and tests do.
	Method string `json:"method,omitempty"`
	// TransferProtocol and Targets are UpdatePlan's, sent as decided.
	TransferProtocol string   `json:"transfer_protocol,omitempty"`
	Targets          []string `json:"targets,omitempty"`
	// SHA256 is the hex SHA-256 the image must have. When set, the
	// provider verifies the bytes before the BMC gets them (for a push,
	// what it sends; for a pull, what ImageURI serves) and refuses a
	// mismatch without touching the BMC.
	SHA256 string `json:"sha256,omitempty"`
	// ResetType is a Redfish ResetType for StepReset.
	ResetType string `json:"reset_type,omitempty"`
	// Timeout bounds the step (graceful part of a shutdown; wait_ready).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Expect lists the versions wait_ready requires.
	Expect []Expectation `json:"expect,omitempty"`
	// AcceptCritical makes wait_ready count the server ready with any
	// health its BMC reports, Critical included (ReadyHealth): it was
	// Critical before and is upgraded under a reviewed override, so it
	// cannot come back less healthy than it was.
	AcceptCritical bool `json:"accept_critical,omitempty"`
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

// Expectation is a component that must report Version: every active
// member its Match selects (Match.AtTarget).
// Its JSON form is the one plan files have always written:
// {"component", "match", "version", "scheme", "pattern"}.
type Expectation struct {
	Component string
	Match     Match
	// Target is the version and how a reported version is compared with
	// it (version.ParseTarget: read with the scheme, then Equal), since a
	// BMC may report the target as "U30 v2.54 (03/01/2023)" where the
	// release wrote "U30 v2.54". An empty scheme: exact string equality.
	Target version.Target
}

// expectationJSON is Expectation's JSON form.
type expectationJSON struct {
	Component string         `json:"component"`
	Match     Match          `json:"match"`
	Version   string         `json:"version"`
	Scheme    version.Scheme `json:"scheme,omitempty"`
	Pattern   string         `json:"pattern,omitempty"`
}

// MarshalJSON writes e in its JSON form.
func (e Expectation) MarshalJSON() ([]byte, error) {
	return MarshalRaw(expectationJSON{e.Component, e.Match, e.Target.Version, e.Target.Scheme, e.Target.Pattern})
}

// MarshalRaw is json.Marshal without HTML escaping: a MarshalJSON that
// uses it leaves "<", ">" and "&" (a pattern's named groups, an image
// URL's query) as they are, so that an encoder that does not escape them
// (the plan file's) writes them as it writes every other string, and one
// that does (json.Marshal) still escapes them.
func MarshalRaw(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads e's JSON form, refusing unknown fields, and its
// target with version.ParseTarget: a scheme or pattern that cannot be
// used is an error naming the component.
func (e *Expectation) UnmarshalJSON(b []byte) error {
	var w expectationJSON
	if err := DecodeStrict(b, &w); err != nil {
		return err
	}
	t, err := version.ParseTarget(w.Version, w.Scheme, w.Pattern)
	if err != nil {
		return fmt.Errorf("the expected version of %s: %w", w.Component, err)
	}
	*e = Expectation{Component: w.Component, Match: w.Match, Target: t}
	return nil
}

// DecodeStrict decodes the JSON value b into v as plan files are read:
// unknown fields refused, numbers kept as json.Number. A type's
// UnmarshalJSON calls it so that it reads as strictly as the decoder
// that called it.
func DecodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	return dec.Decode(v)
}

// ApplyRequest performs Step on Target.
type ApplyRequest struct {
	Target Target
	Step   Step
	// Last says Step, if it succeeds, is the server's last in this run:
	// the provider may then end its session with the server's BMC (a
	// failed step keeps it for what follows: a retry, a remediation).
	Last bool
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
	// TaskState is how the task the provider followed ended: TaskCompleted,
	// or TaskGone when its monitor vanished before saying so (the BMC
	// deleted it, or restarted during the step); "" when the step had no
	// task, or the provider does not say (older plugins). The executor
	// checks a versioned update whose task is gone by reading the version.
	TaskState string
	Message   string
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
