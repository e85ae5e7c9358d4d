package planview

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/browsertest"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/planner/plan"
)

// largePlan is a generated plan of 10,000 servers over nine days: five
// stages, each of two groups side by side, each of five clusters in turn
// (with nightly maintenance windows), each of five racks of 40 servers
// with a wait after each rack, and approval gates between stages.
func largePlan() *plan.Plan {
	at := testNow
	p := &plan.Plan{FormatVersion: plan.FormatVersion, CreatedAt: at, NotAfter: at.Add(14 * 24 * time.Hour), Run: plan.Run{Name: "fleet", Scope: "full"}}
	// A rack of 40 servers, 8 at a time: five rounds of 18 minutes.
	rackEst, wait, serverEst := 90*time.Minute, 15*time.Minute, 18*time.Minute
	for si := 0; si < 5; si++ {
		st := plan.Stage{ID: fmt.Sprintf("stage.wave-%d", si+1), Name: fmt.Sprintf("wave-%d", si+1), OnBreach: "pause"}
		if si > 0 {
			st.Gates = []plan.Gate{{ID: st.ID + ".gate.go", Name: "go", When: "before"}}
		}
		for gi := 0; gi < 2; gi++ {
			g := plan.Group{ID: fmt.Sprintf("%s.group.region-%c", st.ID, 'a'+gi), Name: fmt.Sprintf("region-%c", 'a'+gi)}
			for ci := 0; ci < 5; ci++ {
				name := fmt.Sprintf("w%d-%c-c%d", si+1, 'a'+gi, ci+1)
				c := plan.Cluster{ID: "cluster." + name, Name: name, WindowPriority: "open"}
				for d := 0; d < 12; d++ {
					day := time.Date(at.Year(), at.Month(), at.Day()+d, 22, 0, 0, 0, time.UTC)
					c.Windows = append(c.Windows, plan.Interval{Start: day, End: day.Add(8 * time.Hour)})
				}
				ph := plan.Phase{ID: c.ID + ".compute", Kind: plan.PhaseCompute}
				for ri := 0; ri < 5; ri++ {
					rack := fmt.Sprintf("r%02d", ri+1)
					sc := plan.Scope{ID: ph.ID + ".rack." + rack, Kind: "rack", Name: rack, Rack: rack, Threshold: plan.Threshold{Type: "percent", Value: 90},
						Eligible: 40, Required: 36, Budget: 4, MaxUnavailable: 8, OnBreach: "pause", WaitAfter: plan.Duration(wait), Estimate: plan.Duration(rackEst + wait)}
					for n := 0; n < 40; n++ {
						addr := fmt.Sprintf("%s/%s/%s-s%02d", name, rack, rack, n+1)
						sc.Servers = append(sc.Servers, addr)
						p.Servers = append(p.Servers, plan.Server{Address: addr, Name: fmt.Sprintf("%s-s%02d", rack, n+1), Cluster: name, Rack: rack, Role: "compute",
							Action: plan.ActionUpgrade, Changes: []plan.Change{{Component: "bios", Kind: "firmware", From: "2.1", To: "2.2", Reboot: true}},
							Steps: []plan.Step{{Index: 1, Kind: plan.StepUpdate, Component: "bios", Target: version.Target{Version: "2.2"}, Estimate: plan.Duration(serverEst)}}, Reboots: 1, Estimate: plan.Duration(serverEst)})
					}
					ph.Scopes = append(ph.Scopes, sc)
					ph.Estimate += sc.Estimate
				}
				c.Phases = []plan.Phase{ph}
				c.Estimate = ph.Estimate
				g.Clusters = append(g.Clusters, c)
				g.Estimate += c.Estimate
			}
			st.Groups = append(st.Groups, g)
			st.Estimate = max(st.Estimate, g.Estimate)
		}
		p.Run.Stages = append(p.Run.Stages, st)
		p.Summary.Estimate += st.Estimate
	}
	p.Summary.Upgrade, p.Summary.Racks = len(p.Servers), 250
	return p
}

// The timeline's data: every stage, group, cluster, window and scope has
// its labelled row, bars follow one another as the run does, and the axis
// is divided into a few round steps whether the plan takes an hour or
// days.
func TestPlanTimeline(t *testing.T) {
	p := largePlan()
	tl := PlanTimeline(p)
	kinds := map[string]int{}
	for _, r := range tl.Rows {
		kinds[r.Kind]++
		if r.Label == "" {
			t.Errorf("row %s (%s) has no label", r.ID, r.Kind)
		}
		for _, b := range r.Bars {
			if b.To < b.From || b.From < 0 || b.To > tl.Length {
				t.Errorf("bar %s of row %s runs from %s to %s on an axis of %s", b.Kind, r.ID, b.From, b.To, tl.Length)
			}
		}
	}
	want := map[string]int{"stage": 5, "group": 10, "cluster": 50, "window": 50, "scope": 250, "gate": 4}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s rows, want %d", kinds[k], k, n)
		}
	}
	if est := time.Duration(p.Summary.Estimate); tl.Length < est {
		t.Errorf("the axis is %s long, the plan takes %s", tl.Length, est)
	}
	for _, tt := range []struct {
		length    time.Duration
		step, end time.Duration
	}{
		{0, 5 * time.Minute, 5 * time.Minute},
		{47 * time.Minute, 10 * time.Minute, 50 * time.Minute},
		{5*time.Hour + 10*time.Minute, time.Hour, 6 * time.Hour},
		{9*24*time.Hour + time.Hour, 2 * 24 * time.Hour, 10 * 24 * time.Hour},
	} {
		step, end := axis(tt.length)
		if step != tt.step || end != tt.end || end/step > maxTicks {
			t.Errorf("axis(%s) = %s step to %s, want %s to %s", tt.length, step, end, tt.step, tt.end)
		}
	}
	for d, want := range map[time.Duration]string{0: "0", 45 * time.Minute: "45m", 6 * time.Hour: "6h", 30 * time.Hour: "1d 6h"} {
		if got := axisLabel(d); got != want {
			t.Errorf("axisLabel(%s) = %q, want %q", d, got, want)
		}
	}
}

