package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

func samplePlan() *Plan {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	return &Plan{
		RackformVersion: "0.1.0",
		CreatedAt:       at,
		NotAfter:        at.Add(72 * time.Hour),
		Config: Snapshot{Dir: "examples/nexus-lab", Files: []File{{
			Name: "main.rf.hcl", SHA256: "abc", Content: "cluster \"a\" {\n  # \"checksum\": \"\"\n}\n",
		}}},
		Inputs:    Inputs{Variables: map[string]any{"site": "lab"}, Sensitive: []string{"bmc_password"}},
		Providers: []Provider{{Name: "redfish", Version: "0.1.0", Source: "builtin", SHA256: "00ff"}},
		Run: Run{Name: "default", Scope: "full", Stages: []Stage{{
			ID: "stage.default", Name: "default", OnBreach: "fail",
			Groups: []Group{{ID: "stage.default.group.default", Name: "default", Clusters: []Cluster{{
				ID: "cluster.a", Name: "a", WindowPriority: "none",
				Settings: Settings{DrainTimeout: Duration(20 * time.Minute)},
				Phases: []Phase{{ID: "cluster.a.compute", Kind: PhaseCompute, Scopes: []Scope{{
					ID: "cluster.a.compute.rack.r01", Kind: "rack", Name: "r01", Rack: "r01",
					Servers:   []string{"a/r01/s1"},
					Threshold: Threshold{Type: "percent", Value: 50}, Eligible: 1, Required: 1, MaxUnavailable: 1, OnBreach: "pause",
				}}}},
			}}}},
		}}},
		Servers: []Server{{
			Address: "a/r01/s1", Name: "s1", Cluster: "a", Rack: "r01", Role: "compute", BMC: "https://127.1.1.1:8443", Provider: "redfish",
			Observed: Observed{Reachable: true, PowerState: "On", Health: "OK", Components: []providers.Component{{ID: "BIOS", Version: "1.0"}}},
			Action:   ActionUpgrade,
			Changes:  []Change{{Component: "bios", Kind: "firmware", From: "1.0", To: "1.1", Reboot: true}},
			Steps: []Step{
				{Index: 1, Kind: StepDrain, Timeout: Duration(20 * time.Minute)},
				{Index: 2, Kind: StepUpdate, Component: "bios", Match: &providers.Match{ID: "BIOS"}, Target: version.Target{Version: "1.1"}, Image: "http://127.0.0.1:9/bios-1.1.bin"},
			},
			Reboots: 1, Estimate: Duration(15 * time.Minute),
		}},
		Summary: Summary{Upgrade: 1, Racks: 1, Estimate: Duration(15 * time.Minute)},
	}
}

