package planner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// sharedFleet: n0 and n1 (rack r1) and n3 (rack r2) are three systems
// behind one BMC (a multi-node chassis); s2 has a BMC of its own. The
// release adds the BMC's firmware.
func sharedFleet(t *testing.T) string {
	t.Helper()
	src := fixture{
		racks: withCP([]string{"r1", "n0:c", "n1:c", "s2:c"}, []string{"r2", "n3:c"}),
		release: `component "bmc" {
    version = "1.50"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bmc.bin"
    apply_time = "Immediate"
    reboot  = false
    match {
      id = "BMC"
    }
  }`,
	}.String()
	// n0, n1 and n3 share one BMC, each naming its system.
	for name, sys := range map[string]string{"n0": "Node0", "n1": "Node1", "n3": "Node2"} {
		i := strings.Index(src, `server "`+name+`" {`)
		j := i + strings.Index(src[i:], "bmc  = \"")
		k := j + strings.Index(src[j:], "\n")
		src = src[:j] + `bmc  = "https://127.9.0.1:8443"
      system = "` + sys + `"` + src[k:]
	}
	return src
}

// Shared components are planned once per BMC endpoint: the update goes to
// the last server of that BMC in run order, waits (After) for the others
// to be drained and shut down, is counted once, and the other servers
// show the change as flashed by that server and do not expect it.
func TestSharedComponentIsPlannedOncePerBMC(t *testing.T) {
	cfg := loadText(t, sharedFleet(t))
	p, diags := planFakes(t, cfg, func(addr string, o *providers.Observation) {
		v := "1.40"
		o.Components = append(o.Components, providers.Component{ID: "BMC", Name: "BMC", Version: v, Updateable: true, Source: providers.SourceManager})
		if addr == "c/r1/n0" || addr == "c/r1/n1" || addr == "c/r2/n3" {
			o.Components[len(o.Components)-1].Shared = true
		}
	}, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	flashes := map[string][]string{}
	for _, s := range p.Servers {
		for _, st := range s.Steps {
			if st.Kind == plan.StepUpdate && st.Component == "bmc" {
				flashes[s.Address] = st.After
				if strings.HasPrefix(s.Address, "c/r2/") && !st.Shared {
					t.Errorf("%s: the shared step is not marked shared", s.Address)
				}
			}
		}
	}
	// s2 and the control plane have their own BMCs; n3 (rack r2, last in
	// order) flashes the chassis BMC once, after n0 and n1.
	want := map[string][]string{
		"c/r2/n3": {"c/r1/n0", "c/r1/n1"},
		"c/r1/s2": nil, "c/x-cp1/cp1": nil, "c/x-cp1/spare": nil, "c/x-cp2/cp2": nil, "c/x-cp3/cp3": nil,
	}
	if diff := cmp.Diff(want, flashes); diff != "" {
		t.Errorf("bmc update steps and their barriers (-want +got):\n%s", diff)
	}
	if p.Summary.SharedUpdates != 1 {
		t.Errorf("shared updates counted %d times, want once", p.Summary.SharedUpdates)
	}
	for _, addr := range []string{"c/r1/n0", "c/r1/n1"} {
		s := serverByAddr(p, addr)
		var ch *plan.Change
		for i := range s.Changes {
			if s.Changes[i].Component == "bmc" {
				ch = &s.Changes[i]
			}
		}
		if ch == nil || !ch.Shared || ch.FlashedBy != "c/r2/n3" {
			t.Errorf("%s: the shared change must say who flashes it: %+v", addr, ch)
		}
		for _, st := range s.Steps {
			for _, e := range st.Expect {
				if e.Component == "bmc" {
					t.Errorf("%s: wait_ready expects the shared bmc another server flashes", addr)
				}
			}
		}
		if s.Action != plan.ActionUpgrade {
			t.Errorf("%s still upgrades its BIOS and runtime: %s %s", addr, s.Action, s.Reason)
		}
	}
}

// A shared component flashed by a plan that leaves out other servers of
// the same BMC (-target) is planned, with a warning naming them: they are
// not drained or shut down for it.
func TestSharedComponentWarnsAboutServersOutsideThePlan(t *testing.T) {
	cfg := loadText(t, sharedFleet(t))
	edit := func(addr string, o *providers.Observation) {
		o.Components = append(o.Components, providers.Component{ID: "BMC", Version: "1.40", Updateable: true, Shared: addr != "c/r1/s2"})
	}
	// n1 and n3 planned, n0 left out: n3 flashes after n1 (the ordering
	// is redone), and the warning survives it.
	p, diags := planFakes(t, cfg, edit, func(o *Options) { o.Excludes = []string{"c/r1/n0"} })
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var got []string
	for _, w := range p.Warnings {
		if w.Summary == "Shared component affects servers outside the plan" {
			got = append(got, w.Detail)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "Server c/r2/n3 flashes bmc") || !strings.Contains(got[0], "also serves c/r1/n0:") {
		t.Errorf("warnings: %q", got)
	}
}

// Servers planned alike share their steps, changes and observed
// components in memory (plan.Interner), as the plan file's tables share
// them; giving a shared step its barrier (After) copies that server's
// steps first, so a server that shared them keeps its own barrier.
func TestServersPlannedAlikeShareTheirLists(t *testing.T) {
	src := fixture{racks: withCP([]string{"r1", "a:c", "b:c", "d:c"}, []string{"r2", "n0:c", "n1:c", "m0:c", "m1:c"})}.String()
	// n0 and n1 are two systems behind one BMC, m0 and m1 behind another.
	for name, bmc := range map[string]string{"n0": "127.9.0.1", "n1": "127.9.0.1", "m0": "127.9.0.2", "m1": "127.9.0.2"} {
		i := strings.Index(src, `server "`+name+`" {`)
		j := i + strings.Index(src[i:], "bmc  = \"")
		k := j + strings.Index(src[j:], "\n")
		src = src[:j] + `bmc  = "https://` + bmc + `:8443"
      system = "` + name + `"` + src[k:]
	}
	p, diags := planFakes(t, loadText(t, src), func(addr string, o *providers.Observation) {
		if strings.HasPrefix(addr, "c/r2/") {
			for i := range o.Components {
				o.Components[i].Shared = o.Components[i].SoftwareID == "BIOS"
			}
		}
	}, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	a := serverByAddr(p, "c/r1/a")
	for _, addr := range []string{"c/r1/b", "c/r1/d"} {
		o := serverByAddr(p, addr)
		if &o.Steps[0] != &a.Steps[0] || &o.Changes[0] != &a.Changes[0] || &o.Observed.Components[0] != &a.Observed.Components[0] {
			t.Errorf("%s does not share its lists with %s, planned alike", addr, a.Address)
		}
	}
	after := map[string][]string{}
	for _, s := range p.Servers {
		for _, st := range s.Steps {
			if st.Shared {
				after[s.Address] = st.After
			}
		}
	}
	want := map[string][]string{"c/r2/n1": {"c/r2/n0"}, "c/r2/m1": {"c/r2/m0"}}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Errorf("shared steps and their barriers (-want +got):\n%s", diff)
	}
}
