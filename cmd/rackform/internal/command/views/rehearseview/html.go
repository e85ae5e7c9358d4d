package rehearseview

import (
	"fmt"
	"io"
	"strings"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// WriteHTML renders a rehearsal as the plan page does (`rackform rehearse
// -format=html`): one self-contained page whose rack grid is coloured by
// how each server ended in the rehearsal (as the status page colours a
// run), with the rehearsed timeline on the calendar — a scenario's
// faults included: the breached threshold with apply's numbers, the pause
// it made, what the faults cost the schedule.
func WriteHTML(w io.Writer, p *plan.Plan, s *schedule.Schedule) error {
	servers, bars := map[string]schedule.Bar{}, map[string]schedule.Bar{}
	for _, b := range s.Bars {
		if b.Kind == schedule.KindServer {
			servers[b.ID] = b
		}
		bars[b.ID] = b
	}
	cells := applyview.StateCells(p, func(address string) (executor.State, bool) {
		b, ok := servers[address]
		return executor.State{Name: executor.StateName(b.State), Reason: b.Reason, Message: b.Message}, ok
	}, "not reached", " (rehearsed)")
	cells.Title = "rackform rehearse (ended " + strings.ReplaceAll(s.Outcome.Status, "_", " ")
	if s.Outcome.Reason != "" {
		cells.Title += ": " + strings.ReplaceAll(s.Outcome.Reason, "_", " ")
	}
	cells.Title += ")"
	cells.Headline = "rehearsed: " + cells.Headline
	// What did not complete takes its state's colour (a failed or paused
	// rack stands out); the rest is drawn as planned.
	cells.BarState = func(id string) string {
		if b, ok := bars[id]; ok && b.State != string(executor.Completed) {
			return applyview.StatusClass(executor.StateName(b.State))
		}
		return ""
	}
	cells.KeepBarKeys = true
	for _, m := range s.Marks {
		if m.Kind == schedule.MarkThreshold && m.Result != schedule.ResultMet {
			cells.Notices = append(cells.Notices, fmt.Sprintf("Rehearsed, %s breaches its threshold at %s: %s.", scopeName(s, m.ID),
				m.At.UTC().Format("Mon 02 Jan 15:04 UTC"), strings.TrimPrefix(m.Message, "threshold breached: ")))
		}
	}
	cells.Rehearse(p, s)
	if s.Scenario != "" {
		cells.Notices = append(cells.Notices, fmt.Sprintf("Faults from %s (seed %d); apply would exit %d here.", s.Scenario, s.Seed, s.Outcome.ExitCode))
	}
	return planview.WriteHTMLCells(w, p, s.PlanSHA256, cells)
}

// scopeName is a scope's name on the schedule ("east/e02"), its ID when
// the schedule has no bar for it.
func scopeName(s *schedule.Schedule, id string) string {
	for _, b := range s.Bars {
		if b.ID == id {
			return b.Name
		}
	}
	return id
}
