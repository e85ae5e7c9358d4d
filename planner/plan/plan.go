// Package plan is the plan file: pure data describing exactly what apply
// will do, and its codec. The planner makes plans; the executor runs them.
// Nothing here talks to a BMC or reads a config.
package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

// Plan is one reviewable, archivable upgrade plan. Its SHA-256 (of the
// encoded file) is its identity.
type Plan struct {
	FormatVersion   string    `json:"format_version"`
	RackformVersion string    `json:"rackform_version"`
	CreatedAt       time.Time `json:"created_at"`
	// NotAfter is when the plan expires: apply refuses it afterwards,
	// because what was observed is too old to trust.
	NotAfter time.Time `json:"not_after"`

	Config    Snapshot   `json:"config"`
	Inputs    Inputs     `json:"inputs"`
	Providers []Provider `json:"providers"`
	// Targeting records -target/-exclude, so reviewers see the plan is partial.
	Targets  []string `json:"targets,omitempty"`
	Excludes []string `json:"excludes,omitempty"`

	Run     Run      `json:"run"`
	Servers []Server `json:"servers"`
	Summary Summary  `json:"summary"`
	// Warnings are non-fatal findings shown with the plan.
	Warnings []Message `json:"warnings,omitempty"`
	// Catalog is the catalog entries the plan's clusters were planned to,
	// by value (optional; catalog.go).
	Catalog *Catalog `json:"catalog,omitempty"`
	// History says what the estimates learned from earlier runs' journals:
	// how many runs were read and each learned estimate the steps use;
	// nil when plan read no history. (Format 1.5.)
	History *History `json:"history,omitempty"`
	// State is where the plan's run keeps its journal, stored plan and
	// lock: its state backend. (Format 1.5.)
	State *State `json:"state,omitempty"`

	// SignedBy is the fingerprint of the Ed25519 key that signed the plan
	// ("SHA256:<base64>", see Fingerprint), "" for an unsigned plan.
	// (Format 1.2.)
	SignedBy string `json:"signed_by,omitempty"`
	// Signature is "ed25519:<base64>", the Ed25519 signature of the plan
	// file with the values of Signature and Checksum empty: it covers
	// every other byte, SignedBy included. (Format 1.2.)
	Signature string `json:"signature,omitempty"`

	// Checksum is "sha256:<hex>" of the encoded plan with Checksum empty.
	// It detects corruption (a truncated or damaged file), not tampering:
	// anyone who can write the file can recompute it. The signature, or
	// apply -expect-sha256 with the hash that was reviewed, detects that.
	Checksum string `json:"checksum"`
}

// Snapshot is the configuration the plan was made from, every file's text.
// Apply loads the configuration from it alone, never from the disk.
type Snapshot struct {
	// Dir is the configuration path as given to plan (relative as typed).
	Dir string `json:"dir"`
	// Files are the *.rf.hcl files, by name relative to Dir.
	Files []File `json:"files"`
	// DataFiles are the files the configuration read with functions
	// (file, templatefile), sorted by name: the path as written in the
	// call, cleaned and relative to Dir. (Format 1.1.)
	DataFiles []File `json:"data_files,omitempty"`
}

// File is one file of the snapshot.
type File struct {
	Name string `json:"name"`
	// SHA256 is the hex SHA-256 of the file's bytes (before any encoding).
	SHA256  string `json:"sha256"`
	Content string `json:"content"`
	// Encoding is how Content holds the bytes: "" for the text itself
	// (valid UTF-8), "base64" for anything else. (Format 1.1.)
	Encoding string `json:"encoding,omitempty"`
}

// EncodingBase64 marks a File whose Content is standard base64.
const EncodingBase64 = "base64"

