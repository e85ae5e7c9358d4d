package planview

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// rehearse runs p's fault-free rehearsal from when it was made, as
// rackform show -format=html does.
func rehearse(t testing.TB, p *plan.Plan, sha string) *schedule.Schedule {
	t.Helper()
	res, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: sha, Start: p.CreatedAt})
	if err != nil {
		t.Fatal(err)
	}
	return res.Schedule
}

// rehearsedPage is the plan page with the rehearsed timeline, as show
// writes it.
func rehearsedPage(t testing.TB, p *plan.Plan, sha string, s *schedule.Schedule) []byte {
	t.Helper()
	cells := PlanCells()
	cells.Rehearse(p, s)
	var b bytes.Buffer
	if err := WriteHTMLCells(&b, p, sha, cells); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// inWindow says whether t lies in one of the cluster's openings.
func inWindow(c *plan.Cluster, t time.Time) bool {
	for _, w := range c.Windows {
		if w.Contains(t) {
			return true
		}
	}
	return false
}

func clusterOf(p *plan.Plan, id string) *plan.Cluster {
	for si := range p.Run.Stages {
		for gi := range p.Run.Stages[si].Groups {
			for ci := range p.Run.Stages[si].Groups[gi].Clusters {
				if c := &p.Run.Stages[si].Groups[gi].Clusters[ci]; c.ID == id {
					return c
				}
			}
		}
	}
	return nil
}

// The rehearsed timeline of examples/fleet draws no cluster at work while
// its window is closed (the estimate put the canary at 0–4h, its window
// at 12–15h): every cluster's bar starts in an opening of its window,
// after a bar of its wait for it that ends there; east's work past its
// window's close is marked; the gate has its bar; the notes state the
// total against the estimate and the cluster that does not fit.
func TestRehearsedTimelineFollowsWindows(t *testing.T) {
	p, file, _ := makePlan(t, "../../../../../../examples/fleet")
	s := rehearse(t, p, plan.SHA256(file))
	tl := RehearsedTimeline(p, s)
	if !tl.Calendar || !tl.Start.Equal(p.CreatedAt) || tl.Length != s.End.Sub(s.Start) {
		t.Errorf("the timeline is on the calendar from %s for %s (calendar %v), want from %s for %s", tl.Start, tl.Length, tl.Calendar, p.CreatedAt, s.End.Sub(s.Start))
	}
	// What the rehearsal fixes: the estimate starts the canary outside
	// its window.
	est := PlanTimeline(p)
	outside := 0
	rows := map[string]TimelineRow{}
	for _, r := range tl.Rows {
		rows[r.ID] = r
	}
	for _, r := range est.Rows {
		if r.Kind == "cluster" && !inWindow(clusterOf(p, r.ID), p.CreatedAt.Add(r.Bars[0].From)) {
			outside++
		}
	}
	if outside == 0 {
		t.Error("the estimate starts every cluster in its window: the fixture no longer shows what the rehearsal fixes")
	}
	clusters := 0
	for _, r := range tl.Rows {
		if r.Kind != "cluster" {
			continue
		}
		clusters++
		c := clusterOf(p, r.ID)
		var work, wait *TimelineBar
		for i := range r.Bars {
			switch r.Bars[i].Kind {
			case "cluster":
				work = &r.Bars[i]
			case "window-wait":
				wait = &r.Bars[i]
			}
		}
		if work == nil {
			t.Errorf("cluster %s has no bar", c.Name)
			continue
		}
		if at := tl.Start.Add(work.From); !inWindow(c, at) {
			t.Errorf("cluster %s starts at %s, outside its window %v", c.Name, at, c.Windows)
		}
		if wait == nil || wait.To != work.From || wait.From >= wait.To {
			t.Errorf("cluster %s: its wait for its window is %+v, want a bar ending where its work starts (%s)", c.Name, wait, work.From)
		}
		if w := rows[c.ID+".window"]; len(w.Bars) == 0 {
			t.Errorf("cluster %s: no window shaded", c.Name)
		}
	}
	if clusters != 3 {
		t.Errorf("%d cluster rows, want 3", clusters)
	}
	overrun := map[string]bool{}
	for _, r := range tl.Rows {
		for _, b := range r.Bars {
			if b.Kind == "overrun" {
				overrun[r.ID] = true
				if b.To != tl.Length || b.From >= b.To {
					t.Errorf("east's overrun runs %s–%s, want to its end %s", b.From, b.To, tl.Length)
				}
			}
		}
	}
	if len(overrun) != 1 || !overrun["cluster.east"] {
		t.Errorf("overruns marked on %v, want on cluster.east only", overrun)
	}
	if g := rows["stage.canary.gate.canary-ok"]; len(g.Bars) != 1 || !strings.Contains(g.Label, "approved at once (assumed)") {
		t.Errorf("the canary gate's row is %+v", g)
	}
	notes := strings.Join(tl.Notes, "\n")
	for _, want := range []string{
		"every approval gate and pause answered at once (an assumption",
		"Total " + s.Total.Human() + ", ",
		"the plan estimates " + s.PlanEstimate.Human(),
		"Cluster east does not fit its maintenance window: its work runs until ",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("the notes do not say %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "Cluster west") || strings.Contains(notes, "Cluster canary") {
		t.Errorf("the notes say a fitting cluster does not fit:\n%s", notes)
	}
}

// The axis of a rehearsed timeline is on the calendar, at round times
// whatever the start (multiples of the step within a day, midnights from
// a day up), and never more than maxTicks intervals.
func TestCalendarAxis(t *testing.T) {
	for _, tt := range []struct {
		start  time.Time
		length time.Duration
		first  string
		step   time.Duration
	}{
		{time.Date(2026, 11, 27, 16, 6, 43, 0, time.UTC), 38*time.Hour + 50*time.Minute, "12:00 Fri", 12 * time.Hour},
		{time.Date(2026, 11, 27, 16, 6, 0, 0, time.UTC), 50 * time.Minute, "16:00 Fri", 10 * time.Minute},
		{time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), 11*24*time.Hour + 19*time.Hour, "21 Nov Sat", 3 * 24 * time.Hour},
	} {
		step, end, lead := calendarAxis(tt.start, tt.length)
		first := tt.start.Add(-lead)
		if step != tt.step || end/step > maxTicks || end < tt.length+lead || label(first, step) != tt.first || !first.Equal(first.Truncate(min(step, 24*time.Hour))) {
			t.Errorf("calendarAxis(%s, %s) = step %s, end %s, first tick %s (%q); want step %s, first tick %q",
				tt.start, tt.length, step, end, first, label(first, step), tt.step, tt.first)
		}
	}
}

func label(t time.Time, step time.Duration) string {
	l, sub := calendarLabel(t, step)
	return l + " " + sub
}

// The status page's remainder: bars after now are rehearsed, a bar
// across now is cut there, windows are neither.
func TestSplitAt(t *testing.T) {
	start := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)
	tl := Timeline{Start: start, Length: 10 * time.Hour, Rows: []TimelineRow{{ID: "r", Bars: []TimelineBar{
		{Kind: "scope", ID: "a", From: 0, To: 2 * time.Hour},
		{Kind: "scope", ID: "b", From: 2 * time.Hour, To: 6 * time.Hour},
		{Kind: "scope", ID: "c", From: 6 * time.Hour, To: 8 * time.Hour},
		{Kind: "gate", ID: "g", From: 4 * time.Hour, To: 4 * time.Hour},
		{Kind: "window", From: 0, To: 10 * time.Hour},
	}}}}
	tl.SplitAt(start.Add(4 * time.Hour))
	type seg struct {
		id        string
		from, to  time.Duration
		rehearsed bool
	}
	var got []seg
	for _, b := range tl.Rows[0].Bars {
		got = append(got, seg{b.ID, b.From / time.Hour, b.To / time.Hour, b.Rehearsed})
	}
	want := []seg{{"a", 0, 2, false}, {"b", 2, 4, false}, {"b", 4, 6, true}, {"c", 6, 8, true}, {"g", 4, 4, false}, {"", 0, 10, false}}
	if len(got) != len(want) || tl.Now == nil || *tl.Now != 4*time.Hour {
		t.Fatalf("split at 4h: %v (now %v), want %v", got, tl.Now, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bar %d is %v, want %v", i, got[i], want[i])
		}
	}
}