// samplePlan13 is samplePlan with what format 1.3 added: outcomes,
// identity, system, component sources, a shared update with its barrier,
// delivery and digest, a held-back and an unreachable server.
func samplePlan13() *Plan {
	p := samplePlan()
	s := &p.Servers[0]
	s.Outcome = providers.OutcomeObserved
	s.Identity = providers.Identity{UUID: "4c4c4544-0042-3010-8052-b2c04f4e3032", SerialNumber: "SN-0001", Manufacturer: "Contoso", Model: "R640"}
	s.Observed.System = "System.Embedded.1"
	s.Observed.Components = []providers.Component{
		{ID: "BIOS", Version: "1.0", Updateable: true, Source: providers.SourceSystem},
		{ID: "BMC", Version: "7.10", Updateable: true, Source: providers.SourceManager, Shared: true},
	}
	s.Notes = []string{`Component "cpld" (inventory "CPLD") is at its target 1.2; its BMC says it is not updateable, so it could not be changed.`}
	s.Changes = append(s.Changes, Change{Component: "bmc", Kind: "firmware", From: "7.10", To: "7.20", Shared: true})
	s.Steps[1].Method, s.Steps[1].TransferProtocol = providers.MethodSimpleUpdate, "HTTPS"
	s.Steps[1].Targets = []string{"/redfish/v1/Systems/System.Embedded.1"}
	s.Steps[1].SHA256 = strings.Repeat("ab", 32)
	s.Steps = append(s.Steps, Step{Index: 3, Kind: StepUpdate, Component: "bmc", Match: &providers.Match{ID: "BMC"}, Target: version.Target{Version: "7.20"},
		Image: "http://127.0.0.1:9/bmc.bin", Method: providers.MethodMultipartPush, Shared: true, After: []string{"a/r01/s0"}})
	p.Servers = append(p.Servers,
		Server{Address: "a/r01/s2", Name: "s2", Cluster: "a", Rack: "r01", Role: "compute", BMC: "https://127.1.1.2:8443", Provider: "redfish",
			Outcome: providers.OutcomeUnreachable, Action: ActionSkip, Reason: ReasonUnreachable, Problems: []string{"dial tcp 127.1.1.2:8443: connection refused"}},
		Server{Address: "a/r01/s3", Name: "s3", Cluster: "a", Rack: "r01", Role: "compute", BMC: "https://127.1.1.3:8443", Provider: "redfish",
			Outcome: providers.OutcomeObserved, Action: ActionSkip, Reason: ReasonHeldBack, Problems: []string{`Undecidable version: Component "bios" reports version "two", which the "dotted" scheme cannot read.`}},
	)
	p.Summary.Skip, p.Summary.NotObserved, p.Summary.Unreachable, p.Summary.HeldBack, p.Summary.SharedUpdates = 2, 1, 1, 1, 1
	return p
}

// samplePlan14 is samplePlan13 with what format 1.4 added: a server's
// observation reduced to what the plan decides on with a count and digest
// of the rest, and a second server whose steps and changes equal the
// first's (written once in the tables).
func samplePlan14() *Plan {
	p := samplePlan13()
	s := &p.Servers[0]
	s.Observed.Others = &Others{Count: 2, SHA256: strings.Repeat("cd", 32)}
	twin := *s
	twin.Address, twin.Name, twin.BMC = "a/r01/s4", "s4", "https://127.1.1.4:8443"
	twin.Identity.SerialNumber = "SN-0004"
	twin.Observed.Components = slices.Clone(s.Observed.Components)
	twin.Changes = slices.Clone(s.Changes)
	twin.Steps = slices.Clone(s.Steps)
	p.Servers = append(p.Servers, twin)
	p.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes[0].Servers = []string{"a/r01/s1", "a/r01/s4"}
	p.Summary.Upgrade = 2
	return p
}