// NewFile returns the snapshot entry for a file's bytes: the text as is
// when it is valid UTF-8 (a JSON string holds it exactly), else base64.
func NewFile(name string, b []byte) File {
	sum := sha256.Sum256(b)
	f := File{Name: name, SHA256: hex.EncodeToString(sum[:])}
	if utf8.Valid(b) {
		f.Content = string(b)
	} else {
		f.Content, f.Encoding = base64.StdEncoding.EncodeToString(b), EncodingBase64
	}
	return f
}

// Bytes returns the file's bytes, decoded and checked against SHA256.
func (f File) Bytes() ([]byte, error) {
	var b []byte
	switch f.Encoding {
	case "":
		b = []byte(f.Content)
	case EncodingBase64:
		var err error
		if b, err = base64.StdEncoding.DecodeString(f.Content); err != nil {
			return nil, fmt.Errorf("%s: the base64 content does not decode: %v", f.Name, err)
		}
	default:
		return nil, fmt.Errorf("%s: unknown encoding %q", f.Name, f.Encoding)
	}
	if f.SHA256 != "" {
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 {
			return nil, fmt.Errorf("%s: the content does not hash to its sha256", f.Name)
		}
	}
	return b, nil
}

// State is where a plan's run keeps its state. Apply, continue and status
// find the run there from any working directory. (Format 1.5.)
type State struct {
	// Backend is "local" (a state directory) or "postgres" (the database
	// RACKFORM_PG_CONN_STR names at apply, never recorded).
	Backend string `json:"backend"`
	// Dir (local) is the state directory, slash-separated: relative to
	// the directory holding the plan file, or absolute when plan was
	// given an absolute -state-dir. "" when the plan records none (no
	// plan file was written, or the plan file lies outside any directory
	// the state directory shares with it but the root): then the state
	// directory is .rackform in apply's working directory.
	Dir string `json:"dir,omitempty"`
	// LeaseDuration (postgres) is how long the state lock lasts without
	// a heartbeat; 0: the backend's default.
	LeaseDuration Duration `json:"lease_duration,omitempty"`
}

// State backends.
const (
	BackendLocal    = "local"
	BackendPostgres = "postgres"
)

// Inputs are the resolved variables. Sensitive values are never stored:
// only their names, and apply requires them again.
type Inputs struct {
	// Variables holds non-sensitive variable values as JSON.
	Variables map[string]any `json:"variables,omitempty"`
	// Sensitive names the sensitive variables apply must be given again.
	Sensitive []string `json:"sensitive,omitempty"`
	// Env names the environment variables the config reads with env()
	// (credentials); apply checks they are set.
	Env []string `json:"env,omitempty"`
}

// Provider is a provider plugin the plan was made with. Apply refuses to
// run with a different binary.
type Provider struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Source is "builtin" (the rackform binary) or the plugin's file name.
	Source string `json:"source"`
	SHA256 string `json:"sha256"`
	// CABundleSHA256 is the hex SHA-256 of the CA bundle the provider's
	// ca_bundle attribute gave when the plan was made (the file's bytes,
	// or the PEM text given inline): the CAs that verify BMC
	// certificates. Apply refuses another bundle, so replacing the file
	// after review does not change whom apply trusts. "" when the
	// provider has none. (Format 1.5.)
	CABundleSHA256 string `json:"ca_bundle_sha256,omitempty"`
	// CABundle is the path ca_bundle named, as the configuration gave it,
	// for messages; "" when the bundle was given inline or the attribute
	// is sensitive. (Format 1.5.)
	CABundle string `json:"ca_bundle,omitempty"`
}

