package applyview

import (
	"fmt"
	"io"
	"strings"
	"time"

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
	if c, ok := statusClasses[s]; ok {
		return c
	}
	return "not-started"
}

var statusClasses = map[executor.StateName]string{
	executor.Running: "running", executor.Stopping: "running", executor.Completed: "done", executor.Failed: "failed",
	executor.Paused: "waiting", executor.Pending: "waiting", executor.Skipped: "skipped", executor.Stopped: "stopped",
}

// WriteStatusHTML renders the plan's rack grid and timeline coloured by the
// live state of its run (`rackform status -format=html`): one
// self-contained page. Its headline says what happened to the servers, and
// a cluster waiting for its maintenance window says when the window opens.
// tl is the timeline to draw: what happened and the rehearsed remainder
// (planview.Timeline.SplitAt), its bars up to now coloured by the run's
// state; nil draws the plan's estimate coloured by the run's state.
func WriteStatusHTML(w io.Writer, p *plan.Plan, st *executor.Status, tl *planview.Timeline) error {
	nodes := map[string]*executor.Node{}
	for n := range Nodes(st.Run) {
		nodes[n.ID] = n
	}
	cells := StateCells(p, func(address string) (executor.State, bool) {
		n, ok := nodes[address]
		if !ok || n.Kind != executor.KindServer {
			return executor.State{}, false
		}
		return n.State, true
	}, "not started", "")
	run := st.Run.State
	run.Message = ""
	notes := map[string]string{}
	var notices []string
	for _, e := range planview.Clusters(p) {
		c := e.Cluster
		if n := nodes[c.ID]; n != nil {
			if note := waitingNote(c, n.State); note != "" {
				notes[c.Name] = note
				notices = append(notices, "Cluster "+c.Name+" is "+note+".")
			}
		}
	}
	cells.Title = "rackform status (run " + HumanState(run) + ")"
	cells.Notices = notices
	cells.ClusterNote = func(name string) string { return notes[name] }
	cells.BarState = func(id string) string {
		if n := nodes[id]; n != nil {
			return StatusClass(n.State.Name)
		}
		return ""
	}
	cells.TimelineTitle = "Timeline (estimated, from plan time; bars coloured by the run's state)"
	cells.Timeline = tl
	return planview.WriteHTMLCells(w, p, st.PlanSHA256, cells)
}

// StateCells colour a plan page's servers by their state: the one known
// (to a run, or a rehearsal), else the plan's (skipped, or not started:
// notStarted in the headline). detail ends each server's hover text.
func StateCells(p *plan.Plan, known func(address string) (executor.State, bool), notStarted, detail string) planview.Cells {
	state := func(s *plan.Server) executor.State {
		if st, ok := known(s.Address); ok {
			return st
		}
		if s.Action != plan.ActionUpgrade {
			return executor.State{Name: executor.Skipped, Reason: s.Reason}
		}
		return executor.State{Name: executor.NotStarted}
	}
	return planview.Cells{
		Headline: Headline(p, state, notStarted),
		Class:    func(s *plan.Server) string { return StatusClass(state(s).Name) },
		Detail:   func(s *plan.Server) string { x := state(s); return HumanState(x) + messageOf(x) + detail },
		Colors:   StatusColors,
		Legend:   []string{"not-started", "running", "waiting", "done", "failed", "skipped", "stopped"},
	}
}

// Headline says what happened to the plan's servers: "6 servers
// upgraded, 1 failed, 3 not started; 2 left alone by the plan".
// notStarted is the word for servers not reached yet ("not started" on
// the status page, "not reached" in a rehearsal).
func Headline(p *plan.Plan, state func(*plan.Server) executor.State, notStarted string) string {
	order := []string{"done", "failed", "running", "waiting", "stopped", "not-started", "skipped"}
	words := map[string]string{"done": "upgraded", "failed": "failed", "running": "in progress", "waiting": "waiting",
		"stopped": "stopped", "not-started": notStarted, "skipped": "skipped"}
	counts, devices := map[string]int{}, map[string]int{}
	planned, left := 0, 0
	for i := range p.Servers {
		s := &p.Servers[i]
		if s.Action != plan.ActionUpgrade {
			left++
			continue
		}
		planned++
		counts[StatusClass(state(s).Name)]++
		if s.IsDevice() {
			devices[StatusClass(state(s).Name)]++
		}
	}
	var parts []string
	for _, c := range order {
		if n := counts[c]; n > 0 {
			if len(parts) == 0 {
				// Devices counted apart: "5 servers and 2 devices upgraded".
				parts = append(parts, fmt.Sprintf("%s %s", planview.Members(n-devices[c], devices[c]), words[c]))
			} else {
				parts = append(parts, fmt.Sprintf("%d %s", n, words[c]))
			}
		}
	}
	out := strings.Join(parts, ", ")
	if planned == 0 {
		out = "no server to upgrade"
	}
	if left > 0 {
		out += fmt.Sprintf("; %d left alone by the plan", left)
	}
	return out
}

// waitingNote says what a cluster waits for and, for its maintenance
// window, when the window opens and how long it stays open; "" when the
// cluster is not waiting.
func waitingNote(c *plan.Cluster, st executor.State) string {
	if st.Name != executor.Pending {
		return ""
	}
	if st.Reason != executor.ReasonWindow {
		if st.Message != "" {
			return "waiting: " + st.Message
		}
		return HumanState(st)
	}
	if st.Until == nil {
		return "waiting for its maintenance window, which does not open again before the plan expires"
	}
	note := "waiting for its maintenance window, which opens " + st.Until.UTC().Format("Mon 2006-01-02 15:04 UTC")
	for _, iv := range c.Windows {
		if !iv.End.After(*st.Until) || iv.Start.After(*st.Until) {
			continue
		}
		note += fmt.Sprintf(" (open until %s, %s)", iv.End.UTC().Format("Mon 2006-01-02 15:04 UTC"), windowLength(iv.End.Sub(*st.Until)))
		break
	}
	return note
}

func windowLength(d time.Duration) string {
	return strings.TrimPrefix(human(d), "~")
}

func messageOf(s executor.State) string {
	if s.Message == "" {
		return ""
	}
	return "; " + s.Message
}
