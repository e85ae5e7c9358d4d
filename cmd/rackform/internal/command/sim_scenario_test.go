package command

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/providers/sim"
)

// sim -scenario translates a scenario into the simulator's faults, per
// BMC: one component's failing updates and slow steps under the
// simulator's name of the component, and timed faults on the simulator's
// clock (-speed 600: an hour of the scenario is six seconds from now),
// a 503 spell with a Retry-After of its length; it refuses, at its line,
// a host fault on a BMC that serves two servers.
func TestSimScenarioFaults(t *testing.T) {
	cfg := loadTestConfig(t, simConfigFleet)
	c := &simCommand{Meta: &Meta{Streams: Streams{Stderr: &strings.Builder{}}, Getenv: func(string) string { return "" }}, profile: "dmtf", speed: 600}
	if _, err := c.specsFromConfig(cfg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.hcl", `
fault "update_fails" {
  servers   = ["lab/r1/a"]
  component = "nic"
}
fault "host_down" {
  servers = ["lab/r1/a"]
  at      = "10m"
  for     = "20m"
}
fault "slow" {
  servers   = ["lab/r1/b"]
  factor    = 3
  steps     = ["update", "reset"]
  component = "bios"
}
fault "bmc_busy" {
  servers = ["lab/r1/b"]
  at      = "1h"
  for     = "1h"
}
fault "bmc_down" {
  servers = ["lab/r1/old"]
  at      = "2h"
}
`)
	before := time.Now()
	faults, _, diags := c.scenarioFaults(cfg, good)
	after := time.Now()
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	// Times are checked against the moments around the call, then
	// left out of the comparison.
	near := func(got time.Time, off time.Duration) bool {
		return !got.Before(before.Add(off)) && !got.After(after.Add(off))
	}
	for name, fs := range faults {
		for i := range fs {
			tm := &fs[i].Timed
			switch {
			case tm.From.IsZero() && tm.Until.IsZero():
			case name == "a" && near(tm.From, time.Second) && tm.Until.Sub(tm.From) == 2*time.Second,
				name == "b" && near(tm.From, 6*time.Second) && tm.Until.Sub(tm.From) == 6*time.Second,
				name == "old" && near(tm.From, 12*time.Second) && tm.Until.IsZero():
				tm.From, tm.Until = time.Time{}, time.Time{}
			default:
				t.Errorf("%s: %s from %s until %s (called between %s and %s)", name, fs[i].Kind, tm.From, tm.Until, before, after)
			}
		}
	}
	want := map[string][]sim.Fault{
		"a":   {{Kind: sim.FaultTaskFail, Timed: sim.Timed{Component: "NIC"}}, {Kind: sim.FaultHostDown}},
		"b":   {{Kind: sim.FaultSlow, Timed: sim.Timed{Component: "BIOS", Factor: 3, Steps: "update,reset"}}, {Kind: sim.FaultBusy, Latency: 6 * time.Second}},
		"old": {{Kind: sim.FaultDown}},
	}
	if d := cmp.Diff(want, faults); d != "" {
		t.Errorf("the simulator's faults (-want +got):\n%s", d)
	}

	bad := write("bad.hcl", `
fault "host_down" {
  servers = ["lab/r1/node1"]
}
`)
	_, _, diags = c.scenarioFaults(cfg, bad)
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%s:%d %s", filepath.Base(d.Subject.Filename), d.Subject.Start.Line, d.Detail))
	}
	wantBad := []string{
		"bad.hcl:2 The host_down fault hits server lab/r1/node1, whose BMC serves 2 servers: the simulator would take them all down; rehearse it with rackform rehearse -scenario instead.",
	}
	if d := cmp.Diff(wantBad, got); d != "" {
		t.Errorf("refusals (-want +got):\n%s", d)
	}
}
