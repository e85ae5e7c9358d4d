package planview

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
)

// StreamVersion is the version of the `plan -json` stream. Consumers
// accept the same major; a minor adds fields or message types only.
const StreamVersion = "1.1"

// Message types of the stream, one JSON object per line. Every object has
// "type", "@level" and "@message" (a line for people), like Terraform's
// machine-readable UI.
const (
	TypeVersion       = "version"
	TypeDiagnostic    = "diagnostic"
	TypePlannedChange = "planned_change"
	TypeChangeSummary = "change_summary"
	TypePlanFile      = "plan_file"
)

// Stream writes the JSON-lines form of plan.
type Stream struct {
	enc *json.Encoder
}

// NewStream returns a stream writing to w.
func NewStream(w io.Writer) *Stream {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Stream{enc: enc}
}

type header struct {
	Type    string `json:"type"`
	Level   string `json:"@level"`
	Message string `json:"@message"`
}

// Version starts the stream.
func (s *Stream) Version(rackform string) error {
	return s.enc.Encode(struct {
		header
		UI       string `json:"ui"`
		Rackform string `json:"rackform"`
	}{header{TypeVersion, "info", "rackform " + rackform}, StreamVersion, rackform})
}

// Diagnostics writes one line per diagnostic, in validate -json's shape.
func (s *Stream) Diagnostics(diags []*views.Diagnostic) error {
	for _, d := range diags {
		level := "error"
		if d.Severity == views.SeverityWarning {
			level = "warn"
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if err := s.enc.Encode(struct {
			header
			Diagnostic *views.Diagnostic `json:"diagnostic"`
		}{header{TypeDiagnostic, level, msg}, d}); err != nil {
			return err
		}
	}
	return nil
}

// PlannedChange is one server's line.
type PlannedChange struct {
	Address string `json:"address"`
	Action  string `json:"action"`
	Reason  string `json:"reason,omitempty"`
	Cluster string `json:"cluster"`
	Rack    string `json:"rack"`
	Role    string `json:"role"`
	// Stage, Group, Phase and Scope are the IDs of where the server sits
	// in the run tree.
	Stage    string        `json:"stage,omitempty"`
	Group    string        `json:"group,omitempty"`
	Phase    string        `json:"phase,omitempty"`
	Scope    string        `json:"scope,omitempty"`
	Changes  []plan.Change `json:"changes,omitempty"`
	Reboots  int           `json:"reboots"`
	Estimate plan.Duration `json:"estimate"`
	// Outcome, Problems and Notes are the plan's (format 1.3): how
	// observing went, why a server was not observed or is held back,
	// and findings that change nothing. (Stream 1.1.)
	Outcome  string   `json:"outcome,omitempty"`
	Problems []string `json:"problems,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// Plan writes a planned_change line per server in run order, then the
// change_summary.
func (s *Stream) Plan(p *plan.Plan) error {
	for _, e := range Entries(p) {
		pc := PlannedChange{
			Address: e.Server.Address, Action: string(e.Server.Action), Reason: e.Server.Reason,
			Cluster: e.Server.Cluster, Rack: e.Server.Rack, Role: e.Server.Role,
			Changes: e.Server.Changes, Reboots: e.Server.Reboots, Estimate: e.Server.Estimate,
			Outcome: e.Server.Outcome, Problems: e.Server.Problems, Notes: e.Server.Notes,
		}
		if e.Scope != nil {
			pc.Stage, pc.Group, pc.Phase, pc.Scope = e.Stage.ID, e.Group.ID, e.Phase.ID, e.Scope.ID
		}
		if err := s.enc.Encode(struct {
			header
			Change PlannedChange `json:"change"`
		}{header{TypePlannedChange, level(e.Server), e.Server.Address + ": " + ServerDetail(e.Server)}, pc}); err != nil {
			return err
		}
	}
	lvl := "info"
	if p.Summary.NotObserved > 0 || p.Summary.HeldBack > 0 {
		lvl = "warn"
	}
	return s.enc.Encode(struct {
		header
		Changes plan.Summary `json:"changes"`
	}{header{TypeChangeSummary, lvl, "Plan: " + SummaryLine(p.Summary)}, p.Summary})
}

// level is "warn" for a server not observed or held back: it is not at
// target as far as anyone knows.
func level(s *plan.Server) string {
	if plan.NotObserved(s.Reason) || s.Reason == plan.ReasonHeldBack || s.Reason == plan.ReasonUnhealthy {
		return "warn"
	}
	return "info"
}

// PlanFile reports the plan's identity, who signed it ("" when unsigned)
// and, when it was saved, its path.
func (s *Stream) PlanFile(path, sha, signedBy string) error {
	msg := fmt.Sprintf("Saved the plan to %s (SHA-256 %s)", path, sha)
	if path == "" {
		msg = fmt.Sprintf("The plan was not saved (SHA-256 %s)", sha)
	}
	if signedBy != "" {
		msg += ", signed by " + signedBy
	}
	return s.enc.Encode(struct {
		header
		Path     string `json:"path,omitempty"`
		SHA256   string `json:"sha256"`
		SignedBy string `json:"signed_by,omitempty"`
	}{header{TypePlanFile, "info", msg}, path, sha, signedBy})
}