// Server is one server in scope and what will happen to it, or a device
// of a rack (Kind set): a member with a BMC but no host.
type Server struct {
	// Address is cluster/rack/server, unique in a plan.
	Address string `json:"address"`
	Name    string `json:"name"`
	Cluster string `json:"cluster"`
	Rack    string `json:"rack"`
	Role    string `json:"role"`
	// Kind is the device kind of a rack member that is not a server
	// ("switch_tray", "power_shelf"…; Role is "device"), "" for a server.
	// A device has only update and wait_ready steps. (Format 1.6.)
	Kind     string            `json:"kind,omitempty"`
	NodeName string            `json:"node_name,omitempty"`
	BMC      string            `json:"bmc"`
	Provider string            `json:"provider"`
	Labels   map[string]string `json:"labels,omitempty"`
	// System is the ComputerSystem (Id or UUID) this server is behind a
	// BMC that serves several; "" when the BMC serves one.
	System string `json:"system,omitempty"`

	Observed Observed `json:"observed"`
	// Outcome is how observing the server went (a providers.Outcome*
	// constant). "" in plans before format 1.3: Observed.Reachable says.
	// (Format 1.3.)
	Outcome string `json:"outcome,omitempty"`
	// Identity is who the server was when planned (System UUID, serial,
	// manufacturer, model). Apply observes the server before its first
	// step and refuses it when a field recorded here reads differently
	// now (an RMA, a BMC address re-used). Empty in older plans and for
	// BMCs that report none: then nothing is compared. (Format 1.3.)
	Identity providers.Identity `json:"identity,omitzero"`
	// Fingerprint of the observed state; apply re-observes and compares.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Auth is how the server's BMC took the credentials at plan: a
	// session (providers.AuthSession) or Basic auth on every request
	// (providers.AuthBasic, a BMC without sessions or one that refuses the
	// session but takes Basic). Apply authenticates exactly so. "" from
	// providers that do not say. (Format 1.5.)
	Auth string `json:"auth,omitempty"`

	Action Action `json:"action"`
	// Reason explains a skip or block, e.g. "already_at_target".
	Reason string `json:"reason,omitempty"`
	// UpgradeWhenCritical is set on a server planned although its BMC
	// reported health Critical, for the reviewed reason its configuration
	// gives (the server's upgrade_when_critical); nil on every other
	// server, which plan holds back while Critical. Apply accepts such a
	// server back with any health its BMC reports, since it cannot come
	// back less healthy than it was, and says which (rule 50).
	// (Format 1.6.)
	UpgradeWhenCritical *CriticalOverride `json:"upgrade_when_critical,omitempty"`
	// Problems say, one sentence each, why a server was not observed or
	// is held back (Reason ReasonHeldBack): every problem plan found for
	// it, not the first. (Format 1.3.)
	Problems []string `json:"problems,omitempty"`
	// Notes are findings that change nothing (a component the BMC says is
	// not updateable, already at target). (Format 1.3.)
	Notes   []string `json:"notes,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	Steps   []Step   `json:"steps,omitempty"`
	Reboots int      `json:"reboots"`
	// Estimate is the expected duration of the server's steps.
	Estimate Duration `json:"estimate"`
	// Windows are the server's own maintenance window's open intervals
	// (when it differs from its cluster's): apply starts the server only
	// inside one (rule 20).
	Windows []Interval `json:"windows,omitempty"`
}

// CriticalOverride is the reviewed reason a server is upgraded although
// its BMC reported health Critical. (Format 1.6.)
type CriticalOverride struct {
	// Reason is the configuration's text: why, and the ticket.
	Reason string `json:"reason"`
}

// Action is what the plan does with a server.
type Action string

const (
	ActionUpgrade Action = "upgrade"
	ActionSkip    Action = "skip"
)

// Skip reasons.
const (
	ReasonAtTarget    = "already_at_target"
	ReasonUnreachable = "unreachable"
	ReasonUnhealthy   = "unhealthy"
	ReasonExcluded    = "excluded"
	ReasonOutOfScope  = "out_of_scope"
	// The server could not be observed, for what the reason says
	// (ReasonUnreachable too). (Format 1.3.)
	ReasonCredentialsRefused   = "credentials_refused"
	ReasonInventoryUnavailable = "inventory_unavailable"
	ReasonSystemUnresolved     = "system_unresolved"
	// ReasonUnusableAnswer: the BMC answered, but without what the plan
	// needs (providers.OutcomeUnusableAnswer; earlier plans called such a
	// server unreachable). A value of the free-text reason and outcome,
	// added without a format change: Summary has no field for it and
	// counts it in NotObserved only; an older rackform shows it in its
	// own words ("unusable answer").
	ReasonUnusableAnswer = "unusable_answer"
	// ReasonHeldBack: plan found problems on this server (Problems) and
	// was asked to plan the rest of the fleet without it
	// (-hold-back-errored). (Format 1.3.)
	ReasonHeldBack = "held_back"
	// ReasonSharedElsewhere: the server's only changes are shared
	// components of its BMC, flashed once by another server's step
	// (Change.FlashedBy). (Format 1.3.)
	ReasonSharedElsewhere = "shared_elsewhere"
)

// NotObserved reports whether a skip reason means the server could not be
// observed: its state is unknown, so the plan is never "no changes".
func NotObserved(reason string) bool {
	switch reason {
	case ReasonUnreachable, ReasonCredentialsRefused, ReasonInventoryUnavailable, ReasonSystemUnresolved, ReasonUnusableAnswer:
		return true
	}
	return false
}

// NotObservedCause is why s was not observed (a providers.Outcome*
// value; in plans before format 1.3, which record no outcome, its skip
// reason), and false when it was observed.
func (s *Server) NotObservedCause() (string, bool) {
	observed := s.Outcome == "" || s.Outcome == providers.OutcomeObserved
	switch {
	case !observed:
		return s.Outcome, true
	case NotObserved(s.Reason):
		return s.Reason, true
	}
	return "", false
}

// Settled reports whether a server needs nothing and is known to need
// nothing: observed and at target, or left out on purpose (excluded, out
// of scope). An unobserved, unhealthy or held-back server is not settled.
func (s *Server) Settled() bool {
	if s.Action != ActionSkip {
		return false
	}
	switch s.Reason {
	case ReasonAtTarget, ReasonExcluded, ReasonOutOfScope, ReasonSharedElsewhere:
		return true
	}
	return false
}

// Observed is what the server's BMC reported at plan time.
type Observed struct {
	Reachable  bool   `json:"reachable"`
	PowerState string `json:"power_state,omitempty"`
	Health     string `json:"health,omitempty"`
	// Components are the inventory members the plan decides on: every
	// member a release component's rule selects, each with its state
	// (providers.Component.State: the active one that runs, or a
	// previous, pending, available, standby or absent copy beside it,
	// and the sign that said so). Only active members are compared with
	// a target. (State and StateSign: format 1.5; "" in older plans reads
	// as active.)
	Components []providers.Component `json:"components,omitempty"`
	// System is the Id of the ComputerSystem that was read. (Format 1.3.)
	System string `json:"system,omitempty"`
	// Others is what the BMC reported besides Components: from format
	// 1.4 Components holds only what the plan decides on (the components
	// a release component matches) and Others counts and digests the
	// rest (see OthersOf). nil when Components is everything reported.
	Others *Others `json:"others,omitempty"`
}

// Others records the components a plan does not decide on: how many the
// BMC reported and the SHA-256 of them, so the plan still says something
// else was seen, and apply can tell when it changed. (Format 1.4.)
type Others struct {
	Count int `json:"count"`
	// SHA256 is the hex SHA-256 of the canonical compact JSON array of
	// those components, sorted by id, then source, software id, name and
	// version.
	SHA256 string `json:"sha256"`
}

// OthersOf returns the Others of all less the components whose ID is
// among recorded's, or nil when nothing is left. The order of all does
// not matter, except among members alike in their id and every field
// sorted on (differing in state only): the digest follows the order
// those came in.
func OthersOf(all, recorded []providers.Component) *Others {
	// A server records a handful of components: a scan of them costs
	// less than a set of their ids, for each of 100,000 servers.
	isRecorded := func(id string) bool {
		for i := range recorded {
			if recorded[i].ID == id {
				return true
			}
		}
		return false
	}
	// On the stack for a server's inventory of up to 64 members.
	var restBuf [64]providers.Component
	rest := restBuf[:0]
	for _, c := range all {
		if !isRecorded(c.ID) {
			rest = append(rest, c)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	// In id order first, whatever order all is in, so that the ties of
	// the sort below (members that differ only in state) fall as they
	// do for a list sorted by id: the digest is all's, not its order's.
	slices.SortStableFunc(rest, func(a, b providers.Component) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(rest, func(a, b providers.Component) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Source, b.Source), cmp.Compare(a.SoftwareID, b.SoftwareID),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Version, b.Version))
	})
	// Encoded on the stack: the digest is all that is kept.
	var scratch [8 << 10]byte
	b := append(scratch[:0], '[')
	for i := range rest {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendComponent(b, &rest[i])
	}
	b = append(b, ']')
	sum := sha256.Sum256(b)
	return &Others{Count: len(rest), SHA256: hex.EncodeToString(sum[:])}
}

// Change is one component moving from one version to another.
type Change struct {
	Component string `json:"component"`
	Kind      string `json:"kind"` // "firmware" or "runtime"
	From      string `json:"from"`
	To        string `json:"to"`
	Reboot    bool   `json:"reboot"`
	// Downgrade is set when To is older than From (allowed by
	// allow_downgrade), so reviewers cannot miss it.
	Downgrade bool `json:"downgrade,omitempty"`
	// Unordered is set when From and To cannot be ordered (the opaque
	// scheme, moved with allow_change): a change, neither an upgrade nor
	// a downgrade, and shown as such.
	Unordered bool `json:"unordered,omitempty"`
	// Shared marks a component of the server's BMC (or chassis) rather
	// than of its own system: it is flashed once per BMC. (Format 1.3.)
	Shared bool `json:"shared,omitempty"`
	// FlashedBy is the server whose step flashes a shared component, when
	// it is another server on the same BMC: this server gets no step for
	// it. (Format 1.3.)
	FlashedBy string `json:"flashed_by,omitempty"`
	// Members is how many active inventory members the component's rule
	// selects on the server (eight GPUs of one SoftwareId), Moving how
	// many of them are not at the target and change; From lists the
	// versions of those. 0 in older plans. (Format 1.5.)
	Members int `json:"members,omitempty"`
	Moving  int `json:"moving,omitempty"`
}

// StepKind extends the provider step kinds with the executor's hooks.
type StepKind string

// Step kinds. Drain and uncordon run hooks; the rest are provider steps.
const (
	StepDrain     StepKind = "drain"
	StepUncordon  StepKind = "uncordon"
	StepShutdown  StepKind = StepKind(providers.StepShutdown)
	StepPowerOn   StepKind = StepKind(providers.StepPowerOn)
	StepUpdate    StepKind = StepKind(providers.StepUpdate)
	StepReset     StepKind = StepKind(providers.StepReset)
	StepReimage   StepKind = StepKind(providers.StepReimage)
	StepWaitReady StepKind = StepKind(providers.StepWaitReady)
)

// Step is one action on one server, numbered in execution order.
type Step struct {
	Index     int              `json:"index"`
	Kind      StepKind         `json:"kind"`
	Component string           `json:"component,omitempty"`
	Match     *providers.Match `json:"match,omitempty"`
	// Target is the version the step brings the component to and how a
	// reported version is compared with it (version.ParseTarget, read by
	// providers.Match.AtTarget) when apply checks whether an update or
	// reimage already took effect; an empty scheme compares strings
	// exactly. The file writes it as "version", "scheme" and "pattern"
	// (stepJSON).
	Target version.Target `json:"-"`
	Image  string         `json:"image,omitempty"`
	// ApplyTime is the @Redfish.OperationApplyTime the update sends, ""
	// for none; ApplyTimeFrom says why, as plan decided it from what the
	// BMC lists ("listed in SimpleUpdate's
	// @Redfish.OperationApplyTimeSupport", "not sent: the BMC lists no
	// apply times for simple_update; …"). An ApplyTimeFrom of "" is a plan
	// that sent the component's apply time without asking. (ApplyTimeFrom:
	// format 1.5.)
	ApplyTime     string `json:"apply_time,omitempty"`
	ApplyTimeFrom string `json:"apply_time_from,omitempty"`
	Method        string `json:"method,omitempty"`
	// TransferProtocol and Targets are how the BMC said it takes this
	// image (providers.UpdatePlan), sent as recorded. (Format 1.3.)
	TransferProtocol string   `json:"transfer_protocol,omitempty"`
	Targets          []string `json:"targets,omitempty"`
	// Members are the ids of the inventory members the update is for (the
	// active members of its rule not at the target, or those of them its
	// Targets name when the BMC takes fewer per request), as observed at
	// plan. Apply checks these members when their ids are still reported,
	// else every active member of the rule (a Dell Id carries its
	// version, so it changes with the update). (Format 1.5.)
	Members []string `json:"members,omitempty"`
	// SHA256 is the image's hex SHA-256 from the component's sha256: the
	// provider refuses other bytes. (Format 1.3.)
	SHA256 string `json:"sha256,omitempty"`
	// Shared marks the one update of a shared component of a BMC, on the
	// last server of that BMC in run order. (Format 1.3.)
	Shared bool `json:"shared,omitempty"`
	// After lists the other servers on the same BMC: the step starts only
	// once each has been drained and shut down as its strategy requires
	// (its shutdown step completed), or has ended. (Format 1.3.)
	After     []string `json:"after,omitempty"`
	ResetType string   `json:"reset_type,omitempty"`
	// Timeout bounds the step: drain (then proceed), shutdown (then force
	// off), wait_ready (then remediation).
	Timeout Duration                `json:"timeout,omitempty"`
	Expect  []providers.Expectation `json:"expect,omitempty"`
	// Estimate is the expected duration of the step: the fixed typical
	// duration of its kind, or the median learned from earlier runs.
	Estimate Duration `json:"estimate"`
	// Learned says which learned estimate Estimate is the median of (its
	// class, samples, runs, median and 90th percentile); nil when
	// Estimate is the kind's default. (Format 1.5.)
	Learned *Learned `json:"learned,omitempty"`
}

// ProviderStep converts a provider step to the provider contract.
func (s Step) ProviderStep() providers.Step {
	ps := providers.Step{
		Kind:      providers.StepKind(s.Kind),
		Component: s.Component,
		Target:    s.Target,
		ImageURI:  s.Image,
		ApplyTime: s.ApplyTime,
		Method:    s.Method,
		ResetType: s.ResetType,
		SHA256:    s.SHA256,
		// Copied: the provider must not alias the plan's slice.
		Targets:          append([]string(nil), s.Targets...),
		TransferProtocol: s.TransferProtocol,
		Timeout:          time.Duration(s.Timeout),
		Expect:           s.Expect,
	}
	if s.Match != nil {
		ps.Match = *s.Match
	}
	return ps
}

// IsDevice reports whether s is a device (a rack member that is not a
// server).
func (s *Server) IsDevice() bool { return s.Kind != "" }

// IsHook reports whether the step runs an executor hook, not a provider step.
func (s Step) IsHook() bool { return s.Kind == StepDrain || s.Kind == StepUncordon }

// IsFlash reports whether the step writes a component's version: an update
// or a reimage.
func (s Step) IsFlash() bool { return s.Kind == StepUpdate || s.Kind == StepReimage }

// Message is a warning or note attached to the plan.
type Message struct {
	Summary string `json:"summary"`
	Detail  string `json:"detail,omitempty"`
	Server  string `json:"server,omitempty"`
}

// Summary is the headline of a plan.
type Summary struct {
	Upgrade  int      `json:"upgrade"`
	Skip     int      `json:"skip"`
	Racks    int      `json:"racks"`
	Estimate Duration `json:"estimate"`
	// NotObserved counts the servers that could not be observed; the
	// next four count them by cause. (Format 1.3.)
	NotObserved          int `json:"not_observed,omitempty"`
	Unreachable          int `json:"unreachable,omitempty"`
	CredentialsRefused   int `json:"credentials_refused,omitempty"`
	InventoryUnavailable int `json:"inventory_unavailable,omitempty"`
	SystemUnresolved     int `json:"system_unresolved,omitempty"`
	// HeldBack counts the servers held back for their problems. (1.3.)
	HeldBack int `json:"held_back,omitempty"`
	// SharedUpdates counts updates of shared components, once per BMC
	// and component. (Format 1.3.)
	SharedUpdates int `json:"shared_updates,omitempty"`
}

// causeOrder is the order counts of servers not observed (and unhealthy)
// list their causes in, the most telling first; causeWords their words.
var causeOrder = []string{
	providers.OutcomeUnreachable,
	providers.OutcomeUnusableAnswer,
	providers.OutcomeCredentialsRefused,
	providers.OutcomeInventoryUnavailable,
	providers.OutcomeSystemUnresolved,
	ReasonUnhealthy,
}

var causeWords = map[string]string{
	providers.OutcomeUnreachable:          "unreachable",
	providers.OutcomeUnusableAnswer:       "answered without what the plan needs",
	providers.OutcomeCredentialsRefused:   "credentials refused",
	providers.OutcomeInventoryUnavailable: "inventory unavailable",
	providers.OutcomeSystemUnresolved:     "system unresolved",
	ReasonUnhealthy:                       "unhealthy",
}

// CauseWords names a cause in a count ("credentials refused"); one this
// rackform has no words for (a newer plugin's) reads as its name.
func CauseWords(cause string) string {
	if w, ok := causeWords[cause]; ok {
		return w
	}
	return strings.ReplaceAll(cause, "_", " ")
}

// CausesInOrder lists the causes of by in report order: the known ones
// first, then any other by name, so none is ever dropped.
func CausesInOrder[V any](by map[string]V) []string {
	var out, rest []string
	for _, c := range causeOrder {
		if _, ok := by[c]; ok {
			out = append(out, c)
		}
	}
	for c := range by {
		if !slices.Contains(causeOrder, c) {
			rest = append(rest, c)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// CauseCounts is "5 unreachable, 2 credentials refused": the causes with a
// count, in report order.
func CauseCounts(by map[string]int) string {
	var parts []string
	for _, c := range CausesInOrder(by) {
		if by[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", by[c], CauseWords(c)))
		}
	}
	return strings.Join(parts, ", ")
}

// NotObservedBy counts the plan's servers not observed by cause (a
// providers.Outcome* value), leaving out causes with none. It counts the
// servers rather than reading Summary's fields, which name only some
// causes: one without a field (unusable_answer, or what a newer plugin
// names) is counted under its own name, never as another.
func (p *Plan) NotObservedBy() map[string]int {
	out := map[string]int{}
	for i := range p.Servers {
		if cause, ok := p.Servers[i].NotObservedCause(); ok {
			out[cause]++
		}
	}
	return out
}

// Count adds one server not observed for cause. A cause without a field
// of its own is in NotObserved only (Plan.NotObservedBy names it).
func (s *Summary) Count(cause string) {
	s.NotObserved++
	switch cause {
	case providers.OutcomeUnreachable:
		s.Unreachable++
	case providers.OutcomeCredentialsRefused:
		s.CredentialsRefused++
	case providers.OutcomeInventoryUnavailable:
		s.InventoryUnavailable++
	case providers.OutcomeSystemUnresolved:
		s.SystemUnresolved++
	}
}

// ShortSHA is the start of a plan's SHA-256, as messages name plans.
func ShortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