// samplePlan15 is samplePlan14 with what format 1.5 added: member states
// (a Dell-like BIOS with its rollback and available copies, eight GPUs of
// one rule), a change's members, updates naming the members they are for
// with the apply time chosen and why, a rule's count, a BMC that took
// Basic auth; steps whose estimates were learned from earlier runs, with
// the plan's history; and a provider's CA bundle digest, where the run
// keeps its state.
func samplePlan15() *Plan {
	p := samplePlan14()
	s := &p.Servers[0]
	s.Auth = providers.AuthBasic
	s.Observed.Components = []providers.Component{
		{ID: "Installed-159-1.0__BIOS.Setup.1-1", SoftwareID: "159", Name: "BIOS", Version: "1.0", Updateable: true, State: providers.StateActive, StateSign: "Id prefix Installed-"},
		{ID: "Previous-159-0.9__BIOS.Setup.1-1", SoftwareID: "159", Name: "BIOS", Version: "0.9", Updateable: true, State: providers.StatePrevious, StateSign: "Id prefix Previous-"},
	}
	for i := 1; i <= 8; i++ {
		s.Observed.Components = append(s.Observed.Components, providers.Component{ID: "HGX_FW_GPU_SXM_" + string(rune('0'+i)), SoftwareID: "0x0020",
			Version: "96.00.61.00.01", Updateable: true, State: providers.StateActive})
	}
	s.Changes[0].Members, s.Changes[0].Moving = 1, 1
	s.Changes = append(s.Changes, Change{Component: "gpu", Kind: "firmware", From: "96.00.61.00.01", To: "96.00.89.00.01", Members: 8, Moving: 8})
	s.Steps[1].Match = &providers.Match{SoftwareID: "159", Count: 1}
	s.Steps[1].Members = []string{"Installed-159-1.0__BIOS.Setup.1-1"}
	s.Steps[1].ApplyTime, s.Steps[1].ApplyTimeFrom = "OnReset", "listed in SimpleUpdate's @Redfish.OperationApplyTimeSupport"
	var gpus, targets []string
	for i := 1; i <= 8; i++ {
		gpus = append(gpus, "HGX_FW_GPU_SXM_"+string(rune('0'+i)))
		targets = append(targets, "/redfish/v1/UpdateService/FirmwareInventory/HGX_FW_GPU_SXM_"+string(rune('0'+i)))
	}
	s.Steps = append(s.Steps, Step{Index: 4, Kind: StepUpdate, Component: "gpu", Match: &providers.Match{SoftwareID: "0x0020", Count: 8}, Target: version.Target{Version: "96.00.89.00.01"},
		Image: "http://127.0.0.1:9/gpu.bin", Method: providers.MethodSimpleUpdate, Targets: targets, Members: gpus,
		ApplyTimeFrom: "not sent: the BMC lists no apply times for simple_update; it applies the image as it does by default"})
	p.Servers[3] = *s
	p.Servers[3].Address, p.Servers[3].Name, p.Servers[3].BMC = "a/r01/s4", "s4", "https://127.1.1.4:8443"
	p.Servers[3].Identity.SerialNumber = "SN-0004"
	// And the estimates learned from earlier runs.
	learned := Learned{Key: EstimateKey{Kind: StepUpdate, Component: "bios", Manufacturer: "Contoso", Model: "R640"},
		Samples: 38, Runs: 2, Median: Duration(11*time.Minute + 30*time.Second), P90: Duration(14 * time.Minute)}
	for _, i := range []int{0, 3} {
		st := &p.Servers[i].Steps[1]
		st.Estimate, st.Learned = learned.Median, &learned
	}
	p.History = &History{Runs: 3, Estimates: []Learned{learned}}
	p.Providers[0].CABundleSHA256 = strings.Repeat("ef", 32)
	p.Providers[0].CABundle = "certs/bmc-ca.pem"
	p.State = &State{Backend: BackendLocal, Dir: "../.rackform"}
	return p
}

