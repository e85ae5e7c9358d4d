package planview

import (
	"fmt"
	"io"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/uijson"
	"github.com/rackform/rackform/planner/plan"
)

// Stream writes the JSON-lines form of plan: the machine-readable UI
// (package uijson, docs/json.md) that `apply -json` shares.
type Stream struct {
	w *uijson.Writer
}

// NewStream returns a stream writing to w, stamping lines with time.Now.
func NewStream(w io.Writer) *Stream { return &Stream{w: uijson.New(w)} }

// Version starts the stream.
func (s *Stream) Version(rackform string) error { return s.w.Version(rackform) }

// Diagnostics writes one line per diagnostic, in validate -json's shape.
func (s *Stream) Diagnostics(diags []*views.Diagnostic) error {
	for _, d := range diags {
		level := uijson.LevelError
		if d.Severity == views.SeverityWarning {
			level = uijson.LevelWarn
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if err := s.w.Write(uijson.TypeDiagnostic, level, msg, time.Time{}, struct {
			Diagnostic *views.Diagnostic `json:"diagnostic"`
		}{d}); err != nil {
			return err
		}
	}
	return nil
}

// PlannedChange is one server's line. Every property is present (an
// empty string or list when there is nothing to say), so a consumer never
// has to tell "absent" from "none"; but for Kind, which only a device
// has, so a server's line reads as it always did.
type PlannedChange struct {
	Address string `json:"address"`
	// Kind is a device's kind (switch_tray, power_shelf…; plan format
	// 1.6), omitted for a server.
	Kind    string            `json:"kind,omitempty"`
	Action  string            `json:"action"`
	Reason  string            `json:"reason"`
	Cluster string            `json:"cluster"`
	Rack    string            `json:"rack"`
	Role    string            `json:"role"`
	Labels  map[string]string `json:"labels"`
	// Stage, Group, Phase and Scope are the IDs of where the server sits
	// in the run tree ("" for a server in none).
	Stage    string        `json:"stage"`
	Group    string        `json:"group"`
	Phase    string        `json:"phase"`
	Scope    string        `json:"scope"`
	Changes  []plan.Change `json:"changes"`
	Reboots  int           `json:"reboots"`
	Estimate plan.Duration `json:"estimate"`
	// Outcome, Problems and Notes are the plan's: how observing went, why
	// a server was not observed or is held back, and findings that change
	// nothing.
	Outcome  string   `json:"outcome"`
	Problems []string `json:"problems"`
	Notes    []string `json:"notes"`
}

// Plan writes a planned_change line per server in run order, then the
// change_summary.
func (s *Stream) Plan(p *plan.Plan) error {
	p = asApplied(p)
	for _, e := range Entries(p) {
		pc := PlannedChange{
			Address: e.Server.Address, Kind: e.Server.Kind, Action: string(e.Server.Action), Reason: e.Server.Reason,
			Cluster: e.Server.Cluster, Rack: e.Server.Rack, Role: e.Server.Role,
			Changes: e.Server.Changes, Reboots: e.Server.Reboots, Estimate: e.Server.Estimate,
			Outcome: e.Server.Outcome, Problems: orEmpty(e.Server.Problems), Notes: orEmpty(e.Server.Notes),
			Labels: e.Server.Labels,
		}
		if pc.Labels == nil {
			pc.Labels = map[string]string{}
		}
		pc.Changes = orEmpty(pc.Changes)
		if e.Scope != nil {
			pc.Stage, pc.Group, pc.Phase, pc.Scope = e.Stage.ID, e.Group.ID, e.Phase.ID, e.Scope.ID
		}
		if err := s.w.Write(uijson.TypePlannedChange, level(e.Server), e.Server.Address+": "+ServerDetail(e.Server), time.Time{}, struct {
			Change PlannedChange `json:"change"`
		}{pc}); err != nil {
			return err
		}
	}
	lvl := uijson.LevelInfo
	if p.Summary.NotObserved > 0 || p.Summary.HeldBack > 0 {
		lvl = uijson.LevelWarn
	}
	return s.w.Write(uijson.TypeChangeSummary, lvl, "Plan: "+SummaryLine(p), time.Time{}, struct {
		Changes planSummary `json:"changes"`
	}{planSummary{Operation: "plan", JSONSummary: summaryJSON(p)}})
}

// planSummary is change_summary's payload: the plan's summary, with the
// operation named as Terraform's change_summary does.
type planSummary struct {
	Operation string `json:"operation"`
	JSONSummary
}

// level is "warn" for a server not observed or held back (it is not at
// target as far as anyone knows) and for one upgraded although Critical.
func level(s *plan.Server) string {
	if plan.NotObserved(s.Reason) || s.Reason == plan.ReasonHeldBack || s.Reason == plan.ReasonUnhealthy || s.UpgradeWhenCritical != nil {
		return uijson.LevelWarn
	}
	return uijson.LevelInfo
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
	return s.w.Write(uijson.TypePlanFile, uijson.LevelInfo, msg, time.Time{}, struct {
		Path     string `json:"path,omitempty"`
		SHA256   string `json:"sha256"`
		SignedBy string `json:"signed_by,omitempty"`
	}{path, sha, signedBy})
}
