package version

import (
	"strings"
	"testing"
)

// compareBothWays checks Compare(a, b) == want and Compare(b, a) == -want,
// and that Equal agrees.
func compareBothWays(t *testing.T, a, b Version, want int) {
	t.Helper()
	if got, err := Compare(a, b); err != nil || got != want {
		t.Errorf("Compare(%q, %q) = %d, %v; want %d", a, b, got, err, want)
	}
	if got, err := Compare(b, a); err != nil || got != -want {
		t.Errorf("Compare(%q, %q) = %d, %v; want %d", b, a, got, err, -want)
	}
	if Equal(a, b) != (want == 0) {
		t.Errorf("Equal(%q, %q) = %v", a, b, want != 0)
	}
}

// TestVendorReadsGPUAndNICFleetStrings pins how the vendor scheme reads
// the release trains, pre-releases, Lenovo build codes, Supermicro BIOS
// dates and hexadecimal build ids of GPU and NIC fleets.
func TestVendorReadsGPUAndNICFleetStrings(t *testing.T) {
	tests := []struct{ in, explain string }{
		{"HGX-22.10-1-rc34", `family "HGX", number 22.10, release 1, pre-release rc34`},
		{"HGX-22.10-1", `family "HGX", number 22.10, release 1`},
		{"NAME-24.05-2", `family "NAME", number 24.5, release 2`},
		{"1.2.3-rc.1", `number 1.2.3, pre-release rc1`},
		{"1.2.3-RC1", `number 1.2.3, pre-release rc1`},
		{"1.2.3-Beta", `number 1.2.3, pre-release beta`},
		{"1.2.3-alpha.2", `number 1.2.3, pre-release alpha2`},
		{"1.2.3-rc1-5-gabcdef", `number 1.2.3, pre-release rc1, distance 5, build id "gabcdef"`},
		{"HGX-22.10-1-5-gabcdef", `family "HGX", number 22.10, release 1, distance 5, build id "gabcdef"`},
		{"4.15.1-100", `number 4.15.1, release 100`},
		// -N- followed by something other than a pre-release stays git describe
		{"nc.1.6.16-0-gabcdef", `family "nc", number 1.6.16, distance 0, build id "gabcdef"`},
		{"nc.1.6.16-3-rcx", `family "nc", number 1.6.16, distance 3, build id "rcx"`},
		// Lenovo XCC, UEFI and LXPM: <build>-<version>
		{"42S-2.83", `number 2.83, distance 0, build id "42S"`},
		{"56D-5.10", `number 5.10, distance 0, build id "56D"`},
		{"22J-1.51", `number 1.51, distance 0, build id "22J"`},
		{"18E-3.21", `number 3.21, distance 0, build id "18E"`},
		// a code that starts with a capital reads as a family (see the doc)
		{"A6G-15.10", `family "A6G", number 15.10`},
		// Supermicro BIOS
		{"BIOS Date: 08/04/2023 Ver 1.4", `family "BIOS", number 1.4, date 2023-08-04`},
		{"BIOS Date: 03/06/2024 Ver 2.1", `family "BIOS", number 2.1, date 2024-03-06`},
		{"Date: 03/06/2024 Ver 2.1", `number 2.1, date 2024-03-06`},
		// Intel NIC: NVM version and EETRACK id
		{"3.50 0x800016DC", `number 3.50, distance 0, build id "0x800016DC"`},
		{"3.50 (0x800016dc)", `number 3.50, distance 0, build id "0x800016DC"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := Parse(tt.in, Vendor)
			if err != nil {
				t.Fatalf("Parse(%q, vendor): %v", tt.in, err)
			}
			if got := v.explain(); got != tt.explain {
				t.Errorf("read as %s\nwant       %s", got, tt.explain)
			}
			if v.String() != tt.in {
				t.Errorf("String() = %q", v.String())
			}
		})
	}
}

func TestVendorOrdersTrainsPreReleasesAndBuilds(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		// pre-releases order by number, not as text
		{"HGX-22.10-1-rc34", "HGX-22.10-1-rc57", -1},
		{"HGX-22.10-1-rc9", "HGX-22.10-1-rc10", -1},
		{"1.2.3-rc.9", "1.2.3-rc10", -1},
		// a pre-release precedes the release it precedes
		{"HGX-22.10-1-rc57", "HGX-22.10-1", -1},
		{"1.2.3-rc1", "1.2.3", -1},
		{"1.2.3-rc1", "1.2.2", 1},
		// alpha < beta < rc; a bare kind before its numbered ones (as semver)
		{"1.2.3-alpha", "1.2.3-alpha1", -1},
		{"1.2.3-alpha.2", "1.2.3-beta", -1},
		{"1.2.3-beta9", "1.2.3-rc", -1},
		{"1.2.3-rc", "1.2.3-rc0", -1},
		{"1.2.3-rc.1", "1.2.3-rc1", 0},
		{"1.2.3-RC1", "1.2.3-rc1", 0},
		// git describe after a pre-release tag
		{"1.2.3-rc1-5-gabcdef", "1.2.3-rc1", 1},
		{"1.2.3-rc1-5-gabcdef", "1.2.3-rc2", -1},
		{"1.2.3-rc1-5-gabcdef", "1.2.3", -1},
		// release trains: the train (year.month), then the build, then the
		// pre-release; the family is the name alone
		{"NAME-24.05-2", "NAME-24.10-1", -1},
		{"NAME-24.10-1", "NAME-25.01-1", -1},
		{"NAME-24.05-1", "NAME-24.05-2", -1},
		{"HGX-22.10-1-rc34", "HGX-23.04-1-rc1", -1},
		{"HGX-22.10-2-rc1", "HGX-22.10-1-rc57", 1},
		{"HGX-22.10-1", "HGX-22.10-2-rc1", -1},
		// a release number breaks ties only when both carry one
		{"NAME-24.05-2", "NAME-24.05", 0},
		{"4.15.1-99", "4.15.1-100", -1},
		// Lenovo: the version after the build code orders
		{"42S-2.83", "56D-5.10", -1},
		{"22J-1.51", "32E-3.20", -1},
		{"42S-2.83", "42S-2.83", 0},
		{"42S-2.83", "2.83", 0},
		// Supermicro BIOS: the version, then the date
		{"BIOS Date: 08/04/2023 Ver 1.4", "BIOS Date: 03/06/2024 Ver 2.1", -1},
		{"BIOS Date: 05/04/2023 Ver 1.3", "BIOS Date: 08/04/2023 Ver 1.4", -1},
		{"BIOS Date: 12/01/2023 Ver 1.4", "BIOS Date: 01/01/2023 Ver 1.5", -1},
		{"BIOS Date: 08/04/2023 Ver 1.4", "BIOS Date: 09/01/2023 Ver 1.4", -1},
		// Intel NVM: the version orders; the EETRACK id is an identity
		{"3.50 0x800016DC", "3.60 0x80001234", -1},
		{"3.50 0x800016DC", "3.50 0x800016dc", 0},
		{"3.50 0x800016DC", "3.50", 0},
		// a revision letter, not a hexadecimal field (see the hex scheme)
		{"1.7.5F", "1.7.6", -1},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			compareBothWays(t, MustParse(tt.a, Vendor), MustParse(tt.b, Vendor), tt.want)
		})
	}
}

func TestVendorFleetStringsUndecidable(t *testing.T) {
	tests := []struct{ a, b, reason string }{
		{"HGX-22.10-1-rc34", "GPU-22.10-1-rc34", `families differ ("HGX", "GPU")`},
		// two Lenovo builds of one version are two builds, neither newer
		{"18E-3.21", "18C-3.21", `different commits or builds ("18E", "18C")`},
		{"3.50 0x800016DC", "3.50 0x80001234", `different commits or builds ("0x800016DC", "0x80001234")`},
		// a Lenovo code starting with a capital reads as a family: an error, never a guess
		{"94L-14.12", "A6G-15.10", `one has the family "A6G" and the other none`},
		{"BIOS Date: 08/04/2023 Ver 1.4", "1.4", `one has the family "BIOS" and the other none`},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			a, b := MustParse(tt.a, Vendor), MustParse(tt.b, Vendor)
			for _, pair := range [][2]Version{{a, b}, {b, a}} {
				if c, err := Compare(pair[0], pair[1]); !IsUndecidable(err) {
					t.Fatalf("Compare(%q, %q) = %d, %v; want undecidable", pair[0], pair[1], c, err)
				}
			}
			if _, err := Compare(a, b); !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q lacks %q", err, tt.reason)
			}
		})
	}
}

func TestVendorRefusesMalformedFleetStrings(t *testing.T) {
	for _, in := range []string{
		"1.2.3-rc1x",
		"1.2.3-gamma1",
		"1.2.3-rc.x",
		"1.2.3-rc1-rc2",
		"1.2.3-rc99999999999999999999",
		"42s-2.83", // XCC writes its build code in capitals
		"42S-",
		"42S2.83",
		"BIOS Date: 13/45/2024 Ver 2.1",
		"BIOS Date: 08/04/2023 Ver 1.4 (08/04/2023)",
		"BIOS Date: 08/04/2023 Ver ",
		"BIOS Date: 08/04/2023",
		"3.50 0x",
		"3.50 0x12345678901234567",
		"3.50 0x800016DG",
		"-*",
		"Not Present",
	} {
		if v, err := Parse(in, Vendor); err == nil {
			t.Errorf("Parse(%q, vendor) = %s, want an error", in, v.explain())
		} else if !strings.Contains(err.Error(), "is not a vendor version") || !strings.Contains(err.Error(), "expected") {
			t.Errorf("Parse(%q, vendor): %v, want a sentence saying what was expected", in, err)
		}
	}
}
