// Package rehearseview renders a rehearsal (`rackform rehearse`): its
// schedule as text for people, and as the machine-readable UI's JSON lines
// (the executor's events with their rehearsed times, then the schedule).
// Both render the one data model, rehearsal/schedule.
package rehearseview

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// text writes one rehearsal.
type text struct {
	w   *bufio.Writer
	p   *plan.Plan
	s   *schedule.Schedule
	st  views.Style
	sec bool // times carry seconds
	// children by parent ID, in tree order; marks by ID.
	kids  map[string][]schedule.Bar
	marks map[string][]schedule.Mark
	col   int
	// detail is how much of the tree is shown (detail.go); bars by ID.
	detail Detail
	bars   map[string]schedule.Bar
	// upgrade says which servers the plan upgrades, by address (made
	// on first use, at cluster detail).
	upgrade map[string]bool
}

// WriteText renders a rehearsal for people: the schedule as a tree on the
// calendar (UTC), every stage, group, cluster, rack or batch, server and
// wait with its start, end and duration — as far down as detail says
// (detail.go) — and under each what held or decided it (window waits,
// gates, pauses, thresholds with apply's numbers); then how each cluster
// fits its maintenance window, the total against the plan's estimate and
// the critical path, and the outcome.
func WriteText(w io.Writer, p *plan.Plan, s *schedule.Schedule, color bool, detail Detail) error {
	t := &text{w: bufio.NewWriter(w), p: p, s: s, st: views.Style(color), kids: map[string][]schedule.Bar{}, marks: map[string][]schedule.Mark{},
		detail: detail, bars: map[string]schedule.Bar{}}
	if t.detail == "" {
		t.detail = DefaultDetail(p)
	}
	t.sec = s.Start.Second() != 0
	for _, b := range s.Bars {
		t.kids[b.Parent] = append(t.kids[b.Parent], b)
		t.bars[b.ID] = b
		t.sec = t.sec || b.Start.Second() != 0 || b.End.Second() != 0
	}
	for _, m := range s.Marks {
		t.marks[m.ID] = append(t.marks[m.ID], m)
	}
	t.walk("run", 0, func(b schedule.Bar, d int) {
		t.col = max(t.col, 2*d+len(label(b)))
	})
	t.col = min(t.col, 60)
	t.header()
	t.tree()
	t.windows()
	t.totals()
	t.outcome()
	return t.w.Flush()
}

func (t *text) printf(format string, args ...any) { fmt.Fprintf(t.w, format, args...) }

func (t *text) header() {
	s := t.s
	up, skip, racks := applyview.Summary(t.p)
	t.printf("%s plan %s: %s to upgrade in %s, %d skipped; the plan estimates %s\n", t.st.Wrap("Rehearsal of", views.ANSIBold), plan.ShortSHA(s.PlanSHA256),
		views.Plural(up, "server"), views.Plural(racks, "rack"), skip, s.PlanEstimate.Human())
	scenario := "no faults"
	if s.Scenario != "" {
		scenario = fmt.Sprintf("faults from %s (seed %d)", s.Scenario, s.Seed)
	}
	answer := "gates and pauses answered at once"
	switch {
	case s.StopAtGates:
		answer = "stopping at the first gate or pause"
	case s.ApproveAfter > 0:
		answer = fmt.Sprintf("gates and pauses answered after %s each", s.ApproveAfter.Human())
	}
	t.printf("From %s (times in UTC), %s, %s.\n", t.at(s.Start), scenario, answer)
	if l := t.detailLine(); l != "" {
		t.printf("%s\n", l)
	}
	if s.Start.After(s.NotAfter) {
		t.printf("%s the plan expired at %s: apply would refuse it; its maintenance windows end there.\n", t.st.Wrap("Note:", views.ANSIYellow, views.ANSIBold), t.at(s.NotAfter))
	}
	t.printf("\n")
}

func label(b schedule.Bar) string {
	switch b.Kind {
	case schedule.KindStage, schedule.KindGroup, schedule.KindCluster:
		return b.Kind + " " + b.Name
	}
	return b.Name
}

// walk visits every bar under parent in tree order with its depth;
// phases are left out (a scope's name says its phase), their children
// lifted.
func (t *text) walk(parent string, d int, fn func(b schedule.Bar, d int)) {
	for _, b := range t.kids[parent] {
		if b.Kind == schedule.KindPhase {
			t.walk(b.ID, d, fn)
			continue
		}
		if !t.shown(b) {
			continue
		}
		fn(b, d)
		if b.Kind == schedule.KindStage {
			fn(schedule.Bar{Kind: "gates", ID: b.ID, Scope: "before"}, d+1)
		}
		t.walk(b.ID, d+1, fn)
		if b.Kind == schedule.KindStage {
			fn(schedule.Bar{Kind: "gates", ID: b.ID, Scope: "after"}, d+1)
		}
	}
}

