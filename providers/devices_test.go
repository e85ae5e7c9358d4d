package providers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/internal/testenv"
)

func TestNameFamily(t *testing.T) {
	for name, want := range map[string]string{
		"GPU0 Firmware":       "firmware",
		"GPU7 Firmware":       "firmware",
		"GPU3 System Slot1":   "system",
		"HGX_FW_GPU_SXM_1":    "hgx fw gpu sxm",
		"Software Inventory":  "software inventory",
		"ConnectX-8":          "connectx",
		"BlueField-3":         "bluefield",
		"Power Supply.Slot.2": "power supply slot",
		// Dell names each port by its MAC address
		"Broadcom Gigabit Ethernet BCM5720 - 70:B5:E8:F0:52:DC": "broadcom gigabit ethernet",
		"Broadcom Gigabit Ethernet BCM5720 - 70:B5:E8:F0:52:DD": "broadcom gigabit ethernet",
		"": "",
	} {
		if got := NameFamily(name); got != want {
			t.Errorf("NameFamily(%q) = %q, want %q", name, got, want)
		}
	}
}

// ids names the members of each kind.
func ids(kinds [][]Component) [][]string {
	var out [][]string
	for _, k := range kinds {
		var x []string
		for _, c := range k {
			x = append(x, c.ID)
		}
		out = append(out, x)
	}
	return out
}

// TestDevices: members of one rule that are different devices, shaped
// like the GB300 tray of issue 32 (ConnectX-8 NICs and a BlueField-3
// under one SoftwareId) and the Dell R750 capture's SoftwareId 0; and
// members that are one device although they differ (an index in the
// Name, a MAC address, a version moving within its family).
func TestDevices(t *testing.T) {
	dotted, _ := version.NewFormat(version.Dotted, "")
	vendor, _ := version.NewFormat(version.Vendor, "")
	m := func(id, name, v string) Component {
		return Component{ID: id, Name: name, SoftwareID: "0x0001", Version: v, Updateable: true, State: StateActive}
	}
	var gpus []Component
	for i := 0; i < 8; i++ {
		v := "96.00.89.00.01"
		if i == 3 {
			v = "96.00.61.00.01"
		}
		gpus = append(gpus, m(fmt.Sprintf("HGX_FW_GPU_SXM_%d", i+1), fmt.Sprintf("GPU%d Firmware", i), v))
	}
	tests := []struct {
		name    string
		members []Component
		f       version.Format
		want    [][]string
		why     string
	}{
		{"eight GPUs, one behind", gpus, dotted, nil, ""},
		{"Dell's two LOM ports", []Component{
			m("Installed-108255-21.80.9__NIC.Embedded.1-1-1", "Broadcom Gigabit Ethernet BCM5720 - 70:B5:E8:F0:52:DC", "21.80.9"),
			m("Installed-108255-22.00.6__NIC.Embedded.2-1-1", "Broadcom Gigabit Ethernet BCM5720 - 70:B5:E8:F0:52:DD", "22.00.6"),
		}, dotted, nil, ""},
		{"ConnectX-8 and BlueField-3 by name", []Component{
			m("NIC_0", "ConnectX-8 Firmware", "40.45.3048"),
			m("DPU_0", "BlueField-3 Firmware", "32.44.1036"),
			m("NIC_1", "ConnectX-8 Firmware", "40.45.3048"),
		}, dotted, [][]string{{"NIC_0", "NIC_1"}, {"DPU_0"}}, "names are of different families"},
		{"ConnectX-8 and BlueField-3 under one generic name", []Component{
			m("NIC_0", "Software Inventory", "40.45.3048"),
			m("NIC_1", "Software Inventory", "40.45.3048"),
			m("DPU_0", "Software Inventory", "32.44.1036"),
		}, dotted, [][]string{{"NIC_0", "NIC_1"}, {"DPU_0"}}, "different NVIDIA network devices"},
		{"one ConnectX-8 behind another", []Component{
			m("NIC_0", "Software Inventory", "40.45.3048"),
			m("NIC_1", "Software Inventory", "40.46.1000"),
		}, dotted, nil, ""},
		{"two trains' HMCs", []Component{
			m("HMC_0", "Software Inventory", "GB200Nvl-25.07-7"),
			m("HMC_1", "Software Inventory", "GB300Nvl-25.07-7"),
		}, vendor, [][]string{{"HMC_0"}, {"HMC_1"}}, "versions are of different families"},
		{"two ERoT suffixes", []Component{
			m("ERoT_0", "Software Inventory", "01.04.0026.0000_n04"),
			m("ERoT_1", "Software Inventory", "01.04.0026.0000_n05"),
		}, vendor, [][]string{{"ERoT_0"}, {"ERoT_1"}}, "versions are of different families"},
		{"Dell's SoftwareId 0", []Component{
			m("Installed-0-20.31.10.14__InfiniBand.Slot.7-1", "Mellanox ConnectX-6 Dual Port 10 GbE QSFP Network Adapter", "20.31.10.14"),
			m("Installed-0-2.1.3__Disk.Bay.1:Enclosure.Internal.0-1", "PCIe SSD in Slot 1 in Bay 1", "2.1.3"),
			m("Installed-0-24.40.10.00__NIC.Slot.5-1", "Mellanox Network Adapter - B8:3F:D2:90:97:C4", "24.40.10.00"),
		}, dotted, [][]string{{"Installed-0-20.31.10.14__InfiniBand.Slot.7-1"}, {"Installed-0-2.1.3__Disk.Bay.1:Enclosure.Internal.0-1"}, {"Installed-0-24.40.10.00__NIC.Slot.5-1"}}, "names are of different families"},
		{"a copy and a sub-image no image is sent to", []Component{
			m("Slot_15.Bundle", "Firmware:DEVICE-NetworkAdapter", "24.41.1000"),
			{ID: "Slot_15.1", Name: "Firmware:DEVICE-Firmware", Version: "24.41.1000", Updateable: false, State: StateActive},
			{ID: "Previous_BF", Name: "BlueField-3", Version: "32.44.1036", Updateable: true, State: StatePrevious},
		}, dotted, nil, ""},
		{"members without a name or a readable version", []Component{
			m("A", "", "40.45.3048"),
			m("B", "ConnectX-8", "not a version"),
		}, dotted, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kinds, why := Devices(tt.members, tt.f)
			if diff := cmp.Diff(tt.want, ids(kinds)); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
			if !strings.Contains(why, tt.why) || (tt.why == "") != (why == "") {
				t.Errorf("why %q, want %q", why, tt.why)
			}
		})
	}
}

