package planner

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
)

// devicesSrc is two racks of two compute servers, each rack with a switch
// tray, and rack r1 with a power shelf; STRATEGY is replaced.
const devicesSrc = `
provider "redfish" {}

release "r" {
  version = "1.0.0"
  component "bios" {
    version = "2.0"
    scheme  = "dotted"
    image   = "https://127.0.0.1/bios.bin"
    match {
      id = "BIOS"
    }
  }
  component "tray_bmc" {
    devices = ["switch_tray"]
    version = "35_2014_4770"
    scheme  = "vendor"
    image   = "https://127.0.0.1/tray.bin"
    match {
      id = "BMC"
    }
  }
  component "shelf_fw" {
    devices = ["power_shelf"]
    version = "1.4.0"
    image   = "https://127.0.0.1/shelf.bin"
    match {
      id = "PSU_FW"
    }
  }
}

strategy "s" {
  STRATEGY
}

cluster "c" {
  release  = release.r
  strategy = strategy.s
  rack "r2" {
    server "r2-s1" {
      bmc  = "https://127.0.2.1"
      role = "compute"
    }
    server "r2-s2" {
      bmc  = "https://127.0.2.2"
      role = "compute"
    }
    device "r2-tray" {
      kind = "switch_tray"
      bmc  = "https://127.0.2.9"
    }
  }
  rack "r1" {
    server "r1-s1" {
      bmc  = "https://127.0.1.1"
      role = "compute"
    }
    device "r1-tray" {
      kind = "switch_tray"
      bmc  = "https://127.0.1.9"
    }
    device "r1-shelf" {
      kind = "power_shelf"
      bmc  = "https://127.0.1.8"
    }
    server "r1-s2" {
      bmc  = "https://127.0.1.2"
      role = "compute"
    }
  }
}
`

func devicesConfig(t *testing.T, strategy string) *config.Config {
	return loadText(t, strings.Replace(devicesSrc, "STRATEGY", strategy, 1))
}

func phaseKinds(p *plan.Plan) []plan.PhaseKind {
	var out []plan.PhaseKind
	for _, ph := range p.Run.Stages[0].Groups[0].Clusters[0].Phases {
		out = append(out, ph.Kind)
	}
	return out
}

