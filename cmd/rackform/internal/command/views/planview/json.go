package planview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// JSONFormatVersion is the version of `show -json`'s representation of a
// plan (docs/json.md, docs/schemas/plan-json.schema.json). Consumers
// accept the same major version and ignore properties they do not know; a
// minor version only adds properties.
//
// 1.1 added what estimates were learned from earlier runs (plan format
// 1.5): history, and each step's estimate_source and learned. 1.2 adds
// the rack members that are not servers (plan format 1.6): each server's
// kind ("" for a server, the device kind of a device) and the phase kind
// "devices"; and the servers upgraded although Critical (plan format
// 1.6): upgraded_although_critical, and each server's
// upgrade_when_critical.
const JSONFormatVersion = "1.2"

// PlanJSON is the machine-readable representation of a plan printed by
// `show -json`, made for policy checks (OPA/conftest): servers, clusters,
// gates and providers keyed by address or name, the run order as lists,
// parallelism resolved per phase, and every property present (an empty
// list, object or string rather than left out). It is a view of the plan
// file, not the file: `apply` reads only the file.
type PlanJSON struct {
	FormatVersion     string `json:"format_version"`
	PlanFormatVersion string `json:"plan_format_version"`
	RackformVersion   string `json:"rackform_version"`
	// PlanSHA256 is the hex SHA-256 of the plan file: its identity.
	PlanSHA256 string    `json:"plan_sha256"`
	SignedBy   string    `json:"signed_by"`
	CreatedAt  time.Time `json:"created_at"`
	NotAfter   time.Time `json:"not_after"`
	// UpgradedAlthoughCritical lists, first, the servers the plan upgrades
	// although their BMC reported health Critical, with the reviewed
	// reason, in plan order (1.2).
	UpgradedAlthoughCritical []JSONCritical `json:"upgraded_although_critical"`

	Configuration JSONConfiguration       `json:"configuration"`
	Variables     map[string]any          `json:"variables"`
	Sensitive     []string                `json:"sensitive_variables"`
	Environment   []string                `json:"environment_variables"`
	Providers     map[string]JSONProvider `json:"providers"`
	Targets       []string                `json:"targets"`
	Excludes      []string                `json:"excludes"`

	Rollout  JSONRollout            `json:"rollout"`
	Stages   []JSONStage            `json:"stages"`
	Clusters map[string]JSONCluster `json:"clusters"`
	Gates    map[string]JSONGate    `json:"gates"`
	Waits    []JSONWait             `json:"waits"`
	Pauses   []JSONPause            `json:"pauses"`
	Servers  map[string]JSONServer  `json:"servers"`
	// RunOrder is every server address in the order apply starts them.
	RunOrder []string    `json:"run_order"`
	Images   []JSONImage `json:"images"`
	Summary  JSONSummary `json:"summary"`
	// History is what the estimates learned from earlier runs; null when
	// plan read no history (1.1).
	History  *JSONHistory  `json:"history"`
	Warnings []JSONMessage `json:"warnings"`
}

// JSONCritical is a server upgraded although Critical and why (1.2).
type JSONCritical struct {
	Server string `json:"server"`
	Reason string `json:"reason"`
}

// JSONMessage is a warning attached to the plan. It, JSONIdentity,
// JSONRelease, JSONComponent and JSONChange have the fields of the plan's
// own types in their order, so they are converted from them: only the
// tags differ (every property present).
type JSONMessage struct {
	Summary string `json:"summary"`
	Detail  string `json:"detail"`
	Server  string `json:"server"`
}

// JSONIdentity is who the server was when planned ("" where its BMC
// reported nothing).
type JSONIdentity struct {
	UUID         string `json:"uuid"`
	SerialNumber string `json:"serial_number"`
	Manufacturer string `json:"manufacturer"`
	Model        string `json:"model"`
}

// JSONConfiguration names the configuration the plan was made from (its
// files' names and digests; the text is in the plan file).
type JSONConfiguration struct {
	Name      string     `json:"name"`
	Files     []JSONFile `json:"files"`
	DataFiles []JSONFile `json:"data_files"`
}