// tree writes every bar, and under it what held or decided it.
func (t *text) tree() {
	t.walk("run", 0, func(b schedule.Bar, d int) {
		if b.Kind == "gates" {
			for _, m := range t.gatesOf(b.ID) {
				// A gate before a stage holds that stage itself.
				before := len(m.Holds) == 1 && m.Holds[0] == b.ID
				if before == (b.Scope == "before") {
					t.mark(m, d)
				}
			}
			return
		}
		t.bar(b, d)
		t.barMarks(b, d+1)
	})
	// Clusters that never started are said too.
	for _, w := range t.s.Windows {
		if w.Start.IsZero() {
			t.printf("%scluster %s did not start: %s\n", indent(2), w.Name, w.Miss)
			for _, m := range t.marks[w.Cluster] {
				t.mark(m, 3)
			}
		}
	}
}

func (t *text) gatesOf(stage string) []schedule.Mark {
	var out []schedule.Mark
	for _, m := range t.s.Marks {
		if m.Kind == schedule.MarkGate && strings.HasPrefix(m.ID, stage+".gate.") {
			out = append(out, m)
		}
	}
	return out
}

func indent(d int) string { return strings.Repeat("  ", d) }

func (t *text) bar(b schedule.Bar, d int) {
	name := label(b)
	pad := max(t.col-2*d-len(name), 0)
	end := t.clockOrAt(b.Start, b.End)
	if b.Open {
		end += "…"
	}
	state := b.State
	if b.Reason != "" {
		state += "(" + b.Reason + ")"
	}
	switch {
	case b.State == "failed" || b.Reason == "threshold":
		state = t.st.Wrap(state, views.ANSIRed)
	case b.State == "paused" || b.State == "skipped" || b.State == "pending":
		state = t.st.Wrap(state, views.ANSIYellow)
	case b.State == "completed":
		state = t.st.Wrap(state, views.ANSIGreen)
	}
	took := schedule.Duration(b.End.Sub(b.Start)).Human()
	t.printf("%s%s%s  %s → %-*s %7s  %s", indent(d), name, strings.Repeat(" ", pad), t.at(b.Start), len(t.at(b.Start)), end, took, state)
	// A server says why it did not complete; a scope's marks below it
	// say why it paused, and a container's state follows from those.
	if b.Message != "" && b.Kind == schedule.KindServer && b.State != "completed" {
		t.printf(": %s", b.Message)
	}
	t.printf("\n")
}

// barMarks writes what held or decided a bar, under it.
func (t *text) barMarks(b schedule.Bar, d int) {
	switch b.Kind {
	case schedule.KindCluster:
		for _, m := range t.marks[b.ID] {
			t.mark(m, d)
		}
		for _, w := range t.s.Windows {
			if w.Cluster == b.ID && len(w.Windows) > 0 {
				t.printf("%s%s\n", indent(d), t.windowLine(w))
			}
		}
		t.clusterSummary(b, d)
	case schedule.KindScope:
		for _, m := range t.marks[b.ID] {
			t.mark(m, d)
		}
	}
}

func (t *text) mark(m schedule.Mark, d int) {
	until := t.clockOrAt(m.At, m.Until)
	switch m.Kind {
	case schedule.MarkWindow:
		if m.Open {
			t.printf("%s%s from %s: %s, until the rehearsal ended\n", indent(d), t.st.Wrap("waits for its maintenance window", views.ANSIYellow), t.at(m.At), m.Message)
			return
		}
		t.printf("%swaited %s for its maintenance window: %s → %s\n", indent(d), m.Held.Human(), t.at(m.At), until)
	case schedule.MarkGate:
		name := m.ID[strings.LastIndex(m.ID, ".gate.")+len(".gate."):]
		holds := ""
		if len(m.Holds) > 0 {
			holds = ", holding " + strings.ReplaceAll(strings.Join(m.Holds, ", "), "stage.", "stage ")
		}
		switch {
		case m.Open:
			t.printf("%s%s reached %s%s: the rehearsal stops here (rackform approve %s)\n", indent(d), t.st.Wrap("gate "+name, views.ANSIYellow, views.ANSIBold), t.at(m.At), holds, m.ID)
		default:
			t.printf("%sgate %s reached %s%s; approved %s (after %s)\n", indent(d), name, t.at(m.At), holds, until, m.Held.Human())
		}
	case schedule.MarkPause:
		why := map[string]string{"after_rack": "after the rack (pause_after_rack)", "threshold": "threshold breached", "quorum": "held for control-plane quorum"}[m.Reason]
		if why == "" {
			why = m.Reason
		}
		if m.Open {
			t.printf("%s%s at %s: %s\n", indent(d), t.st.Wrap("paused, "+why, views.ANSIYellow, views.ANSIBold), t.at(m.At), m.Message)
			return
		}
		t.printf("%spaused, %s, %s → %s (continued after %s)\n", indent(d), why, t.at(m.At), until, m.Held.Human())
	case schedule.MarkThreshold:
		if m.Result == schedule.ResultMet && m.Counts != nil {
			c := m.Counts
			t.printf("%sthreshold met at %s: %d of %d succeeded, %d required, %d may fail\n", indent(d), t.at(m.At), c.Succeeded, c.Eligible, c.Required, c.Budget)
			return
		}
		what, msg, _ := strings.Cut(m.Message, ": ")
		t.printf("%s%s\n", indent(d), t.st.Wrap(fmt.Sprintf("%s at %s: %s", what, t.at(m.At), msg), views.ANSIRed, views.ANSIBold))
	}
}

