package applyview_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/browsertest"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/rehearsal"
)

// pausedRun is a run of a plan of three racks, a pause after each but the
// last, paused after the first: its journal is a rehearsal's stopped at
// that pause (apply's journal, with each step taking its estimate), and
// its status is what rackform status replays from it.
func pausedRun(t *testing.T) (*plan.Plan, *executor.Status, []executor.Entry, time.Time) {
	t.Helper()
	b := executortest.NewBuilder(nil)
	b.Stage("main").Group(b, "all").Cluster("c1").
		Scope(S{Name: "r01", Servers: 2, PauseAfter: true}).
		Scope(S{Name: "r02", Servers: 2, PauseAfter: true}).
		Scope(S{Name: "r03", Servers: 2})
	p := b.Plan()
	for i := range p.Servers {
		for j := range p.Servers[i].Steps {
			p.Servers[i].Steps[j].Estimate = plan.Duration(10 * time.Minute)
		}
	}
	mem := state.NewMemory()
	res, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: sha, Start: executortest.Epoch, StopAtGates: true, Backend: mem})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome.Reason != executor.ReasonAfterRack {
		t.Fatalf("the run ended %s (%s), want paused after r01", res.Outcome.Status, res.Outcome.Reason)
	}
	e, err := executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: mem, Clock: executortest.NewClock(executortest.Epoch),
		Providers: map[string]providers.Provider{"fake": executortest.NewProvider()}, Hooks: executortest.NewHooks(), Holder: "tester@host"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	entries, err := mem.Read(context.Background(), sha, -1)
	if err != nil {
		t.Fatal(err)
	}
	return p, st, entries, res.Schedule.End
}

