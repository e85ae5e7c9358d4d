package rehearseview

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// start puts the rehearsals on the calendar: the afternoon the fixture
// plan was made (testdata/fleet.plan.json, a plan of examples/fleet made
// against rackform sim -config examples/fleet).
var start = time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)

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

func fleetPlan(t *testing.T) (*plan.Plan, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fleet.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return p, plan.SHA256(b)
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name, scenario string
		exit           int
	}{
		{"fleet", "", 0},
		{"fleet-broken-rack", "fleet-broken-rack.hcl", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, sha := fleetPlan(t)
			var faults *rehearsal.Faults
			if c.scenario != "" {
				sc, diags := rehearsal.LoadScenario(filepath.Join("..", "..", "..", "..", "..", "..", "examples", "scenarios", c.scenario))
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				faults, diags = sc.Resolve(rehearsal.PlanTargets(p), start)
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				faults.Name = c.scenario
			}
			var stream bytes.Buffer
			js := NewJSON(&stream, start)
			js.Version("0.0.0-test")
			res, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: sha, Faults: faults, Seed: 1, Start: start, Events: js})
			if err != nil {
				t.Fatal(err)
			}
			res.Schedule.Outcome.ExitCode = c.exit
			if err := js.Schedule(res.Schedule); err != nil {
				t.Fatal(err)
			}
			var text, color bytes.Buffer
			if err := WriteText(&text, p, res.Schedule, false, ""); err != nil {
				t.Fatal(err)
			}
			if err := WriteText(&color, p, res.Schedule, true, ""); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".txt", text.Bytes())
			golden(t, c.name+".color.txt", color.Bytes())
			golden(t, c.name+".jsonl", stream.Bytes())
			var page bytes.Buffer
			if err := WriteHTML(&page, p, res.Schedule); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".html", page.Bytes())
			if strings.Contains(text.String(), "\x1b[") {
				t.Error("colour in the plain text")
			}
		})
	}
}

// The text says what a reviewer needs from the fleet example: east does
// not fit its window, the canary gate holds prod, the total against the
// plan's estimate and the critical path.
func TestFleetSays(t *testing.T) {
	for name, want := range map[string][]string{
		"fleet.txt": {
			"east: does not fit: its work runs until Sun 29 Nov 06:57, 3h57m past the window's close at Sun 29 Nov 03:00",
			"gate canary-ok reached Sat 28 Nov 05:12, holding stage prod; approved 05:12 (after 0s)",
			"Total: 1d14h57m",
			"the executor's overhead is 1.000×",
		},
		"fleet-broken-rack.txt": {
			"threshold breached at Sun 29 Nov 07:59: 2 failed > budget 0 (N=2, required 2, succeeded 0)",
			"paused, threshold breached at Sun 29 Nov 07:59",
			"Outcome: failed (threshold)",
		},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !bytes.Contains(b, []byte(w)) {
				t.Errorf("%s does not say %q", name, w)
			}
		}
	}
}
