package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// planFakes plans cfg with fakes edited by edit (by server address).
func planFakes(t *testing.T, cfg *config.Config, edit func(addr string, o *providers.Observation), mod func(*Options)) (*plan.Plan, hcl.Diagnostics) {
	t.Helper()
	provs, fs := fakes(cfg, allBehind)
	for _, f := range fs {
		for addr, o := range f.Servers {
			edit(addr, o)
		}
	}
	opts := Options{Providers: provs, Now: testNow, RackformVersion: "0.0.0-test"}
	if mod != nil {
		mod(&opts)
	}
	return Plan(t.Context(), cfg, opts)
}

func refuse(outcome, detail string) func(*providers.Observation) {
	return func(o *providers.Observation) {
		*o = providers.Observation{Server: o.Server, Outcome: outcome, Diagnostics: providers.Errorf(o.Server, "BMC said", detail)}
	}
}

func serverByAddr(p *plan.Plan, addr string) *plan.Server {
	for i := range p.Servers {
		if p.Servers[i].Address == addr {
			return &p.Servers[i]
		}
	}
	return nil
}

// Exit codes that never lie: refused credentials, a BMC without usable
// inventory and an unresolved system are configuration problems. The plan
// fails, with one line per cause naming every server (never one copy per
// server), whatever on_unreachable says; -hold-back-errored plans the
// rest and counts them as not observed.
func TestConfigurationProblemsFailThePlanOneLinePerCause(t *testing.T) {
	cfg := loadText(t, fixture{racks: withCP([]string{"r1", "a:c", "b:c", "c:c", "d:c"})}.String())
	edit := func(addr string, o *providers.Observation) {
		switch addr {
		case "c/r1/a", "c/r1/b":
			refuse(providers.OutcomeCredentialsRefused, "HTTP 401: Invalid username or password")(o)
		case "c/r1/c":
			refuse(providers.OutcomeInventoryUnavailable, "UpdateService/FirmwareInventory: HTTP 404 Resource not found")(o)
		case "c/r1/d":
			refuse(providers.OutcomeSystemUnresolved, "the BMC serves 2 systems and the server names none")(o)
			o.Systems = []providers.SystemRef{{ID: "Node0", UUID: "u-0"}, {ID: "Node1", Name: "blade 1"}}
		}
	}
	_, diags := planFakes(t, cfg, edit, nil)
	want := []string{"2 of 8 servers refused the credentials", "1 of 8 servers without a usable firmware inventory", "1 of 8 servers whose system could not be resolved"}
	if diff := cmp.Diff(want, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	for _, d := range diags {
		switch {
		case strings.Contains(d.Summary, "credentials"):
			if !strings.Contains(d.Detail, "c/r1/a, c/r1/b (BMC said: HTTP 401: Invalid username or password)") {
				t.Errorf("credentials: %s", d.Detail)
			}
		case strings.Contains(d.Summary, "system"):
			if !strings.Contains(d.Detail, `Node0 u-0, Node1 "blade 1"`) {
				t.Errorf("the systems the BMC serves are not listed: %s", d.Detail)
			}
		}
	}
	// -on-unreachable=skip does not make a configuration problem a skip.
	if _, diags := planFakes(t, cfg, edit, func(o *Options) { o.OnUnreachable = OnUnreachableSkip }); !diags.HasErrors() {
		t.Error("-on-unreachable=skip let refused credentials through")
	}
	p, diags := planFakes(t, cfg, edit, func(o *Options) { o.HoldBackErrored = true })
	if diags.HasErrors() {
		t.Fatalf("-hold-back-errored: %s", diags.Error())
	}
	s := p.Summary
	if s.NotObserved != 4 || s.CredentialsRefused != 2 || s.InventoryUnavailable != 1 || s.SystemUnresolved != 1 {
		t.Errorf("summary %+v", s)
	}
	if a := serverByAddr(p, "c/r1/a"); a.Action != plan.ActionSkip || a.Reason != plan.ReasonCredentialsRefused || len(a.Problems) != 1 {
		t.Errorf("a: %+v", a)
	}
}

// Exit codes that never lie: a cluster none of whose servers could be
// observed fails the plan even when unreachable servers are skipped.
func TestNoServerOfAClusterObservedFailsThePlan(t *testing.T) {
	cfg := loadText(t, fixture{racks: withCP([]string{"r1", "a:c", "b:c"})}.String())
	_, diags := planFakes(t, cfg, func(addr string, o *providers.Observation) {
		refuse(providers.OutcomeUnreachable, "dial tcp: connection refused")(o)
	}, nil)
	want := []string{"No server of cluster c observed"}
	if diff := cmp.Diff(want, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	var warn []string
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			warn = append(warn, d.Summary)
		}
	}
	if diff := cmp.Diff([]string{"6 of 6 servers unreachable"}, warn); diff != "" {
		t.Errorf("one warning for the one cause (-want +got):\n%s", diff)
	}
	// One server seen is enough for the cluster; the rest are counted.
	p, diags := planFakes(t, cfg, func(addr string, o *providers.Observation) {
		if addr != "c/r1/a" {
			refuse(providers.OutcomeUnreachable, "dial tcp: connection refused")(o)
		}
	}, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if p.Summary.NotObserved != 5 {
		t.Errorf("not observed = %d", p.Summary.NotObserved)
	}
}

// The plan records per server its identity and system, where each version
// was read and whether it is shared, and per update step how the BMC takes
// the image (method, transfer protocol, targets) and its digest.
func TestPlanRecordsIdentitySourcesAndDelivery(t *testing.T) {
	src := strings.Replace(fixture{racks: withCP([]string{"r1", "a:c"})}.String(),
		`image   = "http://127.0.0.1:9/bios.bin"`,
		`image   = "http://127.0.0.1:9/bios.bin"
    sha256  = "`+strings.Repeat("ab", 32)+`"`, 1)
	cfg := loadText(t, src)
	var intents []providers.UpdateIntent
	provs, fs := fakes(cfg, allBehind)
	o := fs["redfish"].Servers["c/r1/a"]
	o.Identity = providers.Identity{UUID: "uuid-a", SerialNumber: "SN-A", Manufacturer: "Contoso", Model: "R1"}
	o.System = "System.Embedded.1"
	for i := range o.Components {
		if o.Components[i].SoftwareID == "BIOS" {
			o.Components[i].Source = providers.SourceSystem
		}
	}
	o.Updates = []providers.UpdatePlan{{Component: "bios", Method: providers.MethodSimpleUpdate, TransferProtocol: "HTTPS", Targets: []string{"/redfish/v1/Systems/System.Embedded.1"}}}
	p, diags := Plan(t.Context(), cfg, Options{Providers: provs, Now: testNow})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, tg := range fs["redfish"].Targets() {
		if tg.Name == "c/r1/a" {
			intents = tg.Updates
		}
	}
	if len(intents) != 1 || intents[0].Component != "bios" || intents[0].ImageURI != "http://127.0.0.1:9/bios.bin" {
		t.Errorf("the provider was not asked how the BIOS image would be delivered: %+v", intents)
	}
	a := serverByAddr(p, "c/r1/a")
	if a.Identity.SerialNumber != "SN-A" || a.Identity.UUID != "uuid-a" || a.Observed.System != "System.Embedded.1" || a.Outcome != providers.OutcomeObserved {
		t.Errorf("identity/system/outcome not recorded: %+v %+v %q", a.Identity, a.Observed, a.Outcome)
	}
	var sources []string
	for _, c := range a.Observed.Components {
		sources = append(sources, c.ID+":"+c.Source)
	}
	if !strings.Contains(strings.Join(sources, " "), ":system") {
		t.Errorf("the source of the BIOS version is not recorded: %v", sources)
	}
	var upd *plan.Step
	for i := range a.Steps {
		if a.Steps[i].Kind == plan.StepUpdate && a.Steps[i].Component == "bios" {
			upd = &a.Steps[i]
		}
	}
	if upd == nil {
		t.Fatal("no bios update step")
	}
	want := plan.Step{Method: providers.MethodSimpleUpdate, TransferProtocol: "HTTPS", Targets: []string{"/redfish/v1/Systems/System.Embedded.1"}, SHA256: strings.Repeat("ab", 32)}
	got := plan.Step{Method: upd.Method, TransferProtocol: upd.TransferProtocol, Targets: upd.Targets, SHA256: upd.SHA256}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("update step (-want +got):\n%s", diff)
	}
	ps := upd.ProviderStep()
	if ps.Method != want.Method || ps.TransferProtocol != "HTTPS" || len(ps.Targets) != 1 || ps.SHA256 != want.SHA256 {
		t.Errorf("apply would not send what plan recorded: %+v", ps)
	}
}