func TestDevicesText(t *testing.T) {
	kinds := [][]Component{
		{{ID: "NIC_0", Name: "ConnectX-8 Firmware", Version: "40.45.3048"}, {ID: "NIC_1", Name: "ConnectX-8 Firmware", Version: "40.45.3048"}},
		{{ID: "DPU_0", Name: "BlueField-3 Firmware", Version: "32.44.1036"}},
	}
	want := `"ConnectX-8 Firmware" (NIC_0 40.45.3048, NIC_1 40.45.3048) and "BlueField-3 Firmware" (DPU_0 32.44.1036)`
	if got := DevicesText(kinds); got != want {
		t.Errorf("DevicesText = %s\nwant           %s", got, want)
	}
	same := [][]Component{{{ID: "NIC_0", Name: "Software Inventory", Version: "40.45.3048"}}, {{ID: "DPU_0", Name: "Software Inventory", Version: "32.44.1036"}}}
	if got, want := DevicesText(same), "(NIC_0 40.45.3048) and (DPU_0 32.44.1036)"; got != want {
		t.Errorf("DevicesText of one Name = %s, want %s", got, want)
	}
	three := append(kinds, []Component{{ID: "X", Version: "1"}})
	if got := DevicesText(three); !strings.Contains(got, `(DPU_0 32.44.1036) and "no name" (X 1)`) || !strings.Contains(got, `40.45.3048), "BlueField`) {
		t.Errorf("DevicesText of three = %s", got)
	}
}

// TestDevicesOfEveryCapture groups the updateable, enabled members of
// every capture in ../shared/redfish-mockups by SoftwareId, as a rule
// software_id = "…" selects them: the only group of different devices is
// Dell R750's SoftwareId 0 (a ConnectX-6, a Mellanox adapter, three
// SSDs); eight HGX GPUs, Dell's LOM ports named by their MAC and
// Lenovo's GPU slots are each one device.
func TestDevicesOfEveryCapture(t *testing.T) {
	root := testenv.MockupsDir(t)
	files, err := filepath.Glob(filepath.Join(root, "*", "*", "UpdateService", "FirmwareInventory", "*", "index.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no FirmwareInventory members under %s: %v", root, err)
	}
	groups := map[string][]Component{}
	var keys []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID         string `json:"Id"`
			Name       string
			SoftwareID string `json:"SoftwareId"`
			Version    string
			Updateable *bool
			Status     struct{ State string }
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if m.SoftwareID == "" || m.Updateable != nil && !*m.Updateable || m.Status.State != "" && m.Status.State != "Enabled" {
			continue
		}
		rel, _ := filepath.Rel(root, f)
		capture := filepath.ToSlash(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(rel)))))
		key := capture + " software_id " + m.SoftwareID
		if _, ok := groups[key]; !ok {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], Component{ID: m.ID, Name: m.Name, SoftwareID: m.SoftwareID, Version: m.Version, Updateable: true, State: StateActive})
	}
	sort.Strings(keys)
	dotted, _ := version.NewFormat(version.Dotted, "")
	var got []string
	several := 0
	for _, k := range keys {
		if len(groups[k]) > 1 {
			several++
		}
		if kinds, why := Devices(groups[k], dotted); kinds != nil {
			got = append(got, fmt.Sprintf("%s: %d kinds, %s", k, len(kinds), why))
		}
	}
	want := []string{"dell/R750 software_id 0: 3 kinds, their names are of different families"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules over different devices (-want +got):\n%s", diff)
	}
	if several < 10 {
		t.Errorf("only %d SoftwareIds with several members: the captures were not read", several)
	}
}