// samplePlan16 is samplePlan15 with what format 1.6 added: a device, a
// switch tray of rack r01, its BMC firmware updated and read back, in a
// devices phase after the servers; and a server upgraded although its BMC
// reported health Critical, with the reviewed reason.
func samplePlan16() *Plan {
	p := samplePlan15()
	p.Servers = append(p.Servers, Server{
		Address: "a/r01/nvswitch-1", Name: "nvswitch-1", Cluster: "a", Rack: "r01", Role: "device", Kind: "switch_tray",
		NodeName: "nvswitch-1", BMC: "https://127.1.1.9:8443", Provider: "redfish", Auth: providers.AuthSession,
		Outcome: providers.OutcomeObserved, Identity: providers.Identity{SerialNumber: "HB19220057", Manufacturer: "HPE", Model: "HPE_Slingshot_1_Switch_Blade"},
		Observed: Observed{Reachable: true, PowerState: "On", Health: "OK", Components: []providers.Component{
			{ID: "BMC", SoftwareID: "sc:*:*:*", Name: "BMC", Version: "sc.1.7.2-118", Updateable: true, State: providers.StateActive},
		}},
		Fingerprint: "sha256:00",
		Action:      ActionUpgrade,
		Changes:     []Change{{Component: "tray_bmc", Kind: "firmware", From: "sc.1.7.2-118", To: "sc.1.7.3-7", Unordered: true, Members: 1, Moving: 1}},
		Steps: []Step{
			{Index: 1, Kind: StepUpdate, Component: "tray_bmc", Match: &providers.Match{ID: "BMC", Count: 1}, Target: version.Target{Version: "sc.1.7.3-7", Scheme: "opaque"},
				Image: "https://127.0.0.1:9/sc.bin", Method: providers.MethodSimpleUpdate, TransferProtocol: "HTTPS",
				Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/BMC"}, Members: []string{"BMC"}, Estimate: Duration(10 * time.Minute)},
			{Index: 2, Kind: StepWaitReady, Timeout: Duration(time.Hour), Estimate: Duration(2 * time.Minute),
				Expect: []providers.Expectation{{Component: "tray_bmc", Match: providers.Match{ID: "BMC", Count: 1}, Target: version.Target{Version: "sc.1.7.3-7", Scheme: "opaque"}}}},
		},
		Estimate: Duration(12 * time.Minute),
	})
	cl := &p.Run.Stages[0].Groups[0].Clusters[0]
	cl.Phases = append(cl.Phases, Phase{ID: "cluster.a.devices", Kind: PhaseDevices, Estimate: Duration(12 * time.Minute), Scopes: []Scope{{
		ID: "cluster.a.devices.rack.r01", Kind: "rack", Name: "r01", Rack: "r01", Servers: []string{"a/r01/nvswitch-1"},
		Threshold: Threshold{Type: "percent", Value: 100}, Eligible: 1, Required: 1, MaxUnavailable: 1, OnBreach: "pause", Estimate: Duration(12 * time.Minute),
	}}})
	p.Summary.Upgrade++
	// And a server upgraded although its BMC reported health Critical,
	// with the reviewed reason.
	p.Servers[3].Observed.Health = "Critical"
	p.Servers[3].UpgradeWhenCritical = &CriticalOverride{Reason: "INC-4711: the PSU fault is fixed by BMC 7.20"}
	return p
}

// Plan format 1.6 round-trips the servers upgraded although Critical,
// with their reason, compact like 1.4.
func TestFormat16RoundTrip(t *testing.T) {
	if FormatVersion != "1.6" {
		t.Errorf("format %s", FormatVersion)
	}
	p := samplePlan16()
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"upgrade_when_critical":{"reason":"INC-4711: the PSU fault is fixed by BMC 7.20"}`)) {
		t.Errorf("the override is not in the file:\n%s", b)
	}
	if n := bytes.Count(b, []byte(`"upgrade_when_critical"`)); n != 1 {
		t.Errorf("the override is written %d times, want once (for s4 only)", n)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got.Checksum = ""
	want := *p
	want.FormatVersion = FormatVersion
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// A device of format 1.6 (its kind, its devices phase) round-trips in
// the compact layout.
func TestFormat16DeviceRoundTrip(t *testing.T) {
	if FormatVersion != "1.6" {
		t.Errorf("format %s", FormatVersion)
	}
	b, err := Encode(samplePlan16())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	dev := got.Servers[len(got.Servers)-1]
	if !dev.IsDevice() || dev.Kind != "switch_tray" || dev.Role != "device" {
		t.Errorf("device %s kind %q role %q", dev.Address, dev.Kind, dev.Role)
	}
	phases := got.Run.Stages[0].Groups[0].Clusters[0].Phases
	if last := phases[len(phases)-1]; last.Kind != PhaseDevices || last.Scopes[0].Servers[0] != dev.Address {
		t.Errorf("last phase %+v", last)
	}
	if err := CheckSteps(got); err != nil {
		t.Errorf("CheckSteps: %v", err)
	}
}

// What plan format 1.5 records for trust and state (a CA bundle digest,
// where the run keeps its state) round-trips, in the compact layout.
func TestFormat15TrustAndStateRoundTrip(t *testing.T) {
	p := samplePlan15()
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"ca_bundle_sha256":"`+strings.Repeat("ef", 32)+`","ca_bundle":"certs/bmc-ca.pem"`)) {
		t.Errorf("the CA bundle digest is not in the file:\n%.600s", b)
	}
	if !bytes.Contains(b, []byte(`"state":{"backend":"local","dir":"../.rackform"}`)) {
		t.Errorf("the state location is not in the file:\n%.2000s", b)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got.Checksum = ""
	want := *p
	want.FormatVersion = FormatVersion
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// Plan format 1.3 round-trips everything it added, in its indented layout.
func TestFormat13RoundTrip(t *testing.T) {
	p := samplePlan13()
	p.FormatVersion = "1.3"
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("\n  \"servers\": [\n")) {
		t.Errorf("a 1.3 plan is not written in the indented layout of 1.3:\n%.300s", b)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got.Checksum = ""
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// Plan format 1.5 round-trips the member model it added (states, a
// change's members, the members and apply time of each update, the
// auth), compact like 1.4.
func TestFormat15RoundTrip(t *testing.T) {
	if !FormatAtLeast(FormatVersion, 1, 5) {
		t.Errorf("format %s", FormatVersion)
	}
	p := samplePlan15()
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"state":"previous","state_sign":"Id prefix Previous-"`, `"members":8,"moving":8`, `"auth":"basic"`,
		`"apply_time":"OnReset","apply_time_from":"listed in`, `"match":{"software_id":"0x0020","count":8}`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the file does not hold %s", want)
		}
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got.Checksum = ""
	want := *p
	want.FormatVersion = FormatVersion
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// Plan format 1.5 is compact like 1.4: what servers share written once
// (a learned estimate too), read back as each server's own copies.
func TestFormat15CompactRoundTrip(t *testing.T) {
	if !FormatAtLeast(FormatVersion, 1, 5) {
		t.Errorf("format %s", FormatVersion)
	}
	p := samplePlan15()
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	var compacted bytes.Buffer
	if err := json.Compact(&compacted, b); err != nil {
		t.Fatal(err)
	}
	compacted.WriteByte('\n')
	if !bytes.Equal(compacted.Bytes(), b) {
		t.Errorf("the file has whitespace between tokens:\n%s", b)
	}
	if n := bytes.Count(b, []byte(`"image":"http://127.0.0.1:9/bmc.bin"`)); n != 1 {
		t.Errorf("a step two servers share is written %d times, want once", n)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got.Checksum = ""
	want := *p
	want.FormatVersion = FormatVersion
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	again, err := Encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("re-encoding a decoded compact plan changed its bytes")
	}
	if n := bytes.Count(b, []byte(`"learned":{`)); n != 1 {
		t.Errorf("a learned step two servers share is written %d times, want once", n)
	}
	checkShared(t, got)
}

// Plan format 1.4 is canonical compact JSON that writes what servers
// share once and reads back the same plan, servers planned alike sharing
// one list of steps.
func TestFormat14RoundTrip(t *testing.T) {
	p := samplePlan14()
	p.FormatVersion = "1.4"
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	var compacted bytes.Buffer
	if err := json.Compact(&compacted, b); err != nil {
		t.Fatal(err)
	}
	compacted.WriteByte('\n')
	if !bytes.Equal(compacted.Bytes(), b) {
		t.Errorf("the file has whitespace between tokens:\n%s", b)
	}
	if n := bytes.Count(b, []byte(`"image":"http://127.0.0.1:9/bmc.bin"`)); n != 1 {
		t.Errorf("a step two servers share is written %d times, want once", n)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got.Checksum = ""
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	again, err := Encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("re-encoding a decoded 1.4 plan changed its bytes")
	}
	checkShared(t, got)
}

// A 1.4 file naming a table row that is not there is refused, not read
// as an empty step.
func TestFormat14RefusesMissingRow(t *testing.T) {
	b, err := Encode(samplePlan14())
	if err != nil {
		t.Fatal(err)
	}
	edited := reseal(t, bytes.Replace(b, []byte(`"steps":[0,1,2]`), []byte(`"steps":[0,1,7]`), 1))
	_, err = Decode(edited)
	if err == nil || !strings.Contains(err.Error(), "server a/r01/s1 names step 7, which its tables do not hold") {
		t.Fatalf("Decode = %v", err)
	}
}

// OthersOf digests what the plan does not record, whatever order the BMC
// listed it in, and changes when any of it changes.
func TestOthersOf(t *testing.T) {
	all := []providers.Component{
		{ID: "BIOS", Version: "1.0", Updateable: true},
		{ID: "CPLD", Name: "CPLD", Version: "1.0", Updateable: true},
		{ID: "AC-RoT0", Version: "1.11"},
	}
	recorded := all[:1]
	o := OthersOf(all, recorded)
	if o == nil || o.Count != 2 || len(o.SHA256) != 64 {
		t.Fatalf("OthersOf = %+v", o)
	}
	rev := []providers.Component{all[2], all[1], all[0]}
	if r := OthersOf(rev, recorded); *r != *o {
		t.Errorf("the digest depends on the BMC's order: %+v, %+v", r, o)
	}
	changed := slices.Clone(all)
	changed[1].Version = "1.1"
	if c := OthersOf(changed, recorded); c.SHA256 == o.SHA256 {
		t.Error("a changed version of an unrecorded component gives the same digest")
	}
	if OthersOf(recorded, recorded) != nil {
		t.Error("OthersOf with nothing left is not nil")
	}
}

// Apply refuses to start a run from a plan older than 1.6, saying why;
// show still decodes it.
func TestApplicableRefusesOlderFormats(t *testing.T) {
	for _, v := range []string{"1.0", "1.1", "1.2", "1.3", "1.4", "1.5"} {
		p := samplePlan()
		p.FormatVersion = v
		err := Applicable(p)
		if err == nil || !strings.Contains(err.Error(), "plan format "+v+" was written by an older rackform") || !strings.Contains(err.Error(), "plan again") {
			t.Errorf("%s: %v", v, err)
		}
	}
	p13 := samplePlan()
	p13.FormatVersion = "1.3"
	if err := Applicable(p13); err == nil || !strings.Contains(err.Error(), "not in the compact form of format 1.4") || !strings.Contains(err.Error(), "with a count and digest of the rest") {
		t.Errorf("1.3: %v", err)
	}
	p14 := samplePlan()
	p14.FormatVersion = "1.4"
	if err := Applicable(p14); err == nil || !strings.Contains(err.Error(), "does not record which inventory member of each component is running") {
		t.Errorf("1.4: %v", err)
	}
	p15 := samplePlan()
	p15.FormatVersion = "1.5"
	if err := Applicable(p15); err == nil || !strings.Contains(err.Error(), "rack members that are not servers") || !strings.Contains(err.Error(), "upgraded although its BMC reports health Critical") {
		t.Errorf("1.5: %v", err)
	}
	p16 := samplePlan()
	p16.FormatVersion = FormatVersion
	if err := Applicable(p16); err != nil {
		t.Errorf("format %s refused: %v", FormatVersion, err)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	p := samplePlan()
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !strings.HasPrefix(got.Checksum, "sha256:") {
		t.Errorf("checksum = %q, want sha256:…", got.Checksum)
	}
	got.Checksum = ""
	want := *p
	want.FormatVersion = FormatVersion
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	b2, err := Encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Errorf("re-encoding a decoded plan changed its bytes:\n%s\n----\n%s", b, b2)
	}
}

func TestEncodeDeterministic(t *testing.T) {
	a, _ := Encode(samplePlan())
	b, _ := Encode(samplePlan())
	if !bytes.Equal(a, b) {
		t.Fatal("two encodings of equal plans differ")
	}
	if SHA256(a) != SHA256(b) {
		t.Fatal("SHA256 differs")
	}
}

func TestDecodeRefusals(t *testing.T) {
	good, err := Encode(samplePlan())
	if err != nil {
		t.Fatal(err)
	}
	withVersion := func(v string) []byte {
		p := samplePlan()
		p.FormatVersion = v
		b, err := Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "the file is empty"},
		{"whitespace", []byte("  \n"), "the file is empty"},
		{"not json", []byte("cluster \"a\" {}"), "not valid JSON"},
		{"not a plan", []byte(`{"hello": 1}`), "not a rackform plan file"},
		{"truncated half", good[:len(good)/2], "truncated"},
		{"truncated end", good[:len(good)-3], "truncated"},
		{"tampered version", bytes.Replace(good, []byte(`"to":"1.1"`), []byte(`"to":"9.9"`), 1), "damaged or was edited after it was written (checksum mismatch)"},
		{"tampered content", bytes.Replace(good, []byte(`"reboots":1`), []byte(`"reboots":0`), 1), "damaged or was edited after it was written (checksum mismatch)"},
		{"unknown major", withVersion("2.0"), "plan format 2.0 is not supported"},
		{"newer minor", withVersion("1.7"), "newer than this rackform"},
		{"bad version", withVersion("one"), "is not MAJOR.MINOR"},
		{"checksum removed", bytes.Replace(good, []byte(`"checksum":"sha256:`), []byte(`"checksum_":"sha256:`), 1), "no checksum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.file)
			if err == nil {
				t.Fatal("Decode accepted the file")
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError: %v", err, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

// A file with a valid checksum but a field this format does not know is
// refused: apply must not silently ignore instructions.
func TestDecodeUnknownField(t *testing.T) {
	good, _ := Encode(samplePlan())
	edited := bytes.Replace(good, []byte(`"rackform_version"`), []byte(`"surprise":true,"rackform_version"`), 1)
	edited = reseal(t, edited)
	_, err := Decode(edited)
	if err == nil || !strings.Contains(err.Error(), "surprise") {
		t.Fatalf("Decode = %v, want an error naming the unknown field", err)
	}
}

func reseal(t *testing.T, file []byte) []byte {
	t.Helper()
	key := layoutOf(file).checksumKey
	i := bytes.LastIndex(file, key)
	start := i + len(key)
	end := bytes.IndexByte(file[start:], '"')
	blank := append(append([]byte{}, file[:start]...), file[start+end:]...)
	sum := sha256.Sum256(blank)
	return append(append(append([]byte{}, file[:start]...), "sha256:"+hex.EncodeToString(sum[:])...), file[start+end:]...)
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode(samplePlan())
	f.Add(good)
	f.Add(good[:100])
	f.Add([]byte(`{"format_version":"1.0","checksum":""}`))
	// Every earlier layout, and the compact one with its tables.
	for _, name := range []string{"format-1.3-signed.plan.json", "format-1.4-signed.plan.json", "format-1.5-signed.plan.json", "format-1.6-signed.plan.json"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			return
		}
		// Whatever decodes must encode again and decode to the same plan.
		out, err := Encode(p)
		if err != nil {
			t.Fatalf("Encode of a decoded plan: %v", err)
		}
		if _, err := Decode(out); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
	})
}

// checkShared holds decoded servers to intern.go: servers with equal
// lists (so the same table positions) share one in memory, and servers
// with different lists share nothing.
func checkShared(t *testing.T, p *Plan) {
	t.Helper()
	shared := 0
	for i := range p.Servers {
		for j := i + 1; j < len(p.Servers); j++ {
			a, b := p.Servers[i].Steps, p.Servers[j].Steps
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			same := &a[0] == &b[0]
			if equal := cmp.Equal(a, b); equal != same {
				t.Errorf("servers %s and %s: steps equal %v, shared in memory %v", p.Servers[i].Address, p.Servers[j].Address, equal, same)
			}
			if same {
				shared++
			}
		}
	}
	if shared == 0 {
		t.Error("no two servers share their steps: the sample plan has twins")
	}
}