// A release component the BMC marks not updateable is an error for that
// server when it must change, a note when it is already at target; an
// image the BMC cannot take (UpdatePlan.Problem) is an error for that
// server naming the reason, at plan time rather than midway through apply.
func TestNotUpdateableAndUndeliverableAreServerErrors(t *testing.T) {
	cfg := loadText(t, fixture{racks: withCP([]string{"r1", "a:c", "b:c", "n:c"})}.String())
	edit := func(addr string, o *providers.Observation) {
		for i := range o.Components {
			if o.Components[i].SoftwareID != "BIOS" {
				continue
			}
			switch addr {
			case "c/r1/a":
				o.Components[i].Updateable = false
			case "c/r1/n":
				o.Components[i].Updateable = false
				o.Components[i].Version = "2.80"
			}
		}
		if addr == "c/r1/b" {
			o.Updates = []providers.UpdatePlan{{Component: "bios", Problem: "the BMC offers only SimpleUpdate and its ActionInfo allows no transfer protocol for an http image"}}
		}
	}
	_, diags := planFakes(t, cfg, edit, nil)
	if diff := cmp.Diff([]string{"Component not updateable", "Image cannot be delivered"}, errorSummaries(diags)); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	for _, d := range diags {
		if d.Summary == "Component not updateable" && !strings.HasPrefix(d.Detail, "Server c/r1/a:") {
			t.Errorf("names: %s", d.Detail)
		}
		if d.Summary == "Image cannot be delivered" && (!strings.HasPrefix(d.Detail, "Server c/r1/b:") || !strings.Contains(d.Detail, "allows no transfer protocol")) {
			t.Errorf("names: %s", d.Detail)
		}
	}
	p, diags := planFakes(t, cfg, edit, func(o *Options) { o.HoldBackErrored = true })
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	n := serverByAddr(p, "c/r1/n")
	if len(n.Notes) != 1 || !strings.Contains(n.Notes[0], "not updateable") {
		t.Errorf("a non-updateable component at target is a note: %q", n.Notes)
	}
	for _, addr := range []string{"c/r1/a", "c/r1/b"} {
		s := serverByAddr(p, addr)
		if s.Action != plan.ActionSkip || s.Reason != plan.ReasonHeldBack || len(s.Problems) != 1 || len(s.Steps) != 0 {
			t.Errorf("%s is not held back with its problem: %+v", addr, s)
		}
	}
	if p.Summary.HeldBack != 2 {
		t.Errorf("held back = %d", p.Summary.HeldBack)
	}
}