// TestDevicesPlanned: devices are planned in a phase of their own, rack
// by rack in the compute order, after the servers by default and before
// them with devices = "before_servers"; each gets its kind's components
// only, as updates applied at once and a wait for readiness, and no host
// step (no drain, shutdown, reset or reimage); the servers' steps do not
// change.
func TestDevicesPlanned(t *testing.T) {
	for _, tt := range []struct {
		strategy string
		want     []plan.PhaseKind
	}{
		{"", []plan.PhaseKind{plan.PhaseCompute, plan.PhaseDevices}},
		{`devices = "after_servers"`, []plan.PhaseKind{plan.PhaseCompute, plan.PhaseDevices}},
		{`devices = "before_servers"`, []plan.PhaseKind{plan.PhaseDevices, plan.PhaseCompute}},
	} {
		t.Run(tt.strategy, func(t *testing.T) {
			p := mustPlan(t, devicesConfig(t, tt.strategy+"\n  compute {\n    wait_after_rack = \"7m\"\n  }"), nil, nil)
			if diff := cmp.Diff(tt.want, phaseKinds(p)); diff != "" {
				t.Errorf("phases (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"r1: r1-tray r1-shelf", "r2: r2-tray"}, scopeServers(p, plan.PhaseDevices)); diff != "" {
				t.Errorf("device scopes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"r1: r1-s1 r1-s2", "r2: r2-s1 r2-s2"}, scopeServers(p, plan.PhaseCompute)); diff != "" {
				t.Errorf("compute scopes (-want +got):\n%s", diff)
			}
			for _, ph := range p.Run.Stages[0].Groups[0].Clusters[0].Phases {
				if ph.Kind == plan.PhaseDevices && (ph.Scopes[0].WaitAfter.String() != "7m0s" || ph.Scopes[1].WaitAfter != 0) {
					t.Errorf("device racks wait %v, %v; want the compute wait after the first only", ph.Scopes[0].WaitAfter, ph.Scopes[1].WaitAfter)
				}
			}
			want := map[string]string{
				"c/r1/r1-tray":  "device switch_tray: update tray_bmc 35_2014_4770, wait_ready [tray_bmc]",
				"c/r1/r1-shelf": "device power_shelf: update shelf_fw 1.4.0, wait_ready [shelf_fw]",
				"c/r2/r2-tray":  "device switch_tray: update tray_bmc 35_2014_4770, wait_ready [tray_bmc]",
				"c/r1/r1-s1":    "compute : shutdown, update bios 2.0, reset, wait_ready [bios]",
			}
			for i := range p.Servers {
				s := &p.Servers[i]
				w, ok := want[s.Address]
				if !ok {
					continue
				}
				if got := stepsText(s); got != w {
					t.Errorf("%s: %s\nwant %s", s.Address, got, w)
				}
				if s.IsDevice() && (s.Reboots != 0 || s.Action != plan.ActionUpgrade || s.Steps[0].ApplyTime != "Immediate") {
					t.Errorf("%s: %s with %d reboots, apply time %q", s.Address, s.Action, s.Reboots, s.Steps[0].ApplyTime)
				}
			}
		})
	}
}

func stepsText(s *plan.Server) string {
	var steps []string
	for _, st := range s.Steps {
		x := string(st.Kind)
		if st.Kind == plan.StepUpdate {
			x += " " + st.Component + " " + st.Target.Version
		}
		if st.Kind == plan.StepWaitReady {
			var names []string
			for _, e := range st.Expect {
				names = append(names, e.Component)
			}
			x += " [" + strings.Join(names, " ") + "]"
		}
		steps = append(steps, x)
	}
	return s.Role + " " + s.Kind + ": " + strings.Join(steps, ", ")
}

// TestDevicesAtTarget: a device at its target is skipped as at target; a
// device kind no component is for is a warning naming it, never a silent
// "at target" alone.
func TestDevicesAtTarget(t *testing.T) {
	p := mustPlan(t, devicesConfig(t, ""), func(_ int, s *config.Server) plannertest.State {
		if s.IsDevice() {
			return plannertest.AtTarget
		}
		return plannertest.Behind
	}, nil)
	if got := scopeServers(p, plan.PhaseDevices); len(got) != 2 {
		t.Errorf("device scopes %v", got)
	}
	for i := range p.Servers {
		if s := &p.Servers[i]; s.IsDevice() && (s.Action != plan.ActionSkip || s.Reason != plan.ReasonAtTarget || len(s.Steps) != 0) {
			t.Errorf("%s: %s %s %v", s.Address, s.Action, s.Reason, s.Steps)
		}
	}

	src := strings.Replace(strings.Replace(devicesSrc, "STRATEGY", "", 1), `devices = ["power_shelf"]`, `devices = ["cooling_distribution_unit"]`, 1)
	_, diags := planWith(t, loadText(t, src), nil, nil)
	var found bool
	for _, d := range diags {
		if d.Summary == "No component for the device" {
			found = true
			if !strings.Contains(d.Detail, "c/r1/r1-shelf") || !strings.Contains(d.Detail, "power_shelf") {
				t.Errorf("warning %q", d.Detail)
			}
		}
	}
	if !found {
		t.Errorf("no warning for a device no component is for: %s", diags.Error())
	}
}

// TestDeviceHostStepRefused: a plan file whose device was given a host
// step (edited after plan wrote it) is refused by the steps check.
func TestDeviceHostStepRefused(t *testing.T) {
	p := mustPlan(t, devicesConfig(t, ""), nil, nil)
	for i := range p.Servers {
		s := &p.Servers[i]
		if s.Address != "c/r1/r1-tray" {
			continue
		}
		s.Steps = append([]plan.Step{{Kind: plan.StepShutdown}}, s.Steps...)
		for j := range s.Steps {
			s.Steps[j].Index = j + 1
		}
	}
	err := plan.CheckSteps(p)
	if err == nil || !strings.Contains(err.Error(), "device c/r1/r1-tray has a shutdown step 1, but a device has no host") {
		t.Errorf("CheckSteps: %v", err)
	}
}

// TestDevicesNotObservedSaidApart: a device that is not observed or is
// held back is reported apart from the servers, counted against the
// devices ("1 of 3 devices unreachable"); a Critical device is not told
// to take upgrade_when_critical, which a device block does not take, but
// what does bring it back; a Critical server still is. The servers'
// words are unchanged.
func TestDevicesNotObservedSaidApart(t *testing.T) {
	cfg := devicesConfig(t, "")
	provs, fs := fakes(cfg, func(_ int, s *config.Server) plannertest.State {
		if s.Name == "r2-tray" || s.Name == "r2-s2" {
			return plannertest.Unreachable
		}
		return plannertest.Behind
	})
	fs["redfish"].Servers["c/r1/r1-shelf"].Health = "Critical"
	fs["redfish"].Servers["c/r1/r1-s1"].Health = "Critical"
	_, diags := Plan(context.Background(), cfg, Options{Providers: provs, Now: testNow, OnUnreachable: OnUnreachableSkip})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	got := map[string]string{}
	for _, d := range diags {
		got[d.Summary] = d.Detail
	}
	for summary, want := range map[string]struct{ has, hasNot string }{
		"1 of 4 servers unreachable": {has: "r2-s2"},
		"1 of 3 devices unreachable": {has: "r2-tray"},
		"1 of 4 servers unhealthy":   {has: "give it upgrade_when_critical"},
		"1 of 3 devices unhealthy":   {has: "a device block takes no upgrade_when_critical", hasNot: "give it upgrade_when_critical"},
	} {
		d, ok := got[summary]
		if !ok {
			t.Errorf("no diagnostic %q; got %v", summary, keys(got))
			continue
		}
		if !strings.Contains(d, want.has) || (want.hasNot != "" && strings.Contains(d, want.hasNot)) {
			t.Errorf("%s: %s\nwant it to say %q and not %q", summary, d, want.has, want.hasNot)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
