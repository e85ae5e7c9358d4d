package redfish

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/sim"
)

// TestUpdateSendsTargets: on every profile, an update names the matched
// inventory member in Targets where the service takes it (multipart push's
// UpdateParameters; SimpleUpdate when its ActionInfo lists Targets), so a
// BMC that requires Targets accepts it; where SimpleUpdate does not list
// Targets (ilo5: no ActionInfo; ami: its ActionInfo lacks it) the update is
// sent without and still works. The requests the BMC received are read
// back from its tasks' Payload.
func TestUpdateSendsTargets(t *testing.T) {
	images := imageServer(t)
	dir := t.TempDir()
	local := filepath.Join(dir, "bios-2.90.bin")
	if err := os.WriteFile(local, bytes.Repeat([]byte{0x5A}, 10_000), 0o644); err != nil {
		t.Fatal(err)
	}
	type run struct {
		method  string
		require bool // the BMC refuses an update without Targets
		want    bool // Targets is sent
	}
	cases := map[string][]run{
		sim.ProfileDMTF:    {{MethodSimpleUpdate, true, true}, {MethodPush, true, true}},
		sim.ProfileILO5:    {{MethodSimpleUpdate, true, false}, {MethodPush, true, true}},
		sim.ProfileAMI:     {{MethodSimpleUpdate, false, false}, {MethodSimpleUpdate, true, true}},
		sim.ProfileOpenBMC: {{MethodPush, true, true}},
	}
	for _, profile := range sim.Profiles() {
		for _, rc := range cases[profile] {
			name := profile + "/" + rc.method
			if rc.require {
				name += "/required"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				env := startSim(t, sim.Options{}, []sim.BMCSpec{{Name: "c01", Profile: profile, PowerOn: true, RequireTargets: rc.require,
					Firmware: map[string]string{"BIOS": "1.10"}}}, map[string]any{"update_method": rc.method}, Options{})
				image := images.URL + "/images/bios-2.80.bin"
				if rc.method == MethodPush {
					image = local
				}
				step := providers.Step{Kind: providers.StepUpdate, Component: "BIOS", Match: providers.Match{SoftwareID: "BIOS"},
					ImageURI: image, ApplyTime: "OnReset"} // Method "": the provider's own choice, as older plans
				if _, d, _ := env.apply(t, "c01", step); d.HasErrors() {
					t.Fatalf("update: %v", d.Err())
				}
				// The inventory member the BMC reports for BIOS.
				b := mustBMC(t, env)
				items, err := b.Inventory(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				member := ""
				for _, it := range items {
					if it.SoftwareID == "BIOS" {
						member = it.URI
					}
				}
				if member == "" {
					t.Fatalf("no BIOS member in %v", items)
				}
				tasks, err := b.Tasks(context.Background())
				if err != nil || len(tasks) != 1 {
					t.Fatalf("tasks %v, %v; want the one update", tasks, err)
				}
				if profile == sim.ProfileAMI || (profile == sim.ProfileOpenBMC && rc.method == MethodPush) {
					if rc.require {
						return // no Payload (AMI) or a "null" JsonBody (bmcweb's push): the BMC's refusal is the check
					}
					// Without a Payload, check the provider's decision directly.
					us, err := b.UpdateService(context.Background())
					if err != nil || us.SimpleUpdateTargets {
						t.Errorf("SimpleUpdate offers Targets %v (%v), want not", us, err)
					}
					return
				}
				var body struct{ Targets []string }
				if err := json.Unmarshal([]byte(tasks[0].JSONBody), &body); err != nil {
					t.Fatalf("task JsonBody %q: %v", tasks[0].JSONBody, err)
				}
				got := strings.Join(body.Targets, ",")
				switch {
				case rc.want && got != member:
					t.Errorf("Targets %q, want [%s]", got, member)
				case !rc.want && got != "":
					t.Errorf("Targets %q sent where the service does not list it", got)
				}
			})
		}
	}
}