// The status page of a run paused after its first rack draws what
// happened and the rehearsed remainder: r01's bar, left of the line at
// now, in the colour of its state in the run; r02 and r03 after it,
// hatched as rehearsed (never coloured by the run's state), starting
// where the rehearsal continues the pause (at once, assumed); the notes
// say which side is which. No label overlaps or is clipped, every text
// is at least 4.5:1.
func TestStatusHTMLRemainderInHeadlessChromium(t *testing.T) {
	p, st, journal, paused := pausedRun(t)
	now := paused.Add(30 * time.Minute)
	tl := remainderTimeline(t, p, st, journal, now)
	if tl.Now == nil || tl.Start.Add(*tl.Now) != now {
		t.Fatalf("the line of now is at %v, want %s", tl.Now, now)
	}
	if !strings.Contains(strings.Join(tl.Notes, " "), "Left of the line at "+now.UTC().Format("Mon 02 Jan 15:04 UTC")+" (now) is what happened") {
		t.Errorf("the notes do not say which side is which: %q", tl.Notes)
	}
	for _, r := range tl.Rows {
		if want := "Compute › rack r01 55m, then pause since Sat 12:55, continued now (assumed)"; r.ID == "cluster.c1.compute.rack.r01" && r.Label != want {
			t.Errorf("r01's label is %q, want %q: the pause held until now happened, the rehearsal continued it", r.Label, want)
		}
	}
	ctx, page := openStatusTimeline(t, p, st, &tl)
	golden(t, "status-remainder.html", []byte(page))
	type bar struct {
		State, Color string
		Rehearsed    bool
		Left         float64
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string][]bar](`(() => { const out = {};
	  for (const b of document.querySelectorAll('#timeline .bar[data-kind="scope"]')) {
	    (out[b.dataset.id] = out[b.dataset.id] || []).push({State: b.dataset.state, Color: getComputedStyle(b).backgroundColor,
	      Rehearsed: b.classList.contains('rehearsed'), Left: b.getBoundingClientRect().left}); }
	  return out; })()`))
	if err != nil {
		t.Fatal(err)
	}
	nowX, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('#timeline [data-row="cluster.c1.compute.rack.r02"] .now').getBoundingClientRect().left`))
	if err != nil {
		t.Fatal(err)
	}
	r01 := got["cluster.c1.compute.rack.r01"]
	if len(r01) != 1 || r01[0].Rehearsed || r01[0].State != "done" || r01[0].Color != planview.BarColors["done"] {
		t.Errorf("r01 is drawn %+v, want one bar that happened, done, in %s", r01, planview.BarColors["done"])
	}
	for _, id := range []string{"cluster.c1.compute.rack.r02", "cluster.c1.compute.rack.r03"} {
		bs := got[id]
		if len(bs) != 1 || !bs[0].Rehearsed || bs[0].State != "planned" || bs[0].Left < nowX {
			t.Errorf("%s is drawn %+v (now at %.0f px), want one rehearsed bar, as planned, right of now", id, bs, nowX)
		}
	}
	for _, width := range []int{1200, 800} {
		browsertest.Resize(t, ctx, width, 900)
		labels := browsertest.Boxes(t, ctx, "#timeline .tl-label, #timeline .tick, .tl-keys .key, .tl-notes p")
		for i, a := range labels {
			if a.Clipped {
				t.Errorf("at %d px: label %q is clipped", width, a.Text)
			}
			for _, c := range labels[i+1:] {
				if browsertest.Overlap(a, c) {
					t.Errorf("at %d px: labels %q and %q overlap", width, a.Text, c.Text)
				}
			}
		}
	}
	checkContrast(t, ctx)
}

// A run that is over has no remainder: the timeline is what happened,
// with no line of now and nothing rehearsed.
func TestStatusTimelineOfAFinishedRun(t *testing.T) {
	p, _, _, _ := pausedRun(t)
	mem := state.NewMemory()
	res, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: sha, Start: executortest.Epoch, Backend: mem})
	// (The builder's servers are left drained: completed with failures.)
	if err != nil || (res.Outcome.Status != executor.OutcomeCompleted && res.Outcome.Status != executor.OutcomeCompletedWithFailures) {
		t.Fatalf("the run did not finish: %v %+v", err, res)
	}
	e, err := executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: mem, Clock: executortest.NewClock(executortest.Epoch),
		Providers: map[string]providers.Provider{"fake": executortest.NewProvider()}, Hooks: executortest.NewHooks(), Holder: "tester@host"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	journal, _ := mem.Read(context.Background(), sha, -1)
	tl := remainderTimeline(t, p, st, journal, res.Schedule.End.Add(24*time.Hour))
	if tl.Now != nil || tl.Length != time.Duration(res.Schedule.Total) || !strings.HasPrefix(tl.Notes[0], "The run is over: the timeline is what happened") {
		t.Errorf("finished run: now %v, length %s (want %s), notes %q", tl.Now, tl.Length, time.Duration(res.Schedule.Total), tl.Notes)
	}
	for _, r := range tl.Rows {
		for _, b := range r.Bars {
			if b.Rehearsed {
				t.Errorf("bar %s of %s is rehearsed in a finished run", b.Kind, r.ID)
			}
		}
	}
	// Where there was nothing to take over: the estimate, and the page
	// says why.
	tl = applyview.StatusTimeline(p, st, nil, time.Time{}, errors.New("Its journal has no record yet."))
	if tl.Calendar || !strings.Contains(tl.Notes[0], "because its journal has no record yet") {
		t.Errorf("no journal: calendar %v, notes %q", tl.Calendar, tl.Notes)
	}
}

// remainderTimeline is the status page's timeline as rackform status
// makes it: a rehearsal takes the run over from its journal at now, and
// the view draws its schedule.
func remainderTimeline(t *testing.T, p *plan.Plan, st *executor.Status, journal []executor.Entry, now time.Time) planview.Timeline {
	t.Helper()
	res, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: sha, Start: now, Journal: journal})
	if err != nil {
		t.Fatal(err)
	}
	return applyview.StatusTimeline(p, st, res.Schedule, res.From, nil)
}

func openStatusTimeline(t *testing.T, p *plan.Plan, st *executor.Status, tl *planview.Timeline) (context.Context, string) {
	t.Helper()
	var page strings.Builder
	if err := applyview.WriteStatusHTML(&page, p, st, tl); err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/status.html"
	if err := writeFile(file, page.String()); err != nil {
		t.Fatal(err)
	}
	return browsertest.Open(t, file, 1200, 900), page.String()
}

func writeFile(name, s string) error { return os.WriteFile(name, []byte(s), 0o644) }
