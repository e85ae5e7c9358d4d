package version_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/internal/testenv"
)

// TestRealCapturesAreDecided reads firmware versions from real BMC
// captures (third-party data, read where it lies and never copied) and
// checks that the scheme examples/README.md gives each reads it and orders
// it against the newer version the capture's README names (or against
// another member of the same capture). The table's strings are checked
// against the capture, so it cannot drift from what the BMCs report.
func TestRealCapturesAreDecided(t *testing.T) {
	tests := []struct {
		capture, member string
		reported        string
		scheme          version.Scheme
		pattern         string
		// target is a newer version of the component: a held-out target
		// of the capture's README or another member of the capture.
		target string
		want   int
	}{
		{"supermicro/SYS-821GE-TNHR", "HGX_FW_BMC_0", "HGX-22.10-1-rc34", version.Vendor, "", "HGX-22.10-1-rc57", -1},
		{"supermicro/SYS-821GE-TNHR", "HGX_FW_GPU_SXM_1", "96.00.61.00.01", version.Hex, "", "96.00.89.00.01", -1},
		{"supermicro/SYS-821GE-TNHR", "HGX_FW_NVSwitch_0", "96.10.35.00.01", version.Hex, "", "96.10.35.00.01", 0},
		{"supermicro/SYS-821GE-TNHR", "BIOS", "BIOS Date: 08/04/2023 Ver 1.4", version.Vendor, "", "BIOS Date: 03/22/2024 Ver 2.1", -1},
		{"supermicro/SYS-821GE-TNHR", "Golden_BIOS", "BIOS Date: 05/04/2023 Ver 1.3", version.Vendor, "", "BIOS Date: 08/04/2023 Ver 1.4", -1},
		{"supermicro/SYS-821GE-TNHR", "BMC", "11.01.01", version.Dotted, "", "11.02.01", -1},
		{"supermicro/SYS-821GE-TNHR", "Golden_CPLD_Motherboard", "F5.11.CA", version.Hex, "", "F5.11.CB", -1},
		{"supermicro/SYS-821GE-TNHR", "Switchboard_2_CPLD_2", "3F", version.Hex, "", "0x40", -1},
		{"supermicro/SYS-821GE-TNHR", "NIC1", "28.37.10.14", version.Dotted, "", "28.39.10.02", -1},
		{"supermicro/SYS-821GE-TNHR", "NIC9", "3.50 0x800016DC", version.Vendor, "", "3.50 0x800016DC", 0},
		{"supermicro/SYS-821GE-TNHR", "NIC10", "24.38.1402", version.Semver, "", "24.38.1402", 0},
		{"supermicro/SYS-821GE-TNHR", "HGX_FW_PCIeSwitch_0", "1.7.5F", version.Vendor, "", "1.7.6", -1},
		{"lenovo/SR670V2", "BMC-Primary", "42S-2.83", version.Vendor, "", "56D-5.10", -1},
		{"lenovo/SR670V2", "BMC-Backup", "42S-2.83", version.Pattern, lenovoPattern, "56D-5.10", -1},
		{"lenovo/SR670V2", "UEFI", "22J-1.51", version.Vendor, "", "32E-3.20", -1},
		{"lenovo/SR670V2", "LXPM", "18E-3.21", version.Vendor, "", "18E-3.21", 0},
		{"lenovo/SR670V2", "GPU1", "95.02.39.00.01", version.Hex, "", "96.00.61.00.01", -1},
		{"lenovo/SR670V2", "Slot_15.Bundle", "24.41.1000", version.Semver, "", "24.42.1000", -1},
		{"dell/R750", "Installed-108076-00.2A.2B__PSU.Slot.1", "00.2A.2B", version.Hex, "", "00.2A.2B", 0},
		{"dell/R750", "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", "6.00.30.00", version.Dotted, "", "7.10.30.00", -1},
		{"dell/R750", "Installed-108255-21.80.9__NIC.Embedded.1-1-1", "21.80.9", version.Dotted, "", "22.00.6", -1},
	}
	// Resolved once: without the captures the test skips in one line.
	testenv.MockupsDir(t)
	for _, tt := range tests {
		t.Run(tt.capture+"/"+tt.member, func(t *testing.T) {
			dir := testenv.Mockup(t, tt.capture)
			b, err := os.ReadFile(filepath.Join(dir, "UpdateService", "FirmwareInventory", tt.member, "index.json"))
			if err != nil {
				t.Fatal(err)
			}
			var member struct{ Version string }
			if err := json.Unmarshal(b, &member); err != nil {
				t.Fatal(err)
			}
			if member.Version != tt.reported {
				t.Fatalf("the capture reports %q, the table says %q", member.Version, tt.reported)
			}
			f, err := version.NewFormat(tt.scheme, tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			reported, err := f.Parse(member.Version)
			if err != nil {
				t.Fatal(err)
			}
			target, err := f.Parse(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if c, err := version.Compare(reported, target); c != tt.want || err != nil {
				t.Errorf("Compare(%q, %q) under %s = %d, %v; want %d", reported, target, tt.scheme, c, err, tt.want)
			}
		})
	}
}