// timelinePages are the pages whose timelines the Chromium tests check:
// the fleet example and a generated plan of 10,000 servers over days,
// each on its estimate and rehearsed (where its rows carry the window
// waits, gates, pauses and overruns, and the large plan's rehearsal runs
// twelve days until clusters no window lets start block it). Each with
// its number of labelled rows.
func timelinePages(t *testing.T) map[string]struct {
	page []byte
	rows int
} {
	t.Helper()
	fleet, file, _ := makePlan(t, "../../../../../../examples/fleet")
	large := largePlan()
	out := map[string]struct {
		page []byte
		rows int
	}{}
	labelled := func(tl Timeline) int {
		n := 0
		for _, r := range tl.Rows {
			if r.Label != "" {
				n++
			}
		}
		return n
	}
	for name, tc := range map[string]struct {
		p   *plan.Plan
		sha string
	}{"fleet": {fleet, plan.SHA256(file)}, "10000 servers": {large, "0123456789abcdef"}} {
		var b bytes.Buffer
		if err := WriteHTMLCells(&b, tc.p, tc.sha, PlanCells()); err != nil {
			t.Fatal(err)
		}
		out[name] = struct {
			page []byte
			rows int
		}{b.Bytes(), labelled(PlanTimeline(tc.p))}
		if testing.Short() && name != "fleet" {
			continue // the rehearsal of 10,000 servers takes seconds
		}
		s := rehearse(t, tc.p, tc.sha)
		out[name+" rehearsed"] = struct {
			page []byte
			rows int
		}{rehearsedPage(t, tc.p, tc.sha, s), labelled(RehearsedTimeline(tc.p, s))}
	}
	return out
}

// The plan page's timeline takes the page's width and lays its labels out
// so that none overlaps another and none is clipped, at two page widths,
// for the fleet example and a generated plan of 10,000 servers over days,
// each on its estimate and rehearsed on the calendar; the page still
// loads nothing from elsewhere.
func TestHTMLTimelineLabelsInHeadlessChromium(t *testing.T) {
	for name, tc := range timelinePages(t) {
		t.Run(name, func(t *testing.T) {
			if m := regexp.MustCompile(`(?i)(src|href)\s*=|<link|@import|url\(|<script`).FindString(string(tc.page)); m != "" {
				t.Errorf("the page loads something (%q)", m)
			}
			page := filepath.Join(t.TempDir(), "plan.html")
			if err := os.WriteFile(page, tc.page, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx := browsertest.Open(t, page, 1400, 1000)
			for _, width := range []int{1400, 800} {
				browsertest.Resize(t, ctx, width, 1000)
				labels := browsertest.Boxes(t, ctx, "#timeline .tl-label, #timeline .tick, .tl-keys .key, .tl-notes p")
				if rows := len(browsertest.Boxes(t, ctx, "#timeline .tl-label")); rows < tc.rows {
					t.Fatalf("at %d px: %d labels for %d rows", width, rows, tc.rows)
				}
				for i, a := range labels {
					if a.Clipped {
						t.Errorf("at %d px: label %q is clipped (%.0f–%.0f)", width, a.Text, a.Left, a.Right)
					}
					for _, c := range labels[i+1:] {
						if browsertest.Overlap(a, c) {
							t.Errorf("at %d px: labels %q and %q overlap", width, a.Text, c.Text)
						}
					}
				}
				// The axis spans the track, and the track the page.
				ticks := browsertest.Boxes(t, ctx, "#timeline .tick")
				last := ticks[len(ticks)-1]
				if last.Right < float64(width)*0.8 {
					t.Errorf("at %d px: the axis ends at %.0f px: the timeline does not take the page's width", width, last.Right)
				}
				if n := len(ticks); n < 2 || n > maxTicks+1 {
					t.Errorf("at %d px: %d axis labels", width, n)
				}
			}
			if dir := os.Getenv("RACKFORM_SCREENSHOT_DIR"); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, "plan-"+strings.ReplaceAll(name, " ", "-")+".html"), tc.page, 0o644)
			}
		})
	}
}

// Every text on the plan page is at least 4.5:1 in contrast with what it
// is drawn on (WCAG AA), measured from the computed styles of every
// element with text.
func TestHTMLTextContrastInHeadlessChromium(t *testing.T) {
	p, file, _ := makePlan(t, "../../../../../../examples/fleet")
	var b bytes.Buffer
	if err := WriteHTMLCells(&b, p, plan.SHA256(file), PlanCells()); err != nil {
		t.Fatal(err)
	}
	for name, page := range map[string][]byte{"estimate": b.Bytes(), "rehearsed": rehearsedPage(t, p, plan.SHA256(file), rehearse(t, p, plan.SHA256(file)))} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "plan.html")
			if err := os.WriteFile(file, page, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx := browsertest.Open(t, file, 1400, 1000)
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
		})
	}
}