// JSONFile is a configuration file's name and digest.
type JSONFile struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// JSONProvider is a provider the plan was made with.
type JSONProvider struct {
	Version string `json:"version"`
	Source  string `json:"source"`
	SHA256  string `json:"sha256"`
}

// JSONRollout is the run's name and scope.
type JSONRollout struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
}

// JSONStage is a stage in run order.
type JSONStage struct {
	ID        string      `json:"id"`
	Name      string      `json:"name"`
	Index     int         `json:"index"`
	OnBreach  string      `json:"on_breach"`
	FailFast  bool        `json:"fail_fast"`
	AfterWait string      `json:"after_wait"`
	Estimate  string      `json:"estimate"`
	Gates     []string    `json:"gates"`
	Groups    []JSONGroup `json:"groups"`
}

// JSONGroup is a group of a stage: its clusters run in turn, groups in
// parallel.
type JSONGroup struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Estimate string   `json:"estimate"`
	Clusters []string `json:"clusters"`
}

// JSONGate is an approval gate.
type JSONGate struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Stage       string `json:"stage"`
	When        string `json:"when"`
	Description string `json:"description"`
	// Before lists the clusters that cannot start until the gate is
	// approved: the stage's own for "before", every later stage's for
	// "after".
	Before []string `json:"before"`
}

// JSONWait is a wait after a stage or a scope.
type JSONWait struct {
	After    string `json:"after"`
	Kind     string `json:"kind"` // "stage" or "scope"
	Duration string `json:"duration"`
	Cluster  string `json:"cluster"`
}

// JSONPause is a pause after a scope until `continue`.
type JSONPause struct {
	After   string `json:"after"`
	Cluster string `json:"cluster"`
}

// JSONCluster is a cluster, keyed by name.
type JSONCluster struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Stage          string          `json:"stage"`
	Group          string          `json:"group"`
	WindowPriority string          `json:"window_priority"`
	Windows        []plan.Interval `json:"windows"`
	Estimate       string          `json:"estimate"`
	// Parallelism is how many servers run at once in each phase, by
	// phase name (the largest max_unavailable of its scopes).
	Parallelism map[string]int `json:"parallelism"`
	Settings    JSONSettings   `json:"settings"`
	Quorum      *plan.Quorum   `json:"quorum"`
	// Release is the release a channel chose for the cluster and why, and
	// whether it is pending at the cluster's site; null when the cluster
	// names its release itself and no catalog decided it.
	Release *JSONRelease `json:"release"`
	Phases  []JSONPhase  `json:"phases"`
	Servers []string     `json:"servers"`
}

// JSONRelease is a cluster's chosen release, every property present.
type JSONRelease struct {
	Release   string `json:"release"`
	Version   string `json:"version"`
	Channel   string `json:"channel"`
	Selection string `json:"selection"`
	Site      string `json:"site"`
	Why       string `json:"why"`
	Pending   string `json:"pending"`
	Hop       bool   `json:"hop"`
}

// JSONSettings are a cluster's per-server settings, every one present:
// plan.Settings's fields, so it is converted from them.
type JSONSettings struct {
	DrainTimeout    plan.Duration       `json:"drain_timeout"`
	ShutdownTimeout plan.Duration       `json:"shutdown_timeout"`
	VerifyTimeout   plan.Duration       `json:"verify_timeout"`
	DrainHook       []string            `json:"drain_hook"`
	UncordonHook    []string            `json:"uncordon_hook"`
	HookTimeout     plan.Duration       `json:"hook_timeout"`
	Remediation     map[string][]string `json:"remediation"`
	// Triggers is null when the plan has none.
	Triggers *plan.RemediationTriggers `json:"remediation_triggers"`
}

// JSONPhase is a phase of a cluster, in run order.
type JSONPhase struct {
	ID          string      `json:"id"`
	Kind        string      `json:"kind"`
	Name        string      `json:"name"`
	Parallelism int         `json:"parallelism"`
	Estimate    string      `json:"estimate"`
	Scopes      []JSONScope `json:"scopes"`
}

