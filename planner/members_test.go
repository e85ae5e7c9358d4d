package planner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

// memberConfig is one compute server whose release has the components
// given (HCL component blocks).
func memberConfig(components string) string {
	return `provider "redfish" {}
release "r" {
  version = "1.0.0"
` + components + `
}
cluster "c" {
  release = release.r
  rack "r1" {
    server "s1" {
      bmc  = "https://127.2.0.1:8443"
      role = "compute"
    }
  }
}
`
}

func component(name, match, version string) string {
	return fmt.Sprintf(`  component %q {
    version = %q
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/%s.bin"
    match {
      %s
    }
  }
`, name, version, name, match)
}

// planMembers plans components against one server reporting comps, with
// the provider's update plans ups and auth.
func planMembers(t *testing.T, components string, comps []providers.Component, ups []providers.UpdatePlan, auth string) (*plan.Server, hcl.Diagnostics) {
	t.Helper()
	cfg := loadText(t, memberConfig(components))
	o := &providers.Observation{Server: "c/r1/s1", Reachable: true, Outcome: providers.OutcomeObserved, PowerState: "On", Health: "OK",
		Components: comps, Updates: ups, Auth: auth, Fingerprint: "f"}
	fake := &plannertest.Provider{Servers: map[string]*providers.Observation{"c/r1/s1": o}}
	p, diags := Plan(context.Background(), cfg, Options{Providers: map[string]providers.Provider{"redfish": fake}, Now: testNow})
	if p == nil || len(p.Servers) != 1 {
		return nil, diags
	}
	return &p.Servers[0], diags
}

// dellBIOS is the Dell R750 capture's BIOS: the Installed member runs, the
// Previous one is the rollback image, Current an available copy; all
// three share SoftwareId, Name and Updateable.
var dellBIOS = []providers.Component{
	{ID: "Current-159-1.8.2__BIOS.Setup.1-1", Name: "BIOS", SoftwareID: "159", Version: "1.8.2", Updateable: true, State: providers.StateAvailable, StateSign: "Id prefix Current-"},
	{ID: "Installed-159-1.8.2__BIOS.Setup.1-1", Name: "BIOS", SoftwareID: "159", Version: "1.8.2", Updateable: true, State: providers.StateActive, StateSign: "Id prefix Installed-"},
	{ID: "Previous-159-1.2.4__BIOS.Setup.1-1", Name: "BIOS", SoftwareID: "159", Version: "1.2.4", Updateable: true, State: providers.StatePrevious, StateSign: "Id prefix Previous-"},
}

