package version_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/config/version"
)

// The version_patterns examples/README.md shows for strings the built-in
// schemes do not order, as Go strings (the README writes each backslash
// twice, as HCL needs).
const (
	// Lenovo XCC, UEFI, LXPM: "42S-2.83", "A6G-15.10"; the build code is
	// left out of the comparison, the version after the dash orders.
	lenovoPattern = `[0-9A-Z]{3}-(\d+)\.(\d+)`
	// Lenovo XCC's Manager.FirmwareVersion, "TGBT42S 2.83 2023-07-05": the
	// four-character platform prefix must match, the version orders.
	xccManagerPattern = `(?P<family>[0-9A-Z]{4})[0-9A-Z]{3} (\d+)\.(\d+)(?: \d{4}-\d\d-\d\d)?`
)

func readmeVersionSection(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n### Version schemes\n")
	if i < 0 {
		t.Fatal("examples/README.md has no Version schemes section")
	}
	s = s[i+1:]
	if j := strings.Index(s, "\n### "); j >= 0 {
		s = s[:j]
	}
	return s
}

func TestDocumentedPatterns(t *testing.T) {
	section := readmeVersionSection(t)
	for _, p := range []string{lenovoPattern, xccManagerPattern} {
		hcl := `"` + strings.ReplaceAll(p, `\`, `\\`) + `"`
		if !strings.Contains(section, "version_pattern = "+hcl) {
			t.Errorf("examples/README.md does not show version_pattern = %s", hcl)
		}
	}
	tests := []struct {
		pattern, a, b string
		want          int
		undecidable   string
	}{
		{lenovoPattern, "42S-2.83", "56D-5.10", -1, ""},
		{lenovoPattern, "22J-1.51", "32E-3.20", -1, ""},
		// build codes that start with a capital, which the vendor scheme
		// reads as families
		{lenovoPattern, "94L-14.12", "A6G-15.10", -1, ""},
		{lenovoPattern, "A6G-15.10", "C2O-15.50", -1, ""},
		{lenovoPattern, "C2O-15.50", "94L-15.50", 0, ""}, // the build is not compared
		{xccManagerPattern, "TGBT42S 2.83 2023-07-05", "TGBT56D 5.10", -1, ""},
		{xccManagerPattern, "TGBT42S 2.83 2023-07-05", "TGBT42S 2.83", 0, ""},
		{xccManagerPattern, "TGBT42S 2.83 2023-07-05", "CDI358G 4.80", 0, `family groups differ ("TGBT", "CDI3")`},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			f, err := version.NewFormat(version.Pattern, tt.pattern)
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
			c, err := version.Compare(a, b)
			if tt.undecidable != "" {
				if !version.IsUndecidable(err) || !strings.Contains(err.Error(), tt.undecidable) {
					t.Errorf("Compare = %d, %v; want undecidable: %s", c, err, tt.undecidable)
				}
				return
			}
			if c != tt.want || err != nil {
				t.Errorf("Compare(%q, %q) = %d, %v; want %d", tt.a, tt.b, c, err, tt.want)
			}
		})
	}
	f, _ := version.NewFormat(version.Pattern, lenovoPattern)
	if _, err := f.Parse("2.83"); err == nil {
		t.Error("the Lenovo pattern read a version without its build code")
	}
}

// TestReadmeFleetTable: the Version schemes section has a row for each
// real string of GPU and NIC fleets, and the scheme each row names reads
// it (an opaque row: no built-in scheme is suggested for it).
func TestReadmeFleetTable(t *testing.T) {
	section := readmeVersionSection(t)
	const header = "| reported version | where | scheme | how it is read |\n|---|---|---|---|\n"
	i := strings.Index(section, header)
	if i < 0 {
		t.Fatal("no GPU and NIC fleet table in the Version schemes section")
	}
	rows := map[string]string{}
	for _, line := range strings.Split(section[i+len(header):], "\n") {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		cells := strings.Split(line, " | ")
		if len(cells) != 4 {
			t.Fatalf("row %q has %d cells", line, len(cells))
		}
		rows[strings.Trim(cells[0], "|` ")] = cells[2]
	}
	for _, s := range []string{
		"HGX-22.10-1-rc34", "HGX-22.10-1-rc57", "NAME-24.05-2", "96.00.61.00.01", "94.02.4B.00.01",
		"96.10.35.00.01", "95.02.39.00.01", "0x0F", "F5.11.CB", "3F", "00.2A.2B", "1.7.5F",
		"42S-2.83", "56D-5.10", "22J-1.51", "18E-3.21", "TGBT42S 2.83 2023-07-05", "U8E122J",
		"BIOS Date: 08/04/2023 Ver 1.4", "BIOS Date: 03/06/2024 Ver 2.1", "3.50 0x800016DC",
		"00.02.0134.0000_n00", "11.01.01", "28.37.10.14", "24.38.1402", "6.00.30.00", "21.80.9",
		"1.8.2", "4301A56",
	} {
		if _, ok := rows[s]; !ok {
			t.Errorf("the fleet table has no row for `%s`", s)
		}
	}
	for s, scheme := range rows {
		var err error
		switch scheme {
		case "opaque":
			if sc := version.Deciding(s); sc != "" {
				t.Errorf("`%s` is said to be opaque, but the %q scheme is suggested for it", s, sc)
			}
			continue
		case "pattern (below)":
			f, _ := version.NewFormat(version.Pattern, xccManagerPattern)
			_, err = f.Parse(s)
		default:
			_, err = version.Parse(s, version.Scheme(scheme))
		}
		if err != nil {
			t.Errorf("the fleet table says %s reads `%s`: %v", scheme, s, err)
		}
	}
}
