package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestChannelsExampleAppliesWithOneSitePending: examples/channels planned
// and applied against `rackform sim -config examples/channels`: the rapid
// channel with consistent images picks 4.6.2 for every cluster, north-1 is
// pending (4.6.2 is not at site north), apply upgrades the other clusters
// and pauses; once the catalog publishes 4.6.2 at north, continue applies
// north-1 and the fleet is at the channel's release (plan exits 0).
// Seed: "choose Consistent to improve reliability by using and verifying
// those images in clusters in earlier stages before using them in later
// clusters": the canary stage's west-1 gets the very release prod's east-1
// gets, though west has a newer one.
// Only the provider's poll timings are shortened, and the simulator runs
// at -speed 60000, so the test takes seconds.
func TestChannelsExampleAppliesWithOneSitePending(t *testing.T) {
	e := newE2EEnv(t)
	e.env = append(e.env, "RACKFORM_BMC_PASSWORD="+e2ePassword)
	dir := filepath.Join(e.work, "channels")
	if err := copyDir(filepath.Join(examplesDir, "channels"), dir); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "main.rf.hcl")
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	fast := strings.Replace(string(src), "  insecure = true\n", "  insecure = true\n  poll_interval = \"10ms\"\n  retry_base_delay = \"5ms\"\n  retry_max_delay = \"20ms\"\n", 1)
	if fast == string(src) {
		t.Fatal("the example's provider block changed: update this test's edit")
	}
	if err := os.WriteFile(main, []byte(fast), 0o644); err != nil {
		t.Fatal(err)
	}
	startSimConfig(t, e, "channels", "-speed", "60000")

	code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", "channels")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	var choices []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " → ") && !strings.HasPrefix(strings.TrimSpace(l), "~") {
			choices = append(choices, strings.TrimSpace(l))
		}
	}
	t.Logf("the plan's choices:\n%s", strings.Join(choices, "\n"))
	want := []string{
		"west-1 → 4.6.2: rapid: newest minor 4.6, latest patch 4.6.3; sites east, west have 4.6.2 in common (site east has 4.6.2 only) → consistent picks 4.6.2",
		"east-1 → 4.6.2: rapid: newest minor 4.6, latest patch 4.6.3; sites east, west have 4.6.2 in common (site east has 4.6.2 only) → consistent picks 4.6.2",
		"north-1 → 4.6.2 (pending): rapid: newest minor 4.6, latest patch 4.6.3; sites east, west have 4.6.2 in common (site east has 4.6.2 only) → consistent picks 4.6.2; pending: release 4.6.2 is not yet available at site north (published at east, west)",
	}
	if !slices.Equal(choices, want) {
		t.Errorf("choices:\n%s\nwant:\n%s", strings.Join(choices, "\n"), strings.Join(want, "\n"))
	}
	if !regexp.MustCompile(`(?m)^Plan: 9 servers to upgrade in 3 racks, 0 skipped`).MatchString(out) {
		t.Errorf("plan summary:\n%s", out)
	}

	code, out = e.run(t, "apply", "-no-color", "-allow-unsigned", "plan.json")
	if code != 3 || !strings.Contains(out, "Apply paused (availability): pending until the release is available: cluster.north-1: release 4.6.2 is not yet available at site north") {
		t.Fatalf("apply: exit %d, want 3 paused(availability)\n%s", code, out)
	}
	for _, s := range []string{"west-1 control plane: completed: 3/3 done", "east-1 control plane: completed: 3/3 done"} {
		if !strings.Contains(out, s) {
			t.Errorf("apply output lacks %q", s)
		}
	}
	if strings.Contains(out, "north-1/n01") {
		t.Errorf("apply touched the pending cluster:\n%s", out)
	}
	code, out = e.run(t, "status")
	if code != 0 || !strings.Contains(out, "cluster cluster.north-1: pending(availability) release 4.6.2 is not yet available at site north") {
		t.Errorf("status: exit %d\n%s", code, out)
	}

	// 4.6.2 reaches site north.
	publishAt(t, filepath.Join(dir, "catalog.json"), "4.6.2", "north")
	code, out = e.run(t, "continue", "-no-color", "-allow-unsigned")
	if code != 0 || !strings.Contains(out, "Apply complete: 9 servers upgraded, 0 failed, 0 skipped") {
		t.Fatalf("continue: exit %d, want 0\n%s", code, out)
	}
	if !strings.Contains(out, "Cluster cluster.north-1: release 4.6.2 is now available at site north (catalog catalog.json read again by continue); starting it") {
		t.Errorf("continue does not say it found the release:\n%s", out)
	}
	code, out = e.run(t, "plan", "-no-color", "-detailed-exitcode", "channels")
	if code != 0 {
		t.Errorf("plan after the run: exit %d, want 0 (every cluster at the channel's release)\n%s", code, out)
	}
}

// publishAt adds site to the sites of catalog release v.
func publishAt(t *testing.T, path, v, site string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cat map[string]map[string]map[string]any
	if err := json.Unmarshal(b, &cat); err != nil {
		t.Fatal(err)
	}
	r := cat["release"][v]
	if r == nil {
		t.Fatalf("catalog has no release %s", v)
	}
	r["sites"] = append(r["sites"].([]any), site)
	out, err := json.MarshalIndent(cat, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