// TestDellRollbackImageIsNotCompared: a Dell server at its target BIOS
// plans nothing, although the rollback image beside it is older; a newer
// target plans one update of the running member, from its version only.
// The plan records every member the rule selects with its state.
func TestDellRollbackImageIsNotCompared(t *testing.T) {
	s, diags := planMembers(t, component("bios", `software_id = "159"`, "1.8.2"), dellBIOS, nil, "")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if s.Action != plan.ActionSkip || s.Reason != plan.ReasonAtTarget || len(s.Steps) != 0 {
		t.Errorf("at target: %s (%s), %d steps; want skipped at target", s.Action, s.Reason, len(s.Steps))
	}
	if len(s.Observed.Components) != 3 || s.Observed.Components[2].State != providers.StatePrevious {
		t.Errorf("recorded %+v; want the three members with their states", s.Observed.Components)
	}

	s, diags = planMembers(t, component("bios", `software_id = "159"`, "1.13.2"), dellBIOS, nil, "")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := []plan.Change{{Component: "bios", Kind: "firmware", From: "1.8.2", To: "1.13.2", Reboot: true, Members: 1, Moving: 1}}
	if diff := cmp.Diff(want, s.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	var updates []plan.Step
	for _, st := range s.Steps {
		if st.Kind == plan.StepUpdate {
			updates = append(updates, st)
		}
	}
	if len(updates) != 1 || strings.Join(updates[0].Members, " ") != "Installed-159-1.8.2__BIOS.Setup.1-1" || updates[0].Match.Count != 1 {
		t.Errorf("update steps %+v; want one, for the Installed member, expecting one member", updates)
	}
}

// hgx are eight GPUs of one SoftwareId at v, the ones in old at
// 96.00.61.00.01 instead.
func hgx(v string, old ...int) ([]providers.Component, providers.UpdatePlan) {
	var comps []providers.Component
	up := providers.UpdatePlan{Component: "gpu", Method: providers.MethodSimpleUpdate, TransferProtocol: "HTTP"}
	for i := 1; i <= 8; i++ {
		id := fmt.Sprintf("HGX_FW_GPU_SXM_%d", i)
		ver := v
		for _, o := range old {
			if o == i {
				ver = "96.00.61.00.01"
			}
		}
		comps = append(comps, providers.Component{ID: id, Name: "Software Inventory", SoftwareID: "0x0020", Version: ver, Updateable: true, State: providers.StateActive})
		up.Members = append(up.Members, id)
		up.Targets = append(up.Targets, "/redfish/v1/UpdateService/FirmwareInventory/"+id)
	}
	return comps, up
}

// TestRuleUpdatesEveryMember: a rule means every member it selects: eight
// GPUs behind are one change of eight members and one SimpleUpdate naming
// all eight; where the BMC takes three Targets per request, three updates;
// where two are at the target already, only the six others are named; and
// wait_ready expects eight.
func TestRuleUpdatesEveryMember(t *testing.T) {
	gpu := component("gpu", `software_id = "0x0020"`, "96.00.89.00.01")
	cases := []struct {
		name      string
		old       []int
		perReq    int
		moving    int
		requests  []int // members per update step
		firstName string
	}{
		{"eight behind", []int{1, 2, 3, 4, 5, 6, 7, 8}, 0, 8, []int{8}, "HGX_FW_GPU_SXM_1"},
		{"three per request", []int{1, 2, 3, 4, 5, 6, 7, 8}, 3, 8, []int{3, 3, 2}, "HGX_FW_GPU_SXM_1"},
		{"two at target", []int{3, 4, 5, 6, 7, 8}, 0, 6, []int{6}, "HGX_FW_GPU_SXM_3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			comps, up := hgx("96.00.89.00.01", c.old...)
			up.TargetsPerRequest = c.perReq
			s, diags := planMembers(t, gpu, comps, []providers.UpdatePlan{up}, "")
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if len(s.Changes) != 1 || s.Changes[0].Members != 8 || s.Changes[0].Moving != c.moving || s.Changes[0].From != "96.00.61.00.01" {
				t.Fatalf("changes %+v; want eight members, %d moving from 96.00.61.00.01", s.Changes, c.moving)
			}
			var got []int
			named := map[string]bool{}
			for _, st := range s.Steps {
				switch st.Kind {
				case plan.StepUpdate:
					got = append(got, len(st.Targets))
					if len(st.Targets) != len(st.Members) {
						t.Errorf("step names %d targets for %d members", len(st.Targets), len(st.Members))
					}
					for _, m := range st.Members {
						named[m] = true
					}
					if len(got) == 1 && st.Members[0] != c.firstName {
						t.Errorf("first update is for %s, want %s", st.Members[0], c.firstName)
					}
				case plan.StepWaitReady:
					if st.Expect[0].Match.Count != 8 {
						t.Errorf("wait_ready expects %d members, want 8", st.Expect[0].Match.Count)
					}
				}
			}
			if diff := cmp.Diff(c.requests, got); diff != "" {
				t.Errorf("targets per update (-want +got):\n%s", diff)
			}
			if len(named) != c.moving {
				t.Errorf("%d members named by the updates, want %d", len(named), c.moving)
			}
			// Updates split by members are what show and apply accept.
			if err := plan.CheckSteps(&plan.Plan{Servers: []plan.Server{*s}}); err != nil {
				t.Errorf("the planned updates are refused: %v", err)
			}
		})
	}
}