// JSONScope is a rack, batch or serial scope: the unit with a threshold.
// It has plan.Scope's fields, so it is converted from them.
type JSONScope struct {
	ID             string         `json:"id"`
	Kind           string         `json:"kind"`
	Name           string         `json:"name"`
	Rack           string         `json:"rack"`
	Servers        []string       `json:"servers"`
	Threshold      plan.Threshold `json:"threshold"`
	Eligible       int            `json:"eligible"`
	Required       int            `json:"required"`
	Budget         int            `json:"budget"`
	MaxUnavailable int            `json:"max_unavailable"`
	OnBreach       string         `json:"on_breach"`
	WaitAfter      plan.Duration  `json:"wait_after"`
	PauseAfter     bool           `json:"pause_after"`
	Estimate       plan.Duration  `json:"estimate"`
}

// JSONServer is a server, keyed by address.
type JSONServer struct {
	Address string `json:"address"`
	Name    string `json:"name"`
	Cluster string `json:"cluster"`
	Rack    string `json:"rack"`
	Role    string `json:"role"`
	// Kind is a device's kind ("switch_tray", "power_shelf"…, Role
	// "device"), "" for a server. (1.2.)
	Kind     string            `json:"kind"`
	NodeName string            `json:"node_name"`
	BMC      string            `json:"bmc"`
	System   string            `json:"system"`
	Provider string            `json:"provider"`
	Labels   map[string]string `json:"labels"`
	// Where the server sits in the run: its stage, group, phase (ID and
	// kind) and scope, and its position in RunOrder (-1 when in none).
	Stage     string `json:"stage"`
	Group     string `json:"group"`
	Phase     string `json:"phase"`
	PhaseKind string `json:"phase_kind"`
	Scope     string `json:"scope"`
	Order     int    `json:"order"`

	Action  string `json:"action"`
	Reason  string `json:"reason"`
	Outcome string `json:"outcome"`
	// Outcome is how observing the server went: "observed",
	// "unreachable", "credentials_refused", "inventory_unavailable",
	// "system_unresolved", or "" when plan did not read it (excluded, out
	// of scope). Observed is true when the BMC was read.
	Observed bool `json:"observed"`
	// Auth is how the BMC took the credentials at plan ("session",
	// "basic"), as apply authenticates; "" in plans before format 1.5.
	Auth      string          `json:"auth"`
	Health    string          `json:"health"`
	Power     string          `json:"power_state"`
	Identity  JSONIdentity    `json:"identity"`
	Inventory []JSONComponent `json:"inventory"`
	// InventoryOthers counts what the BMC reported beyond Inventory (the
	// components no release component matches; plan files from format 1.4
	// record only a count and digest of them): null in older plans.
	InventoryOthers *plan.Others    `json:"inventory_others"`
	Problems        []string        `json:"problems"`
	Notes           []string        `json:"notes"`
	Changes         []JSONChange    `json:"changes"`
	Steps           []JSONStep      `json:"steps"`
	Reboots         int             `json:"reboots"`
	Estimate        string          `json:"estimate"`
	Windows         []plan.Interval `json:"windows"`
	// UpgradeWhenCritical is set on a server planned although its BMC
	// reported health Critical: the reviewed reason; null on every other
	// server (1.2).
	UpgradeWhenCritical *plan.CriticalOverride `json:"upgrade_when_critical"`
}

// JSONComponent is a component as observed at plan time.
type JSONComponent struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	SoftwareID string `json:"software_id"`
	Version    string `json:"version"`
	Updateable bool   `json:"updateable"`
	Source     string `json:"source"`
	Shared     bool   `json:"shared"`
	// State is whether the member runs ("active") or is a copy beside
	// it ("previous", "pending", "available", "standby", "absent"), and
	// StateSign what the BMC showed that said so. Plans before format
	// 1.5 did not tell: every member was read as active.
	State     string `json:"state"`
	StateSign string `json:"state_sign"`
}

