package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRehearseFleetExample is what a new user does with examples/fleet:
// serve it with rackform sim -config, plan it, and rehearse the plan. In
// well under a second of wall time for a day and a half of rollout, the
// rehearsal says that east does not fit its maintenance window and that
// the canary gate holds prod; with the scenario that breaks one compute
// rack it shows the pause at that rack with the threshold's numbers; and
// the same seed gives the same -json stream, byte for byte.
func TestRehearseFleetExample(t *testing.T) {
	e := newE2EEnv(t)
	e.env = append(e.env, "RACKFORM_VAR_bmc_password="+e2ePassword)
	if err := copyDir(filepath.Join(examplesDir, "fleet"), filepath.Join(e.work, "fleet")); err != nil {
		t.Fatal(err)
	}
	if err := copyDir(filepath.Join(examplesDir, "scenarios"), filepath.Join(e.work, "scenarios")); err != nil {
		t.Fatal(err)
	}
	startSimConfig(t, e, "fleet")
	if code, out := e.run(t, "plan", "-no-color", "-out", "fleet.plan", "fleet"); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	// The plan was made now; the rehearsal starts now too (to the minute).
	code, out := e.run(t, "rehearse", "fleet.plan")
	if code != 0 {
		t.Fatalf("rehearse: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"east: does not fit: its work runs until ",
		"past the window's close at ",
		"  gate canary-ok reached ",
		", holding stage prod; approved ",
		"the executor's overhead is 1.000×",
		"Outcome: completed: 23 servers upgraded, 0 failed, 0 skipped; apply would exit 0 here.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rehearse does not say %q", want)
		}
	}
	if t.Failed() {
		t.Logf("rehearse:\n%s", out)
	}

	code, out = e.run(t, "rehearse", "-scenario", "scenarios/fleet-broken-rack.hcl", "fleet.plan")
	if code != 1 {
		t.Errorf("rehearse of the broken rack: exit %d, want 1 (the rollout's stage fails fast)", code)
	}
	for _, want := range []string{
		"      east/e02  ",
		"        threshold breached at ",
		": 2 failed > budget 0 (N=2, required 2, succeeded 0)",
		"        paused, threshold breached at ",
		"east/e02/e02-s3",
		"failed(unhealthy): did not come back healthy and at target",
		"Outcome: failed (threshold)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rehearse of the broken rack does not say %q", want)
		}
	}
	if t.Failed() {
		t.Logf("rehearse -scenario:\n%s", out)
	}

	var streams []string
	for range 2 {
		code, out := e.run(t, "rehearse", "-json", "-seed", "11", "-start", "2026-11-27T16:00:00Z", "-scenario", "scenarios/fleet-bad-night.hcl", "fleet.plan")
		if code != 0 {
			t.Fatalf("rehearse -json: exit %d\n%s", code, lastLines(out, 20))
		}
		if err := validateOutput("ui-events", []byte(out)); err != nil {
			t.Error(err)
		}
		streams = append(streams, out)
	}
	if streams[0] != streams[1] {
		t.Error("two rehearsals with the same seed wrote different -json streams")
	}
}
