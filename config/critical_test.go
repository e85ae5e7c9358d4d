package config

import (
	"testing"
)

// upgrade_when_critical takes the reason as its value; a missing reason
// (empty or blank) is an error at the attribute, naming the server, and
// null leaves the server without an override (as a for_each may give).
func TestUpgradeWhenCritical(t *testing.T) {
	tests := []struct {
		name   string
		a1, a2 string
		want   []diag
		reason string
	}{
		{name: "a reason", a1: "      upgrade_when_critical = \"  INC-4711: the PSU fault is fixed by BMC 7.20 \"\n", reason: "INC-4711: the PSU fault is fixed by BMC 7.20"},
		{name: "null", a1: "      upgrade_when_critical = null\n"},
		{name: "empty", a1: "      upgrade_when_critical = \"\"\n", a2: "      upgrade_when_critical = \" \\t\"\n",
			want: []diag{
				{"error", "Missing reason",
					"Server \"a1\" has upgrade_when_critical without a reason. Say why it is upgraded although its BMC reports health Critical, and where that was decided (a ticket), such as upgrade_when_critical = \"INC-4711: the PSU fault is fixed by BMC 7.20\": the reason is recorded in the plan and shown first when it is reviewed. Leave the attribute out for a server that must be held back while it is Critical.",
					"main.rf.hcl:20,31-20,33"},
				{"error", "Missing reason",
					"Server \"a2\" has upgrade_when_critical without a reason. Say why it is upgraded although its BMC reports health Critical, and where that was decided (a ticket), such as upgrade_when_critical = \"INC-4711: the PSU fault is fixed by BMC 7.20\": the reason is recorded in the plan and shown first when it is reviewed. Leave the attribute out for a server that must be held back while it is Critical.",
					"main.rf.hcl:25,31-25,36"},
			}},
		{name: "not a string", a1: "      upgrade_when_critical = true\n", reason: "true"},
		{name: "a list", a1: "      upgrade_when_critical = [\"INC-1\"]\n",
			want: []diag{{"error", "Incorrect attribute value type",
				"Inappropriate value for attribute \"upgrade_when_critical\": string required, but have tuple.",
				"main.rf.hcl:20,31-20,40"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := replace(t, base, "      bmc  = \"https://127.0.0.1:8443\"\n      role = \"control_plane\"\n",
				"      bmc  = \"https://127.0.0.1:8443\"\n      role = \"control_plane\"\n"+tt.a1)
			src = replace(t, src, "      bmc  = \"https://127.0.0.2:8443\"\n      role = \"control_plane\"\n",
				"      bmc  = \"https://127.0.0.2:8443\"\n      role = \"control_plane\"\n"+tt.a2)
			cfg := checkDiags(t, src, tt.want)
			if tt.want != nil {
				return
			}
			got := cfg.Servers()[0].UpgradeWhenCritical
			switch {
			case tt.reason == "" && got != nil:
				t.Errorf("a1 has an override %+v, want none", got)
			case tt.reason != "" && (got == nil || got.Reason != tt.reason):
				t.Errorf("a1 override %+v, want reason %q", got, tt.reason)
			case tt.reason != "" && (got.Range.Filename != "main.rf.hcl" || got.Range.Start.Line != 20):
				t.Errorf("a1 override at %s, want main.rf.hcl:20", got.Range)
			}
			for _, s := range cfg.Servers()[1:] {
				if s.UpgradeWhenCritical != nil {
					t.Errorf("%s has an override it was not given", s.Name)
				}
			}
		})
	}
}
