package planview

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/browsertest"
	"github.com/rackform/rackform/planner/plan"
)

// The HTML page is self-contained (item 2): nothing is loaded from
// elsewhere, so it renders with no network.
func TestHTMLIsSelfContained(t *testing.T) {
	for name, dir := range fixtures(t) {
		p, file, _ := makePlan(t, dir)
		var b bytes.Buffer
		if err := WriteHTMLCells(&b, p, plan.SHA256(file), PlanCells()); err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`(?i)(src|href)\s*=|<link|@import|url\(`).FindString(b.String()); m != "" {
			t.Errorf("%s: the page loads something (%q)", name, m)
		}
		if n := strings.Count(b.String(), `class="cell `); n != len(p.Servers) {
			t.Errorf("%s: %d cells for %d servers", name, n, len(p.Servers))
		}
	}
}

// The plan page in a real headless browser (item 2), as show
// -format=html writes it (its timeline rehearsed): the grid has one cell
// per server, each coloured by what the plan does to it, the timeline has
// its bars and windows, and a screenshot is not blank. With
// RACKFORM_SCREENSHOT_DIR set, the screenshot is written there
// (docs/images/plan-html.png is one).
func TestHTMLInHeadlessChromium(t *testing.T) {
	p, file, _ := makePlan(t, "../../../../../../examples/fleet")
	b := rehearsedPage(t, p, plan.SHA256(file), rehearse(t, p, plan.SHA256(file)))
	page := filepath.Join(t.TempDir(), "plan.html")
	if err := os.WriteFile(page, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.Open(t, page, 1400, 1000)
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#grid .cell').length`))
	if err != nil {
		t.Fatal(err)
	}
	colors, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('#grid .cell')].map(c => [c.dataset.server, getComputedStyle(c).backgroundColor]))`))
	if err != nil {
		t.Fatal(err)
	}
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#timeline .bar[data-kind="scope"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	windows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#timeline .bar[data-kind="window"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if cells != len(p.Servers) {
		t.Errorf("%d cells in the DOM for %d servers", cells, len(p.Servers))
	}
	for i := range p.Servers {
		s := &p.Servers[i]
		if want := CellColors[CellClass(s)].Background; colors[s.Address] != want {
			t.Errorf("%s (%s) is coloured %s, want %s", s.Address, CellClass(s), colors[s.Address], want)
		}
	}
	scopes := 0
	for _, st := range p.Run.Stages {
		for _, g := range st.Groups {
			for _, c := range g.Clusters {
				for _, ph := range c.Phases {
					scopes += len(ph.Scopes)
				}
			}
		}
	}
	if bars != scopes {
		t.Errorf("%d scope bars on the timeline for %d scopes", bars, scopes)
	}
	if windows == 0 {
		t.Error("no maintenance window shaded (the fleet example has windows)")
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	{
		distinct := map[[3]uint32]bool{}
		bnd := img.Bounds()
		for y := bnd.Min.Y; y < bnd.Max.Y; y += 7 {
			for x := bnd.Min.X; x < bnd.Max.X; x += 7 {
				r, g, b, _ := img.At(x, y).RGBA()
				distinct[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
			}
		}
		if len(distinct) < 5 {
			t.Errorf("the screenshot is blank: %d colours", len(distinct))
		}
	}
	if len(shot) < 10000 {
		t.Errorf("the screenshot is %d bytes: blank?", len(shot))
	}
	if dir := os.Getenv("RACKFORM_SCREENSHOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "plan-html.png"), shot, 0o644)
	}
}

// The plan page says under each cluster which release it gets and why,
// and marks a pending cluster.
func TestHTMLShowsReleasesAndPending(t *testing.T) {
	p, file, _ := makePlan(t, "../../../../../../examples/channels")
	var b bytes.Buffer
	if err := WriteHTMLCells(&b, p, plan.SHA256(file), PlanCells()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<p class="release">west-1 → 4.6.2: rapid: newest minor 4.6, latest patch 4.6.3; sites east, west have 4.6.2 in common (site east has 4.6.2 only) → consistent picks 4.6.2</p>`,
		`<p class="release pending">north-1 → 4.6.2 (pending): `,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// Past a size the page summarises (issue 30): 2,400 servers in 60 racks
// are drawn as each rack's counts, 2,400 in 600 racks as the cluster's,
// with the timeline's 600 racks left to the cluster's bar; each page says
// so, and the counts add up to the plan's servers.
func TestHTMLSummarisedGolden(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		racks, perRack       int
		wantBlocks           int // racks drawn in the grid
		wantScopes           int // scope bars on the timeline (the control plane and the racks)
		notice, timelineNote string
	}{
		{"big-racks", 60, 40, 60, 61, "each rack is shown as counts of its servers", ""},
		{"big-clusters", 600, 4, 1, 0, "each cluster is shown as counts of its servers", "601 racks, batches and control planes: each cluster&#39;s bar spans its own"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _, _ := makePlan(t, bigFleet(t, tt.racks, tt.perRack))
			p.Config.Dir = "big" // not the temporary directory's name
			var b bytes.Buffer
			if err := WriteHTMLCells(&b, p, "", PlanCells()); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if n := strings.Count(page, `data-server=`); n != 0 {
				t.Errorf("%d server cells, want none", n)
			}
			total := 0
			for _, m := range regexp.MustCompile(`data-count="(\d+)"`).FindAllStringSubmatch(page, -1) {
				n, _ := strconv.Atoi(m[1])
				total += n
			}
			if total != len(p.Servers) {
				t.Errorf("the counts add up to %d, the plan has %d servers", total, len(p.Servers))
			}
			if n := strings.Count(page, `<div class="rack" `); n != tt.wantBlocks {
				t.Errorf("%d rack blocks, want %d", n, tt.wantBlocks)
			}
			if n := strings.Count(page, `class="bar bar-scope `); n != tt.wantScopes {
				t.Errorf("%d scope bars, want %d", n, tt.wantScopes)
			}
			if !strings.Contains(page, tt.notice) || !strings.Contains(page, tt.timelineNote) {
				t.Errorf("the page does not say it summarises (%q, %q)", tt.notice, tt.timelineNote)
			}
			golden(t, tt.name+".html", b.Bytes())
		})
	}
}