// TestRuleMemberErrors: a rule that selects only copies that do not run
// is an error naming them; a count the server does not have is an error
// naming what it has (a missing GPU is never skipped silently).
func TestRuleMemberErrors(t *testing.T) {
	s, diags := planMembers(t, component("bios", `id = "Previous-159-1.2.4__BIOS.Setup.1-1"`, "1.13.2"), dellBIOS, nil, "")
	if diff := cmp.Diff([]string{"Only copies match"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	if d := diags[0].Detail; !strings.Contains(d, "Previous-159-1.2.4__BIOS.Setup.1-1 1.2.4 previous (Id prefix Previous-)") || !strings.Contains(d, "Server c/r1/s1") {
		t.Errorf("detail %q does not name the member, its state and sign, and the server", d)
	}
	if s != nil && s.Action == plan.ActionUpgrade {
		t.Error("a server in error is upgraded")
	}

	comps, up := hgx("96.00.61.00.01")
	_, diags = planMembers(t, component("gpu", `software_id = "0x0020"
      count       = 8`, "96.00.89.00.01"), comps[:7], []providers.UpdatePlan{up}, "")
	if diff := cmp.Diff([]string{"Wrong number of members"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	if d := diags[0].Detail; !strings.Contains(d, "must match 8 running members (count = 8), but its rule software_id \"0x0020\" matches 7") {
		t.Errorf("detail %q", d)
	}
}

// TestPlaceholderIsNotRead: Lenovo's pending placeholder shares the
// running UEFI's Name and reports no version: a glob over the name reads
// the running member only, and the server is at target rather than held
// back for a version that cannot be read.
func TestPlaceholderIsNotRead(t *testing.T) {
	comps := []providers.Component{
		{ID: "UEFI", Name: "Firmware:UEFI", SoftwareID: "UEFI-U8E1-6", Version: "22J-1.51", Updateable: true, State: providers.StateActive},
		{ID: "UEFI-Pending", Name: "Firmware:UEFI", Updateable: true, State: providers.StatePending, StateSign: "Status.State Disabled, named pending"},
	}
	src := strings.Replace(component("uefi", `name = "Firmware:UEFI"`, "22J-1.51"), `scheme  = "dotted"`, `scheme  = "opaque"`, 1)
	s, diags := planMembers(t, src, comps, nil, "")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if s.Reason != plan.ReasonAtTarget {
		t.Errorf("%s (%s), want at target", s.Action, s.Reason)
	}
}

// TestApplyTimeAndAuthFromTheBMC: an update sends the apply time the
// provider chose from what the BMC lists (none, and why, where it lists
// none), and the plan records how the BMC took the credentials; a
// provider that does not decide the apply time leaves the component's.
func TestApplyTimeAndAuthFromTheBMC(t *testing.T) {
	bios := component("bios", `software_id = "159"`, "1.13.2")
	up := providers.UpdatePlan{Component: "bios", Method: providers.MethodSimpleUpdate, Members: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"},
		ApplyTimeFrom: "not sent: the BMC lists no apply times for simple_update; it applies the image as it does by default"}
	s, diags := planMembers(t, bios, dellBIOS, []providers.UpdatePlan{up}, providers.AuthBasic)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if s.Auth != providers.AuthBasic {
		t.Errorf("auth %q, want basic", s.Auth)
	}
	var update plan.Step
	kinds := []string{}
	for _, st := range s.Steps {
		kinds = append(kinds, string(st.Kind))
		if st.Kind == plan.StepUpdate {
			update = st
		}
	}
	if update.ApplyTime != "" || update.ApplyTimeFrom != up.ApplyTimeFrom {
		t.Errorf("update sends apply time %q (%s); want none, saying why", update.ApplyTime, update.ApplyTimeFrom)
	}
	// The BIOS still needs the host reset that applies it.
	if strings.Join(kinds, " ") != "shutdown update reset wait_ready" {
		t.Errorf("steps %v: want the reset planned", kinds)
	}

	up.ApplyTimeFrom = ""
	s, _ = planMembers(t, bios, dellBIOS, []providers.UpdatePlan{up}, "")
	for _, st := range s.Steps {
		if st.Kind == plan.StepUpdate && (st.ApplyTime != "OnReset" || st.ApplyTimeFrom != "") {
			t.Errorf("a provider that does not decide: apply time %q (%q), want the component's OnReset", st.ApplyTime, st.ApplyTimeFrom)
		}
	}
}
