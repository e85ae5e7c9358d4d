package planview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
)

// A page stays readable however large the plan: past a size the grid
// shows each rack, then each cluster, as counts of its servers by class
// instead of a cell per server, and the timeline draws clusters without
// their racks and batches, as rackform rehearse -detail does the text;
// the page says so.
const (
	// HTMLServerCells is the most servers the grid draws a cell each.
	HTMLServerCells = 2000
	// HTMLRackCells is the most racks the grid draws as counts each;
	// past it, each cluster is one block of counts.
	HTMLRackCells = 500
	// HTMLScopeRows is the most racks, batches and control planes the
	// timeline draws a row each; past it, only those that held the run
	// (a pause, a breach) or are not simply planned, done or waiting
	// their turn (running, failed, stopped, waiting) keep theirs.
	HTMLScopeRows = 500
)

// summariseGrid folds the grid's cells into counts when there are more
// than HTMLServerCells servers (a rack's counts) or more than
// HTMLRackCells racks too (a cluster's), and returns the sentence saying
// so ("" when every server keeps its cell). legend orders the counts.
func summariseGrid(clusters []*htmlCluster, servers, racks int, legend []string) string {
	if servers <= HTMLServerCells {
		return ""
	}
	counts := func(name string, rs []*htmlRack) []htmlCell {
		n := map[string]int{}
		total := 0
		for _, r := range rs {
			for _, c := range r.Cells {
				n[c.Class]++
				total++
			}
		}
		var out []htmlCell
		var parts []string
		for _, class := range classOrder(n, legend) {
			out = append(out, htmlCell{Name: fmt.Sprintf("%d %s", n[class], class), Class: class, Count: n[class]})
			parts = append(parts, fmt.Sprintf("%d %s", n[class], class))
		}
		title := fmt.Sprintf("%s: %s: %s", name, views.Plural(total, "server"), strings.Join(parts, ", "))
		for i := range out {
			out[i].Title = title
		}
		return out
	}
	if racks <= HTMLRackCells {
		for _, c := range clusters {
			for _, r := range c.Racks {
				r.Cells = counts("rack "+r.Name, []*htmlRack{r})
			}
		}
		return fmt.Sprintf("%s: each rack is shown as counts of its servers (a cell per server up to %d servers; rackform show lists every server).",
			views.Plural(servers, "server"), HTMLServerCells)
	}
	for _, c := range clusters {
		c.Racks = []*htmlRack{{Name: views.Plural(len(c.Racks), "rack"), Cells: counts("cluster "+c.Name, c.Racks)}}
	}
	return fmt.Sprintf("%s in %s: each cluster is shown as counts of its servers (a cell per server up to %d servers, counts per rack up to %d racks; rackform show lists every server).",
		views.Plural(servers, "server"), views.Plural(racks, "rack"), HTMLServerCells, HTMLRackCells)
}

// classOrder is the classes counted in n, the legend's first, then any
// other by name.
func classOrder(n map[string]int, legend []string) []string {
	var out []string
	for _, c := range legend {
		if n[c] > 0 {
			out = append(out, c)
		}
	}
	var rest []string
	for c := range n {
		if !slices.Contains(legend, c) {
			rest = append(rest, c)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// summariseTimeline leaves out the rows of racks, batches and control
// planes when there are more than HTMLScopeRows, but for those a reader
// must see (a pause or a breach on them, or a run's state other than
// planned, done or not started), and adds a note saying so. state is the
// run's state of a bar's ID (nil: none).
func summariseTimeline(tl Timeline, state func(id string) string) Timeline {
	scopes := 0
	for _, r := range tl.Rows {
		if r.Kind == "scope" {
			scopes++
		}
	}
	if scopes <= HTMLScopeRows {
		return tl
	}
	keep := func(r TimelineRow) bool {
		for _, b := range r.Bars {
			if b.Kind == "pause" || b.Kind == "breach" {
				return true
			}
			if state != nil && b.ID != "" && !b.Rehearsed {
				switch state(b.ID) {
				case "", "planned", "done", "not-started":
				default:
					return true
				}
			}
		}
		return false
	}
	rows := make([]TimelineRow, 0, len(tl.Rows)-scopes)
	kept := 0
	for _, r := range tl.Rows {
		if r.Kind == "scope" {
			if !keep(r) {
				continue
			}
			kept++
		}
		rows = append(rows, r)
	}
	tl.Rows = rows
	note := fmt.Sprintf("%d racks, batches and control planes: each cluster's bar spans its own, drawn only up to %d (rackform rehearse -detail racks lists them)", scopes, HTMLScopeRows)
	if kept > 0 {
		note += fmt.Sprintf("; of them, the %d that paused, breached, or are running, failed, stopped or waiting are drawn", kept)
	}
	tl.Notes = append(slices.Clone(tl.Notes), note+".")
	return tl
}
