package planview

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func getenv(name string) string {
	switch name {
	case "RACKFORM_BMC_PASSWORD", "BMC_PASSWORD":
		return "pw-from-env"
	}
	return ""
}

// fixtureState makes plans interesting: some servers at target, one
// unreachable (unless it is a control-plane member: a member down would
// refuse the plan for quorum), the rest behind.
func fixtureState(i int, s *config.Server) plannertest.State {
	switch {
	case i == 1 && s.Role != config.RoleControlPlane:
		return plannertest.Unreachable
	case i%7 == 3:
		return plannertest.AtTarget
	}
	return plannertest.Behind
}

func makePlan(t testing.TB, dir string) (*plan.Plan, []byte, []*views.Diagnostic) {
	t.Helper()
	loader := config.NewLoader(config.LoadOptions{Getenv: getenv})
	cfg, diags := loader.Load(dir)
	if diags.HasErrors() {
		t.Fatalf("loading %s: %s", dir, diags.Error())
	}
	fs := plannertest.FromConfig(cfg, fixtureState)
	provs := map[string]providers.Provider{}
	for n, f := range fs {
		provs[n] = f
	}
	p, pd := planner.Plan(context.Background(), cfg, planner.Options{
		Providers: provs, Now: testNow, RackformVersion: "0.0.0-test",
		ProviderInfo: []plan.Provider{{Name: "redfish", Version: "0.0.0-test", Source: "builtin", SHA256: strings.Repeat("0", 64)}},
	})
	diags = append(diags, pd...)
	if diags.HasErrors() {
		for _, d := range diags {
			t.Logf("%s: %s", d.Summary, d.Detail)
		}
		t.Fatalf("planning %s failed", dir)
	}
	b, err := plan.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, b, views.NewDiagnostics(diags, loader.Files())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", name, diff)
	}
}

func fixtures(t *testing.T) map[string]string {
	out := map[string]string{"planner-nexus": "../../../../../../planner/testdata/nexus"}
	dirs, _ := filepath.Glob("../../../../../../examples/*")
	for _, d := range dirs {
		// A configuration has *.rf.hcl files: examples/ci holds CI
		// pipelines and examples/policy a Rego policy.
		if hcl, _ := filepath.Glob(filepath.Join(d, "*.rf.hcl")); len(hcl) > 0 {
			out[filepath.Base(d)] = d
		}
	}
	for _, want := range []string{"nexus-lab", "fleet", "pause-rack"} {
		if out[want] == "" {
			t.Errorf("example %s is missing", want)
		}
	}
	return out
}

func TestGolden(t *testing.T) {
	for name, dir := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			p, file, diags := makePlan(t, dir)
			var text, color, md, stream bytes.Buffer
			if err := WriteText(&text, p, false); err != nil {
				t.Fatal(err)
			}
			if err := WriteText(&color, p, true); err != nil {
				t.Fatal(err)
			}
			if err := WriteMarkdown(&md, p, plan.SHA256(file), 0); err != nil {
				t.Fatal(err)
			}
			s := newStreamAt(&stream, fixedNow)
			if err := s.Version("0.0.0-test"); err != nil {
				t.Fatal(err)
			}
			if err := s.Diagnostics(diags); err != nil {
				t.Fatal(err)
			}
			if err := s.Plan(p); err != nil {
				t.Fatal(err)
			}
			if err := s.PlanFile("plan.json", plan.SHA256(file), p.SignedBy); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".txt", text.Bytes())
			golden(t, name+".color.txt", color.Bytes())
			golden(t, name+".md", md.Bytes())
			golden(t, name+".jsonl", stream.Bytes())
			golden(t, name+".plan.json", file)
			var shown bytes.Buffer
			if err := WriteJSON(&shown, p, plan.SHA256(file)); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".show.json", shown.Bytes())
			var page bytes.Buffer
			if err := WriteHTMLCells(&page, p, plan.SHA256(file), PlanCells()); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".html", page.Bytes())
			golden(t, name+".rehearsed.html", rehearsedPage(t, p, plan.SHA256(file), rehearse(t, p, plan.SHA256(file))))

			if bytes.Contains(text.Bytes(), []byte("\x1b[")) {
				t.Error("the plain text has escape sequences")
			}
			ansi := regexp.MustCompile("\x1b\\[[0-9;]*m")
			if got := ansi.ReplaceAllString(color.String(), ""); got != text.String() {
				t.Errorf("the coloured text differs from the plain text by more than escapes:\n%s", cmp.Diff(text.String(), got))
			}
			for _, line := range strings.Split(strings.TrimSpace(stream.String()), "\n") {
				if !strings.HasPrefix(line, `{"@level":`) || !strings.Contains(line, `"@module":"rackform.ui","@timestamp":"2026-`) || !strings.Contains(line, `,"type":"`) {
					t.Errorf("stream line is not in the machine-readable UI's envelope: %s", line)
				}
			}
			if !strings.Contains(text.String(), "Plan: "+SummaryLine(p)) {
				t.Error("the text does not end with the summary line")
			}
		})
	}
}