// JSONChange is a component moving from one version to another.
type JSONChange struct {
	Component string `json:"component"`
	Kind      string `json:"kind"`
	From      string `json:"from"`
	To        string `json:"to"`
	Reboot    bool   `json:"reboot"`
	Downgrade bool   `json:"downgrade"`
	Unordered bool   `json:"unordered"`
	Shared    bool   `json:"shared"`
	FlashedBy string `json:"flashed_by"`
	// Members is how many active members the rule selects, Moving how
	// many of them change (0 in plans before format 1.5).
	Members int `json:"members"`
	Moving  int `json:"moving"`
}

// JSONStep is one step on a server.
type JSONStep struct {
	Index     int    `json:"index"`
	Kind      string `json:"kind"`
	Component string `json:"component"`
	Version   string `json:"version"`
	Image     string `json:"image"`
	SHA256    string `json:"sha256"`
	Method    string `json:"method"`
	ApplyTime string `json:"apply_time"`
	// ApplyTimeFrom says why ApplyTime is what it is, from what the BMC
	// lists ("" in plans before format 1.5).
	ApplyTimeFrom    string   `json:"apply_time_from"`
	TransferProtocol string   `json:"transfer_protocol"`
	Targets          []string `json:"targets"`
	// Members are the inventory members the update is for, and Count how
	// many active members its rule must find (apply checks both).
	Members   []string `json:"members"`
	Count     int      `json:"count"`
	ResetType string   `json:"reset_type"`
	Shared    bool     `json:"shared"`
	After     []string `json:"after"`
	Timeout   string   `json:"timeout"`
	Estimate  string   `json:"estimate"`
	// EstimateSource is "learned" (Estimate is Learned's median) or
	// "default" (its kind's fixed duration); Learned is null then (1.1).
	EstimateSource string       `json:"estimate_source"`
	Learned        *JSONLearned `json:"learned"`
}

// JSONImage is one image the plan delivers, with the servers it goes to.
type JSONImage struct {
	Component string   `json:"component"`
	Version   string   `json:"version"`
	URI       string   `json:"uri"`
	SHA256    string   `json:"sha256"`
	Methods   []string `json:"methods"`
	Servers   []string `json:"servers"`
}

// JSONSummary is the plan's headline, every counter present.
type JSONSummary struct {
	Upgrade              int    `json:"upgrade"`
	Skip                 int    `json:"skip"`
	Racks                int    `json:"racks"`
	Reboots              int    `json:"reboots"`
	Estimate             string `json:"estimate"`
	NotObserved          int    `json:"not_observed"`
	Unreachable          int    `json:"unreachable"`
	UnusableAnswer       int    `json:"unusable_answer"`
	CredentialsRefused   int    `json:"credentials_refused"`
	InventoryUnavailable int    `json:"inventory_unavailable"`
	SystemUnresolved     int    `json:"system_unresolved"`
	HeldBack             int    `json:"held_back"`
	SharedUpdates        int    `json:"shared_updates"`
}

// summaryJSON is the summary with every counter present.
func summaryJSON(p *plan.Plan) JSONSummary {
	s := p.Summary
	reboots := 0
	for i := range p.Servers {
		reboots += p.Servers[i].Reboots
	}
	return JSONSummary{
		Upgrade: s.Upgrade, Skip: s.Skip, Racks: s.Racks, Reboots: reboots, Estimate: s.Estimate.String(),
		NotObserved: s.NotObserved, Unreachable: s.Unreachable, UnusableAnswer: p.NotObservedBy()[providers.OutcomeUnusableAnswer], CredentialsRefused: s.CredentialsRefused,
		InventoryUnavailable: s.InventoryUnavailable, SystemUnresolved: s.SystemUnresolved,
		HeldBack: s.HeldBack, SharedUpdates: s.SharedUpdates,
	}
}