func (t *text) windowLine(w schedule.ClusterWindow) string {
	if w.Fits && w.Opening != nil {
		return fmt.Sprintf("fits its maintenance window: started in the opening %s → %s, done %s", t.at(w.Opening.Start), t.clockOrAt(w.Opening.Start, w.Opening.End), t.at(w.End))
	}
	return t.st.Wrap("does not fit its maintenance window: "+planview.WindowMiss(w, t.at), views.ANSIRed, views.ANSIBold)
}

func (t *text) windows() {
	has := false
	for _, w := range t.s.Windows {
		has = has || len(w.Windows) > 0
	}
	if !has {
		return
	}
	t.printf("\n%s\n", t.st.Wrap("Maintenance windows:", views.ANSIBold))
	for _, w := range t.s.Windows {
		switch {
		case len(w.Windows) == 0:
			t.printf("  %s: no window\n", w.Name)
		case w.Fits:
			t.printf("  %s: fits (%s → %s, in the opening %s → %s)\n", w.Name, t.at(w.Start), t.clockOrAt(w.Start, w.End), t.at(w.Opening.Start), t.clockOrAt(w.Opening.Start, w.Opening.End))
		default:
			t.printf("  %s: %s\n", w.Name, t.st.Wrap("does not fit: "+planview.WindowMiss(w, t.at), views.ANSIRed))
		}
	}
}

func (t *text) totals() {
	s := t.s
	t.printf("\n%s %s, %s → %s; the plan estimates %s", t.st.Wrap("Total:", views.ANSIBold), s.Total.Human(), t.at(s.Start), t.at(s.End), s.PlanEstimate.Human())
	t.printf(".\n")
	if idle := idle(s); idle > 0 {
		t.printf("No server was at work for %s of it (waiting for maintenance windows, gates, pauses and waits).\n", schedule.Duration(idle).Human())
	}
	if s.CriticalPath > 0 {
		t.printf("The plan's critical path from the same start is %s", s.CriticalPath.Human())
		if s.Scenario == "" && s.Outcome.Status == "completed" {
			t.printf(": the executor's overhead is %.3f×", float64(s.Total)/float64(s.CriticalPath))
		}
		t.printf(".\n")
	}
}

// idle is the time from the start to the end during which no server was
// at work.
func idle(s *schedule.Schedule) time.Duration {
	var spans [][2]time.Time
	for _, b := range s.Bars {
		if b.Kind == schedule.KindServer {
			spans = append(spans, [2]time.Time{b.Start, b.End})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0].Before(spans[j][0]) })
	var busy time.Duration
	var cur [2]time.Time
	for i, sp := range spans {
		switch {
		case i == 0:
			cur = sp
		case !sp[0].After(cur[1]):
			if sp[1].After(cur[1]) {
				cur[1] = sp[1]
			}
		default:
			busy += cur[1].Sub(cur[0])
			cur = sp
		}
	}
	if len(spans) > 0 {
		busy += cur[1].Sub(cur[0])
	}
	return s.End.Sub(s.Start) - busy
}

func (t *text) outcome() {
	o := t.s.Outcome
	head := "Outcome: " + o.Status
	if o.Reason != "" {
		head += " (" + o.Reason + ")"
	}
	color := []string{views.ANSIGreen, views.ANSIBold}
	switch o.Status {
	case "completed":
	case "failed":
		color = []string{views.ANSIRed, views.ANSIBold}
	default:
		color = []string{views.ANSIYellow, views.ANSIBold}
	}
	t.printf("%s: %s; apply would exit %d here.\n", t.st.Wrap(head, color...), o.Message, o.ExitCode)
	for _, n := range o.Next {
		t.printf("  next, as apply would say: %s\n", n)
	}
}

// at formats a time on the calendar: "Sat 28 Nov 01:00" (with seconds
// when any time of the schedule has them).
func (t *text) at(x time.Time) string {
	if t.sec {
		return x.UTC().Format("Mon 02 Jan 15:04:05")
	}
	return x.UTC().Format("Mon 02 Jan 15:04")
}

func (t *text) clock(x time.Time) string {
	if t.sec {
		return x.UTC().Format("15:04:05")
	}
	return x.UTC().Format("15:04")
}

// clockOrAt is x as a clock time when it falls on from's day, else on
// the calendar.
func (t *text) clockOrAt(from, x time.Time) string {
	if sameDay(from, x) {
		return t.clock(x)
	}
	return t.at(x)
}

func sameDay(a, b time.Time) bool {
	a, b = a.UTC(), b.UTC()
	return a.Year() == b.Year() && a.YearDay() == b.YearDay()
}