func TestSummaryLine(t *testing.T) {
	cases := []struct {
		s    plan.Summary
		want string
	}{
		{plan.Summary{Upgrade: 12, Racks: 3, Skip: 1, Estimate: plan.Duration(12*time.Hour + 5*time.Minute)}, "12 servers to upgrade in 3 racks, 1 skipped, ~12h5m"},
		{plan.Summary{Upgrade: 1, Racks: 1, Estimate: plan.Duration(45 * time.Minute)}, "1 server to upgrade in 1 rack, 0 skipped, ~45m"},
		{plan.Summary{Skip: 4}, "0 servers to upgrade in 0 racks, 4 skipped, ~0m"},
	}
	for _, c := range cases {
		if got := SummaryLine(&plan.Plan{Summary: c.s}); got != c.want {
			t.Errorf("SummaryLine(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}

// bigFleet writes a configuration of racks × servers compute servers.
func bigFleet(t *testing.T, racks, servers int) string {
	var b strings.Builder
	b.WriteString(`provider "redfish" {}
release "r" {
  version = "4.6.1"
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bios.bin"
    match {
      software_id = "BIOS"
    }
  }
}
cluster "big" {
  release = release.r
`)
	for r := 0; r < racks; r++ {
		fmt.Fprintf(&b, "  rack \"rack%03d\" {\n", r)
		for s := 0; s < servers; s++ {
			role := "compute"
			switch {
			case r < 3 && s == 0:
				role = "control_plane"
			case r == 0 && s == 1:
				role = "control_plane_spare"
			}
			fmt.Fprintf(&b, "    server \"r%03d-s%02d\" {\n      bmc = \"https://127.5.%d.%d:8443\"\n      role = %q\n    }\n", r, s, r, s+1, role)
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Markdown under the size cap (review summary, item 1): the summary is
// never cut, per-server rows are folded before any rack disappears, and
// the comment stays under the limit even with a thousand warnings.
func TestMarkdownStaysUnderTheLimit(t *testing.T) {
	p, file, _ := makePlan(t, bigFleet(t, 60, 40)) // 2,400 servers
	// A thousand warnings must not push the racks out or the limit up.
	for i := 0; i < 1000; i++ {
		p.Warnings = append(p.Warnings, plan.Message{Summary: "Server unreachable, skipped", Detail: strings.Repeat("x", 200), Server: fmt.Sprint(i)})
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, p, plan.SHA256(file), 0); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if md.Len() > MarkdownLimit {
		t.Errorf("markdown is %d bytes, over %d", md.Len(), MarkdownLimit)
	}
	for _, want := range []string{"#### Summary", "**Clusters and windows**", "**Parallelism and thresholds**", "**Versions**", "**Not changing**", "> **Folded:**"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the capped markdown", want)
		}
	}
	if strings.Contains(out, "**Truncated:**") {
		t.Error("racks were left out although folding them fits")
	}
	for r := 0; r < 60; r++ {
		if !strings.Contains(out, fmt.Sprintf("rack rack%03d</b>", r)) {
			t.Errorf("rack rack%03d is missing from the capped markdown", r)
		}
	}
	if strings.Index(out, "#### Summary") > strings.Index(out, "#### Run order") {
		t.Error("the summary does not come before the racks")
	}
	if rows := strings.Count(out, "\n| `big/"); rows < 50 {
		t.Errorf("only %d server rows fit; the first racks should keep theirs", rows)
	}
	if !regexp.MustCompile(`- … and \d+ more warnings`).MatchString(out) {
		t.Error("no note on the warnings left out")
	}
	// A small plan is not folded.
	var small bytes.Buffer
	p, _, _ = makePlan(t, "../../../../../../planner/testdata/nexus")
	if err := WriteMarkdown(&small, p, "", 0); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(small.String(), "Folded") || strings.Contains(small.String(), "Truncated") {
		t.Error("a small plan was folded")
	}
}

// The markdown names the configuration by its directory's name, never by
// a path on the planning machine (review summary, item 1).
func TestMarkdownHasNoLocalPaths(t *testing.T) {
	for name, dir := range fixtures(t) {
		p, file, _ := makePlan(t, dir)
		abs, _ := filepath.Abs(dir)
		p.Config.Dir = abs
		var md bytes.Buffer
		if err := WriteMarkdown(&md, p, plan.SHA256(file), 0); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(md.String(), abs) || strings.Contains(md.String(), "../") {
			t.Errorf("%s: the markdown shows a local path", name)
		}
		if !strings.Contains(md.String(), "Configuration `"+filepath.Base(dir)+"`") {
			t.Errorf("%s: the configuration is not named by its directory", name)
		}
	}
}

func TestDuration(t *testing.T) {
	cases := map[time.Duration]string{
		0: "0m", 45 * time.Minute: "45m", 4*time.Hour + 36*time.Minute: "4h36m", 12 * time.Hour: "12h", 30 * time.Second: "30s",
		72*time.Hour + 30*time.Second: "72h",
	}
	for d, want := range cases {
		if got := Duration(plan.Duration(d)); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestMarkdownTruncationGolden(t *testing.T) {
	p, file, _ := makePlan(t, "../../../../../../examples/nexus-lab")
	var md bytes.Buffer
	const limit = 10000
	if err := WriteMarkdown(&md, p, plan.SHA256(file), limit); err != nil {
		t.Fatal(err)
	}
	if md.Len() > limit {
		t.Errorf("%d bytes over the %d limit", md.Len(), limit)
	}
	if !strings.Contains(md.String(), "> **Folded:**") || strings.Contains(md.String(), "**Truncated:**") {
		t.Error("at this size server rows must be folded and no rack left out")
	}
	golden(t, "nexus-lab.truncated.md", md.Bytes())

	// Only when even the folded racks do not fit is the run order one
	// row per cluster (here, not even the one), and the summary is still
	// whole.
	md.Reset()
	if err := WriteMarkdown(&md, p, plan.SHA256(file), 4096); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#### Summary", "**Versions**", "#### Run order, cluster by cluster", "> **Summarised:**", "> **Truncated:** the last 1 of 1 clusters (40 servers)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("no %q at a 4096-byte limit", want)
		}
	}
	if strings.Contains(md.String(), "rack by rack") {
		t.Error("racks listed although they do not fit")
	}
}

// A plan of 600 racks (issue 30: 3,334 at 100,000 servers) does not fit
// in a comment even a line per rack: its run order is one row per
// cluster, said so, every server counted; past the limit the last
// clusters are left out with a note.
func TestMarkdownSummarisesClusters(t *testing.T) {
	p, _, _ := makePlan(t, bigFleet(t, 600, 4))
	p.Config.Dir = "big"
	var md bytes.Buffer
	if err := WriteMarkdown(&md, p, "", 0); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{"#### Summary", "#### Run order, cluster by cluster", "> **Summarised:** 601 racks, batches and control planes do not fit",
		fmt.Sprintf("| `default` › `default` | `big` | 601 | %d |", len(p.Servers))} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the markdown", want)
		}
	}
	golden(t, "big-clusters.md", md.Bytes())

	// Many clusters: the rows that fit, then a note on the rest.
	entries := Entries(p)
	var many []Entry
	for i := range 2000 {
		c := *entries[0].Cluster
		c.Name = fmt.Sprintf("c%04d", i)
		e := entries[0]
		e.Cluster = &c
		many = append(many, e)
	}
	got := string(clusterRunOrder(many, 2000, 20000, MarkdownLimit))
	if len(got) > 20000 || !strings.Contains(got, "> **Truncated:** the last") || !strings.Contains(got, "| `c0000` |") {
		t.Errorf("%d bytes, no truncation note or no first cluster:\n%s", len(got), tail(got, 500))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// The renderings say who signed a plan, as the plan records it.
func TestSignerShown(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "fleet.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var text, md bytes.Buffer
	if err := WriteText(&text, p, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\n  unsigned\n") {
		t.Errorf("unsigned plan text:\n%s", text.String())
	}
	p.SignedBy = "SHA256:AbCd"
	text.Reset()
	if err := WriteText(&text, p, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, p, "", 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\n  signed by SHA256:AbCd\n") {
		t.Errorf("signed plan text:\n%s", text.String())
	}
	if !strings.Contains(md.String(), " Signed by `SHA256:AbCd`.") {
		t.Errorf("signed plan markdown:\n%s", md.String())
	}
}

func TestChangeTextMarksDowngradesAndUnorderedChanges(t *testing.T) {
	tests := []struct {
		c    plan.Change
		want string
	}{
		{plan.Change{Component: "bios", From: "2.70", To: "2.80"}, "bios 2.70 → 2.80"},
		{plan.Change{Component: "bios", From: "2.80", To: "2.70", Downgrade: true}, "bios 2.80 → 2.70 (downgrade)"},
		{plan.Change{Component: "cpld", From: "build-7f3a", To: "build-7f3b", Unordered: true}, "cpld build-7f3a → build-7f3b (change, not an upgrade)"},
	}
	for _, tt := range tests {
		if got := ChangeText(tt.c); got != tt.want {
			t.Errorf("ChangeText = %q, want %q", got, tt.want)
		}
	}
}

// Format 1.3's additions in every rendering: unobserved and held-back
// servers first, identity, delivery (method, transfer protocol, targets,
// digest), shared components flashed once, notes, images with digests.
func TestGoldenFormat13(t *testing.T) {
	text, md := renderGoldenFormat(t, "1.3")
	for _, want := range []string{
		"1 of 3 servers not observed: 1 unreachable:",
		"Held back: 1 server held back",
		"identity: Contoso R640, serial SN-0001, uuid 4c4c4544-0042-3010-8052-b2c04f4e3032, system System.Embedded.1",
		"update bios: simple_update HTTPS, targets /redfish/v1/Systems/System.Embedded.1, sha256 " + strings.Repeat("ab", 32),
		"bmc 7.10 → 7.20 (shared by the BMC, flashed once here)",
		"note: Component \"cpld\"",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if !strings.Contains(md.String(), "`http://127.0.0.1:9/bios-1.1.bin` | `"+strings.Repeat("ab", 32)+"`") {
		t.Errorf("markdown does not list the image with its digest:\n%s", md.String())
	}
}

// renderGoldenFormat renders planner/plan's golden file of format v as text,
// markdown and the JSON stream, checks each against its golden here
// (format-V.txt, .md, .jsonl), and returns the text and markdown.
func renderGoldenFormat(t *testing.T, v string) (text, md *bytes.Buffer) {
	t.Helper()
	b, err := os.ReadFile("../../../../../../planner/plan/testdata/format-" + v + "-signed.plan.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	text, md = new(bytes.Buffer), new(bytes.Buffer)
	var stream bytes.Buffer
	if err := WriteText(text, p, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(md, p, plan.SHA256(b), 0); err != nil {
		t.Fatal(err)
	}
	if err := newStreamAt(&stream, fixedNow).Plan(p); err != nil {
		t.Fatal(err)
	}
	golden(t, "format-"+v+".txt", text.Bytes())
	golden(t, "format-"+v+".md", md.Bytes())
	golden(t, "format-"+v+".jsonl", stream.Bytes())
	return text, md
}

// fixedNow stamps the golden streams.
func fixedNow() time.Time { return time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC) }

// Format 1.4 (the compact file: steps written once in its tables, the
// observation reduced to what the plan decides on) renders like any plan:
// both servers that share their steps show them in full.
func TestGoldenFormat14(t *testing.T) {
	text, _ := renderGoldenFormat(t, "1.4")
	for _, want := range []string{
		"identity: Contoso R640, serial SN-0001, uuid 4c4c4544-0042-3010-8052-b2c04f4e3032, system System.Embedded.1",
		"identity: Contoso R640, serial SN-0004, uuid 4c4c4544-0042-3010-8052-b2c04f4e3032, system System.Embedded.1",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	delivery := "update bios: simple_update HTTPS, targets /redfish/v1/Systems/System.Embedded.1, sha256 " + strings.Repeat("ab", 32)
	if n := strings.Count(text.String(), delivery); n != 2 {
		t.Errorf("the shared step is shown for %d servers, want 2:\n%s", n, text.String())
	}
}

// Format 1.5 (the inventory member model) renders what it added: how many
// members a change moves, the members each rule read with the copies it
// did not compare, the apply time each update sends or why none, and a
// BMC that took Basic auth; show -json carries the same.
func TestGoldenFormat15(t *testing.T) {
	text, md := renderGoldenFormat(t, "1.5")
	for _, want := range []string{
		"gpu 96.00.61.00.01 → 96.00.89.00.01 (8 members)",
		"members of bios: Installed-159-1.0__BIOS.Setup.1-1 1.0; not compared: Previous-159-0.9__BIOS.Setup.1-1 0.9 previous",
		"members of gpu: 8 members, HGX_FW_GPU_SXM_1 96.00.61.00.01, ",
		"update bios: simple_update HTTPS, targets /redfish/v1/Systems/System.Embedded.1, apply time OnReset, sha256 ",
		"update gpu: simple_update, targets /redfish/v1/UpdateService/FirmwareInventory/{HGX_FW_GPU_SXM_1, HGX_FW_GPU_SXM_2, ",
		"no apply time (the BMC lists no apply times for simple_update; it applies the image as it does by default)",
		"auth: Basic",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if !strings.Contains(md.String(), "simple_update HTTPS, apply time OnReset (2)") || !strings.Contains(md.String(), "simple_update, no apply time (2)") {
		t.Errorf("markdown does not say the apply times:\n%s", md.String())
	}
	b, err := os.ReadFile("../../../../../../planner/plan/testdata/format-1.5-signed.plan.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	js := BuildJSON(p, plan.SHA256(b))
	s := js.Servers["a/r01/s1"]
	if s.Auth != "basic" || s.Inventory[1].State != "previous" || s.Inventory[1].StateSign != "Id prefix Previous-" ||
		s.Changes[2].Members != 8 || s.Steps[3].Count != 8 || len(s.Steps[3].Members) != 8 || s.Steps[1].ApplyTimeFrom == "" {
		t.Errorf("show -json server %+v lacks the member model", s)
	}
}

// The headline counts servers not observed by what their BMC answered,
// from the servers: a BMC that answered without what the plan needs is
// never counted as unreachable, and an outcome of a newer plugin is
// counted under its own name (rule 46).
func TestNotObservedLineNamesEveryCause(t *testing.T) {
	p := &plan.Plan{Servers: []plan.Server{
		{Address: "a", Action: plan.ActionSkip, Reason: plan.ReasonUnreachable, Outcome: providers.OutcomeUnreachable},
		{Address: "b", Action: plan.ActionSkip, Reason: plan.ReasonUnusableAnswer, Outcome: providers.OutcomeUnusableAnswer},
		{Address: "c", Action: plan.ActionSkip, Reason: "firmware_locked", Outcome: "firmware_locked"},
		{Address: "d", Action: plan.ActionSkip, Reason: plan.ReasonUnreachable}, // format 1.2: no outcome
		{Address: "e", Action: plan.ActionUpgrade, Outcome: providers.OutcomeObserved},
	}}
	p.Summary = plan.Summary{Upgrade: 1, Skip: 4, NotObserved: 4, Unreachable: 2}
	want := "4 of 5 servers not observed: 2 unreachable, 1 answered without what the plan needs, 1 firmware locked"
	if got := NotObservedLine(p); got != want {
		t.Errorf("NotObservedLine = %q, want %q", got, want)
	}
	groups := Unobserved(p)
	if len(groups) != 2 || groups[1] != [2]string{"1 answered without what the plan needs", "b"} {
		t.Errorf("Unobserved = %q", groups)
	}
}

// newStreamAt returns a stream whose lines are stamped by now.
func newStreamAt(w io.Writer, now func() time.Time) *Stream {
	s := NewStream(w)
	s.w.Now = now
	return s
}
