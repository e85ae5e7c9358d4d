package version

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHexReadsFields(t *testing.T) {
	tests := []struct {
		in   string
		want []uint64
	}{
		{"96.00.61.00.01", []uint64{0x96, 0, 0x61, 0, 1}},
		{"94.02.4B.00.01", []uint64{0x94, 2, 0x4B, 0, 1}},
		{"F5.11.CB", []uint64{0xF5, 0x11, 0xCB}},
		{"00.2A.2B", []uint64{0, 0x2A, 0x2B}},
		{"1.2.a3f", []uint64{1, 2, 0xA3F}},
		{"0x0F", []uint64{0x0F}},
		{"0X800016dc", []uint64{0x800016DC}},
		{"3F", []uint64{0x3F}},
		{"ffffffffffffffff", []uint64{1<<64 - 1}},
		{"00000000000000000001", []uint64{1}}, // leading zeros do not count toward 16 digits
	}
	for _, tt := range tests {
		v, err := Parse(tt.in, Hex)
		if err != nil {
			t.Errorf("Parse(%q, hex): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, v.parts); diff != "" {
			t.Errorf("Parse(%q, hex) fields (-want +got):\n%s", tt.in, diff)
		}
		if v.String() != tt.in || v.Scheme() != Hex || v.HasMinors() {
			t.Errorf("Parse(%q, hex) = %q, scheme %q, minors %v", tt.in, v, v.Scheme(), v.HasMinors())
		}
	}
}

func TestHexRefuses(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "empty"},
		{"G520.0200.00.05", `field 1 is "G520"`},
		{"96..61", `field 2 is ""`},
		{"96.00.61.00.01 ", `field 5 is "01 "`},
		{"0x", `field 1 is "0x"`},
		{"1.0x", `field 2 is "0x"`},
		{"+1.2", `field 1 is "+1"`},
		{"1_0.2", `field 1 is "1_0"`},
		{"10000000000000000", `field 1 is "10000000000000000"`}, // 17 digits: more than 64 bits
		{"00.02.0134.0000_n00", `field 4 is "0000_n00"`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in, Hex)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "hexadecimal") {
			t.Errorf("Parse(%q, hex): %v, want an error naming %s", tt.in, err, tt.want)
		}
	}
}

func TestHexOrders(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		// NVIDIA GPU VBIOS (Supermicro HGX H100, HPE XL675d A40)
		{"96.00.61.00.01", "96.00.89.00.01", -1},
		{"94.02.4B.00.01", "94.02.5C.00.03", -1},
		// a decimal reading would say 20 < 1F (twenty < thirty-one)
		{"96.00.20.00.01", "96.00.1F.00.01", 1},
		{"96.00.1F.00.01", "96.00.1f.00.01", 0},
		{"F5.11.CA", "F5.11.CB", -1},
		{"0x0D", "0D", 0},
		{"0x0F", "0x10", -1},
		{"0A", "9", 1},
		{"1.2", "1.2.0", 0},
		{"1.2.a3f", "1.2.A40", -1},
		// the vendor scheme reads 1.7.5F as revision F of 1.7.5, older
		{"1.7.5F", "1.7.6", 1},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			compareBothWays(t, MustParse(tt.a, Hex), MustParse(tt.b, Hex), tt.want)
		})
	}
	// A hex version is not a dotted one: "61" is not 0x61.
	if _, err := Compare(MustParse("96.00.61.00.01", Hex), MustParse("96.00.61.00.01", Dotted)); !IsUndecidable(err) {
		t.Errorf("hex vs dotted: %v, want undecidable", err)
	}
}

// TestHexAgreesWithDottedOnDecimalDigits: versions of decimal digits only
// order the same way read as hexadecimal or as decimal, so a component can
// declare hex before its first version with a letter arrives.
func TestHexAgreesWithDottedOnDecimalDigits(t *testing.T) {
	fields := []string{"0", "00", "1", "01", "9", "09", "10", "19", "20", "61", "89", "99", "100", "0100", "255"}
	var versions []string
	for _, a := range fields {
		for _, b := range fields {
			versions = append(versions, a+"."+b, "96."+a+"."+b+".01")
		}
		versions = append(versions, a)
	}
	dotted, hex := make([]Version, len(versions)), make([]Version, len(versions))
	for i, s := range versions {
		dotted[i], hex[i] = MustParse(s, Dotted), MustParse(s, Hex)
	}
	for i := range versions {
		for j := range versions {
			d, _ := Compare(dotted[i], dotted[j])
			h, err := Compare(hex[i], hex[j])
			if err != nil || d != h {
				t.Fatalf("%s vs %s: dotted %d, hex %d (%v)", versions[i], versions[j], d, h, err)
			}
		}
	}
}

func TestTargetMatchesHex(t *testing.T) {
	for _, c := range []struct {
		want, got string
		eq, err   bool
	}{
		{"96.00.89.00.01", "96.00.89.00.01", true, false},
		{"94.02.5C.00.03", "94.02.5c.00.03", true, false},
		{"0x0F", "0F", true, false},
		{"96.00.89.00.01", "96.00.61.00.01", false, false},
		{"96.00.89.00.01", "G520.0200.00.05", false, true},
	} {
		eq, err := Target{Version: c.want, Scheme: Hex}.Matches(c.got)
		if eq != c.eq || (err != nil) != c.err {
			t.Errorf("Target{%q, hex}.Matches(%q) = %v, %v; want %v, error %v", c.want, c.got, eq, err, c.eq, c.err)
		}
	}
}

// TestPreviousOfFleetVersions: a server started behind its target reports
// a version its scheme reads, in the BMC's spelling, that orders before it.
func TestPreviousOfFleetVersions(t *testing.T) {
	tests := []struct {
		in     string
		scheme Scheme
		want   string
	}{
		{"94.02.4B.00.01", Hex, "94.02.4B.00.00"},
		{"94.02.4B.00.00", Hex, "94.02.4A.00.00"},
		{"96.00.10.00.00", Hex, "96.00.0F.00.00"},
		{"1.2.a40", Hex, "1.2.a3f"},
		{"0x10", Hex, "0x0F"},
		{"HGX-22.10-1-rc57", Vendor, "HGX-22.10-1-rc56"},
		{"NAME-24.10-1", Vendor, "NAME-24.10-0"},
		{"56D-5.10", Vendor, "56D-5.09"},
		{"BIOS Date: 03/06/2024 Ver 2.1", Vendor, "BIOS Date: 03/06/2024 Ver 2.0"},
		{"3.50 0x800016DC", Vendor, "3.49 0x800016DC"},
	}
	for _, tt := range tests {
		v := MustParse(tt.in, tt.scheme)
		got := Previous(v, false)
		if got != tt.want {
			t.Errorf("Previous(%q) = %q, want %q", tt.in, got, tt.want)
			continue
		}
		p, err := Parse(got, tt.scheme)
		if err != nil {
			t.Errorf("Previous(%q) = %q does not parse: %v", tt.in, got, err)
			continue
		}
		if c, err := Compare(p, v); c >= 0 || err != nil {
			t.Errorf("Compare(%q, %q) = %d, %v; want older", got, tt.in, c, err)
		}
	}
	if got := Previous(MustParse("00.00", Hex), false); got != "00.00-previous" {
		t.Errorf("Previous(00.00) = %q: a version of zeros has no older one", got)
	}
}

func ExampleParse_hex() {
	a := MustParse("96.00.61.00.01", Hex)
	b := MustParse("94.02.4B.00.01", Hex)
	c, err := Compare(a, b)
	fmt.Println(c, err)
	// Output: 1 <nil>
}
