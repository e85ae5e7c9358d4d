package version

import (
	"strings"
	"testing"
)

// explainSecond is explain with what the vendor scheme's second reading
// adds: underscore-separated fields, a constant suffix, a build letter.
func (v Version) explainSecond() string {
	s := v.explain()
	if v.under {
		s += ", fields separated by underscores"
	}
	if v.suffix != "" {
		s += ", suffix " + v.suffix
	}
	if v.letterRelease {
		s += ", build letter " + releaseText(v)
	}
	return s
}

// gpuRackVersions are the firmware strings of NVIDIA GB200/GB300 trays
// (issue 32): how the vendor scheme reads each.
var gpuRackVersions = []struct{ in, explain string }{
	// NVLink switch firmware
	{"35_2014_4652", "number 35.2014.4652, fields separated by underscores"},
	{"35_2014_4770", "number 35.2014.4770, fields separated by underscores"},
	// the ERoT: a suffix that stays the same across releases
	{"01.04.0026.0000_n04", "number 1.4.26.0, suffix _n04"},
	{"01.04.0031.0000_n04", "number 1.4.31.0, suffix _n04"},
	{"00.02.0134.0000_n00", "number 0.2.134.0, suffix _n00"},
	// the HMC's release train: builds 1–9, then A–E within a month
	{"GB200Nvl-25.07-7", `family "GB200Nvl", number 25.7, release 7`},
	{"GB200Nvl-25.08-B", `family "GB200Nvl", number 25.8, release 11, build letter B`},
	{"GB200Nvl-25.06-A", `family "GB200Nvl", number 25.6, release 10, build letter A`},
	{"GB200Nvl-25.01-E", `family "GB200Nvl", number 25.1, release 14, build letter E`},
	// the GB300 tray's NICs (ConnectX-8, BlueField-3) read as before
	{"40.45.3048", "number 40.45.3048"},
}

func TestVendorReadsGPURackStrings(t *testing.T) {
	for _, tt := range gpuRackVersions {
		t.Run(tt.in, func(t *testing.T) {
			v, err := Parse(tt.in, Vendor)
			if err != nil {
				t.Fatalf("Parse(%q, vendor): %v", tt.in, err)
			}
			if got := v.explainSecond(); got != tt.explain {
				t.Errorf("read as %s\nwant       %s", got, tt.explain)
			}
			if v.String() != tt.in {
				t.Errorf("String() = %q", v.String())
			}
			if c, err := Compare(v, v); c != 0 || err != nil {
				t.Errorf("Compare(v, v) = %d, %v", c, err)
			}
			// no version_pattern: the vendor scheme is what plan suggests
			if got := Deciding(tt.in); got != Vendor && !(got == Semver && tt.in == "40.45.3048") {
				t.Errorf("Deciding(%q) = %q, want %q", tt.in, got, Vendor)
			}
		})
	}
}

func TestVendorOrdersGPURackStrings(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		// underscore-separated fields order as numbers
		{"35_2014_4652", "35_2014_4770", -1},
		{"35_2014_4652", "35_2014_4652", 0},
		{"35_2014_999", "35_2014_4652", -1}, // 999 < 4652: not text
		{"35_2014_4652", "35_2015_0001", -1},
		{"35_2014", "35_2014_0", 0},
		{"NVSW_35_2014_4652", "NVSW_35_2014_4770", -1},
		// the ERoT: the number orders when the suffixes are equal
		{"01.04.0026.0000_n04", "01.04.0031.0000_n04", -1},
		{"01.04.0031.0000_n04", "01.04.0031.0000_n04", 0},
		{"01.04.0031.0000_n04", "1.4.31_n04", 0},
		{"00.02.0134.0000_n00", "00.02.0135.0000_n00", -1},
		// a release train with build letters: month, then build 1–9, A–E
		{"GB200Nvl-25.07-7", "GB200Nvl-25.08-B", -1},
		{"GB200Nvl-25.06-9", "GB200Nvl-25.06-A", -1},
		{"GB200Nvl-25.06-A", "GB200Nvl-25.06-E", -1},
		{"GB200Nvl-25.06-A", "GB200Nvl-25.06-B", -1},
		{"GB200Nvl-25.01-E", "GB200Nvl-25.06-A", -1},
		{"GB200Nvl-25.06-1", "GB200Nvl-25.06-A", -1},
		{"GB200Nvl-25.06-A", "GB200Nvl-25.06-A", 0},
		{"GB200Nvl-25.06-A", "GB200Nvl-25.06", 0}, // a build breaks ties only when both carry one
		{"GB200Nvl-25.06-A-rc2", "GB200Nvl-25.06-A", -1},
		{"GB200Nvl-25.06-A", "GB200Nvl-25.06-B-rc1", -1},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			compareBothWays(t, MustParse(tt.a, Vendor), MustParse(tt.b, Vendor), tt.want)
		})
	}
}

