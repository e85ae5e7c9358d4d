package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMatchCount: a match block's count says how many members the rule
// must select; it is a whole number from 1, read beside the one selector.
func TestMatchCount(t *testing.T) {
	src := strings.Replace(base, `      software_id = "BIOS"`, `      software_id = "0x0020"
      count       = 8`, 1)
	cfg, diags := loadFiles(t, map[string]string{"main.rf.hcl": src}, LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	got := cfg.Releases[0].Components[0].Match
	if diff := cmp.Diff(Match{SoftwareID: "0x0020", Count: 8}, got); diff != "" {
		t.Errorf("match (-want +got):\n%s", diff)
	}

	for _, bad := range []string{"0", "2.5", `"eight"`} {
		src := strings.Replace(base, `      software_id = "BIOS"`, `      software_id = "0x0020"
      count       = `+bad, 1)
		_, diags := loadFiles(t, map[string]string{"main.rf.hcl": src}, LoadOptions{})
		found := false
		for _, d := range flatten(diags) {
			if strings.Contains(d.Summary+d.Detail, "count") && strings.HasPrefix(d.Range, "main.rf.hcl:7,") {
				found = true
			}
		}
		if !found {
			t.Errorf("count = %s: diagnostics %v; want one about count at main.rf.hcl:7", bad, flatten(diags))
		}
	}
}
