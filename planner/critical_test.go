package planner

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/planner/plan"
)

// criticalSource is a cluster whose compute servers a and b are behind;
// a carries upgrade_when_critical when withOverride.
func criticalSource(t *testing.T, withOverride bool) string {
	t.Helper()
	src := fixture{racks: withCP([]string{"r1", "a:c", "b:c"})}.String()
	if !withOverride {
		return src
	}
	old := "    server \"a\" {\n      bmc  = \"https://127.2.0.6:8443\"\n      role = \"compute\"\n"
	if !strings.Contains(src, old) {
		t.Fatalf("the fixture changed: no server a in\n%s", src)
	}
	return strings.Replace(src, old, old+"      upgrade_when_critical = \"INC-4711: the PSU fault is fixed by the new BMC\"\n", 1)
}

// Rule 50: a server whose BMC reports health Critical is held back
// (unhealthy), with the way forward said; with upgrade_when_critical it is
// planned as any other server, the reason recorded; the override on a
// server that is not Critical is a warning at the attribute and changes
// nothing else.
func TestRule50UpgradeWhenCritical(t *testing.T) {
	planCritical := func(t *testing.T, withOverride bool, critical string) (*plan.Plan, hcl.Diagnostics) {
		cfg := loadText(t, criticalSource(t, withOverride))
		provs, fs := fakes(cfg, allBehind)
		if critical != "" {
			fs["redfish"].Servers[critical].Health = "Critical"
		}
		return Plan(context.Background(), cfg, Options{Providers: provs, Now: testNow})
	}
	server := func(p *plan.Plan, addr string) *plan.Server {
		for i := range p.Servers {
			if p.Servers[i].Address == addr {
				return &p.Servers[i]
			}
		}
		t.Fatalf("%s is not in the plan", addr)
		return nil
	}

	t.Run("held back without the override", func(t *testing.T) {
		p, diags := planCritical(t, false, "c/r1/a")
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		a := server(p, "c/r1/a")
		if a.Action != plan.ActionSkip || a.Reason != plan.ReasonUnhealthy || a.UpgradeWhenCritical != nil {
			t.Errorf("a: %s %s %+v, want skipped as unhealthy", a.Action, a.Reason, a.UpgradeWhenCritical)
		}
		var said bool
		for _, w := range p.Warnings {
			said = said || (strings.Contains(w.Detail, "c/r1/a") && strings.Contains(w.Detail, "give it upgrade_when_critical = \"why, and the ticket\""))
		}
		if !said {
			t.Errorf("the warning does not say the way forward: %+v", p.Warnings)
		}
	})

	t.Run("planned with the override", func(t *testing.T) {
		p, diags := planCritical(t, true, "c/r1/a")
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		for _, d := range diags {
			t.Logf("%s: %s", d.Summary, d.Detail)
		}
		a := server(p, "c/r1/a")
		if a.Action != plan.ActionUpgrade || a.Reason != "" || len(a.Steps) == 0 {
			t.Fatalf("a: %s %q with %d steps, want upgraded", a.Action, a.Reason, len(a.Steps))
		}
		if diff := cmp.Diff(&plan.CriticalOverride{Reason: "INC-4711: the PSU fault is fixed by the new BMC"}, a.UpgradeWhenCritical); diff != "" {
			t.Errorf("a's override (-want +got):\n%s", diff)
		}
		if a.Observed.Health != "Critical" {
			t.Errorf("a observed %q, want Critical recorded", a.Observed.Health)
		}
		if len(p.Warnings) != 0 {
			t.Errorf("warnings %+v, want none", p.Warnings)
		}
		// The same servers, steps and order as a plan in which a is healthy.
		healthy, diags := planCritical(t, true, "")
		if len(diags) != 1 {
			t.Fatalf("diagnostics %v, want the one warning", diags)
		}
		h := server(healthy, "c/r1/a")
		if diff := cmp.Diff(h.Steps, a.Steps); diff != "" {
			t.Errorf("a's steps differ from a healthy a's (-healthy +critical):\n%s", diff)
		}
		if p.Summary.Upgrade != healthy.Summary.Upgrade || p.Summary.Skip != 0 {
			t.Errorf("summary %+v, want %+v", p.Summary, healthy.Summary)
		}
	})

	t.Run("an override on a server that is not Critical", func(t *testing.T) {
		p, diags := planCritical(t, true, "")
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "Not Critical" {
			t.Fatalf("diagnostics %v, want one warning", diags)
		}
		d := diags[0]
		if want := "Server c/r1/a: its BMC reports health OK, not Critical, so upgrade_when_critical changes nothing: the server is planned as any other. Remove it once the fault it was for is gone."; d.Detail != want {
			t.Errorf("detail:\n%s\nwant\n%s", d.Detail, want)
		}
		if d.Subject == nil || !strings.HasSuffix(d.Subject.Filename, "main.rf.hcl") || d.Subject.Start.Line != 58 {
			t.Errorf("subject %v, want the attribute at main.rf.hcl:58", d.Subject)
		}
		a := server(p, "c/r1/a")
		if a.UpgradeWhenCritical != nil || a.Action != plan.ActionUpgrade {
			t.Errorf("a: %s, override %+v: want upgraded as any other, nothing recorded", a.Action, a.UpgradeWhenCritical)
		}
		// Nothing else changes: the plan is the one without the override
		// but for its configuration snapshot and the warning.
		without, _ := planCritical(t, false, "")
		p.Warnings, without.Warnings = nil, nil
		p.Config, without.Config = plan.Snapshot{}, plan.Snapshot{}
		if diff := cmp.Diff(without, p); diff != "" {
			t.Errorf("the override changed the plan (-without +with):\n%s", diff)
		}
	})
}
