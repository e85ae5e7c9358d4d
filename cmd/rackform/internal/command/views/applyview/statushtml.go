package applyview

import (
	"io"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
)

// StatusColors are the status page's cell colours by run state: white
// text on the dark backgrounds, dark text on the light ones (not started,
// waiting), every pair at least 4.5:1 in contrast.
var StatusColors = map[string]planview.CellColor{
	"not-started": {Background: "rgb(229, 231, 235)", Text: "rgb(17, 24, 39)"},
	"running":     {Background: "rgb(29, 78, 216)", Text: "rgb(255, 255, 255)"},
	"done":        {Background: "rgb(21, 128, 61)", Text: "rgb(255, 255, 255)"},
	"failed":      {Background: "rgb(185, 28, 28)", Text: "rgb(255, 255, 255)"},
	"waiting":     {Background: "rgb(253, 230, 138)", Text: "rgb(17, 24, 39)"},
	"skipped":     {Background: "rgb(75, 85, 99)", Text: "rgb(255, 255, 255)"},
	"stopped":     {Background: "rgb(194, 65, 12)", Text: "rgb(255, 255, 255)"},
}

// StatusClass is the status page's class for a server state.
func StatusClass(s executor.StateName) string {
	switch s {
	case executor.Running, executor.Stopping:
		return "running"
	case executor.Completed:
		return "done"
	case executor.Failed:
		return "failed"
	case executor.Paused, executor.Pending:
		return "waiting"
	case executor.Skipped:
		return "skipped"
	case executor.Stopped:
		return "stopped"
	}
	return "not-started"
}

// WriteStatusHTML renders the plan's rack grid coloured by the live state
// of its run (`rackform status -format=html`): one self-contained page.
func WriteStatusHTML(w io.Writer, p *plan.Plan, st *executor.Status) error {
	states := map[string]executor.State{}
	var walk func(n *executor.Node)
	walk = func(n *executor.Node) {
		if n == nil {
			return
		}
		if n.Kind == executor.KindServer {
			states[n.ID] = n.State
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(st.Run)
	state := func(s *plan.Server) executor.State {
		if x, ok := states[s.Address]; ok {
			return x
		}
		if s.Action != plan.ActionUpgrade {
			return executor.State{Name: executor.Skipped, Reason: s.Reason}
		}
		return executor.State{Name: executor.NotStarted}
	}
	run := st.Run.State
	run.Message = ""
	return planview.WriteHTMLCells(w, p, st.PlanSHA256, planview.Cells{
		Title:  "rackform status (run " + HumanState(run) + ")",
		Class:  func(s *plan.Server) string { return StatusClass(state(s).Name) },
		Detail: func(s *plan.Server) string { x := state(s); return HumanState(x) + messageOf(x) },
		Colors: StatusColors,
		Legend: []string{"not-started", "running", "waiting", "done", "failed", "skipped", "stopped"},
	})
}

func messageOf(s executor.State) string {
	if s.Message == "" {
		return ""
	}
	return "; " + s.Message
}
