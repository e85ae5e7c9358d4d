package planner

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

// planObserved plans cfg with every server reporting versions: component
// name → observed version ("" removes the component from the inventory).
func planObserved(t *testing.T, cfg *config.Config, versions map[string]string, mod func(*Options)) (*plan.Plan, hcl.Diagnostics) {
	t.Helper()
	fs := plannertest.FromConfig(cfg, func(int, *config.Server) plannertest.State { return plannertest.AtTarget })
	provs := map[string]providers.Provider{}
	for name, f := range fs {
		for _, o := range f.Servers {
			var comps []providers.Component
			for _, c := range o.Components {
				v, ok := versions[c.Name]
				if !ok {
					v, ok = versions[c.ID]
				}
				if !ok && c.SoftwareID != "" {
					v, ok = versions[c.SoftwareID]
				}
				switch {
				case ok && v == "":
					continue
				case ok:
					c.Version = v
				}
				comps = append(comps, c)
			}
			o.Components = comps
		}
		provs[name] = f
	}
	opts := Options{Providers: provs, Now: testNow}
	if mod != nil {
		mod(&opts)
	}
	return Plan(context.Background(), cfg, opts)
}

func changes(p *plan.Plan) []plan.Change {
	var out []plan.Change
	for _, s := range p.Servers {
		out = append(out, s.Changes...)
	}
	return out
}

func TestRule27MinorVersionSkipNamesTheMissingRelease(t *testing.T) {
	racks := [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}
	cases := []struct {
		name     string
		extra    string
		observed string
		want     string // "" means no error
	}{
		{"one minor is fine", "", "4.5.9", ""},
		{"patches may be skipped", "", "4.6.0", ""},
		{"skipping 4.5 names 4.5", "", "4.4.2", "skipping 4.5. "},
		{"skipping two minors names both", "", "4.3.0", "skipping 4.4, 4.5"},
		{"with a catalog the release is named by its version", "catalog {\nreleases = [\"4.4.0\", \"4.5.0\", \"4.5.3\", \"4.6.1\"]\n}\n", "4.4.0", "upgrade to release 4.5.3 first"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := loadText(t, fixture{racks: racks, extra: c.extra}.String())
			_, diags := planObserved(t, cfg, map[string]string{"RT": c.observed}, nil)
			if c.want == "" {
				if diags.HasErrors() {
					t.Fatalf("unexpected errors: %s", diags.Error())
				}
				return
			}
			if diff := cmp.Diff([]string{"Minor version skipped"}, errorSummaries(diags)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if !strings.Contains(diags[0].Detail, c.want) || !strings.Contains(diags[0].Detail, "c/r1/a, c/r1/b, c/r1/c") {
				t.Errorf("detail %q does not contain %q and the servers", diags[0].Detail, c.want)
			}
			if diags[0].Subject == nil {
				t.Error("no source range")
			}
		})
	}
}

func TestRule28DowngradeRefusedUnlessAllowed(t *testing.T) {
	racks := [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}
	t.Run("refused", func(t *testing.T) {
		cfg := loadText(t, fixture{racks: racks}.String())
		_, diags := planObserved(t, cfg, map[string]string{"BIOS": "2.81"}, nil)
		if diff := cmp.Diff([]string{"Downgrade refused"}, errorSummaries(diags)); diff != "" {
			t.Fatalf("errors (-want +got):\n%s", diff)
		}
		if !strings.Contains(diags[0].Detail, `component "bios" is at 2.81, newer than the target 2.80`) {
			t.Errorf("detail: %s", diags[0].Detail)
		}
	})
	t.Run("allowed by the release", func(t *testing.T) {
		cfg := loadText(t, fixture{racks: racks, release: "allow_downgrade = true"}.String())
		p, diags := planObserved(t, cfg, map[string]string{"BIOS": "2.81"}, nil)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		want := plan.Change{Component: "bios", Kind: "firmware", From: "2.81", To: "2.80", Reboot: true, Downgrade: true, Members: 1, Moving: 1}
		if diff := cmp.Diff(want, changes(p)[0]); diff != "" {
			t.Errorf("change (-want +got):\n%s", diff)
		}
	})
}

