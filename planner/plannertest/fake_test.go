package plannertest

import (
	"testing"

	"github.com/rackform/rackform/config/version"
)

// TestPreviousKeepsTheVendorText: a server "behind" reports an older
// version its component's scheme reads, in the BMC's own spelling.
func TestPreviousKeepsTheVendorText(t *testing.T) {
	f, _ := version.NewFormat(version.Pattern, `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)`)
	pv, _ := f.Parse("U30 v2.54")
	for _, tt := range []struct {
		v    version.Version
		want string
	}{
		{version.MustParse("2.80", version.Dotted), "2.79"},
		{version.MustParse("4.6.0", version.Semver), "4.5.0"},
		{version.MustParse("P79 v1.46", version.Vendor), "P79 v1.45"},
		// The last number that makes it older is the release date.
		{version.MustParse("U30 v2.52 (10/29/2021)", version.Vendor), "U30 v2.52 (10/29/2020)"},
		{version.MustParse("nc.1.6.10", version.Vendor), "nc.1.6.09"},
		{version.MustParse("C27", version.Vendor), "C26"},
		{pv, "U30 v2.53"},
		{version.MustParse("build-7f3b", version.Opaque), "build-7f3b-previous"},
	} {
		if got := Previous(tt.v); got != tt.want {
			t.Errorf("Previous(%s) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
