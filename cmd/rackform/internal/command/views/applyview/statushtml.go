package applyview

import (
	"io"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
)

// StatusColors are the status page's cell colours by run state.
var StatusColors = map[string]string{
	"not-started": "rgb(209, 213, 219)",
	"running":     "rgb(37, 99, 235)",
	"done":        "rgb(22, 163, 74)",
	"failed":      "rgb(220, 38, 38)",
	"waiting":     "rgb(234, 179, 8)",
	"skipped":     "rgb(107, 114, 128)",
	"stopped":     "rgb(234, 88, 12)",
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
