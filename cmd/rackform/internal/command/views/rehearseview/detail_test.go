package rehearseview

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal"
)

// brokenRack is the broken-rack rehearsal of the fixture plan.
func brokenRack(t *testing.T) (*plan.Plan, *rehearsal.Result) {
	t.Helper()
	p, sha := fleetPlan(t)
	sc, diags := rehearsal.LoadScenario(filepath.Join("..", "..", "..", "..", "..", "..", "examples", "scenarios", "fleet-broken-rack.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	faults, diags := sc.Resolve(rehearsal.PlanTargets(p), start)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	faults.Name = "fleet-broken-rack.hcl"
	res, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: sha, Faults: faults, Seed: 1, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	res.Schedule.Outcome.ExitCode = 1
	return p, res
}

// At racks detail the broken rack's failed servers stay, the others go;
// at clusters detail only the rack that breached stays under east, with
// its failed servers, and each cluster counts what was left out.
func TestDetail(t *testing.T) {
	p, res := brokenRack(t)
	for _, d := range []Detail{DetailRacks, DetailClusters} {
		var b bytes.Buffer
		if err := WriteText(&b, p, res.Schedule, false, d); err != nil {
			t.Fatal(err)
		}
		golden(t, "fleet-broken-rack."+string(d)+".txt", b.Bytes())
		out := b.String()
		for _, want := range []string{"east/e02/e02-s3", "east/e02/e02-s4", "threshold breached at Sun 29 Nov 07:59: 2 failed > budget 0 (N=2, required 2, succeeded 0)", "Detail: "} {
			if !strings.Contains(out, want) {
				t.Errorf("at %s detail the text does not say %q", d, want)
			}
		}
		if strings.Contains(out, "east/e01/e01-s3 ") {
			t.Errorf("at %s detail the text lists a server that completed", d)
		}
		switch d {
		case DetailRacks:
			if !strings.Contains(out, "      east/e01  ") {
				t.Error("at racks detail east/e01 is missing")
			}
		case DetailClusters:
			if strings.Contains(out, "east/e01 ") || !strings.Contains(out, "      east/e02  ") {
				t.Error("at clusters detail the rack that completed is shown, or the one that breached is not")
			}
			if !strings.Contains(out, "6 racks and batches (1 shown); servers: 8 upgraded, 2 failed, 2 not reached") {
				t.Errorf("at clusters detail east's count is missing:\n%s", out)
			}
		}
	}
}

// The default detail is what the plan's size makes readable: servers up
// to 100 servers to upgrade, racks up to 100 racks and batches, clusters
// beyond; a rehearsal of 10,000 servers prints a page, not 10,000 lines.
func TestDefaultDetail(t *testing.T) {
	for _, tc := range []struct {
		clusters, racks, servers int
		want                     Detail
	}{
		{1, 3, 30, DetailServers},
		{2, 10, 5, DetailServers},
		{2, 25, 40, DetailRacks},
		{10, 25, 40, DetailClusters},
	} {
		p := generated(tc.clusters, tc.racks, tc.servers)
		if got := DefaultDetail(p); got != tc.want {
			t.Errorf("%d clusters of %d racks of %d servers: %s, want %s", tc.clusters, tc.racks, tc.servers, got, tc.want)
		}
	}
	if testing.Short() {
		t.Skip("rehearsing 10,000 servers takes seconds")
	}
	p := generated(10, 25, 40)
	res, err := rehearsal.Run(context.Background(), rehearsal.Options{Command: views.Canonical, Plan: p, PlanSHA256: strings.Repeat("ef", 32), Start: start})
	if err != nil {
		t.Fatal(err)
	}
	lines := map[Detail]int{}
	for _, d := range Details() {
		var b bytes.Buffer
		if err := WriteText(&b, p, res.Schedule, false, d); err != nil {
			t.Fatal(err)
		}
		lines[d] = strings.Count(b.String(), "\n")
	}
	var b bytes.Buffer
	if err := WriteText(&b, p, res.Schedule, false, ""); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); lines[DetailServers] < 10000 || lines[DetailRacks] > 1000 || lines[DetailClusters] > 100 || n != lines[DetailClusters] {
		t.Errorf("10,000 servers: %d lines at servers, %d at racks, %d at clusters; %d by default (want clusters, under 100)", lines[DetailServers], lines[DetailRacks], lines[DetailClusters], n)
	}
	t.Logf("10,000 servers: %v lines", lines)
}

// generated is a plan of clusters×racks×servers in two groups side by
// side, every server a 40-minute BIOS update, 8 at a time per rack.
func generated(clusters, racks, servers int) *plan.Plan {
	p := &plan.Plan{FormatVersion: plan.FormatVersion, CreatedAt: start, NotAfter: start.Add(30 * 24 * time.Hour), Run: plan.Run{Name: "gen", Scope: "full"}}
	st := plan.Stage{ID: "stage.main", Name: "main", OnBreach: "pause"}
	for gi := 0; gi < 2; gi++ {
		g := plan.Group{ID: fmt.Sprintf("stage.main.group.g%d", gi), Name: fmt.Sprintf("g%d", gi)}
		for ci := gi; ci < clusters; ci += 2 {
			name := fmt.Sprintf("c%02d", ci)
			c := plan.Cluster{ID: "cluster." + name, Name: name}
			ph := plan.Phase{ID: c.ID + ".compute", Kind: plan.PhaseCompute}
			for ri := 0; ri < racks; ri++ {
				rack := fmt.Sprintf("r%02d", ri)
				sc := plan.Scope{ID: ph.ID + ".rack." + rack, Kind: "rack", Name: rack, Rack: rack, Threshold: plan.Threshold{Type: "percent", Value: 90},
					Eligible: servers, Required: (servers*9 + 9) / 10, Budget: servers / 10, MaxUnavailable: 8, OnBreach: "pause"}
				for n := 0; n < servers; n++ {
					addr := fmt.Sprintf("%s/%s/s%02d", name, rack, n)
					sc.Servers = append(sc.Servers, addr)
					p.Servers = append(p.Servers, plan.Server{Address: addr, Name: fmt.Sprintf("%s-%s-s%02d", name, rack, n), Cluster: name, Rack: rack, Role: "compute", BMC: "https://" + addr,
						Action: plan.ActionUpgrade, Steps: []plan.Step{{Index: 1, Kind: plan.StepUpdate, Component: "bios", Target: version.Target{Version: "2.2"}, Estimate: plan.Duration(40 * time.Minute)}}})
				}
				ph.Scopes = append(ph.Scopes, sc)
			}
			c.Phases = []plan.Phase{ph}
			g.Clusters = append(g.Clusters, c)
		}
		if len(g.Clusters) > 0 {
			st.Groups = append(st.Groups, g)
		}
	}
	p.Run.Stages = []plan.Stage{st}
	return p
}
