package version

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// explain describes how v was read: what each test pins and what the
// language reference's table says.
func (v Version) explain() string {
	var b []string
	if v.family != "" {
		b = append(b, "family "+strconv.Quote(v.Family()))
	}
	nums := make([]string, len(v.parts))
	for i, p := range v.parts {
		nums[i] = strconv.FormatUint(p, 10)
	}
	b = append(b, "number "+strings.Join(nums, "."))
	if v.letter != 0 {
		b = append(b, "letter "+string(v.letter))
	}
	if v.hasRelease {
		b = append(b, fmt.Sprintf("release %d", v.release))
	}
	if v.pre.kind != 0 {
		b = append(b, "pre-release "+v.pre.String())
	}
	if v.distance != 0 || v.ident != "" {
		b = append(b, fmt.Sprintf("distance %d", v.distance))
	}
	if v.ident != "" {
		b = append(b, "build id "+strconv.Quote(v.ident))
	}
	if v.hasRev {
		b = append(b, fmt.Sprintf("rev %d", v.rev))
	}
	if v.hasBuild {
		b = append(b, fmt.Sprintf("build %d", v.build))
	}
	if !v.date.IsZero() {
		b = append(b, "date "+v.date.Format("2006-01-02"))
	}
	return strings.Join(b, ", ")
}

// realVersions are version strings real BMCs report (FirmwareInventory
// Version, BiosVersion, FirmwareVersion of the DMTF, HPE iLO 5, Cray EX,
// Gigabyte/AMI, OpenBMC, Lenovo XCC and Supermicro/HGX captures), with how
// the vendor scheme reads each and the first built-in scheme that decides it
// alone.
var realVersions = []struct {
	in       string
	explain  string
	deciding Scheme
}{
	{"P79 v1.45", `family "P79", number 1.45`, Vendor},
	{"U30 v2.52 (10/29/2021)", `family "U30", number 2.52, date 2021-10-29`, Vendor},
	{"A47 v2.52 (10/29/2021)", `family "A47", number 2.52, date 2021-10-29`, Vendor},
	{"1.45.455b66-rev4", `number 1.45, distance 0, build id "455b66", rev 4`, Vendor},
	{"nc.1.6.16-0-gabcdef", `family "nc", number 1.6.16, distance 0, build id "gabcdef"`, Vendor},
	{"nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff", `family "nc", number 1.6.16, distance 21, build id "prod-master.arm.2022-01-25T16:23:33+00:00.28331ff"`, Vendor},
	{"ex235a.bios-1.3.6", `family "ex235a.bios", number 1.3.6`, Vendor},
	{"2.46 May 11 2021", `number 2.46, date 2021-05-11`, Vendor},
	{"2.55 Oct 01 2021", `number 2.55, date 2021-10-01`, Vendor},
	{"C27", `family "C", number 27`, Vendor},
	{"A43", `family "A", number 43`, Vendor},
	{"5.10.50.00", `number 5.10.50.0`, Dotted},
	{"1.00.07", `number 1.0.7`, Dotted},
	{"2.14 (Build 8)", `number 2.14, build 8`, Vendor},
	{"9.1.0 Build 27", `number 9.1.0, build 27`, Vendor},
	{"v1.20 (02/28/2020)", `number 1.20, date 2020-02-28`, Vendor},
	{"1.44B", `number 1.44, letter B`, Vendor},
	{"HGX-22.10-1-rc34", `family "HGX", number 22.10, release 1, pre-release rc34`, Vendor},
	{"42S-2.83", `number 2.83, distance 0, build id "42S"`, Vendor},
	{"22J-1.51", `number 1.51, distance 0, build id "22J"`, Vendor},
	{"18E-3.21", `number 3.21, distance 0, build id "18E"`, Vendor},
	{"BIOS Date: 08/04/2023 Ver 1.4", `family "BIOS", number 1.4, date 2023-08-04`, Vendor},
	{"3.50 0x800016DC", `number 3.50, distance 0, build id "0x800016DC"`, Vendor},
	{"1.0b", `number 1.0, letter B`, Vendor},
	{"1.7.5F", `number 1.7.5, letter F`, Vendor},
}

