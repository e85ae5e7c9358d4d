package planner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// TestGPURackVersionsPlanAsUpgrades: the firmware strings of a GB200/GB300
// tray (issue 32) are read and ordered by scheme = "vendor", with no
// version_pattern: an older one plans an upgrade (not a change), a newer
// one is a refused downgrade, and a suffix that differs is undecidable.
func TestGPURackVersionsPlanAsUpgrades(t *testing.T) {
	vendor := func(v string) string { return "    version = \"" + v + "\"\n    scheme  = \"vendor\"\n" }
	upgrades := []struct{ name, target, reported string }{
		{"NVLink switch: underscore-separated fields", "35_2014_4770", "35_2014_4652"},
		{"ERoT: a constant suffix", "01.04.0031.0000_n04", "01.04.0026.0000_n04"},
		{"HMC: a build letter in the next month", "GB200Nvl-25.08-B", "GB200Nvl-25.07-7"},
		{"HMC: a build letter after build 9", "GB200Nvl-25.06-A", "GB200Nvl-25.06-9"},
		{"HMC: build letters in order", "GB200Nvl-25.06-E", "GB200Nvl-25.06-A"},
	}
	for _, tt := range upgrades {
		t.Run(tt.name, func(t *testing.T) {
			src := biosAs(t, vendor(tt.target))
			got, diags := biosChanges(t, src, tt.reported)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			want := plan.Change{Component: "bios", Kind: "firmware", From: tt.reported, To: tt.target, Reboot: true, Members: 1, Moving: 1}
			for _, name := range []string{"a", "b", "c"} {
				if diff := cmp.Diff(want, got[name]); diff != "" {
					t.Errorf("server %s change (-want +got):\n%s", name, diff)
				}
			}
			// and back: the newer version is a downgrade, refused
			_, diags = biosChanges(t, biosAs(t, vendor(tt.reported)), tt.target)
			if diff := cmp.Diff([]string{"Downgrade refused"}, errorSummaries(diags)); diff != "" {
				t.Errorf("downgrade (-want +got):\n%s\n%s", diff, diags.Error())
			}
			// at target
			got, diags = biosChanges(t, src, tt.target)
			if diags.HasErrors() || len(got) != 0 {
				t.Errorf("at target: changes %v, %s", got, diags.Error())
			}
		})
	}
	refused := []struct {
		name, target, reported string
		detail                 []string
	}{
		{"another ERoT suffix", "01.04.0031.0000_n04", "01.04.0026.0000_n05", []string{`their suffixes differ ("_n05", "_n04")`, "firmware of another family"}},
		{"a letter build against build 10", "GB200Nvl-25.06-A", "GB200Nvl-25.06-10", []string{"a letter and a number above 9", "Write the target as the exact build"}},
		{"another tray's train", "GB200Nvl-25.08-B", "GB300Nvl-25.07-7", []string{`families differ ("GB300Nvl", "GB200Nvl")`, "firmware of another family"}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := biosChanges(t, biosAs(t, vendor(tt.target)), tt.reported)
			if diff := cmp.Diff([]string{"Undecidable version"}, errorSummaries(diags)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%s", diff, diags.Error())
			}
			for _, want := range tt.detail {
				if !strings.Contains(diags.Error(), want) {
					t.Errorf("%s\nlacks %q", diags.Error(), want)
				}
			}
		})
	}
}

// gb300NICs is a GB300 tray's network firmware as issue 32 describes it:
// two ConnectX-8 NICs and a BlueField-3 under one SoftwareId.
var gb300NICs = []providers.Component{
	{ID: "NIC_0", Name: "ConnectX-8 Firmware", SoftwareID: "0x0001", Version: "40.45.3048", Updateable: true, State: providers.StateActive},
	{ID: "NIC_1", Name: "ConnectX-8 Firmware", SoftwareID: "0x0001", Version: "40.45.3048", Updateable: true, State: providers.StateActive},
	{ID: "DPU_0", Name: "BlueField-3 Firmware", SoftwareID: "0x0001", Version: "32.44.1036", Updateable: true, State: providers.StateActive},
}

// TestRuleMatchingDifferentDevicesIsRefused: a rule over a SoftwareId that
// a tray's ConnectX-8 NICs and its BlueField-3 share would send the NIC
// image to the BlueField: plan refuses it, naming the members of each
// device and how to narrow the rule; narrowed by name (with count), it
// plans the NICs' upgrade. Rule 39.
func TestRuleMatchingDifferentDevicesIsRefused(t *testing.T) {
	s, diags := planMembers(t, component("nic", `software_id = "0x0001"`, "40.46.1000"), gb300NICs, nil, "")
	if diff := cmp.Diff([]string{"Rule matches different devices"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s\n%s", diff, diags.Error())
	}
	for _, want := range []string{
		`Server c/r1/s1: the match rule software_id "0x0001" of component "nic" selects members that are different devices (their names are of different families): "BlueField-3 Firmware" (DPU_0 32.44.1036) and "ConnectX-8 Firmware" (NIC_0 40.45.3048, NIC_1 40.45.3048).`,
		"One image would be sent to all of them.", "match it by name", "count = N",
	} {
		if !strings.Contains(diags[0].Detail, want) {
			t.Errorf("detail %q\nlacks %q", diags[0].Detail, want)
		}
	}
	if diags[0].Subject == nil || diags[0].Subject.Start.Line == 0 {
		t.Error("no subject: the error must point at the component block")
	}
	if s != nil && s.Action == plan.ActionUpgrade {
		t.Error("a server in error is upgraded")
	}

	// The same with a generic Name: the versions tell the devices apart.
	generic := append([]providers.Component(nil), gb300NICs...)
	for i := range generic {
		generic[i].Name = "Software Inventory"
	}
	_, diags = planMembers(t, component("nic", `software_id = "0x0001"`, "40.46.1000"), generic, nil, "")
	if diff := cmp.Diff([]string{"Rule matches different devices"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("generic names: errors (-want +got):\n%s\n%s", diff, diags.Error())
	}
	if !strings.Contains(diags[0].Detail, "different NVIDIA network devices (the first field of DEVICE.RELEASE.BUILD)): (DPU_0 32.44.1036) and (NIC_0 40.45.3048, NIC_1 40.45.3048).") {
		t.Errorf("detail %q does not say why", diags[0].Detail)
	}

	s, diags = planMembers(t, component("nic", "name  = \"ConnectX-8*\"\n      count = 2", "40.46.1000"), gb300NICs, nil, "")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := []plan.Change{{Component: "nic", Kind: "firmware", From: "40.45.3048", To: "40.46.1000", Reboot: true, Members: 2, Moving: 2}}
	if diff := cmp.Diff(want, s.Changes); diff != "" {
		t.Errorf("narrowed rule's changes (-want +got):\n%s", diff)
	}
}
