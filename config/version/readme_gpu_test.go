package version_test

import (
	"strings"
	"testing"

	"github.com/rackform/rackform/config/version"
)

// TestReadmeGPURackRows: the Version schemes section's fleet table has a
// row for each real string of a GB200/GB300 tray, and names the vendor
// scheme (no version_pattern) for the strings only its second reading
// reads.
func TestReadmeGPURackRows(t *testing.T) {
	section := readmeVersionSection(t)
	for s, scheme := range map[string]string{
		"35_2014_4652":        "vendor",
		"01.04.0026.0000_n04": "vendor",
		"00.02.0134.0000_n00": "vendor",
		"GB200Nvl-25.07-7":    "vendor",
		"GB200Nvl-25.08-B":    "vendor",
		"40.45.3048":          "dotted",
	} {
		row := "| `" + s + "` | "
		i := strings.Index(section, row)
		if i < 0 {
			t.Errorf("the fleet table has no row for `%s`", s)
			continue
		}
		line := section[i:]
		line = line[:strings.Index(line, "\n")]
		if cells := strings.Split(line, " | "); len(cells) != 4 || cells[2] != scheme {
			t.Errorf("row %q does not name the %s scheme", line, scheme)
		}
		if _, err := version.Parse(s, version.Scheme(scheme)); err != nil {
			t.Errorf("the fleet table says %s reads `%s`: %v", scheme, s, err)
		}
	}
}
