package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// Seed limits (Operator Nexus runtime upgrade): each node gets at most 20
// minutes to drain and 10 minutes for its VMs to shut down. A strategy
// above them is an error at its attribute unless it opts out with
// exceed_seed_limits = true.
func TestSeedLimitsDrainAndShutdown(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string // error summaries
	}{
		{"at the limits", `drain_timeout = "20m"
  shutdown_timeout = "10m"`, nil},
		{"drain above 20m", `drain_timeout = "30m"`, []string{"Above the seed limit for draining a node"}},
		{"shutdown above 10m", `shutdown_timeout = "11m"`, []string{"Above the seed limit for shutting down a node's VMs"}},
		{"drain hook above 20m", "drain {\n    command = [\"true\"]\n    timeout = \"25m\"\n  }", []string{"Above the seed limit for draining a node"}},
		{"opted out", `drain_timeout = "45m"
  shutdown_timeout = "15m"
  exceed_seed_limits = true`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := base + "\nstrategy \"s\" {\n  " + tc.body + "\n}\n"
			src = strings.Replace(src, "release = release.r1", "release = release.r1\n  strategy = strategy.s", 1)
			writeConfig(t, map[string]string{"main.rf.hcl": src})
			_, diags := NewLoader(LoadOptions{}).Load(".")
			var got []string
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					got = append(got, d.Summary)
					if !strings.Contains(d.Detail, "exceed_seed_limits = true") || strings.Contains(d.Detail, "0s") || d.Subject == nil || d.Subject.Filename != "main.rf.hcl" {
						t.Errorf("the error does not point at the file or name the way out: %s (%v)", d.Detail, d.Subject)
					}
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("errors = %q, want %q", got, tc.want)
			}
		})
	}
}
