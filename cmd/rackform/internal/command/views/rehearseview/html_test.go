package rehearseview

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/browsertest"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
)

// The page of the broken-rack rehearsal in headless Chromium: a reviewer
// sees the faulty schedule drawn — rack e02's breach with apply's
// numbers, the pause it made, its bar in the colour of its state, its
// two servers failed in the grid — with no label overlapping or clipped
// at two widths, every text at least 4.5:1, nothing loaded from
// elsewhere.
func TestHTMLBrokenRackInHeadlessChromium(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("testdata", "fleet-broken-rack.html"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|<link|@import|url\(|<script`).FindString(string(page)); m != "" {
		t.Errorf("the page loads something (%q)", m)
	}
	file := filepath.Join(t.TempDir(), "rehearsal.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.Open(t, file, 1400, 1000)
	for _, width := range []int{1400, 800} {
		browsertest.Resize(t, ctx, width, 1000)
		labels := browsertest.Boxes(t, ctx, "#timeline .tl-label, #timeline .tick, .tl-keys .key, .tl-notes p, .notice")
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
	type bar struct {
		Kind, State, Color string
	}
	row, err := chromedp.Run(ctx, chromedp.Evaluate[[]bar](`[...document.querySelectorAll('#timeline [data-row="cluster.east.compute.rack.e02"] .bar')].map(b => ({Kind: b.dataset.kind, State: b.dataset.state, Color: getComputedStyle(b).backgroundColor}))`))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bar{}
	for _, b := range row {
		kinds[b.Kind] = b
	}
	if b := kinds["scope"]; b.State != "waiting" || b.Color != planview.BarColors["waiting"] {
		t.Errorf("rack e02's bar is %+v, want its paused state's colour %s", b, planview.BarColors["waiting"])
	}
	if _, ok := kinds["breach"]; !ok {
		t.Errorf("rack e02's row has no breach: %+v", row)
	}
	if _, ok := kinds["pause"]; !ok {
		t.Errorf("rack e02's row has no pause: %+v", row)
	}
	label, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#timeline [data-row="cluster.east.compute.rack.e02"] .tl-label').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "threshold breached: 2 failed > budget 0 (N=2, required 2, succeeded 0), paused on the breach (the rehearsal stops here)"; !strings.Contains(label, want) {
		t.Errorf("rack e02's label is %q, want it to say %q", label, want)
	}
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('#grid .cell')].map(c => [c.dataset.server, getComputedStyle(c).backgroundColor]))`))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"east/e02/e02-s3", "east/e02/e02-s4"} {
		if cells[s] != applyview.StatusColors["failed"].Background {
			t.Errorf("%s is %s in the grid, want failed (%s)", s, cells[s], applyview.StatusColors["failed"].Background)
		}
	}
	for _, c := range browsertest.TextContrasts(t, ctx) {
		if c.Ratio < 4.5 {
			t.Errorf("%s %q: %s on %s is %.2f:1, below 4.5:1", c.Selector, c.Text, c.Color, c.Background, c.Ratio)
		}
	}
	if dir := os.Getenv("RACKFORM_SCREENSHOT_DIR"); dir != "" {
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err == nil {
			_ = os.WriteFile(filepath.Join(dir, "rehearse-broken-rack.png"), shot, 0o644)
		}
	}
}