// WriteJSON writes p's machine-readable representation (indented, one
// document). sha is the plan file's SHA-256. The servers are made and
// encoded one at a time into the document around them, with the same
// bytes as encoding the whole at once: the document of 100,000 servers
// is most of a gigabyte, its model more, and encoding/json indents a
// value only once all of it is encoded.
func WriteJSON(w io.Writer, p *plan.Plan, sha string) error {
	doc, entries := document(asApplied(p), sha)
	servers := make(map[string]int, len(entries))
	for i, e := range entries {
		servers[e.Server.Address] = i
	}
	around, err := indented(doc, "")
	if err != nil {
		return err
	}
	// At an indent of two spaces, only a key of the document itself.
	hole := []byte("\n  \"servers\": {}")
	at := bytes.Index(around, hole)
	if at < 0 || len(servers) == 0 {
		_, err := w.Write(append(around, '\n'))
		return err
	}
	at += len(hole) - 1 // at the "}"
	bw := bufio.NewWriter(w)
	bw.Write(around[:at])
	// One encoder for every server, so that encoding one leaves no
	// garbage behind (its buffers are reused): a collection then would
	// scan the whole document's model again.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	write := func(v any) error {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return nil
	}
	for i, k := range slices.Sorted(maps.Keys(servers)) {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		if err := write(k); err != nil {
			return err
		}
		bw.WriteString(": ")
		if err := write(placed(entries[servers[k]], servers[k])); err != nil {
			return err
		}
	}
	bw.WriteString("\n  ")
	bw.Write(around[at:])
	bw.WriteByte('\n')
	return bw.Flush()
}