func TestVendorGPURackStringsUndecidable(t *testing.T) {
	tests := []struct{ a, b, reason string }{
		// the suffix must be equal on both sides, never guessed
		{"01.04.0026.0000_n04", "01.04.0031.0000_n05", `suffixes differ ("_n04", "_n05")`},
		{"01.04.0026.0000_n04", "01.04.0031.0000", `one ends in the suffix "_n04" and the other in none`},
		// underscores and dots are different firmware's numbering
		{"35_2014_4652", "35.2014.4770", "separated by underscores and the other does not"},
		{"35_2014_4652", "35", "separated by underscores and the other does not"},
		// a letter build against a number above 9
		{"GB200Nvl-25.06-A", "GB200Nvl-25.06-10", "a letter and a number above 9"},
		{"GB200Nvl-25.06-15", "GB200Nvl-25.06-E", "a letter and a number above 9"},
		// the train's prefix must match
		{"GB200Nvl-25.07-7", "GB300Nvl-25.08-B", `families differ ("GB200Nvl", "GB300Nvl")`},
		{"GB200Nvl-25.08-B", "25.08-B", `one has the family "GB200Nvl" and the other none`},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			a, b := MustParse(tt.a, Vendor), MustParse(tt.b, Vendor)
			for _, pair := range [][2]Version{{a, b}, {b, a}} {
				if c, err := Compare(pair[0], pair[1]); !IsUndecidable(err) {
					t.Fatalf("Compare(%q, %q) = %d, %v; want undecidable", pair[0], pair[1], c, err)
				}
				if Equal(pair[0], pair[1]) {
					t.Errorf("Equal(%q, %q) = true", pair[0], pair[1])
				}
			}
			if _, err := Compare(a, b); !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q lacks %q", err, tt.reason)
			}
		})
	}
}

func TestVendorRefusesMalformedGPURackStrings(t *testing.T) {
	for _, in := range []string{
		"35_",
		"35__2014",
		"_35_2014",
		"35_2014_",
		"35_2014_4652 ",
		"01.04.0026.0000_",
		"01.04.0026.0000_04",   // a suffix starts with a letter
		"01.04.0026.0000_n-04", // and is letters and digits
		"01.04.0026.0000_n04_n05",
		"01.04.0026.0000_n04 (10/29/2021)",
		"01.04.0026.0000_" + strings.Repeat("n", maxSuffix),
		"GB200Nvl-25.08-b", // build letters are capitals
		"GB200Nvl-25.08-BC",
		"GB200Nvl-25.08-B7",
		"GB200Nvl-25.08-",
		"1.5.27-ESM", // still not a vendor version
	} {
		if v, err := Parse(in, Vendor); err == nil {
			t.Errorf("Parse(%q, vendor) = %s, want an error", in, v.explainSecond())
		} else if !strings.Contains(err.Error(), "is not a vendor version") {
			t.Errorf("Parse(%q, vendor): %v", in, err)
		}
	}
}

// TestSecondReadingChangesNoFirstReading: every string the first reading
// reads is read the same way with the second reading in place (the
// real strings, and the forms it reads next to an underscore, a suffix
// or a letter).
func TestSecondReadingChangesNoFirstReading(t *testing.T) {
	ins := []string{"ab_1.2", "P79_1.45", "FOO_1.2-3", "HGX-22.10-1-rc34", "1.44B", "A6G-15.10", "42S-2.83", "nc.1.6.16-0-gabcdef"}
	for _, r := range realVersions {
		ins = append(ins, r.in)
	}
	for _, in := range ins {
		if _, dated := parseDated(in); dated {
			continue // Supermicro's form is read before either reading
		}
		first, ok := parseVendorReading(in, false)
		if !ok {
			t.Errorf("%q: the first reading reads nothing", in)
			continue
		}
		v := MustParse(in, Vendor)
		if v.explainSecond() != first.explainSecond() {
			t.Errorf("%q read as %s, the first reading says %s", in, v.explainSecond(), first.explainSecond())
		}
	}
}

func TestPreviousOfGPURackStrings(t *testing.T) {
	for in, want := range map[string]string{
		"35_2014_4770":        "35_2014_4769",
		"01.04.0031.0000_n04": "01.04.0030.0000_n04",
		"GB200Nvl-25.08-B":    "GB200Nvl-25.07-B",
	} {
		v := MustParse(in, Vendor)
		got := Previous(v, false)
		if got != want {
			t.Errorf("Previous(%q) = %q, want %q", in, got, want)
		}
		if c, err := Compare(MustParse(got, Vendor), v); c != -1 || err != nil {
			t.Errorf("Previous(%q) = %q compares %d, %v", in, got, c, err)
		}
	}
}

// TestPreviousReadsLeadingZerosAsDecimal: "08" is eight, not an octal
// misreading that made Previous("1.08") "0.0".
func TestPreviousReadsLeadingZerosAsDecimal(t *testing.T) {
	for _, tt := range []struct {
		in     string
		scheme Scheme
		want   string
	}{
		{"1.08", Dotted, "1.7"},
		{"P79 v1.08", Vendor, "P79 v1.07"},
		{"01.04.0031.0000_n04", Vendor, "01.04.0030.0000_n04"},
	} {
		if got := Previous(MustParse(tt.in, tt.scheme), false); got != tt.want {
			t.Errorf("Previous(%q, %s) = %q, want %q", tt.in, tt.scheme, got, tt.want)
		}
	}
}

func TestLineage(t *testing.T) {
	for in, want := range map[string]string{
		"GB200Nvl-25.08-B":    "GB200Nvl",
		"35_2014_4652":        "fields separated by underscores",
		"01.04.0026.0000_n04": "suffix _n04",
		"NVSW_35_2014_n1":     "NVSW, fields separated by underscores, suffix _n1",
		"1.45":                "",
	} {
		if got := MustParse(in, Vendor).Lineage(); got != want {
			t.Errorf("Lineage(%q) = %q, want %q", in, got, want)
		}
	}
}
