package sim

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// TestGoldenResources pins the documents each profile serves (after one
// update task and a boot override), so a change of shape is a reviewed diff.
func TestGoldenResources(t *testing.T) {
	for _, p := range AllProfiles() {
		t.Run(p, func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "golden-01", Profile: p, PowerOn: true})
			prof, _ := loadProfiles()
			pr := prof[p]
			u := f.BMCs()[0].URL
			call(t, "PATCH", u+pr.systemPath, map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}}, true)
			call(t, "POST", u+pr.vmediaPath+"/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": "http://127.0.0.1:9/images/runtime-4.6.1.iso"}, true)
			if pr.simpleUpdatePath != "" {
				body := map[string]any{"ImageURI": "http://127.0.0.1:9/images/nic-2.0.bin", "TransferProtocol": "HTTP"}
				switch p {
				case ProfileBasic, ProfileSushy:
					body["ImageURI"], body["Targets"] = "http://127.0.0.1:9/images/bios-3.5.bin", []string{pr.systemPath}
				case ProfileCrayEX:
					body["ImageURI"], body["Targets"] = "http://127.0.0.1:9/images/bios-ex235a.bios-1.3.7.bin", []string{"/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS"}
				}
				if r := call(t, "POST", u+pr.simpleUpdatePath, body, true); r.status != 202 && r.status != 204 {
					t.Fatalf("SimpleUpdate: %d %s", r.status, r.body)
				}
			}
			clk.Advance(5 * time.Minute)
			paths := map[string]string{
				"root":           "/redfish/v1/",
				"system":         pr.systemPath,
				"manager":        pr.managerPath,
				"chassis":        pr.chassisPath,
				"virtualmedia":   pr.vmediaPath,
				"updateservice":  "/redfish/v1/UpdateService",
				"firmware":       "/redfish/v1/UpdateService/FirmwareInventory?$expand=.($levels=1)",
				"software":       "/redfish/v1/UpdateService/SoftwareInventory",
				"inventory-bios": biosMember(f, "golden-01"),
				"tasks":          "/redfish/v1/TaskService/Tasks",
			}
			if pr.simpleUpdatePath != "" && !pr.forgetTasks {
				paths["task"] = "/redfish/v1/TaskService/Tasks/1"
			}
			if pr.noInventory {
				delete(paths, "firmware")
				delete(paths, "software")
				delete(paths, "inventory-bios")
				if pr.actionInfo {
					paths["actioninfo"] = "/redfish/v1/UpdateService/SimpleUpdateActionInfo"
				}
			}
			if p == ProfileCrayEX {
				paths["system-node1"] = "/redfish/v1/Systems/Node1"
				paths["inventory-bios"] = "/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS"
				paths["actioninfo"] = "/redfish/v1/UpdateService/SimpleUpdateActionInfo"
			}
			for name, p := range paths {
				r := call(t, "GET", u+p, nil, true)
				var buf bytes.Buffer
				if err := json.Indent(&buf, r.body, "", "  "); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				buf.WriteByte('\n')
				golden(t, filepath.Join("testdata", "golden", pr.name, name+".json"), buf.Bytes())
			}
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, strings.TrimSpace(diff))
	}
}

// biosMember is the URI of the named BMC's (first) BIOS member.
func biosMember(f *Fleet, name string) string {
	b := f.byName[name]
	b.mu.Lock()
	defer b.mu.Unlock()
	i, _ := b.inv.component(ComponentBIOS)
	return b.inv.memberPath(i)
}