// indented is v as WriteJSON writes it, each line after the first
// starting with prefix, without a final newline.
func indented(v any, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// orEmpty returns s, or an empty non-nil slice.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// document is p's machine-readable representation but for its servers,
// and the entries each is made from in run order (placed): the servers of
// 100,000 are made one at a time as they are written. p is as applied.
func document(p *plan.Plan, sha string) (PlanJSON, []Entry) {
	out := PlanJSON{
		FormatVersion: JSONFormatVersion, PlanFormatVersion: p.FormatVersion, RackformVersion: p.RackformVersion,
		PlanSHA256: sha, SignedBy: p.SignedBy, CreatedAt: p.CreatedAt, NotAfter: p.NotAfter,
		Configuration: JSONConfiguration{Name: ConfigName(p.Config.Dir), Files: []JSONFile{}, DataFiles: []JSONFile{}},
		Variables:     map[string]any{},
		Sensitive:     orEmpty(slices.Clone(p.Inputs.Sensitive)),
		Environment:   orEmpty(slices.Clone(p.Inputs.Env)),
		Providers:     map[string]JSONProvider{},
		Targets:       orEmpty(slices.Clone(p.Targets)),
		Excludes:      orEmpty(slices.Clone(p.Excludes)),
		Rollout:       JSONRollout{Name: p.Run.Name, Scope: p.Run.Scope},
		Stages:        []JSONStage{},
		Clusters:      map[string]JSONCluster{},
		Gates:         map[string]JSONGate{},
		Waits:         []JSONWait{},
		Pauses:        []JSONPause{},
		Servers:       map[string]JSONServer{},
		RunOrder:      []string{},
		Images:        []JSONImage{},
		Summary:       summaryJSON(p),
		History:       historyJSON(p.History),

		UpgradedAlthoughCritical: []JSONCritical{},
		Warnings:                 []JSONMessage{},
	}
	for _, s := range UpgradedCritical(p) {
		out.UpgradedAlthoughCritical = append(out.UpgradedAlthoughCritical, JSONCritical{s.Address, s.UpgradeWhenCritical.Reason})
	}
	for _, m := range p.Warnings {
		out.Warnings = append(out.Warnings, JSONMessage(m))
	}
	for _, f := range p.Config.Files {
		out.Configuration.Files = append(out.Configuration.Files, JSONFile{f.Name, f.SHA256})
	}
	for _, f := range p.Config.DataFiles {
		out.Configuration.DataFiles = append(out.Configuration.DataFiles, JSONFile{f.Name, f.SHA256})
	}
	maps.Copy(out.Variables, p.Inputs.Variables)
	for _, pr := range p.Providers {
		out.Providers[pr.Name] = JSONProvider{Version: pr.Version, Source: pr.Source, SHA256: pr.SHA256}
	}

	// The run tree: stages in order, clusters keyed by name.
	var laterClusters []string // clusters of the stages after the current one
	for si := len(p.Run.Stages) - 1; si >= 0; si-- {
		st := &p.Run.Stages[si]
		var own []string
		for _, g := range st.Groups {
			for _, c := range g.Clusters {
				own = append(own, c.Name)
			}
		}
		for _, g := range st.Gates {
			before := own
			if g.When == "after" {
				before = laterClusters
			}
			out.Gates[g.ID] = JSONGate{ID: g.ID, Name: g.Name, Stage: st.ID, When: g.When, Description: g.Description, Before: orEmpty(slices.Clone(before))}
		}
		laterClusters = append(own, laterClusters...)
	}
	for si := range p.Run.Stages {
		st := &p.Run.Stages[si]
		js := JSONStage{ID: st.ID, Name: st.Name, Index: si, OnBreach: st.OnBreach, FailFast: st.FailFast,
			AfterWait: st.AfterWait.String(), Estimate: st.Estimate.String(), Gates: []string{}, Groups: []JSONGroup{}}
		for _, g := range st.Gates {
			js.Gates = append(js.Gates, g.ID)
		}
		if st.AfterWait > 0 {
			out.Waits = append(out.Waits, JSONWait{After: st.ID, Kind: "stage", Duration: st.AfterWait.String(), Cluster: ""})
		}
		for gi := range st.Groups {
			g := &st.Groups[gi]
			jg := JSONGroup{ID: g.ID, Name: g.Name, Estimate: g.Estimate.String(), Clusters: []string{}}
			for ci := range g.Clusters {
				c := &g.Clusters[ci]
				jg.Clusters = append(jg.Clusters, c.Name)
				out.Clusters[c.Name] = clusterJSON(st, g, c, &out)
			}
			js.Groups = append(js.Groups, jg)
		}
		out.Stages = append(out.Stages, js)
	}

	// Servers keyed by address, placed in the run; each cluster's in run
	// order.
	entries := Entries(p)
	inCluster := map[string][]string{}
	for _, e := range entries {
		if e.Scope != nil {
			out.RunOrder = append(out.RunOrder, e.Server.Address)
			inCluster[e.Server.Cluster] = append(inCluster[e.Server.Cluster], e.Server.Address)
		}
	}
	for name, c := range out.Clusters {
		c.Servers = append(c.Servers, inCluster[name]...)
		out.Clusters[name] = c
	}
	out.Images = imagesJSON(entries)
	return out, entries
}

// placed is the server of entry i of the run order, placed in the run.
func placed(e Entry, i int) JSONServer {
	js := serverJSON(e.Server)
	js.Order = -1
	if e.Scope != nil {
		js.Stage, js.Group, js.Phase, js.PhaseKind, js.Scope = e.Stage.ID, e.Group.ID, e.Phase.ID, string(e.Phase.Kind), e.Scope.ID
		js.Order = i
	}
	return js
}

func clusterJSON(st *plan.Stage, g *plan.Group, c *plan.Cluster, out *PlanJSON) JSONCluster {
	jc := JSONCluster{
		ID: c.ID, Name: c.Name, Stage: st.ID, Group: g.ID, WindowPriority: c.WindowPriority,
		Windows: orEmpty(slices.Clone(c.Windows)), Estimate: c.Estimate.String(),
		Parallelism: map[string]int{}, Quorum: c.Quorum, Phases: []JSONPhase{}, Servers: []string{},
		Settings: JSONSettings(c.Settings),
	}
	s := &jc.Settings
	s.DrainHook, s.UncordonHook, s.Remediation = orEmpty(s.DrainHook), orEmpty(s.UncordonHook), map[string][]string{}
	if r := c.Release; r != nil {
		jr := JSONRelease(*r)
		jc.Release = &jr
	}
	for role, steps := range c.Settings.Remediation {
		s.Remediation[role] = orEmpty(steps)
	}
	for pi := range c.Phases {
		ph := &c.Phases[pi]
		name := ph.Name
		if name == "" {
			name = string(ph.Kind)
		}
		jp := JSONPhase{ID: ph.ID, Kind: string(ph.Kind), Name: name, Estimate: ph.Estimate.String(), Scopes: []JSONScope{}}
		for sci := range ph.Scopes {
			sc := &ph.Scopes[sci]
			jp.Parallelism = max(jp.Parallelism, sc.MaxUnavailable)
			js := JSONScope(*sc)
			js.Servers = orEmpty(js.Servers)
			jp.Scopes = append(jp.Scopes, js)
			if sc.WaitAfter > 0 {
				out.Waits = append(out.Waits, JSONWait{After: sc.ID, Kind: "scope", Duration: sc.WaitAfter.String(), Cluster: c.Name})
			}
			if sc.PauseAfter {
				out.Pauses = append(out.Pauses, JSONPause{After: sc.ID, Cluster: c.Name})
			}
		}
		jc.Parallelism[name] = max(jc.Parallelism[name], jp.Parallelism)
		jc.Phases = append(jc.Phases, jp)
	}
	return jc
}

func serverJSON(s *plan.Server) JSONServer {
	js := JSONServer{
		Address: s.Address, Name: s.Name, Cluster: s.Cluster, Rack: s.Rack, Role: s.Role, Kind: s.Kind, NodeName: s.NodeName,
		BMC: s.BMC, System: s.System, Provider: s.Provider, Labels: map[string]string{},
		Action: string(s.Action), Reason: s.Reason, Outcome: s.Outcome, Auth: s.Auth,
		Health: s.Observed.Health, Power: s.Observed.PowerState,
		Identity: JSONIdentity(s.Identity), Inventory: []JSONComponent{},
		Problems: orEmpty(slices.Clone(s.Problems)), Notes: orEmpty(slices.Clone(s.Notes)),
		Changes: []JSONChange{}, Steps: []JSONStep{}, Reboots: s.Reboots, Estimate: s.Estimate.String(),
		Windows: orEmpty(slices.Clone(s.Windows)),
	}
	if js.Outcome == "" { // plans before format 1.3, and servers plan did not read
		switch {
		case s.Observed.Reachable:
			js.Outcome = providers.OutcomeObserved
		case plan.NotObserved(s.Reason):
			js.Outcome = s.Reason
		}
	}
	js.Observed = js.Outcome == providers.OutcomeObserved
	js.InventoryOthers, js.UpgradeWhenCritical = s.Observed.Others, s.UpgradeWhenCritical
	maps.Copy(js.Labels, s.Labels)
	for _, c := range s.Observed.Components {
		jc := JSONComponent(c)
		if jc.State == "" {
			jc.State = providers.StateActive
		}
		js.Inventory = append(js.Inventory, jc)
	}
	for _, c := range s.Changes {
		js.Changes = append(js.Changes, JSONChange(c))
	}
	for _, st := range s.Steps {
		count := 0
		if st.Match != nil {
			count = st.Match.Count
		}
		js.Steps = append(js.Steps, JSONStep{
			Index: st.Index, Kind: string(st.Kind), Component: st.Component, Version: st.Target.Version, Image: st.Image,
			SHA256: st.SHA256, Method: st.Method, ApplyTime: st.ApplyTime, ApplyTimeFrom: st.ApplyTimeFrom, TransferProtocol: st.TransferProtocol,
			Targets: orEmpty(slices.Clone(st.Targets)), Members: orEmpty(slices.Clone(st.Members)), Count: count, ResetType: st.ResetType, Shared: st.Shared,
			After: orEmpty(slices.Clone(st.After)), Timeout: st.Timeout.String(), Estimate: st.Estimate.String(),
			EstimateSource: estimateSource(&st), Learned: learnedJSON(st.Learned),
		})
	}
	return js
}

// imagesJSON lists every image the plan delivers (update and reimage
// steps), in run order of first use, with the servers each goes to.
func imagesJSON(entries []Entry) []JSONImage {
	servers := make([]*plan.Server, len(entries))
	for i, e := range entries {
		servers[i] = e.Server
	}
	out := []JSONImage{}
	for _, im := range images(servers) {
		out = append(out, JSONImage{Component: im.component, Version: im.version, URI: im.url, SHA256: im.sha, Methods: orEmpty(im.methods), Servers: im.servers})
	}
	return out
}