// Report every problem: a finding names every server it concerns (no
// "and N more"), and -hold-back-errored plans the rest of the fleet and
// holds back each of them with every problem it has.
func TestEveryProblemIsReportedAndHeldBack(t *testing.T) {
	rack := []string{"r1"}
	for i := 0; i < 30; i++ {
		rack = append(rack, fmt.Sprintf("s%02d:c", i))
	}
	cfg := loadText(t, fixture{racks: withCP(rack)}.String())
	edit := func(addr string, o *providers.Observation) {
		if !strings.HasPrefix(addr, "c/r1/s") || addr >= "c/r1/s25" {
			return
		}
		for i := range o.Components {
			switch o.Components[i].SoftwareID {
			case "BIOS":
				o.Components[i].Version = "two point seven"
			}
			if o.Components[i].ID == "RT" && addr < "c/r1/s05" {
				o.Components[i].Version = "5.0.0" // newer: a downgrade, refused
			}
		}
	}
	_, diags := planFakes(t, cfg, edit, nil)
	var undecidable *hcl.Diagnostic
	for _, d := range diags {
		if d.Summary == "Undecidable version" {
			undecidable = d
		}
	}
	if undecidable == nil || strings.Contains(undecidable.Detail, "more") || !strings.Contains(undecidable.Detail, "c/r1/s24") || strings.Count(undecidable.Detail, "c/r1/s") != 25 {
		t.Fatalf("every server must be named: %v", undecidable)
	}
	p, diags := planFakes(t, cfg, edit, func(o *Options) { o.HoldBackErrored = true })
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if p.Summary.HeldBack != 25 || p.Summary.Upgrade != 5+4 {
		t.Errorf("summary %+v", p.Summary)
	}
	s0 := serverByAddr(p, "c/r1/s00")
	if len(s0.Problems) != 2 {
		t.Errorf("s00 must list both its problems: %q", s0.Problems)
	}
	for _, d := range diags {
		if strings.HasPrefix(d.Summary, "Held back: ") && d.Severity != hcl.DiagWarning {
			t.Errorf("held back findings are warnings: %v", d)
		}
	}
}

