package applyview_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/browsertest"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// runUntil runs p on a fake clock until it ends, or until stop says so of
// an event (then it is interrupted there), and returns its status.
func runUntil(t *testing.T, p *plan.Plan, prov *executortest.Provider, stop func(executor.Event) bool) *executor.Status {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err := executor.New(executor.Options{
		Plan: p, PlanSHA256: sha, Backend: state.NewMemory(), Clock: executortest.NewClock(executortest.Epoch),
		Providers: map[string]providers.Provider{"fake": prov},
		Hooks:     executortest.NewHooks(), Holder: "tester@host", Synchronous: true,
		Events: executor.SinkFunc(func(ev executor.Event) {
			if stop != nil && stop(ev) {
				cancel()
			}
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// openStatus renders the status page and opens it in headless Chromium.
func openStatus(t *testing.T, p *plan.Plan, st *executor.Status) (context.Context, string) {
	t.Helper()
	var page bytes.Buffer
	if err := applyview.WriteStatusHTML(&page, p, st, nil); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "status.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return browsertest.Open(t, file, 1200, 900), page.String()
}

// A finished run's page says what happened (not "6 servers to upgrade"),
// colours the timeline's bars by what happened to each scope (not the
// plan's blue), and every text on it is at least 4.5:1 in contrast (the
// servers not started were white on light grey, about 1.5:1).
func TestStatusHTMLFinishedRunInHeadlessChromium(t *testing.T) {
	prov := executortest.NewProvider()
	b := executortest.NewBuilder(prov)
	b.Scripts = map[string]executortest.Script{"c1/r01/r01-s02": {WaitReadyFails: 5}}
	b.Stage("main").Group(b, "all").Cluster("c1").
		Scope(S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 1, Role: "control_plane_spare"}).
		Scope(S{Name: "r01", Servers: 3, Threshold: plan.Threshold{Type: "count", Value: 2}}).
		Scope(S{Name: "r02", Servers: 2})
	p := b.Plan()
	st := runUntil(t, p, prov, nil)
	ctx, page := openStatus(t, p, st)

	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('h1').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(title, "5 servers upgraded, 1 failed") || strings.Contains(title, "to upgrade") {
		t.Errorf("the title of the finished run is %q, want what happened: 5 servers upgraded, 1 failed", title)
	}
	// Each scope's bar in the colour of its state in the run.
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[map[string][]string](`Object.fromEntries([...document.querySelectorAll('#timeline .bar[data-kind="scope"]')].map(b => [b.dataset.id, [b.dataset.state, getComputedStyle(b).backgroundColor]]))`))
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]executor.StateName{}
	var walk func(n *executor.Node)
	walk = func(n *executor.Node) {
		nodes[n.ID] = n.State.Name
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(st.Run)
	scopes := 0
	for _, ph := range p.Run.Stages[0].Groups[0].Clusters[0].Phases {
		for _, sc := range ph.Scopes {
			scopes++
			class := applyview.StatusClass(nodes[sc.ID])
			got := bars[sc.ID]
			if len(got) != 2 || got[0] != class || got[1] != planview.BarColors[class] {
				t.Errorf("scope %s (%s in the run) is drawn %v, want %s in %s", sc.ID, nodes[sc.ID], got, class, planview.BarColors[class])
			}
			if class == "running" || class == "not-started" {
				t.Errorf("scope %s is %s after the run ended", sc.ID, class)
			}
		}
	}
	if scopes != len(bars) {
		t.Errorf("%d scope bars for %d scopes", len(bars), scopes)
	}
	checkContrast(t, ctx)
	golden(t, "status-finished.html", []byte(page))
}

// A cluster waiting for its maintenance window is on the page, with its
// window and when it opens: it was nowhere (its servers were merely "not
// started").
func TestStatusHTMLWaitingClusterInHeadlessChromium(t *testing.T) {
	T := executortest.Epoch
	prov := executortest.NewProvider()
	b := executortest.NewBuilder(prov)
	g := b.Stage("main").Group(b, "all")
	g.Cluster("c1").Scope(S{Name: "r01", Servers: 2})
	g.Cluster("c2", plan.Interval{Start: T.Add(6 * time.Hour), End: T.Add(10 * time.Hour)}).Scope(S{Name: "r01", Servers: 2})
	p := b.Plan()
	st := runUntil(t, p, prov, func(ev executor.Event) bool { return ev.ID == "cluster.c2" && ev.State == executor.Pending })
	ctx, page := openStatus(t, p, st)
	golden(t, "status-waiting.html", []byte(page))

	notices, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.notice, .note')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	want := "waiting for its maintenance window, which opens Sat 2026-11-21 18:00 UTC (open until Sat 2026-11-21 22:00 UTC, 4h)"
	found := 0
	for _, n := range notices {
		if strings.Contains(n, want) {
			found++
		}
	}
	if found != 2 {
		t.Errorf("the page says %q, want the waiting cluster c2 under the headline and in the grid: %q", notices, want)
	}
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#timeline .bar[data-id="cluster.c2"]').dataset.state`))
	if err != nil {
		t.Fatal(err)
	}
	if state != "waiting" {
		t.Errorf("cluster c2's bar is %q, want waiting", state)
	}
	checkContrast(t, ctx)
}

func checkContrast(t *testing.T, ctx context.Context) {
	t.Helper()
	texts := browsertest.TextContrasts(t, ctx)
	lowest := texts[0]
	for _, c := range texts {
		if c.Ratio < lowest.Ratio {
			lowest = c
		}
		if c.Ratio < 4.5 {
			t.Errorf("%s %q: %s on %s is %.2f:1, below 4.5:1", c.Selector, c.Text, c.Color, c.Background, c.Ratio)
		}
	}
	t.Logf("%d texts; lowest contrast %.2f:1 (%s %q)", len(texts), lowest.Ratio, lowest.Selector, lowest.Text)
}
