package planner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/planner/plan"
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