// An observation outcome this rackform does not know (a newer plugin) is
// reported under its own name and keeps the plan from "no changes", never
// dropped.
func TestUnknownOutcomeIsReported(t *testing.T) {
	cfg := loadText(t, fixture{racks: withCP([]string{"r1", "a:c"})}.String())
	p, diags := planFakes(t, cfg, func(addr string, o *providers.Observation) {
		if addr == "c/r1/a" {
			refuse("firmware_locked", "the BMC is in a lockdown mode")(o)
		}
	}, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.Summary)
	}
	if !slices.Contains(got, "1 of 5 servers not observed (firmware locked)") {
		t.Errorf("diagnostics: %q", got)
	}
	if a := serverByAddr(p, "c/r1/a"); a.Action != plan.ActionSkip || a.Settled() || p.Summary.NotObserved != 1 {
		t.Errorf("a: %+v, summary %+v", a, p.Summary)
	}
}

// Servers failing alike share one line that shows a real address (the
// first server's), never a placeholder such as "{bmc}".
func TestWhyGroupsShowRealAddresses(t *testing.T) {
	server := func(addr, bmc, why string) unavailableServer {
		return unavailableServer{addr: addr, why: why, common: commonWhy(why, bmc)}
	}
	got := whyGroups([]unavailableServer{
		server("c/r1/a", "https://10.0.0.1", "BMC https://10.0.0.1: connection refused."),
		server("c/r1/b", "https://10.0.0.2", "BMC https://10.0.0.2: connection refused."),
		server("c/r1/c", "https://10.0.0.3:8443", "BMC https://10.0.0.3:8443: TLS handshake timeout."),
	})
	want := "c/r1/a, c/r1/b (BMC https://10.0.0.1: connection refused, and likewise at each other server's own BMC address); c/r1/c (BMC https://10.0.0.3:8443: TLS handshake timeout)."
	if got != want {
		t.Errorf("whyGroups:\n got %s\nwant %s", got, want)
	}
}

// A BMC that answered without what the plan needs (rule 46) is counted
// and reported as that, never as unreachable: in the warning, in the
// cluster's error when none of its servers was observed, and in the
// plan's counts (in NotObserved, not in Unreachable).
func TestUnusableAnswerIsNotUnreachable(t *testing.T) {
	const why = "the BMC answered, but has no ComputerSystem: GET /redfish/v1/Systems returned 404 Not Found"
	cfg := loadText(t, fixture{racks: withCP([]string{"r1", "a:c"})}.String())
	p, diags := planFakes(t, cfg, func(addr string, o *providers.Observation) {
		if addr == "c/r1/a" {
			refuse(providers.OutcomeUnusableAnswer, why)(o)
		}
	}, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.Summary+": "+d.Detail)
	}
	want := "1 of 5 servers whose BMC answered without what the plan needs: c/r1/a (BMC said: " + why + ")."
	if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
		t.Errorf("no diagnostic %q in %q", want, got)
	}
	a := serverByAddr(p, "c/r1/a")
	if a.Action != plan.ActionSkip || a.Reason != plan.ReasonUnusableAnswer || a.Outcome != providers.OutcomeUnusableAnswer || a.Settled() {
		t.Errorf("a: action %s reason %s outcome %s", a.Action, a.Reason, a.Outcome)
	}
	if s := p.Summary; s.NotObserved != 1 || s.Unreachable != 0 {
		t.Errorf("summary %+v: want 1 not observed, 0 unreachable", s)
	}
	if diff := cmp.Diff(map[string]int{providers.OutcomeUnusableAnswer: 1}, p.NotObservedBy()); diff != "" {
		t.Errorf("not observed by cause (-want +got):\n%s", diff)
	}

	// The whole cluster: the error counts them by what they answered.
	_, diags = planFakes(t, cfg, func(addr string, o *providers.Observation) {
		if addr == "c/r1/a" {
			refuse(providers.OutcomeUnreachable, "dial tcp: connection refused")(o)
		} else {
			refuse(providers.OutcomeUnusableAnswer, why)(o)
		}
	}, nil)
	var errs []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d.Detail)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "None of the 5 in-scope servers of cluster \"c\" could be observed (1 unreachable, 4 answered without what the plan needs)") {
		t.Errorf("errors %q", errs)
	}
}
