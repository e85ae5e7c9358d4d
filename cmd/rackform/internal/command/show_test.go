package command

import (
	"path/filepath"
	"strings"
	"testing"
)

// show -format=html draws the rehearsed timeline: from when the plan was
// made (or -start), with the window waits and the cluster that does not
// fit its window; a plan of an older format is drawn on its estimate, and
// the page says so and why. -start and -approve-after need -format=html.
func TestShowHTMLRehearsesTheTimeline(t *testing.T) {
	fleet := filepath.Join("views", "rehearseview", "testdata", "fleet.plan.json")
	old := filepath.Join("..", "..", "..", "..", "planner", "plan", "testdata")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
		not  []string
	}{
		{"from plan time", []string{"-format=html", fleet}, ExitOK, []string{
			"<h2>Timeline (rehearsed from Fri 27 Nov 2026 16:06 UTC, on the calendar)</h2>",
			`<p class="notice">Rehearsed, the rollout takes 1d14h50m (Fri 27 Nov 16:06 → Sun 29 Nov 06:57 UTC) where the plan estimates 15h9m. Cluster east does not fit its maintenance window.</p>`,
			`<p class="note">rehearsed: does not fit its maintenance window (its work runs 3h57m past the window&#39;s close)</p>`,
			`data-kind="window-wait"`, `data-kind="overrun"`,
			"every approval gate and pause answered at once (an assumption",
		}, []string{"not rehearsed"}},
		{"from -start, gates held", []string{"-format=html", "-start", "2026-11-27T16:00:00Z", "-approve-after", "2h", fleet}, ExitOK, []string{
			"<h2>Timeline (rehearsed from Fri 27 Nov 2026 16:00 UTC, on the calendar)</h2>",
			"every approval gate and pause answered 2h after it is reached (an assumption)",
			"approval gate canary-ok, after stage canary: held 2h (approved after 2h, assumed)",
		}, nil},
		{"format 1.4", []string{"-format=html", filepath.Join(old, "format-1.4-signed.plan.json")}, ExitOK, []string{
			"<h2>Timeline (estimated, from plan time: not rehearsed)</h2>",
			"This timeline is the plan&#39;s estimate, not a rehearsal, because plan format 1.4 was written by an older rackform",
			"its bars may lie where a cluster&#39;s window is closed",
		}, []string{`data-kind="window-wait"`}},
		{"format 1.0", []string{"-format=html", filepath.Join(old, "format-1.0.plan.json")}, ExitOK, []string{
			"not a rehearsal, because plan format 1.0 was written by an older rackform",
		}, nil},
		{"-start without html", []string{"-start", "2026-11-27T16:00:00Z", fleet}, ExitUsage, []string{"-start and -approve-after set the HTML page's rehearsed timeline: they need -format=html"}, nil},
		{"bad -start", []string{"-format=html", "-start", "tomorrow", fleet}, ExitUsage, []string{`-start "tomorrow" is not an RFC 3339 time`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errb := runShow(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, errb)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errb, w) {
					t.Errorf("show %s does not say %q", strings.Join(tc.args, " "), w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("show %s says %q", strings.Join(tc.args, " "), w)
				}
			}
		})
	}
}