func TestVendorSchemeReadsEveryRealBMCString(t *testing.T) {
	for _, tt := range realVersions {
		t.Run(tt.in, func(t *testing.T) {
			v, err := Parse(tt.in, Vendor)
			if err != nil {
				t.Fatalf("Parse(%q, vendor): %v", tt.in, err)
			}
			if got := v.explain(); got != tt.explain {
				t.Errorf("read as %s, want %s", got, tt.explain)
			}
			if v.String() != tt.in {
				t.Errorf("String() = %q", v.String())
			}
			if c, err := Compare(v, v); c != 0 || err != nil {
				t.Errorf("Compare(v, v) = %d, %v", c, err)
			}
			if got := Deciding(tt.in); got != tt.deciding {
				t.Errorf("Deciding(%q) = %q, want %q", tt.in, got, tt.deciding)
			}
		})
	}
}

// TestRealStringsPairwise compares every real string with every other:
// each pair is ordered consistently both ways or undecidable both ways,
// and exactly the pairs of one family are decidable.
func TestRealStringsPairwise(t *testing.T) {
	for _, x := range realVersions {
		for _, y := range realVersions {
			a, b := MustParse(x.in, Vendor), MustParse(y.in, Vendor)
			ab, errAB := Compare(a, b)
			ba, errBA := Compare(b, a)
			if (errAB != nil) != (errBA != nil) {
				t.Errorf("%q vs %q: decidable one way only (%v; %v)", x.in, y.in, errAB, errBA)
				continue
			}
			if errAB == nil && ab != -ba {
				t.Errorf("Compare(%q, %q) = %d but the reverse is %d", x.in, y.in, ab, ba)
			}
			sameFamily := a.family == b.family
			if sameFamily == (errAB != nil) && !(sameFamily && a.ident != "" && b.ident != "") {
				t.Errorf("%q vs %q: same family %v, but Compare error %v", x.in, y.in, sameFamily, errAB)
			}
			if errAB != nil && !IsUndecidable(errAB) {
				t.Errorf("%q vs %q: error %v is not an UndecidableError", x.in, y.in, errAB)
			}
		}
	}
}

