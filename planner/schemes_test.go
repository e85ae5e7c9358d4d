package planner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

// biosAs is the rule fixture (three control-plane servers) with the bios
// component's version and scheme lines replaced by attrs.
func biosAs(t *testing.T, attrs string) string {
	t.Helper()
	src := fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String()
	old := "    version = \"2.80\"\n    scheme  = \"dotted\"\n"
	if !strings.Contains(src, old) {
		t.Fatal("fixture changed: no bios version lines")
	}
	return strings.Replace(src, old, attrs, 1)
}

// biosChanges plans with every server's BIOS at bios and returns the
// servers' bios changes by server name, or the diagnostics.
func biosChanges(t *testing.T, src, bios string) (map[string]plan.Change, hcl.Diagnostics) {
	t.Helper()
	p, diags := planObserved(t, loadText(t, src), map[string]string{"BIOS": bios}, nil)
	if diags.HasErrors() {
		return nil, diags
	}
	out := map[string]plan.Change{}
	for _, s := range p.Servers {
		for _, c := range s.Changes {
			if c.Component == "bios" {
				out[s.Name] = c
			}
		}
	}
	return out, diags
}

func TestVendorVersionsArePlannedByScheme(t *testing.T) {
	tests := []struct {
		name, attrs, reported string
		want                  *plan.Change // nil: at target
	}{
		{"older ROM of the family is upgraded", "    version = \"U30 v2.54\"\n    scheme  = \"vendor\"\n", "U30 v2.52 (10/29/2021)",
			&plan.Change{Component: "bios", Kind: "firmware", From: "U30 v2.52 (10/29/2021)", To: "U30 v2.54", Reboot: true}},
		{"the target with its release date is at target", "    version = \"U30 v2.54\"\n    scheme  = \"vendor\"\n", "U30 v2.54 (03/01/2023)", nil},
		{"git describe: the tag itself is at target", "    version = \"nc.1.6.16\"\n    scheme  = \"vendor\"\n", "nc.1.6.16-0-gabcdef", nil},
		{"build numbers order", "    version = \"9.1.0 Build 36\"\n    scheme  = \"vendor\"\n", "9.1.0 Build 27",
			&plan.Change{Component: "bios", Kind: "firmware", From: "9.1.0 Build 27", To: "9.1.0 Build 36", Reboot: true}},
		{"a pattern orders numbers and ignores the date",
			"    version         = \"A47 v2.52\"\n    version_pattern = \"(?P<family>[A-Z]\\\\d+) v(\\\\d+)\\\\.(\\\\d+)(?: \\\\(.*\\\\))?\"\n",
			"A47 v2.40 (02/23/2021)",
			&plan.Change{Component: "bios", Kind: "firmware", From: "A47 v2.40 (02/23/2021)", To: "A47 v2.52", Reboot: true}},
		{"opaque with allow_change is a change, not an upgrade",
			"    version      = \"build-7f3b\"\n    scheme       = \"opaque\"\n    allow_change = true\n", "build-7f3a",
			&plan.Change{Component: "bios", Kind: "firmware", From: "build-7f3a", To: "build-7f3b", Unordered: true, Reboot: true}},
		{"opaque at target", "    version = \"build-7f3b\"\n    scheme  = \"opaque\"\n", "build-7f3b", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := biosChanges(t, biosAs(t, tt.attrs), tt.reported)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if tt.want == nil {
				if len(got) != 0 {
					t.Errorf("changes %v, want none (at target)", got)
				}
				return
			}
			// One member, the BIOS, moves on each server.
			want := *tt.want
			want.Members, want.Moving = 1, 1
			for _, name := range []string{"a", "b", "c"} {
				if diff := cmp.Diff(want, got[name]); diff != "" {
					t.Errorf("server %s change (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

func TestUndecidableVersionIsAPlanErrorNamingWhatToDeclare(t *testing.T) {
	tests := []struct {
		name, attrs, reported string
		summary               string
		detail                []string
	}{
		{"a string the scheme cannot read, with the scheme that reads both", "    version = \"1.45\"\n    scheme  = \"dotted\"\n", "1.45.455b66-rev4",
			"Undecidable version", []string{
				"Servers c/r1/a, c/r1/b, c/r1/c: ", `component "bios" reports version "1.45.455b66-rev4"`, `which the "dotted" scheme cannot read`,
				`Declare scheme = "vendor" on component "bios", which reads and orders both.`}},
		{"a vendor string against a dotted target", "    version = \"1.46\"\n    scheme  = \"dotted\"\n", "P79 v1.45",
			"Undecidable version", []string{
				`component "bios" reports version "P79 v1.45"`,
				`Scheme "vendor" reads "P79 v1.45", but not against the target 1.46: declare scheme = "vendor" on component "bios" and write its version as the BMC spells it`}},
		{"another family's ROM is not older or newer", "    version = \"P79 v1.46\"\n    scheme  = \"vendor\"\n", "P80 v1.45",
			"Undecidable version", []string{
				`reports version "P80 v1.45"`, `which the "vendor" scheme cannot order against the target P79 v1.46`,
				`their families differ ("P80", "P79")`, "firmware of another family"}},
		{"two builds of one tag", "    version = \"nc.1.6.16-3-gaaaaaaa\"\n    scheme  = \"vendor\"\n", "nc.1.6.16-3-gbbbbbbb",
			"Undecidable version", []string{"the same version built from different commits", "Write the target as the exact build"}},
		{"nothing reads it", "    version = \"2.80\"\n    scheme  = \"dotted\"\n", "1.5.27 ESM",
			"Undecidable version", []string{`declare a version_pattern on component "bios"`, `or scheme = "opaque" and allow_change = true`}},
		{"opaque differs without allow_change", "    version = \"build-7f3b\"\n    scheme  = \"opaque\"\n", "build-7f3a",
			"Opaque version differs", []string{`component "bios" is at build-7f3a, not its target build-7f3b`, `Set allow_change = true on component "bios"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := biosChanges(t, biosAs(t, tt.attrs), tt.reported)
			if diff := cmp.Diff([]string{tt.summary}, errorSummaries(diags)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%s", diff, diags.Error())
			}
			var d *hcl.Diagnostic
			for _, x := range diags {
				if x.Severity == hcl.DiagError {
					d = x
				}
			}
			for _, want := range tt.detail {
				if !strings.Contains(d.Detail, want) {
					t.Errorf("detail %q\nlacks %q", d.Detail, want)
				}
			}
			if d.Subject == nil || d.Subject.Start.Line == 0 {
				t.Errorf("no subject: the error must point at the component block")
			}
		})
	}
}

// TestMinorRuleOnlyWhereTheSchemeHasMinors: a vendor runtime has no minor
// versions, so moving "v4.4" to "v4.6" skips nothing; semver still does.
func TestMinorRuleOnlyWhereTheSchemeHasMinors(t *testing.T) {
	src := fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}, runtime: "4.6.1"}.String()
	src = strings.Replace(src, "    kind    = \"runtime\"\n    version = \"4.6.1\"\n", "    kind    = \"runtime\"\n    version = \"rt v4.6\"\n    scheme  = \"vendor\"\n", 1)
	if _, diags := planObserved(t, loadText(t, src), map[string]string{"RT": "rt v4.4"}, nil); diags.HasErrors() {
		t.Errorf("vendor runtime: %s", diags.Error())
	}
	semver := fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String()
	if _, diags := planObserved(t, loadText(t, semver), map[string]string{"RT": "4.4.0"}, nil); !strings.Contains(diags.Error(), "Minor version skipped") {
		t.Errorf("semver runtime: %v, want the minor rule", diags.Error())
	}
}

func TestStepsAndExpectationsCarryTheScheme(t *testing.T) {
	const pat = `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)`
	src := biosAs(t, "    version         = \"U30 v2.54\"\n    version_pattern = \"(?P<family>[A-Z]\\\\d+) v(\\\\d+)\\\\.(\\\\d+)\"\n")
	p, diags := planObserved(t, loadText(t, src), map[string]string{"BIOS": "U30 v2.52", "RT": "4.6.0"}, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	s := p.Servers[0]
	type got struct{ Kind, Component, Scheme, Pattern string }
	var steps []got
	for _, st := range s.Steps {
		switch st.Kind {
		case plan.StepUpdate, plan.StepReimage:
			steps = append(steps, got{string(st.Kind), st.Component, string(st.Target.Scheme), st.Target.Pattern})
		case plan.StepWaitReady:
			for _, e := range st.Expect {
				steps = append(steps, got{"expect", e.Component, string(e.Target.Scheme), e.Target.Pattern})
			}
		}
	}
	want := []got{
		{"update", "bios", "pattern", pat},
		{"reimage", "runtime", "semver", ""},
		{"expect", "bios", "pattern", pat},
		{"expect", "runtime", "semver", ""},
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

func TestServersBehindOneBMCNameTheirSystem(t *testing.T) {
	src := fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String()
	src = strings.Replace(src, "bmc  = \"https://127.2.0.3:8443\"\n      role = \"control_plane\"\n",
		"bmc    = \"https://127.2.0.2:8443\"\n      role   = \"control_plane\"\n      system = \"Node1\"\n", 1)
	src = strings.Replace(src, "bmc  = \"https://127.2.0.2:8443\"\n      role = \"control_plane\"\n",
		"bmc    = \"https://127.2.0.2:8443\"\n      role   = \"control_plane\"\n      system = \"Node0\"\n", 1)
	cfg := loadText(t, src)
	provs, fs := fakes(cfg, allBehind)
	p, diags := Plan(t.Context(), cfg, Options{Providers: provs, Now: testNow})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var targets []providers.Target
	for _, tg := range fs["redfish"].Targets() {
		targets = append(targets, providers.Target{Name: tg.Name, Endpoint: tg.Endpoint, System: tg.System})
	}
	wantTargets := []providers.Target{
		{Name: "c/r1/a", Endpoint: "https://127.2.0.2:8443", System: "Node0"},
		{Name: "c/r1/b", Endpoint: "https://127.2.0.2:8443", System: "Node1"},
		{Name: "c/r1/c", Endpoint: "https://127.2.0.4:8443"},
	}
	if diff := cmp.Diff(wantTargets, targets); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	var systems []string
	for _, s := range p.Servers {
		systems = append(systems, s.System)
	}
	if diff := cmp.Diff([]string{"Node0", "Node1", ""}, systems); diff != "" {
		t.Errorf("plan systems (-want +got):\n%s", diff)
	}
}

func TestPlainHTTPAllowedIsOneWarningNamingTheServers(t *testing.T) {
	src := fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String()
	src = strings.Replace(src, `provider "redfish" {}`, "provider \"redfish\" {\n  allow_http = true\n}", 1)
	src = strings.Replace(src, "https://127.2.0.2:8443", "http://127.2.0.2:8443", 1)
	src = strings.Replace(src, "https://127.2.0.3:8443", "http://127.2.0.3:8443", 1)
	p := mustPlan(t, loadText(t, src), func(int, *config.Server) plannertest.State { return plannertest.AtTarget }, nil)
	var got []plan.Message
	for _, w := range p.Warnings {
		if strings.Contains(w.Summary, "http") {
			got = append(got, w)
		}
	}
	want := []plan.Message{{Summary: "Plain http:// BMC addresses",
		Detail: `Servers c/r1/a, c/r1/b: the BMC address is plain http://, so the BMC password crosses the network in clear text; provider "redfish" allows it with allow_http = true. Use https:// where the BMC supports it.`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
