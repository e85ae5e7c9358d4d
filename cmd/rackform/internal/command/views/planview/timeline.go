package planview

import (
	"fmt"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// A timeline is data first: which rows there are, which bars each holds
// and where on a time axis, with no drawing in it. PlanTimeline lays the
// plan's estimates out on it; another schedule (a rehearsal of the run,
// say) can make a Timeline of the same shape with its own times, and the
// same drawing (timelinehtml.go) shows it.

// Timeline is rows of bars on a time axis from Start.
type Timeline struct {
	// Start is the axis's zero (plan time for PlanTimeline).
	Start time.Time
	// Length is where the last bar ends, from Start.
	Length time.Duration
	Rows   []TimelineRow
	// Calendar labels the axis with times on the calendar (UTC, at round
	// times) rather than offsets from Start: a rehearsed schedule is on
	// the calendar, an estimate is not.
	Calendar bool
	// Now, when set, is the moment the run is at (rackform status):
	// what is left of it happened, what is right of it is rehearsed.
	Now *time.Duration
	// Title heads the timeline; Notes are sentences under it (the total
	// against the plan's estimate, the clusters that miss their window,
	// what the timeline assumed or could not do).
	Title string
	Notes []string
}

// TimelineRow is one labelled row: a stage, a group, a cluster, a
// cluster's maintenance window, a scope (rack, batch, control plane) with
// its wait and pause, or an approval gate.
type TimelineRow struct {
	// ID is the run-tree address the row is about (a stage's, cluster's,
	// scope's or gate's ID; a window row has its cluster's ID + ".window").
	ID string
	// Kind is "stage", "group", "cluster", "window", "scope" or "gate".
	Kind string
	// Label says what the row is, with its estimate: the only text the
	// row shows (bars carry none, so no label can cover another).
	Label string
	// Depth is how far the row nests under its stage (0 for a stage).
	Depth int
	Bars  []TimelineBar
}

// TimelineBar is one interval (or one instant, for a gate or a pause) of
// a row.
type TimelineBar struct {
	// Kind is "stage", "group", "cluster", "scope", "wait", "window",
	// "gate" or "pause"; a rehearsed timeline adds "window-wait" (a
	// cluster waiting for its maintenance window to open), "overrun" (a
	// cluster's work past its window's close) and "breach" (a threshold
	// breached: an instant).
	Kind string
	// ID is the run-tree node the bar stands for (a scope's wait is the
	// scope's ID + ".wait", as the executor names it), so a run's state
	// can colour it; "" for a window.
	ID string
	// From and To are offsets from the timeline's Start; To == From for
	// a gate or a pause.
	From, To time.Duration
	// Title says what the bar is, for hovering.
	Title string
	// Rehearsed: the bar is what a rehearsal expects, not what happened
	// (the remainder of a run on the status page); it is never coloured
	// by the run's state.
	Rehearsed bool
}

// PlanTimeline lays p out on its estimated time axis from plan time:
// stages in turn; the groups of a stage side by side in time; the clusters
// of a group in turn, each scope after the previous one with its wait;
// gates at their stage's edge; windows as their own rows.
func PlanTimeline(p *plan.Plan) Timeline {
	tl := Timeline{Start: p.CreatedAt}
	row := func(r TimelineRow) *TimelineRow {
		tl.Rows = append(tl.Rows, r)
		return &tl.Rows[len(tl.Rows)-1]
	}
	extend := func(t time.Duration) { tl.Length = max(tl.Length, t) }
	var at time.Duration
	gates := func(st *plan.Stage, when string) {
		for _, g := range st.Gates {
			if (g.When == "before") == (when == "before") {
				row(TimelineRow{ID: g.ID, Kind: "gate", Depth: 1, Label: fmt.Sprintf("approval gate %s, %s stage %s", g.Name, when, st.Name),
					Bars: []TimelineBar{{Kind: "gate", ID: g.ID, From: at, To: at, Title: "approval gate " + g.ID + " " + when + " stage " + st.Name + ": rackform approve " + g.ID}}})
			}
		}
	}
	for si := range p.Run.Stages {
		st := &p.Run.Stages[si]
		gates(st, "before")
		stageRow := len(tl.Rows)
		row(TimelineRow{ID: st.ID, Kind: "stage"})
		start, longest := at, time.Duration(0)
		for gi := range st.Groups {
			g := &st.Groups[gi]
			depth := 1
			groupRow := -1
			if len(st.Groups) > 1 {
				groupRow = len(tl.Rows)
				row(TimelineRow{ID: g.ID, Kind: "group", Depth: 1})
				depth = 2
			}
			gt := start
			for ci := range g.Clusters {
				c := &g.Clusters[ci]
				est := time.Duration(c.Estimate)
				row(TimelineRow{ID: c.ID, Kind: "cluster", Depth: depth, Label: fmt.Sprintf("cluster %s ~%s, %s", c.Name, Duration(c.Estimate), windowText(c)),
					Bars: []TimelineBar{{Kind: "cluster", ID: c.ID, From: gt, To: gt + est, Title: fmt.Sprintf("cluster %s (stage %s, group %s): ~%s", c.Name, st.Name, g.Name, Duration(c.Estimate))}}})
				if len(c.Windows) > 0 {
					w := row(TimelineRow{ID: c.ID + ".window", Kind: "window", Depth: depth + 1, Label: "maintenance window of " + c.Name})
					for i, iv := range c.Windows {
						from, to := max(iv.Start.Sub(p.CreatedAt), 0), iv.End.Sub(p.CreatedAt)
						if to <= from {
							continue
						}
						w.Bars = append(w.Bars, TimelineBar{Kind: "window", From: from, To: to, Title: "maintenance window of " + c.Name + ": " + timeText(iv.Start) + " – " + timeText(iv.End)})
						if i == 0 {
							// The next opening is always on the axis;
							// later ones only as far as the run goes.
							extend(to)
						}
					}
				}
				ct := gt
				for pi := range c.Phases {
					ph := &c.Phases[pi]
					for sci := range ph.Scopes {
						sc := &ph.Scopes[sci]
						work, wait := time.Duration(sc.Estimate)-time.Duration(sc.WaitAfter), time.Duration(sc.WaitAfter)
						if work < 0 {
							work, wait = time.Duration(sc.Estimate), 0
						}
						label := fmt.Sprintf("%s › %s ~%s", PhaseTitle(ph), ScopeTitle(sc), Duration(plan.Duration(work)))
						r := row(TimelineRow{ID: sc.ID, Kind: "scope", Depth: depth + 1,
							Bars: []TimelineBar{{Kind: "scope", ID: sc.ID, From: ct, To: ct + work, Title: fmt.Sprintf("%s › %s: ~%s; %s", PhaseTitle(ph), ScopeTitle(sc), Duration(sc.Estimate), ScopeRule(sc))}}})
						ct += work
						if wait > 0 {
							label += ", then wait " + Duration(sc.WaitAfter)
							r.Bars = append(r.Bars, TimelineBar{Kind: "wait", ID: sc.ID + ".wait", From: ct, To: ct + wait, Title: "wait " + Duration(sc.WaitAfter) + " after " + ScopeTitle(sc)})
							ct += wait
						}
						if sc.PauseAfter {
							label += ", then pause"
							r.Bars = append(r.Bars, TimelineBar{Kind: "pause", ID: sc.ID + ".pause", From: ct, To: ct, Title: "pause after " + ScopeTitle(sc) + " until rackform continue"})
						}
						r.Label = label
					}
				}
				gt += est
			}
			if groupRow >= 0 {
				tl.Rows[groupRow].Label = fmt.Sprintf("group %s ~%s (in parallel)", g.Name, Duration(plan.Duration(gt-start)))
				tl.Rows[groupRow].Bars = []TimelineBar{{Kind: "group", ID: g.ID, From: start, To: gt, Title: fmt.Sprintf("group %s of stage %s: ~%s", g.Name, st.Name, Duration(plan.Duration(gt-start)))}}
			}
			longest = max(longest, gt-start)
		}
		at = start + longest
		sr := &tl.Rows[stageRow]
		sr.Label = fmt.Sprintf("stage %s ~%s", st.Name, Duration(plan.Duration(longest)))
		sr.Bars = []TimelineBar{{Kind: "stage", ID: st.ID, From: start, To: at, Title: fmt.Sprintf("stage %s: ~%s", st.Name, Duration(plan.Duration(longest)))}}
		if st.AfterWait > 0 {
			sr.Label += ", then wait " + Duration(st.AfterWait)
			sr.Bars = append(sr.Bars, TimelineBar{Kind: "wait", ID: st.ID + ".wait", From: at, To: at + time.Duration(st.AfterWait), Title: "wait " + Duration(st.AfterWait) + " after stage " + st.Name})
			at += time.Duration(st.AfterWait)
		}
		gates(st, "after")
	}
	extend(at)
	// Windows reach as far as the plan is valid: on the axis they show
	// as far as the run (and each cluster's next opening) goes.
	for i := range tl.Rows {
		if tl.Rows[i].Kind != "window" {
			continue
		}
		var kept []TimelineBar
		for _, b := range tl.Rows[i].Bars {
			if b.From < tl.Length {
				b.To = min(b.To, tl.Length)
				kept = append(kept, b)
			}
		}
		tl.Rows[i].Bars = kept
	}
	return tl
}