func TestCompareOrders(t *testing.T) {
	tests := []struct {
		a, b   string
		scheme Scheme
		want   int
	}{
		{"4.10.0", "4.9.0", Semver, 1}, // a string comparison would say -1
		{"1.0.0-rc.1", "1.0.0", Semver, -1},
		{"1.0.0-rc.9", "1.0.0-rc.10", Semver, -1},
		// semver compares "rc9" and "rc10" as text, as its specification
		// says: write rc.10, or read "-rc10" with the vendor scheme
		{"1.0.0-rc9", "1.0.0-rc10", Semver, 1},
		{"1.0.0+a", "1.0.0+b", Semver, 0},
		{"2.19.1.7", "2.19.1.10", Dotted, -1},
		{"1.2", "1.2.0", Dotted, 0},
		{"10", "9", Dotted, 1},
		{"1.00.07", "1.0.7", Dotted, 0},
		{"5.10.50.00", "5.10.50.1", Dotted, -1},

		// vendor: the number orders within a family
		{"P79 v1.45", "P79 v1.46", Vendor, -1},
		{"P79 v1.45", "P79 v1.9", Vendor, 1}, // 45 > 9: fields are numbers
		{"P79 v1.45", "P79 v1.45.0", Vendor, 0},
		{"U30 v2.52 (10/29/2021)", "U30 v2.54 (03/01/2023)", Vendor, -1},
		{"A47 v2.40 (02/23/2021)", "A47 v2.52 (10/29/2021)", Vendor, -1},
		{"ex235a.bios-1.3.6", "ex235a.bios-1.3.10", Vendor, -1},
		{"C27", "C28", Vendor, -1},
		{"C27", "C9", Vendor, 1},
		{"A43", "A44", Vendor, -1},
		{"2.46 May 11 2021", "2.55 Oct 01 2021", Vendor, -1},
		{"2.14 (Build 8)", "2.15 (Build 1)", Vendor, -1},
		{"v1.20 (02/28/2020)", "v1.21", Vendor, -1},
		{"v1.20", "1.20", Vendor, 0},
		{"5.10.50.00", "5.10.51", Vendor, -1},
		// a trailing date is ignored unless both carry one; then it breaks ties
		{"U30 v2.52 (10/29/2021)", "U30 v2.52", Vendor, 0},
		{"2.46 May 11 2021", "2.46", Vendor, 0},
		{"U30 v2.52 (10/29/2021)", "U30 v2.52 (11/02/2021)", Vendor, -1},
		{"2.55 Oct 01 2021", "2.55 (10/01/2021)", Vendor, 0},
		// a build number likewise
		{"9.1.0 Build 27", "9.1.0 Build 36", Vendor, -1},
		{"9.1.0 Build 27", "9.1.0", Vendor, 0},
		{"2.14 (Build 8)", "2.14 Build 8", Vendor, 0},
		{"2.14 (Build 8)", "2.13 (Build 90)", Vendor, 1},
		// a revision letter orders after the bare number
		{"1.44B", "1.44", Vendor, 1},
		{"1.44B", "1.44A", Vendor, 1},
		{"1.44B", "1.44b", Vendor, 0},
		{"1.44B", "1.45", Vendor, -1},
		// git describe: N commits after the tag orders after the tag
		{"nc.1.6.16-0-gabcdef", "nc.1.6.16", Vendor, 0},
		{"nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff", "nc.1.6.16", Vendor, 1},
		{"nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff", "nc.1.6.16-0-gabcdef", Vendor, 1},
		{"nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff", "nc.1.6.17", Vendor, -1},
		{"nc.1.6.16-2-gaaaaaaa", "nc.1.6.16-10-gbbbbbbb", Vendor, -1},
		// -revN breaks ties when both carry it
		{"1.45.455b66-rev4", "1.45.455b66-rev5", Vendor, -1},
		{"1.45.455b66-rev4", "1.45", Vendor, 0},
		{"1.45.455b66-rev4", "1.46.123abc-rev1", Vendor, -1},
	}
	for _, tt := range tests {
		t.Run(string(tt.scheme)+"/"+tt.a+"_"+tt.b, func(t *testing.T) {
			a, b := MustParse(tt.a, tt.scheme), MustParse(tt.b, tt.scheme)
			got, err := Compare(a, b)
			if err != nil || got != tt.want {
				t.Errorf("Compare(%s, %s) = %d, %v; want %d", tt.a, tt.b, got, err, tt.want)
			}
			if got, err := Compare(b, a); err != nil || got != -tt.want {
				t.Errorf("Compare(%s, %s) = %d, %v; want %d", tt.b, tt.a, got, err, -tt.want)
			}
			if Equal(a, b) != (tt.want == 0) {
				t.Errorf("Equal(%s, %s) = %v", tt.a, tt.b, !(tt.want == 0))
			}
		})
	}
}

func TestCompareUndecidable(t *testing.T) {
	tests := []struct {
		a, b   string
		scheme Scheme
		reason string
	}{
		// another platform's ROM is neither older nor newer
		{"P79 v1.45", "P80 v1.46", Vendor, `families differ ("P79", "P80")`},
		{"U30 v2.52 (10/29/2021)", "A47 v2.52 (10/29/2021)", Vendor, "families differ"},
		{"C27", "A43", Vendor, "families differ"},
		{"A43", "A43 v2.52 (10/29/2021)", Vendor, `families differ ("A", "A43")`},
		{"nc.1.6.16-0-gabcdef", "ex235a.bios-1.3.6", Vendor, "families differ"},
		{"P79 v1.45", "1.45", Vendor, `one has the family "P79" and the other none`},
		// one tag, one distance, two commits: two different builds
		{"nc.1.6.16-3-gaaaaaaa", "nc.1.6.16-3-gbbbbbbb", Vendor, "different commits"},
		{"1.45.455b66-rev4", "1.45.77aa77-rev4", Vendor, "different commits"},
		{"abc", "abd", Opaque, "only equal or different"},
		{"1.2.3", "1.2.4", Opaque, "only equal or different"},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			a, b := MustParse(tt.a, tt.scheme), MustParse(tt.b, tt.scheme)
			for i, pair := range [][2]Version{{a, b}, {b, a}} {
				c, err := Compare(pair[0], pair[1])
				if err == nil {
					t.Fatalf("Compare(%s, %s) = %d, want undecidable", pair[0], pair[1], c)
				}
				if !IsUndecidable(err) || i == 0 && !strings.Contains(err.Error(), tt.reason) {
					t.Errorf("error %q, want an UndecidableError containing %q", err, tt.reason)
				}
				if Equal(pair[0], pair[1]) {
					t.Errorf("Equal(%s, %s) = true", pair[0], pair[1])
				}
			}
		})
	}
}

