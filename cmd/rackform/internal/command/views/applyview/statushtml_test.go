package applyview_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/browsertest"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// rackform status -format=html in a real headless browser (item 2): a run
// paused after rack r01 (one server failed there, r02 not started) shows
// one cell per server, each coloured by its state in the run.
func TestStatusHTMLInHeadlessChromium(t *testing.T) {
	prov := executortest.NewProvider()
	clock := executortest.NewClock(executortest.Epoch)
	b := executortest.NewBuilder(prov)
	b.Scripts = map[string]executortest.Script{"c1/r01/r01-s02": {WaitReadyFails: 5}}
	b.Stage("main").Group(b, "all").Cluster("c1").
		Scope(S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 1, Role: "control_plane_spare"}).
		Scope(S{Name: "r01", Servers: 3, Threshold: plan.Threshold{Type: "count", Value: 2}, PauseAfter: true}).
		Scope(S{Name: "r02", Servers: 2})
	p := b.Plan()
	e, err := executor.New(executor.Options{
		Plan: p, PlanSHA256: sha, Backend: state.NewMemory(), Clock: clock,
		Providers: map[string]providers.Provider{"fake": prov},
		Hooks:     executortest.NewHooks(), Holder: "tester@host", Synchronous: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background(), context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	var walk func(n *executor.Node)
	walk = func(n *executor.Node) {
		if n.Kind == executor.KindServer {
			want[n.ID] = applyview.StatusColors[applyview.StatusClass(n.State.Name)].Background
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(st.Run)
	classes := map[string]bool{}
	for _, c := range want {
		classes[c] = true
	}
	if len(classes) < 3 {
		t.Fatalf("the run should leave servers done, failed and not started: %v", want)
	}

	var page bytes.Buffer
	if err := applyview.WriteStatusHTML(&page, p, st, nil); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "status.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.Open(t, file, 1200, 800)
	colors, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('#grid .cell')].map(c => [c.dataset.server, getComputedStyle(c).backgroundColor]))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(colors) != len(p.Servers) {
		t.Errorf("%d cells for %d servers", len(colors), len(p.Servers))
	}
	for addr, c := range want {
		if colors[addr] != c {
			t.Errorf("%s is coloured %s, want %s", addr, colors[addr], c)
		}
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	distinct := map[[3]uint32]bool{}
	bnd := img.Bounds()
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 5 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 5 {
			r, g, b, _ := img.At(x, y).RGBA()
			distinct[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	if len(distinct) < 5 {
		t.Errorf("the screenshot is blank: %d colours", len(distinct))
	}
	// Every text at least 4.5:1 (the servers not started were white on
	// light grey, about 1.5:1).
	texts := browsertest.TextContrasts(t, ctx)
	for _, c := range texts {
		if c.Ratio < 4.5 {
			t.Errorf("%s %q: %s on %s is %.2f:1, below 4.5:1", c.Selector, c.Text, c.Color, c.Background, c.Ratio)
		}
	}
	if dir := os.Getenv("RACKFORM_SCREENSHOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "status-html.png"), shot, 0o644)
	}
}