func TestRule29VersionsCompareByScheme(t *testing.T) {
	racks := [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}
	cfg := loadText(t, fixture{racks: racks}.String())
	// As strings "2.9" > "2.80"; as dotted integers 9 < 80.
	p, diags := planObserved(t, cfg, map[string]string{"BIOS": "2.9"}, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := changes(p); len(got) != 3 || got[0].From != "2.9" || got[0].Downgrade {
		t.Errorf("2.9 → 2.80 must be an upgrade: %+v", got)
	}
	// "2.80.0" equals "2.80" under dotted comparison: at target.
	p, diags = planObserved(t, cfg, map[string]string{"BIOS": "2.80.0"}, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, s := range p.Servers {
		if s.Action != plan.ActionSkip || s.Reason != plan.ReasonAtTarget {
			t.Errorf("%s: %s %s, want skip already_at_target", s.Address, s.Action, s.Reason)
		}
	}
	// A version that does not parse is an error naming the server.
	_, diags = planObserved(t, cfg, map[string]string{"BIOS": "U46 v2.10"}, nil)
	if diff := cmp.Diff([]string{"Undecidable version"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
}

func TestRule24AlreadyAtTargetIsSkipped(t *testing.T) {
	cfg := loadText(t, fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String())
	p, diags := planObserved(t, cfg, nil, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if p.Summary != (plan.Summary{Skip: 3}) {
		t.Errorf("summary %+v, want 3 skipped and nothing else", p.Summary)
	}
	for _, s := range p.Servers {
		if s.Reason != plan.ReasonAtTarget || len(s.Steps) != 0 {
			t.Errorf("%s: reason %q with %d steps", s.Address, s.Reason, len(s.Steps))
		}
	}
}

func TestMissingComponentNamesServerAndComponent(t *testing.T) {
	cfg := loadText(t, fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String())
	_, diags := planObserved(t, cfg, map[string]string{"BIOS": ""}, nil)
	if diff := cmp.Diff([]string{"Component not found on server"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	for _, want := range []string{"c/r1/a", `software_id "BIOS"`, `component "bios"`} {
		if !strings.Contains(diags[0].Detail, want) {
			t.Errorf("detail %q lacks %q", diags[0].Detail, want)
		}
	}
}

func TestComponentMatchRules(t *testing.T) {
	inv := []providers.Component{
		{ID: "1", Name: "Intel E810 NIC 1", SoftwareID: "nic-e810", Version: "4.0"},
		{ID: "2", Name: "Intel E810 NIC 2", SoftwareID: "nic-e810", Version: "4.1"},
		{ID: "BIOS", Name: "System ROM", Version: "2.1"},
	}
	cases := []struct {
		name  string
		match config.Match
		want  []string
	}{
		{"software_id", config.Match{SoftwareID: "nic-e810"}, []string{"1", "2"}},
		{"id", config.Match{ID: "BIOS"}, []string{"BIOS"}},
		{"name glob", config.Match{Name: "Intel E810 NIC *"}, []string{"1", "2"}},
		{"name glob one", config.Match{Name: "*NIC 2"}, []string{"2"}},
		{"nothing", config.Match{Name: "Mellanox*"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, x := range matching(c.match, inv) {
				got = append(got, x.ID)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTargetAndExclude(t *testing.T) {
	racks := withCP([]string{"r1", "a:c", "b:c"}, []string{"r2", "c:c"})
	cfg := loadText(t, fixture{racks: racks}.String())
	addrs := func(p *plan.Plan) []string {
		var out []string
		for _, s := range p.Servers {
			out = append(out, s.Address)
		}
		return out
	}
	cases := []struct {
		name      string
		targets   []string
		excludes  []string
		want      []string
		wantError []string
	}{
		{"rack", []string{"c/r1"}, nil, []string{"c/r1/a", "c/r1/b"}, nil},
		{"server", []string{"c/r2/c"}, nil, []string{"c/r2/c"}, nil},
		{"rack minus a server", []string{"c/r1"}, []string{"c/r1/a"}, []string{"c/r1/b"}, nil},
		{"exclude outside the targets is no typo", []string{"c/r1"}, []string{"c/r2/c"}, []string{"c/r1/a", "c/r1/b"}, nil},
		{"cluster", []string{"c"}, []string{"c/x-cp1", "c/x-cp2", "c/x-cp3"}, []string{"c/r1/a", "c/r1/b", "c/r2/c"}, nil},
		{"target matching nothing", []string{"c/r9"}, nil, nil, []string{"Target matches nothing"}},
		{"no prefix matching", []string{"c/r"}, nil, nil, []string{"Target matches nothing"}},
		{"exclude matching nothing", nil, []string{"nope"}, nil, []string{"Exclude matches nothing"}},
		{"bad address", []string{"c/r1/a/x"}, nil, nil, []string{"Invalid address"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, diags := planWith(t, cfg, nil, func(o *Options) { o.Targets, o.Excludes = c.targets, c.excludes })
			if diff := cmp.Diff(c.wantError, errorSummaries(diags)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if c.wantError != nil {
				return
			}
			if diff := cmp.Diff(c.want, addrs(p)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.targets, p.Targets); diff != "" {
				t.Errorf("the plan must record -target (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnreachableServersAreNeverDropped(t *testing.T) {
	racks := withCP([]string{"r1", "a:c", "b:c"})
	cfg := loadText(t, fixture{racks: racks}.String())
	state := func(_ int, s *config.Server) plannertest.State {
		if s.Name == "b" {
			return plannertest.Unreachable
		}
		return plannertest.Behind
	}
	t.Run("skip (default)", func(t *testing.T) {
		p, diags := planWith(t, cfg, state, nil)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		var found bool
		for _, s := range p.Servers {
			if s.Address == "c/r1/b" {
				found = true
				if s.Action != plan.ActionSkip || s.Reason != plan.ReasonUnreachable {
					t.Errorf("b: %s %s", s.Action, s.Reason)
				}
			}
		}
		if !found {
			t.Fatal("the unreachable server is not in the plan")
		}
		if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Detail, "c/r1/b (BMC unreachable: connection refused)") {
			t.Errorf("warnings: %+v", p.Warnings)
		}
		if sc := computeScopes(p)[0]; sc.Eligible != 1 {
			t.Errorf("N = %d: an unreachable server leaves N", sc.Eligible)
		}
	})
	t.Run("block", func(t *testing.T) {
		_, diags := planWith(t, cfg, state, func(o *Options) { o.OnUnreachable = OnUnreachableBlock })
		if diff := cmp.Diff([]string{"1 of 6 servers unreachable"}, errorSummaries(diags)); diff != "" {
			t.Fatalf("errors (-want +got):\n%s", diff)
		}
		if !strings.Contains(diags[0].Detail, "c/r1/b") || diags[0].Subject == nil || diags[0].Subject.Start.Line == 0 {
			t.Errorf("the error must name the server and point at it: %s %v", diags[0].Detail, diags[0].Subject)
		}
	})
	t.Run("block per strategy", func(t *testing.T) {
		cfg := loadText(t, fixture{racks: racks}.String())
		cfg.Clusters[0].Strategy.OnUnreachable = config.OnUnreachableBlock
		_, diags := planWith(t, cfg, state, nil)
		if diff := cmp.Diff([]string{"1 of 6 servers unreachable"}, errorSummaries(diags)); diff != "" {
			t.Fatalf("strategy on_unreachable = block: errors (-want +got):\n%s", diff)
		}
		// The command-line option wins over the strategy.
		p, diags := planWith(t, cfg, state, func(o *Options) { o.OnUnreachable = OnUnreachableSkip })
		if diags.HasErrors() {
			t.Fatalf("-on-unreachable=skip must override the strategy: %s", diags.Error())
		}
		for _, s := range p.Servers {
			if s.Address == "c/r1/b" && s.Reason != plan.ReasonUnreachable {
				t.Errorf("b: reason %q, want unreachable", s.Reason)
			}
		}
	})
	t.Run("unhealthy", func(t *testing.T) {
		provs, fs := fakes(cfg, allBehind)
		fs["redfish"].Servers["c/r1/a"].Health = "Critical"
		p, diags := Plan(context.Background(), cfg, Options{Providers: provs, Now: testNow})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		for _, s := range p.Servers {
			if s.Address == "c/r1/a" && s.Reason != plan.ReasonUnhealthy {
				t.Errorf("a: reason %q, want unhealthy", s.Reason)
			}
		}
	})
}

func TestObserveOneStreamPerProviderBoundedByParallelism(t *testing.T) {
	var racks [][]string
	racks = append(racks, cpRacks...)
	for r := 0; r < 4; r++ {
		rack := []string{"r" + itoa(r)}
		for s := 0; s < 10; s++ {
			rack = append(rack, "s"+itoa(r)+"-"+itoa(s)+":c")
		}
		racks = append(racks, rack)
	}
	cfg := loadText(t, fixture{racks: racks}.String())
	provs, fs := fakes(cfg, allBehind)
	fs["redfish"].Latency = 1e6 // 1 ms, so reads overlap
	_, diags := Plan(context.Background(), cfg, Options{Providers: provs, Now: testNow, Parallelism: 3})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	f := fs["redfish"]
	if f.ObserveCalls() != 1 {
		t.Errorf("%d Observe calls, want 1", f.ObserveCalls())
	}
	if got := len(f.Targets()); got != 44 {
		t.Errorf("%d targets, want 44", got)
	}
	if f.PeakConcurrency() > 3 {
		t.Errorf("peak concurrency %d > parallelism 3", f.PeakConcurrency())
	}
}

func TestCredentialsReachTheProviderButNotThePlan(t *testing.T) {
	cfg := loadDir(t, "testdata/nexus")
	provs, fs := fakes(cfg, allBehind)
	p, diags := Plan(context.Background(), cfg, Options{Providers: provs, Now: testNow})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var got *providers.Credentials
	for _, tg := range fs["redfish"].Targets() {
		if tg.Name == "lab/rack10/c10a" {
			got = tg.Credentials
		}
	}
	if got == nil || got.Username != "root" || got.Password != "hunter2-env-secret" {
		t.Errorf("c10a's credentials were not passed to the provider: %v", got)
	}
	b, err := plan.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2-env-secret", "s3cret-variable-value"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the plan contains the secret %q", secret)
		}
	}
	if diff := cmp.Diff(plan.Inputs{Variables: map[string]any{"site": "lab"}, Sensitive: []string{"ipmi_secret"}, Env: []string{"BMC_PASSWORD"}}, p.Inputs); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
}

func TestDeterminism(t *testing.T) {
	encode := func() []byte {
		cfg := loadDir(t, "testdata/nexus")
		provs, fs := fakes(cfg, func(i int, s *config.Server) plannertest.State {
			if s.Role == config.RoleControlPlane {
				return plannertest.Behind // keep quorum: two down would refuse the plan
			}
			return plannertest.State(i % 3)
		})
		fs["redfish"].Latency = 1e5 // reorder the stream
		p, diags := Plan(context.Background(), cfg, Options{Providers: provs, Now: testNow, Parallelism: 4})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		b, err := plan.Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := encode(), encode()
	if !bytes.Equal(a, b) {
		t.Errorf("two plans from the same state and clock differ:\n%s", cmp.Diff(string(a), string(b)))
	}
	if _, err := plan.Decode(a); err != nil {
		t.Errorf("the plan does not decode: %v", err)
	}
}

func TestSecretWrittenInTheConfigurationRefusesThePlan(t *testing.T) {
	base := fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String()
	src := base + `
variable "token" {
  type      = string
  sensitive = true
  default   = "written-in-the-file"
}
`
	_, diags := planWith(t, loadText(t, src), nil, nil)
	if diff := cmp.Diff([]string{"Secret in the configuration text"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	if !strings.Contains(diags[0].Detail, "sensitive variable token") || strings.Contains(diags[0].Detail, "written-in-the-file") {
		t.Errorf("the error must name the variable and not the value: %s", diags[0].Detail)
	}
	// Given from outside, the value is not in the snapshot: fine.
	cfg, d := config.NewLoader(config.LoadOptions{Vars: []string{"token=given-on-the-command-line"}}).Load(writeTemp(t, src))
	if d.HasErrors() {
		t.Fatal(d.Error())
	}
	p, diags := planWith(t, cfg, nil, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	b, err := plan.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("given-on-the-command-line")) {
		t.Error("a sensitive -var value is in the plan")
	}
	if diff := cmp.Diff([]string{"token"}, p.Inputs.Sensitive); diff != "" {
		t.Errorf("sensitive names (-want +got):\n%s", diff)
	}
}

func TestMissingEnvironmentVariablesRefuseThePlan(t *testing.T) {
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: func(string) string { return "" }}).Load("testdata/nexus")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	_, diags = planWith(t, cfg, nil, nil)
	if diff := cmp.Diff([]string{"Missing environment variables"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	if !strings.Contains(diags[0].Detail, "BMC_PASSWORD") {
		t.Errorf("detail: %s", diags[0].Detail)
	}
}

// Unobserved servers are reported one line per cause, naming every
// server, not one diagnostic per server (a dead network must not bury the
// output in thousands of copies), and the plan's summary counts them.
func TestManyUnreachableServersAreOneLinePerCause(t *testing.T) {
	rack := []string{"r1"}
	for i := 0; i < 25; i++ {
		rack = append(rack, "s"+itoa(10+i)+":c")
	}
	cfg := loadText(t, fixture{racks: withCP(rack)}.String())
	state := func(_ int, s *config.Server) plannertest.State {
		if s.Rack.Name == "r1" && s.Name < "s30" {
			return plannertest.Unreachable // s10..s29: 20 servers
		}
		return plannertest.Behind
	}
	p, diags := planWith(t, cfg, state, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(diags) != 1 {
		t.Fatalf("%d diagnostics, want one for the one cause: %s", len(diags), diags.Error())
	}
	d := diags[0]
	if d.Summary != "20 of 29 servers unreachable" || !strings.Contains(d.Detail, "c/r1/s10, ") || !strings.Contains(d.Detail, "c/r1/s29 (") {
		t.Errorf("summary: %s: %s", d.Summary, d.Detail)
	}
	if len(p.Warnings) != 1 {
		t.Errorf("the plan lists %d warnings, want the one grouped warning", len(p.Warnings))
	}
	n := 0
	for _, s := range p.Servers {
		if s.Reason == plan.ReasonUnreachable {
			n++
			if len(s.Problems) != 1 || s.Outcome != providers.OutcomeUnreachable {
				t.Errorf("%s: problems %q, outcome %q", s.Address, s.Problems, s.Outcome)
			}
		}
	}
	if n != 20 || p.Summary.NotObserved != 20 || p.Summary.Unreachable != 20 {
		t.Errorf("%d servers skipped as unreachable, summary %+v; want 20", n, p.Summary)
	}
	_, diags = planWith(t, cfg, state, func(o *Options) { o.OnUnreachable = OnUnreachableBlock })
	if n := len(errorSummaries(diags)); n != 1 {
		t.Errorf("%d errors when blocking, want 1", n)
	}
}

// failingProvider fails every Observe call as a whole.
type failingProvider struct{ *plannertest.Provider }

func (failingProvider) Observe(context.Context, *providers.ObserveRequest, func(*providers.Observation) error) providers.Diagnostics {
	return providers.Errorf("", "Plugin crashed", "the plugin process exited")
}

func TestProviderFailuresNameTheProvider(t *testing.T) {
	cfg := loadText(t, fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String())
	cases := []struct {
		name  string
		provs map[string]providers.Provider
		want  string
	}{
		{"observe fails", map[string]providers.Provider{"redfish": failingProvider{&plannertest.Provider{}}}, "Provider failed to observe"},
		{"not started", map[string]providers.Provider{}, "Provider not started"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, diags := Plan(context.Background(), cfg, Options{Providers: c.provs, Now: testNow})
			if diff := cmp.Diff([]string{c.want}, errorSummaries(diags)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s", diff)
			}
			if diags[0].Subject == nil || !strings.Contains(diags[0].Detail, `"redfish"`) {
				t.Errorf("the error must name and point at the provider: %s %v", diags[0].Detail, diags[0].Subject)
			}
		})
	}
}

func TestCancelledPlanIsAnError(t *testing.T) {
	cfg := loadText(t, fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String())
	provs, fs := fakes(cfg, allBehind)
	fs["redfish"].Latency = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	p, diags := Plan(ctx, cfg, Options{Providers: provs, Now: testNow})
	if p != nil || !diags.HasErrors() {
		t.Fatalf("a cancelled plan must fail: %v", diags)
	}
}

// The plan records the components it decides on (those a release
// component matches) and only a count and digest of the rest of what the
// BMC reported (plan format 1.4), so a plan stays small however large the
// inventory, and still says that something else was seen.
func TestPlanRecordsDecidedComponentsAndDigestsTheRest(t *testing.T) {
	cfg := loadText(t, fixture{racks: [][]string{{"r1", "a:cp", "b:cp", "c:cp"}}}.String())
	fs := plannertest.FromConfig(cfg, func(int, *config.Server) plannertest.State { return plannertest.Behind })
	extra := []providers.Component{
		{ID: "CPLD", Name: "CPLD", SoftwareID: "CPLD", Version: "1.0", Updateable: true},
		{ID: "AC-RoT0", Name: "AC-RoT0 firmware", SoftwareID: "RoT", Version: "1.11"},
	}
	provs := map[string]providers.Provider{}
	all := map[string][]providers.Component{}
	for name, f := range fs {
		for _, o := range f.Servers {
			o.Components = append(o.Components, extra...)
			all[o.Server] = o.Components
		}
		provs[name] = f
	}
	p, diags := Plan(context.Background(), cfg, Options{Providers: provs, Now: testNow})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	s := serverByAddr(p, "c/r1/a")
	var ids []string
	for _, c := range s.Observed.Components {
		ids = append(ids, c.ID)
	}
	if slices.Contains(ids, "CPLD") || slices.Contains(ids, "AC-RoT0") || len(ids) == 0 {
		t.Errorf("recorded components %v: want those of the release, not CPLD nor AC-RoT0", ids)
	}
	want := plan.OthersOf(all[s.Address], s.Observed.Components)
	if s.Observed.Others == nil || want == nil || *s.Observed.Others != *want || want.Count != 2 {
		t.Errorf("others %+v, want %+v", s.Observed.Others, want)
	}
	if len(s.Steps) == 0 {
		t.Error("a server behind its release has no steps")
	}
}