func TestCompareAcrossSchemes(t *testing.T) {
	if c, err := Compare(MustParse("4.6.1", Semver), MustParse("4.6.1.0", Dotted)); c != 0 || err != nil {
		t.Errorf("semver 4.6.1 vs dotted 4.6.1.0 = %d, %v; want 0 (numeric fields)", c, err)
	}
	if _, err := Compare(MustParse("4.6.1", Semver), MustParse("4.6.1", Vendor)); !IsUndecidable(err) {
		t.Errorf("semver vs vendor: err = %v, want undecidable", err)
	}
	if _, err := Compare(Version{}, MustParse("1", Dotted)); err == nil {
		t.Error("the zero Version compared")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in      string
		scheme  Scheme
		wantErr string
	}{
		{"4.6.1", Semver, ""},
		{"1.2.0-rc.1+build.5", Semver, ""},
		{"4.6", Semver, "not a semantic version"},
		{"v4.6.1", Semver, "not a semantic version"},
		{"2.19.1.7", Dotted, ""},
		{"7", Dotted, ""},
		{"1..2", Dotted, "field 2 is \"\""},
		{"1.2a", Dotted, "field 2 is \"2a\""},
		{"+1.2", Dotted, "field 1 is \"+1\""},
		{"", Dotted, "empty version"},
		{"P79 v1.45", Dotted, "not a dotted version"},
		{"1.2.3", "nonsense", "unknown version scheme"},
		{"1.2.3", Pattern, "needs a version_pattern"},
		{"", Opaque, "empty"},
		{"anything at all", Opaque, ""},
		// the vendor scheme refuses what it cannot read, never guesses
		{"", Vendor, "empty"},
		{"undefined", Vendor, "not a vendor version"},
		{"1.5.27-ESM", Vendor, "not a vendor version"},
		{"2.46 May 11", Vendor, "not a vendor version"},
		{"U30 v2.52 (13/45/2021)", Vendor, "not a vendor version"},
		{"U30 v2.52 (10/29/2021", Vendor, "not a vendor version"},
		{"2.14 (Build 8) (Build 9)", Vendor, "not a vendor version"},
		{"P79  v1.45", Vendor, "not a vendor version"},
		{" 1.45", Vendor, "not a vendor version"},
		{"1.45 ", Vendor, "not a vendor version"},
		{"99999999999999999999.1", Vendor, "not a vendor version"},
		{"1.44BC", Vendor, "not a vendor version"},
		{"1.44bc", Vendor, "not a vendor version"},
		{"1.45.455B66", Vendor, "not a vendor version"},
		{strings.Repeat("1.", 200) + "1", Vendor, "longer than 256"},
	}
	for _, tt := range tests {
		t.Run(string(tt.scheme)+"/"+tt.in, func(t *testing.T) {
			v, err := Parse(tt.in, tt.scheme)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if v.String() != tt.in {
					t.Errorf("String() = %q", v.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestPatternScheme(t *testing.T) {
	// A family token that must match, two numbers that order, a date that
	// is ignored.
	const hpe = `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)(?: \(\d\d/\d\d/\d{4}\))?`
	// Named major and minor: the pattern has minors.
	const release = `rel-(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?`
	tests := []struct {
		pattern, a, b string
		want          int
		undecidable   string
	}{
		{hpe, "U30 v2.52 (10/29/2021)", "U30 v2.54", -1, ""},
		{hpe, "U30 v2.52 (10/29/2021)", "U30 v2.52 (01/01/2030)", 0, ""},
		{hpe, "U30 v2.52", "U31 v2.52", 0, `family groups differ ("U30", "U31")`},
		{release, "rel-4.5", "rel-4.5.0", 0, ""},
		{release, "rel-4.10", "rel-4.9.7", 1, ""},
		{`(?P<family>\w+)-(?P<family_arch>arm|x86)-(\d+)`, "bmc-arm-3", "bmc-x86-3", 0, `family groups differ ("bmc arm", "bmc x86")`},
		{`(?P<family>\w+)-(?P<family_arch>arm|x86)-(\d+)`, "bmc-arm-3", "bmc-arm-12", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			f, err := NewFormat(Pattern, tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			a, err := f.Parse(tt.a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := f.Parse(tt.b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Compare(a, b)
			if tt.undecidable != "" {
				if !IsUndecidable(err) || !strings.Contains(err.Error(), tt.undecidable) {
					t.Fatalf("Compare = %d, %v; want undecidable containing %q", got, err, tt.undecidable)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Compare(%s, %s) = %d, %v; want %d", tt.a, tt.b, got, err, tt.want)
			}
		})
	}

	f, _ := NewFormat(Pattern, hpe)
	if f.HasMinors() {
		t.Error("a pattern without major and minor groups has minors")
	}
	r, _ := NewFormat(Pattern, release)
	if !r.HasMinors() {
		t.Error("a pattern naming major and minor has no minors")
	}
	v, _ := r.Parse("rel-4.6.2")
	if v.MinorString() != "4.6" {
		t.Errorf("MinorString = %q", v.MinorString())
	}
	if got := SkippedMinors(mustFormat(t, r, "rel-4.4.0"), v, nil); !cmp.Equal(got, []string{"4.5"}) {
		t.Errorf("SkippedMinors(rel-4.4.0, rel-4.6.2) = %v, want [4.5]", got)
	}
	// The version a release names and the reported one come from one
	// format, so the same pattern reads both; another pattern is refused.
	other, _ := NewFormat(Pattern, `rel-(\d+)\.(\d+)`)
	w, _ := other.Parse("rel-4.6")
	if _, err := Compare(v, w); !IsUndecidable(err) {
		t.Errorf("versions of two patterns compared: %v", err)
	}
}

func mustFormat(t *testing.T, f Format, s string) Version {
	t.Helper()
	v, err := f.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPatternErrors(t *testing.T) {
	tests := []struct {
		pattern, in, wantErr string
	}{
		{`v(\d+`, "", "not a regular expression"},
		{`(?P<family>[A-Z]+)\d+`, "", "no capture group to compare"},
		{`v(\d+)`, "", ""},
		{`v(\d+)`, "v12", ""},
		{`v(\d+)`, "v12 extra", `does not match the version_pattern`},
		{`v(\d+)`, "xv12", `does not match the version_pattern`},
		{`v(\w+)`, "vabc", `group 1 of the version_pattern captured "abc", which is not a whole number`},
		{`v(?P<build>\w+)`, "vabc", `group "build"`},
		{strings.Repeat("a", 1025), "", "longer than 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"/"+tt.in, func(t *testing.T) {
			f, err := NewFormat(Pattern, tt.pattern)
			if err == nil && tt.in != "" {
				_, err = f.Parse(tt.in)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := NewFormat(Vendor, `v(\d+)`); err == nil || !strings.Contains(err.Error(), "read only by the \"pattern\" scheme") {
		t.Errorf("a pattern on the vendor scheme: err = %v", err)
	}
}

func TestHasMinors(t *testing.T) {
	for _, tt := range []struct {
		v    Version
		want bool
	}{
		{MustParse("4.6.1", Semver), true},
		{MustParse("2.19.1", Dotted), true},
		{MustParse("P79 v1.45", Vendor), false},
		{MustParse("1.45", Vendor), false},
		{MustParse("x", Opaque), false},
	} {
		if got := tt.v.HasMinors(); got != tt.want {
			t.Errorf("%s (%s).HasMinors() = %v, want %v", tt.v, tt.v.Scheme(), got, tt.want)
		}
	}
	// Vendor numbers are not release trains: no minor is ever "skipped".
	if got := SkippedMinors(MustParse("1.45", Vendor), MustParse("1.60", Vendor), nil); got != nil {
		t.Errorf("vendor SkippedMinors = %v, want none", got)
	}
}

func TestSkippedMinors(t *testing.T) {
	sv := func(s string) Version { return MustParse(s, Semver) }
	tests := []struct {
		name     string
		from, to string
		known    []string
		want     []string
	}{
		{"next minor", "4.4.2", "4.5.0", nil, nil},
		{"patch skip allowed", "4.5.0", "4.5.9", nil, nil},
		{"skip one", "4.4.0", "4.6.1", nil, []string{"4.5"}},
		{"skip two", "4.4.0", "4.7.0", nil, []string{"4.5", "4.6"}},
		{"downgrade", "4.6.0", "4.4.0", nil, nil},
		{"major without catalog", "4.9.0", "5.1.0", nil, nil},
		{"catalog has the minor", "4.4.0", "4.6.1", []string{"4.4.0", "4.5.2", "4.6.1"}, []string{"4.5"}},
		{"catalog lacks the minor", "4.4.0", "4.6.1", []string{"4.4.0", "4.6.1"}, nil},
		{"catalog across major", "4.9.0", "5.1.0", []string{"4.9.0", "5.0.0", "5.0.3", "5.1.0"}, []string{"5.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var known []Version
			for _, k := range tt.known {
				known = append(known, sv(k))
			}
			got := SkippedMinors(sv(tt.from), sv(tt.to), known)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SkippedMinors(%s, %s) (-want +got):\n%s", tt.from, tt.to, diff)
			}
		})
	}
}

func TestTargetMatchesByScheme(t *testing.T) {
	const hpe = `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)(?: \(.*\))?`
	cases := []struct {
		scheme, pattern, want, got string
		eq, err                    bool
	}{
		{"", "", "1.2", "1.2", true, false},
		{"", "", "1.2", "1.2.0", false, false},
		{"dotted", "", "1.2", "1.2.0", true, false},
		{"semver", "", "1.2.3", "1.2.4", false, false},
		{"dotted", "", "1.2", "P79 v1.45", false, true},
		{"nonsense", "", "1", "1", false, true},
		// a BMC reports the target with its release date
		{"vendor", "", "U30 v2.54", "U30 v2.54 (03/01/2023)", true, false},
		{"vendor", "", "nc.1.6.16", "nc.1.6.16-0-gabcdef", true, false},
		{"vendor", "", "P79 v1.45", "P80 v1.45", false, false},
		{"vendor", "", "P79 v1.45", "garbage!", false, true},
		{"pattern", hpe, "U30 v2.54", "U30 v2.54 (03/01/2023)", true, false},
		{"pattern", hpe, "U30 v2.54", "U30 v2.55", false, false},
		{"pattern", hpe, "U30 v2.54", "2.54", false, true},
		{"pattern", "", "1", "1", false, true},
		{"opaque", "", "build-7f3a", "build-7f3a", true, false},
		{"opaque", "", "build-7f3a", "build-7f3b", false, false},
	}
	for _, c := range cases {
		eq, err := Target{Version: c.want, Scheme: Scheme(c.scheme), Pattern: c.pattern}.Matches(c.got)
		if eq != c.eq || (err != nil) != c.err {
			t.Errorf("Target{%q, %q, %q}.Matches(%q) = %v, %v; want %v, error %v", c.want, c.scheme, c.pattern, c.got, eq, err, c.eq, c.err)
		}
	}
}

func TestDecidingSuggestsAScheme(t *testing.T) {
	tests := []struct {
		in   []string
		want Scheme
	}{
		{[]string{"4.6.1"}, Semver},
		{[]string{"2.19.1"}, Semver},
		{[]string{"2.19.1.7"}, Dotted},
		{[]string{"2.19.1.7", "2.19"}, Dotted},
		{[]string{"P79 v1.46", "P79 v1.45"}, Vendor},
		{[]string{"1.45", "1.45.455b66-rev4"}, Vendor},
		{[]string{"HGX-22.10-1-rc34", "HGX-22.10-1-rc57"}, Vendor},
		{[]string{"NAME-24.05-2", "NAME-24.10-1"}, Vendor},
		{[]string{"42S-2.83", "56D-5.10"}, Vendor},
		{[]string{"BIOS Date: 08/04/2023 Ver 1.4", "BIOS Date: 03/06/2024 Ver 2.1"}, Vendor},
		{[]string{"1.7.5F"}, Vendor},
		// hexadecimal fields: hex, when nothing before reads them all
		{[]string{"96.00.61.00.01"}, Dotted},
		{[]string{"96.00.61.00.01", "94.02.4B.00.01"}, Hex},
		{[]string{"F5.11.CB"}, Hex},
		{[]string{"0x0F"}, Hex},
		// hex reads these, but a word without a dot or 0x is rarely a number
		{[]string{"4301A56"}, ""},
		{[]string{"cafe"}, ""},
		{[]string{"0x0F", "cafe"}, ""},
		// different families: no built-in scheme orders them
		{[]string{"P79 v1.46", "P80 v1.45"}, ""},
		{[]string{"1.11-tlnc"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := Deciding(tt.in...); got != tt.want {
			t.Errorf("Deciding(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseScheme(t *testing.T) {
	for _, s := range Schemes {
		if got, err := ParseScheme(string(s)); got != s || err != nil {
			t.Errorf("ParseScheme(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseScheme("semantic"); err == nil || !strings.Contains(err.Error(), `"semver", "dotted", "hex", "vendor", "pattern", "opaque"`) {
		t.Errorf("ParseScheme(semantic): %v", err)
	}
	if Opaque.Ordered() || !Vendor.Ordered() || !Hex.Ordered() {
		t.Error("Ordered: opaque must be unordered, vendor and hex ordered")
	}
}

// FuzzParse checks every scheme's parser on arbitrary strings: no panic, a
// parsed version prints as written, equals itself, and compares with any
// other version of its scheme the same way in both directions.
func FuzzParse(f *testing.F) {
	for _, r := range realVersions {
		f.Add(r.in, "P79 v1.46")
	}
	for _, s := range []string{"4.6.1", "1.0.0-rc.1+b", "2.19.1.7", "1.44b", "nc.1.6.16-3-gaaaa", "2.14 (Build 8) May 11 2021", "rel-4.5.1", "v1", "C", "1.2.3.4.5.6.7.8.9"} {
		f.Add(s, "1.2.3")
	}
	for _, p := range [][2]string{
		{"HGX-22.10-1-rc34", "HGX-22.10-1-rc57"},
		{"NAME-24.05-2", "NAME-24.10-1"},
		{"1.2.3-rc.1", "1.2.3-beta2-4-gabcdef"},
		{"42S-2.83", "56D-5.10"},
		{"18E-3.21", "18C-3.21"},
		{"BIOS Date: 08/04/2023 Ver 1.4", "BIOS Date: 03/06/2024 Ver 2.1"},
		{"3.50 0x800016DC", "3.50 (0x80001234)"},
		{"96.00.61.00.01", "94.02.4B.00.01"},
		{"F5.11.CB", "0x0F"},
		{"1.2.a3f", "1.2.A40"},
	} {
		f.Add(p[0], p[1])
	}
	formats := []Format{}
	for _, sc := range []Scheme{Semver, Dotted, Hex, Vendor, Opaque} {
		fm, _ := NewFormat(sc, "")
		formats = append(formats, fm)
	}
	pat, err := NewFormat(Pattern, `(?:rel-)?(?P<family>[a-z]*)(?P<major>\d+)\.(?P<minor>\d+)(?:\.(\d+))?.*`)
	if err != nil {
		f.Fatal(err)
	}
	formats = append(formats, pat)
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, fm := range formats {
			va, errA := fm.Parse(a)
			if errA != nil {
				continue
			}
			if va.String() != a {
				t.Fatalf("%s: String() = %q, want %q", fm.Scheme, va.String(), a)
			}
			if c, err := Compare(va, va); c != 0 || err != nil {
				t.Fatalf("%s: Compare(%q, itself) = %d, %v", fm.Scheme, a, c, err)
			}
			vb, errB := fm.Parse(b)
			if errB != nil {
				continue
			}
			ab, e1 := Compare(va, vb)
			ba, e2 := Compare(vb, va)
			if (e1 == nil) != (e2 == nil) || ab != -ba {
				t.Fatalf("%s: Compare(%q, %q) = %d, %v but reversed %d, %v", fm.Scheme, a, b, ab, e1, ba, e2)
			}
			eq, err := Target{Version: a, Scheme: fm.Scheme, Pattern: fm.Pattern}.Matches(b)
			if err != nil || eq != (e1 == nil && ab == 0) {
				t.Fatalf("%s: Target{%q}.Matches(%q) = %v, %v; Compare %d, %v", fm.Scheme, a, b, eq, err, ab, e1)
			}
		}
	})
}
