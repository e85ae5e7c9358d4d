package planview

import (
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// RehearsedTimeline lays p out on the calendar as a rehearsal ran it
// (package rehearsal: the plan's own executor on a virtual clock): the
// same rows as PlanTimeline, in the plan's order, with each bar where the
// rehearsal put it — after window waits, gates, waits and pauses — and
// what held the run drawn as such: a cluster's wait for its maintenance
// window, a gate or a pause from when it was reached to its answer, a
// breached threshold, and the part of a cluster's work that runs past its
// window's close. Rows the rehearsal never reached keep their label and
// say so. The notes state the total against the plan's estimate, the
// clusters that miss their window, and what the rehearsal assumed.
func RehearsedTimeline(p *plan.Plan, s *schedule.Schedule) Timeline {
	return rehearsedTimeline(p, s, time.Time{})
}

// RemainderTimeline is a run's timeline for its status page: the
// schedule of a rehearsal that took the run over from its journal at from
// (rehearsal.Options.Journal), laid out as RehearsedTimeline does and
// split there (SplitAt): what happened, then the rehearsed remainder. A
// gate or pause answered before from says how long it held; one held at
// from says since when, and that the rehearsal answered it.
func RemainderTimeline(p *plan.Plan, s *schedule.Schedule, from time.Time) Timeline {
	tl := rehearsedTimeline(p, s, from)
	tl.SplitAt(from)
	return tl
}

func rehearsedTimeline(p *plan.Plan, s *schedule.Schedule, from time.Time) Timeline {
	r := rehearsed{from: from, p: p, s: s, bars: map[string]schedule.Bar{}, marks: map[string][]schedule.Mark{}, windows: map[string]schedule.ClusterWindow{}}
	for _, b := range s.Bars {
		r.bars[b.ID] = b
	}
	for _, m := range s.Marks {
		r.marks[m.ID] = append(r.marks[m.ID], m)
	}
	for _, w := range s.Windows {
		r.windows[w.Cluster] = w
	}
	r.tl = Timeline{Start: s.Start, Length: max(s.End.Sub(s.Start), 0), Calendar: true}
	for si := range p.Run.Stages {
		st := &p.Run.Stages[si]
		r.gates(st, "before")
		r.stage(st)
		r.gates(st, "after")
	}
	r.tl.Notes = RehearsalNotes(p, s)
	r.tl.Title = "Timeline (rehearsed from " + s.Start.UTC().Format("Mon 02 Jan 2006 15:04 UTC") + ", on the calendar)"
	return r.tl
}

type rehearsed struct {
	// from is where the rehearsal took over a run (RemainderTimeline):
	// what was answered before it happened; zero for none.
	from    time.Time
	p       *plan.Plan
	s       *schedule.Schedule
	bars    map[string]schedule.Bar
	marks   map[string][]schedule.Mark
	windows map[string]schedule.ClusterWindow
	tl      Timeline
}

func (r *rehearsed) off(t time.Time) time.Duration {
	return min(max(t.Sub(r.s.Start), 0), r.tl.Length)
}

func (r *rehearsed) row(row TimelineRow) *TimelineRow {
	r.tl.Rows = append(r.tl.Rows, row)
	return &r.tl.Rows[len(r.tl.Rows)-1]
}

// bar is the schedule's bar of id on the timeline, with a hover title;
// ok is false when the rehearsal never started it.
func (r *rehearsed) bar(kind, id, what string) (TimelineBar, schedule.Bar, bool) {
	b, ok := r.bars[id]
	if !ok {
		return TimelineBar{}, b, false
	}
	title := fmt.Sprintf("%s: %s → %s (%s), %s", what, calendarText(b.Start), calendarText(b.End), took(b.Start, b.End), stateText(b))
	if b.Open {
		title += ", still going when the rehearsal ended"
	}
	return TimelineBar{Kind: kind, ID: id, From: r.off(b.Start), To: r.off(b.End), Title: title}, b, true
}

// happened: the mark was answered before the rehearsal took the run
// over (a person approved or continued it).
func (r *rehearsed) happened(m schedule.Mark) bool {
	return !r.from.IsZero() && !m.Open && m.Until.Before(r.from)
}

// pending: the mark held when the rehearsal took the run over, which
// answered it.
func (r *rehearsed) pending(m schedule.Mark) bool {
	return !r.from.IsZero() && !m.Open && m.At.Before(r.from) && !m.Until.Before(r.from)
}

// answerText says when the rehearsal answered a mark it found held:
// "now", or its time.
func (r *rehearsed) answerText(m schedule.Mark) string {
	if m.Until.Equal(r.from) {
		return "now"
	}
	return "at " + clockText(m.Until)
}

func (r *rehearsed) mark(kind string, id string) []schedule.Mark {
	var out []schedule.Mark
	for _, m := range r.marks[id] {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

func (r *rehearsed) gates(st *plan.Stage, when string) {
	for _, g := range st.Gates {
		if (g.When == "before") != (when == "before") {
			continue
		}
		label := fmt.Sprintf("approval gate %s, %s stage %s", g.Name, when, st.Name)
		row := r.row(TimelineRow{ID: g.ID, Kind: "gate", Depth: 1})
		ms := r.mark(schedule.MarkGate, g.ID)
		if len(ms) == 0 {
			row.Label = label + ": not reached"
			continue
		}
		m := ms[0]
		switch {
		case m.Open:
			label += ": not approved when the rehearsal ended"
		case r.happened(m):
			label += ": approved after " + m.Held.Human()
		case r.pending(m):
			label += fmt.Sprintf(": waiting since %s, approved %s (assumed)", clockText(m.At), r.answerText(m))
		case r.s.ApproveAfter > 0:
			label += fmt.Sprintf(": held %s (approved after %s, assumed)", m.Held.Human(), r.s.ApproveAfter.Human())
		default:
			label += ": approved at once (assumed)"
		}
		row.Label = label
		row.Bars = []TimelineBar{{Kind: "gate", ID: g.ID, From: r.off(m.At), To: r.off(m.Until),
			Title: fmt.Sprintf("approval gate %s: reached %s, %s; rackform approve %s", g.ID, calendarText(m.At), answered(m, "approved"), g.ID)}}
	}
}

func (r *rehearsed) stage(st *plan.Stage) {
	row := r.row(TimelineRow{ID: st.ID, Kind: "stage"})
	label := "stage " + st.Name
	b, sb, ok := r.bar("stage", st.ID, "stage "+st.Name)
	wait, wb, waited := r.bar("wait", st.ID+".wait", "wait after stage "+st.Name)
	if ok {
		// The stage's node ends with its after-wait; its bar ends where
		// the wait begins, so the two do not cover each other.
		end := sb.End
		if waited && wb.Start.Before(end) {
			end = wb.Start
			b.To = r.off(end)
		}
		row.Bars = append(row.Bars, b)
		label += " " + took(sb.Start, end) + stateSuffix(sb)
	} else {
		label += ": not reached"
	}
	if st.AfterWait > 0 {
		if waited {
			row.Bars = append(row.Bars, wait)
		}
		label += ", then wait " + Duration(st.AfterWait)
	}
	// The row's pointer moves as rows are added: label it first.
	row.Label = label
	for gi := range st.Groups {
		g := &st.Groups[gi]
		depth := 1
		if len(st.Groups) > 1 {
			gr := r.row(TimelineRow{ID: g.ID, Kind: "group", Depth: 1, Label: "group " + g.Name + " (in parallel): not reached"})
			if b, gb, ok := r.bar("group", g.ID, "group "+g.Name+" of stage "+st.Name); ok {
				gr.Bars = []TimelineBar{b}
				gr.Label = fmt.Sprintf("group %s %s (in parallel)%s", g.Name, took(gb.Start, gb.End), stateSuffix(gb))
			}
			depth = 2
		}
		for ci := range g.Clusters {
			r.cluster(&g.Clusters[ci], depth)
		}
	}
}

func (r *rehearsed) cluster(c *plan.Cluster, depth int) {
	row := r.row(TimelineRow{ID: c.ID, Kind: "cluster", Depth: depth})
	var bars []TimelineBar
	var waited schedule.Duration
	for _, m := range r.mark(schedule.MarkWindow, c.ID) {
		waited += m.Held
		bars = append(bars, TimelineBar{Kind: "window-wait", ID: c.ID + ".window-wait", From: r.off(m.At), To: r.off(m.Until),
			Title: fmt.Sprintf("cluster %s waits for its maintenance window: %s → %s (%s)", c.Name, calendarText(m.At), calendarText(m.Until), m.Held.Human())})
	}
	w := r.windows[c.ID]
	label := "cluster " + c.Name
	b, cb, ok := r.bar("cluster", c.ID, "cluster "+c.Name)
	switch {
	case ok:
		bars = append(bars, b)
		label += " " + took(cb.Start, cb.End) + stateSuffix(cb)
		if waited > 0 {
			label += ", after waiting " + waited.Human() + " for its window"
		}
		switch {
		case len(w.Windows) == 0:
		case w.Fits:
			label += "; fits its window"
		case w.Overrun > 0 && w.Opening != nil:
			label += "; runs " + w.Overrun.Human() + " past its window's close"
			bars = append(bars, TimelineBar{Kind: "overrun", ID: c.ID + ".overrun", From: r.off(w.Opening.End), To: r.off(w.End),
				Title: "cluster " + c.Name + " does not fit its maintenance window: " + WindowMiss(w, calendarText)})
		default:
			label += "; does not fit its window: " + w.Miss
		}
	case strings.HasPrefix(w.Miss, "did not start"):
		label += ": " + w.Miss
	case w.Miss != "":
		label += " did not start: " + w.Miss
	default:
		label += ": not reached"
	}
	row.Bars, row.Label = bars, label
	if len(c.Windows) > 0 {
		wr := r.row(TimelineRow{ID: c.ID + ".window", Kind: "window", Depth: depth + 1, Label: "maintenance window of " + c.Name})
		for _, iv := range c.Windows {
			from, to := r.off(iv.Start), r.off(iv.End)
			if to <= from {
				continue // outside the rehearsal
			}
			wr.Bars = append(wr.Bars, TimelineBar{Kind: "window", From: from, To: to, Title: "maintenance window of " + c.Name + ": " + calendarText(iv.Start) + " → " + calendarText(iv.End)})
		}
	}
	for pi := range c.Phases {
		ph := &c.Phases[pi]
		for sci := range ph.Scopes {
			r.scope(ph, &ph.Scopes[sci], depth+1)
		}
	}
}

func (r *rehearsed) scope(ph *plan.Phase, sc *plan.Scope, depth int) {
	name := PhaseTitle(ph) + " › " + ScopeTitle(sc)
	row := r.row(TimelineRow{ID: sc.ID, Kind: "scope", Depth: depth})
	b, sb, ok := r.bar("scope", sc.ID, name)
	if !ok {
		row.Label = name + ": not reached"
		return
	}
	b.Title += "; " + ScopeRule(sc)
	row.Bars = append(row.Bars, b)
	label := name + " " + took(sb.Start, sb.End)
	if sc.WaitAfter > 0 {
		if wb, _, ok := r.bar("wait", sc.ID+".wait", "wait after "+ScopeTitle(sc)); ok {
			row.Bars = append(row.Bars, wb)
			label += ", then wait " + Duration(sc.WaitAfter)
		}
	}
	// What held or decided the scope says its state: a breach with apply's
	// numbers, then the pause it made (or a pause after the rack, or a
	// quorum hold), each with how long it held.
	said := false
	for _, m := range r.mark(schedule.MarkThreshold, sc.ID) {
		if m.Result == schedule.ResultMet {
			continue
		}
		row.Bars = append(row.Bars, TimelineBar{Kind: "breach", ID: sc.ID + ".breach", From: r.off(m.At), To: r.off(m.At),
			Title: m.Message + " at " + calendarText(m.At)})
		label += ", threshold breached: " + strings.TrimPrefix(m.Message, "threshold breached: ")
		said = true
	}
	for _, m := range r.mark(schedule.MarkPause, sc.ID) {
		why := map[string]string{"after_rack": "then pause", "threshold": "paused on the breach", "quorum": "held for control-plane quorum"}[m.Reason]
		if why == "" {
			why = "paused (" + strings.ReplaceAll(m.Reason, "_", " ") + ")"
		}
		title := fmt.Sprintf("%s: %s, %s", why, calendarText(m.At), answered(m, "continued"))
		if m.Message != "" {
			title += "; " + m.Message
		}
		row.Bars = append(row.Bars, TimelineBar{Kind: "pause", ID: sc.ID + ".pause", From: r.off(m.At), To: r.off(m.Until), Title: title})
		switch {
		case m.Open:
			label += ", " + why + " (the rehearsal stops here)"
		case r.happened(m):
			label += ", " + why + " " + m.Held.Human()
		case r.pending(m):
			label += fmt.Sprintf(", %s since %s, continued %s (assumed)", why, clockText(m.At), r.answerText(m))
		case m.Held == 0:
			label += ", " + why + " (continued at once, assumed)"
		case m.Reason == "quorum":
			label += ", " + why + " " + m.Held.Human()
		default:
			label += fmt.Sprintf(", %s %s (assumed)", why, m.Held.Human())
		}
		said = true
	}
	if !said {
		label += stateSuffix(sb)
	}
	row.Label = label
}

// SplitAt marks what lies after now as rehearsed (the remainder of a run
// on the status page): bars that end by now stay what happened, bars that
// start at or after now are rehearsed, and a bar that spans now is cut
// in two. Window openings are neither.
func (tl *Timeline) SplitAt(now time.Time) {
	at := min(max(now.Sub(tl.Start), 0), tl.Length)
	tl.Now = &at
	for i := range tl.Rows {
		var bars []TimelineBar
		for _, b := range tl.Rows[i].Bars {
			switch {
			case b.Kind == "window":
			case b.From >= at && (b.From > at || b.To > at):
				b.Rehearsed = true
			case b.To > at:
				after := b
				after.From, after.Rehearsed = at, true
				b.To = at
				bars = append(bars, b)
				b = after
			}
			bars = append(bars, b)
		}
		tl.Rows[i].Bars = bars
	}
}

// RehearsalNotes are the sentences a page says about a rehearsal under its
// timeline's title: where it started and what it assumed, the total
// against the plan's estimate, each cluster that misses its window, and
// how it ended when it did not complete.
func RehearsalNotes(p *plan.Plan, s *schedule.Schedule) []string {
	faults := "with no faults"
	if s.Scenario != "" {
		faults = fmt.Sprintf("with the faults of %s (seed %d)", s.Scenario, s.Seed)
	}
	notes := []string{fmt.Sprintf("Rehearsed from %s %s, %s: bars start when the plan's own executor starts them on a simulated copy of the fleet, each step taking the plan's estimate.", calendarText(s.Start), faults, answers(s))}
	total := fmt.Sprintf("Total %s, %s → %s; the plan estimates %s (its work alone, without window waits, gates and pauses).",
		s.Total.Human(), calendarText(s.Start), calendarText(s.End), s.PlanEstimate.Human())
	if s.CriticalPath > 0 && s.Scenario == "" && s.Outcome.Status == "completed" {
		total += fmt.Sprintf(" The plan's critical path from the same start is %s.", s.CriticalPath.Human())
	}
	return append(append(notes, total), findings(s, true)...)
}

// RemainderNotes are what a run's page (rackform status) says of its
// timeline: what happened until from, from the run's journal, and the
// remainder a rehearsal took over from there (rehearsal.Options.Journal);
// over: the run has ended, there is no remainder.
func RemainderNotes(s *schedule.Schedule, from time.Time, over bool) []string {
	if over {
		return append([]string{fmt.Sprintf("The run is over: the timeline is what happened, from its journal (%s → %s, %s).",
			calendarText(s.Start), calendarText(s.End), s.Total.Human())}, findings(s, false)...)
	}
	notes := []string{
		fmt.Sprintf("Left of the line at %s (now) is what happened, from the run's journal; right of it, hatched, the remainder as a rehearsal expects it: the plan's own executor takes the run over from its journal on a simulated copy of the fleet, each step taking the plan's estimate, %s. A step in flight now counts again in full.", calendarText(from), answers(s)),
		fmt.Sprintf("Expected end %s: %s since the run started at %s; the plan estimates %s (its work alone, without window waits, gates and pauses).",
			calendarText(s.End), s.Total.Human(), calendarText(s.Start), s.PlanEstimate.Human()),
	}
	return append(notes, findings(s, true)...)
}

// answers says how the rehearsal answered gates and pauses.
func answers(s *schedule.Schedule) string {
	switch {
	case s.StopAtGates:
		return "stopping at the first approval gate or pause"
	case s.ApproveAfter > 0:
		return fmt.Sprintf("every approval gate and pause answered %s after it is reached (an assumption)", s.ApproveAfter.Human())
	}
	return "every approval gate and pause answered at once (an assumption: a person takes longer; rackform rehearse -approve-after says how long)"
}

// findings are the clusters that miss their window, and (outcome) how the
// rehearsal ended when it did not complete.
func findings(s *schedule.Schedule, outcome bool) []string {
	var notes []string
	// Five clusters are said in full; the rest are counted (their rows
	// say each).
	const said = 5
	misfits := 0
	for _, w := range s.Windows {
		if !w.Fits {
			misfits++
		}
		switch {
		case w.Fits:
		case misfits > said:
		case len(w.Windows) == 0:
			// No window to fit: it did not start (the outcome says why).
			notes = append(notes, fmt.Sprintf("Cluster %s %s.", w.Name, strings.TrimSuffix(w.Miss, ".")))
		default:
			notes = append(notes, fmt.Sprintf("Cluster %s does not fit its maintenance window: %s.", w.Name, strings.TrimSuffix(WindowMiss(w, calendarText), ".")))
		}
	}
	if misfits > said {
		notes = append(notes, fmt.Sprintf("%d more clusters do not fit their maintenance windows or did not start; their rows say how.", misfits-said))
	}
	if o := s.Outcome; outcome && o.Status != "completed" {
		out := "The rehearsal ended " + strings.ReplaceAll(o.Status, "_", " ")
		if o.Reason != "" {
			out += " (" + strings.ReplaceAll(o.Reason, "_", " ") + ")"
		}
		if o.Message != "" {
			out += ": " + o.Message
		}
		notes = append(notes, strings.TrimSuffix(out, ".")+".")
	}
	return notes
}

// WindowMiss says why a cluster does not fit its maintenance window, its
// times as at writes them: its work runs past the window's close, or the
// schedule's words for it.
func WindowMiss(w schedule.ClusterWindow, at func(time.Time) string) string {
	if w.Overrun > 0 && w.Opening != nil {
		return fmt.Sprintf("its work runs until %s, %s past the window's close at %s (a window only gates the start)", at(w.End), w.Overrun.Human(), at(w.Opening.End))
	}
	return w.Miss
}

// calendarText is a time on a rehearsed timeline: "Sat 28 Nov 01:00 UTC".
func calendarText(t time.Time) string { return t.UTC().Format("Mon 02 Jan 15:04 UTC") }

// clockText is a time in a label, short: "Sat 01:00".
func clockText(t time.Time) string { return t.UTC().Format("Mon 15:04") }

func took(from, to time.Time) string { return schedule.Duration(to.Sub(from)).Human() }

func stateText(b schedule.Bar) string {
	s := strings.ReplaceAll(b.State, "_", " ")
	if b.Reason != "" {
		s += " (" + strings.ReplaceAll(b.Reason, "_", " ") + ")"
	}
	return s
}

// stateSuffix says a bar's state when it is not simply completed.
func stateSuffix(b schedule.Bar) string {
	if b.State == "completed" {
		return ""
	}
	return ", " + stateText(b)
}

func answered(m schedule.Mark, verb string) string {
	if m.Open {
		return "not " + verb + " when the rehearsal ended"
	}
	return fmt.Sprintf("%s %s (after %s)", verb, calendarText(m.Until), m.Held.Human())
}

// Rehearse makes the page draw a rehearsal's schedule s of p: its
// timeline is RehearsedTimeline, a notice under the headline says what
// the rollout takes against the plan's estimate and which clusters do not
// fit their maintenance window, and the grid notes each such cluster
// (after any note the cells had).
func (c *Cells) Rehearse(p *plan.Plan, s *schedule.Schedule) {
	tl := RehearsedTimeline(p, s)
	c.Timeline = &tl
	notes := map[string]string{}
	var misfits []string
	for _, w := range s.Windows {
		switch {
		case w.Fits:
			continue
		case len(w.Windows) == 0:
			notes[w.Name] = "rehearsed: " + strings.TrimSuffix(w.Miss, ".")
			continue
		case w.Overrun > 0:
			notes[w.Name] = "rehearsed: does not fit its maintenance window (its work runs " + w.Overrun.Human() + " past the window's close)"
		default:
			notes[w.Name] = "rehearsed: does not fit its maintenance window: " + strings.TrimSuffix(w.Miss, ".")
		}
		misfits = append(misfits, w.Name)
	}
	takes := "takes"
	if s.Outcome.Status != "completed" {
		takes = "ends " + strings.ReplaceAll(s.Outcome.Status, "_", " ") + " after"
	}
	notice := fmt.Sprintf("Rehearsed, the rollout %s %s (%s → %s UTC) where the plan estimates %s.", takes, s.Total.Human(),
		s.Start.UTC().Format("Mon 02 Jan 15:04"), s.End.UTC().Format("Mon 02 Jan 15:04"), s.PlanEstimate.Human())
	switch n := len(misfits); {
	case n == 0:
	case n == 1:
		notice += " Cluster " + misfits[0] + " does not fit its maintenance window."
	case n <= 4:
		notice += " Clusters " + strings.Join(misfits[:n-1], ", ") + " and " + misfits[n-1] + " do not fit their maintenance windows."
	default:
		notice += fmt.Sprintf(" %d clusters (%s and %d more) do not fit their maintenance windows.", n, strings.Join(misfits[:3], ", "), n-3)
	}
	c.Notices = append(c.Notices, notice)
	prev := c.ClusterNote
	c.ClusterNote = func(name string) string {
		if prev != nil {
			if n := prev(name); n != "" {
				return n
			}
		}
		return notes[name]
	}
}
