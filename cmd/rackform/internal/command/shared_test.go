package command

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

const sharedChassis = `provider "redfish" {}

release "r" {
  version = "4.6.1"
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bios.bin"
    match {
      id = "BIOS"
    }
  }
  component "bmc" {
    version    = "1.50"
    scheme     = "dotted"
    image      = "http://127.0.0.1:9/bmc.bin"
    apply_time = "Immediate"
    reboot     = false
    match {
      id = "BMC"
    }
  }
}

cluster "lab" {
  release = release.r
  rack "r1" {
    server "cp1" {
      bmc  = "https://127.9.1.1:8443"
      role = "control_plane"
    }
    server "cp2" {
      bmc  = "https://127.9.1.2:8443"
      role = "control_plane"
    }
    server "cp3" {
      bmc  = "https://127.9.1.3:8443"
      role = "control_plane"
    }
    server "n0" {
      bmc    = "https://127.9.1.9:8443"
      system = "Node0"
      role   = "compute"
    }
    server "n1" {
      bmc    = "https://127.9.1.9:8443"
      system = "Node1"
      role   = "compute"
    }
  }
}
`

// Shared components, plan to apply: on a two-system BMC with a server per
// system, each system's BIOS is flashed on its own server and the BMC's
// own firmware exactly once, by one server, after the other was shut
// down; the summary counts it once.
func TestSharedComponentFlashedOnceFromPlanToApply(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(sharedChassis), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: planTestEnv}).Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	fakes := plannertest.FromConfig(cfg, behindState)
	for addr, o := range fakes["redfish"].Servers {
		for i := range o.Components {
			if o.Components[i].ID == "BMC" {
				o.Components[i].Shared = strings.HasPrefix(addr, "lab/r1/n")
				o.Components[i].Source = providers.SourceManager
			}
		}
	}
	p, pd := planner.Plan(context.Background(), cfg, planner.Options{
		Providers: map[string]providers.Provider{"redfish": fakes["redfish"]},
		Now:       executortest.Epoch, RackformVersion: "test",
	})
	if pd.HasErrors() {
		t.Fatal(pd.Error())
	}
	if p.Summary.SharedUpdates != 1 {
		t.Errorf("shared updates counted %d times", p.Summary.SharedUpdates)
	}
	prov := executortest.NewProvider()
	for i := range p.Servers {
		// The apply fake fingerprints its own way; the plan's must match
		// it for the drift check.
		p.Servers[i].Fingerprint = executortest.Fingerprint(p.Servers[i].Observed.Components)
	}
	for _, s := range p.Servers {
		targets := map[string]string{}
		for _, st := range s.Steps {
			if st.Match != nil {
				targets[st.Match.ID] = st.Target.Version
			}
		}
		prov.Add(s.Address, s.Observed.Components, targets, executortest.Script{})
	}
	e, err := executor.New(executor.Options{
		Plan: p, PlanSHA256: strings.Repeat("ab", 32),
		Providers: map[string]providers.Provider{"redfish": prov},
		Backend:   state.NewMemory(), Clock: executortest.NewClock(executortest.Epoch), Hooks: executortest.NewHooks(),
		Synchronous: true, PollInterval: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Run(context.Background(), context.Background())
	if err != nil || out.Status != executor.OutcomeCompleted {
		st, _ := e.Status(context.Background())
		var msgs []string
		var walk func(n *executor.Node)
		walk = func(n *executor.Node) {
			if n.Kind == executor.KindServer {
				msgs = append(msgs, n.ID+": "+n.State.String()+" "+n.Message)
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(st.Run)
		t.Fatalf("run: %v %+v\n%s", err, out, strings.Join(msgs, "\n"))
	}
	var calls []string
	bmc := map[string]int{}
	for _, c := range prov.Calls() {
		calls = append(calls, c.Server+" "+string(c.Kind)+" "+c.Component)
		if c.Component == "bmc" {
			bmc[c.Server]++
		}
	}
	// The control plane has BMCs of its own: each flashes its own.
	want := map[string]int{"lab/r1/cp1": 1, "lab/r1/cp2": 1, "lab/r1/cp3": 1, "lab/r1/n1": 1}
	if len(bmc) != len(want) {
		t.Errorf("bmc flashed on %v, want %v", bmc, want)
	}
	for a, n := range want {
		if bmc[a] != n {
			t.Errorf("%s flashed the bmc %d times, want %d (calls %q)", a, bmc[a], n, calls)
		}
	}
	for _, a := range []string{"lab/r1/n0", "lab/r1/n1"} {
		if !slices.Contains(calls, a+" update bios") {
			t.Errorf("%s's own BIOS was not flashed: %q", a, calls)
		}
	}
	if i, j := slices.Index(calls, "lab/r1/n0 shutdown "), slices.Index(calls, "lab/r1/n1 update bmc"); i < 0 || j < i {
		t.Errorf("the shared BMC firmware was flashed before n0 was shut down: %q", calls)
	}
	var n0 *plan.Server
	for i := range p.Servers {
		if p.Servers[i].Address == "lab/r1/n0" {
			n0 = &p.Servers[i]
		}
	}
	for _, c := range n0.Changes {
		if c.Component == "bmc" && c.FlashedBy != "lab/r1/n1" {
			t.Errorf("n0's bmc change: %+v", c)
		}
	}
}
