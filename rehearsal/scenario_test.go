package rehearsal

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Mistakes in a scenario are reported each at its file:line, all at once.
func TestScenarioDiagnostics(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // "line: summary: detail fragment"
	}{
		{"unknown kind", `fault "on_fire" {
  servers = ["canary/c01/c01-s01"]
}`, []string{`1: Unknown fault kind: There is no fault "on_fire"`}},
		{"attribute of another kind", `fault "never_ready" {
  servers = ["canary/c01/c01-s01"]
  for     = "10m"
}`, []string{"3: Attribute not used by this fault: A never_ready fault has no for."}},
		{"no servers", `fault "update_fails" {
  component = "bios"
}`, []string{"1: Fault without servers"}},
		{"bad duration and time", `fault "bmc_busy" {
  servers = ["canary/c01/c01-s01"]
  at      = "soon"
  for     = "-5m"
}`, []string{`4: Invalid duration: for is "-5m"`, `3: Invalid time: at is "soon"`}},
		{"slow without factor", `fault "slow" {
  clusters = ["canary"]
  steps    = ["update", "teleport"]
}`, []string{"1: Missing factor", `3: Unknown step kind: steps names "teleport"`}},
		{"unknown names", `fault "never_ready" {
  servers = ["canary/c01/c01-s01", "nowhere/x/y"]
  racks   = ["canary/c09"]
  roles   = ["compute", "janitor"]
}
fault "update_fails" {
  clusters  = ["canary"]
  component = "gpu"
}`, []string{`4: Unknown role: roles names "janitor"`, `2: Unknown server: The plan has no server "nowhere/x/y"`, `3: Unknown rack: The plan has no rack "canary/c09"`,
			`8: Unknown component: The plan updates no component "gpu" on any server; it updates bios, runtime.`}},
		{"random", `random {
  fail = { update = 1.5, warp = 0.1 }
  slow = { reimage = 0.5 }
}`, []string{`2: Invalid probability: fail.update is 1.5`, `2: Unknown step kind: fail names "warp"`, "1: Missing factor"}},
		{"syntax", `fault "never_ready" {
  servers = [
`, []string{"3: "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Every mistake at once: names are checked even when the
			// file has others.
			sc, diags := ParseScenario([]byte(c.src), "s.hcl")
			_, more := sc.Resolve(PlanTargets(fleetPlan()), start)
			diags = append(diags, more...)
			var got []string
			for _, d := range diags {
				line := 0
				if d.Subject != nil {
					line = d.Subject.Start.Line
					if d.Subject.Filename != "s.hcl" {
						t.Errorf("diagnostic in %q", d.Subject.Filename)
					}
				}
				got = append(got, strings.TrimSpace(strings.Join([]string{strconv.Itoa(line) + ":", d.Summary + ":", d.Detail}, " ")))
			}
			for _, w := range c.want {
				found := false
				for _, g := range got {
					found = found || strings.HasPrefix(g, w)
				}
				if !found {
					t.Errorf("no diagnostic %q in:\n%s", w, strings.Join(got, "\n"))
				}
			}
			if len(got) != len(c.want) {
				t.Errorf("%d diagnostics, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
		})
	}
}

// A scenario resolves to the servers it names, by address, rack, cluster
// and role, at times from the rehearsal's start.
func TestScenarioResolves(t *testing.T) {
	sc, diags := ParseScenario([]byte(`
description = "two faults"
fault "host_down" {
  servers = ["canary/c01/c01-s02"]
  at      = "2h"
  for     = "30m"
}
fault "slow" {
  racks     = ["east/e01"]
  roles     = ["compute"]
  factor    = 3
  component = "bios"
}
fault "bmc_down" {
  servers = ["west/w01/w01-s04"]
  at      = "2026-11-21T20:00:00Z"
}
random {
  fail   = { update = 0.01 }
}
`), "s.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f, diags := sc.Resolve(PlanTargets(fleetPlan()), start)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, x := range f.List {
		at := "-"
		if !x.At.IsZero() {
			at = x.At.Sub(start).String()
		}
		got = append(got, x.Server+" "+x.Kind+" "+at+" "+x.For.String()+" "+x.Component)
	}
	want := []string{
		"canary/c01/c01-s02 host_down 2h0m0s 30m0s ",
		"east/e01/e01-s01 slow - 0s bios",
		"east/e01/e01-s02 slow - 0s bios",
		"east/e01/e01-s03 slow - 0s bios",
		"west/w01/w01-s04 bmc_down 8h0m0s 0s ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("resolved faults (-want +got):\n%s", d)
	}
	if sc.Description != "two faults" || f.Random.Fail["update"] != 0.01 {
		t.Errorf("description %q, random %+v", sc.Description, f.Random)
	}
}

// A scenario refuses to resolve to more than MaxFaults faults (a
// megabyte of fault blocks, each hitting every server, cost gigabytes).
func TestScenarioBounds(t *testing.T) {
	targets := []Target{{Address: "c/r/s", Name: "s", Cluster: "c", Rack: "r", Role: "compute"}}
	for i := range 1000 {
		n := strconv.Itoa(i)
		targets = append(targets, Target{Address: "c/r/s" + n, Name: "s" + n, Cluster: "c", Rack: "r", Role: "compute"})
	}
	block := "fault \"slow\" {\n  clusters = [\"c\"]\n  factor   = 2\n}\n"
	for _, tc := range []struct {
		blocks int
		want   string
	}{
		{999, ""},
		{1000, "3997: Too many faults: With this fault the scenario gives the plan's servers more than 1000000 faults"},
	} {
		sc, diags := ParseScenario([]byte(strings.Repeat(block, tc.blocks)), "blocks.hcl")
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		faults, diags := sc.Resolve(targets, time.Now())
		switch {
		case tc.want == "" && (diags.HasErrors() || len(faults.List) != 999*1001):
			t.Errorf("%d blocks: %d faults, %v", tc.blocks, len(faults.List), diags)
		case tc.want != "" && (len(diags) != 1 || !strings.HasPrefix(fmt.Sprintf("%d: %s: %s", diags[0].Subject.Start.Line, diags[0].Summary, diags[0].Detail), tc.want) || len(faults.List) != 0):
			t.Errorf("%d blocks: %d faults, %v; want %q", tc.blocks, len(faults.List), diags, tc.want)
		}
	}
}
