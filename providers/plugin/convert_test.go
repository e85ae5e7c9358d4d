package plugin

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"google.golang.org/protobuf/proto"

	"github.com/rackform/rackform/providers"
	pb "github.com/rackform/rackform/providers/plugin/proto/providerv1"
)

// TestDiagsFromProtoSeverity pins the mapping of severities from the wire,
// including ones this host does not know: they must count as errors, so a
// newer plugin's failure never looks harmless.
func TestDiagsFromProtoSeverity(t *testing.T) {
	in := []*pb.Diagnostic{
		{Severity: pb.Severity_SEVERITY_ERROR, Summary: "e"},
		{Severity: pb.Severity_SEVERITY_WARNING, Summary: "w"},
		{Severity: pb.Severity_SEVERITY_UNSPECIFIED, Summary: "u"},
		{Severity: pb.Severity(42), Summary: "future"},
	}
	want := providers.Diagnostics{
		{Severity: providers.Error, Summary: "e"},
		{Severity: providers.Warning, Summary: "w"},
		{Severity: providers.Error, Summary: "u"},
		{Severity: providers.Error, Summary: "future"},
	}
	if diff := cmp.Diff(want, diagsFromProto(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diagsFromProto(nil) != nil || diagsToProto(nil) != nil {
		t.Error("no diagnostics must stay nil both ways")
	}
}

// TestCredentialsString keeps the contract's promise for the host's own
// formatting: credentials print without the password.
func TestCredentialsString(t *testing.T) {
	c := providers.Credentials{Username: "root", Password: "hunter2"}
	tg := targetFromProto(targetToProto(providers.Target{Name: "a", Credentials: &c}))
	for _, s := range []string{tg.Credentials.String(), fmt.Sprintf("%v", *tg.Credentials), fmt.Sprintf("%#v", *tg.Credentials)} {
		if s != "Credentials{root, ***}" {
			t.Errorf("credentials print as %q", s)
		}
	}
}

// TestOlderPluginReadsAsBefore: what a plugin built before member states,
// auth and apply-time choices sends (none of protocol fields Component 8–9,
// Observation 13, UpdatePlan 6–9) reads as it did: every member active,
// the auth unknown, the apply time left to the plan.
func TestOlderPluginReadsAsBefore(t *testing.T) {
	old := &pb.Observation{Server: "s", Reachable: true,
		Components: []*pb.Component{{Id: "Installed-159-1.8.2", SoftwareId: "159", Version: "1.8.2"}, {Id: "Previous-159-1.2.4", SoftwareId: "159", Version: "1.2.4"}},
		Updates:    []*pb.UpdatePlan{{Component: "bios", Method: "simple_update"}}}
	b, err := proto.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var wire pb.Observation
	if err := proto.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	o := observationFromProto(&wire)
	if got := len(providers.Match{SoftwareID: "159"}.Active(o.Components)); got != 2 {
		t.Errorf("%d active members; an older plugin's members are all active (2)", got)
	}
	if o.Auth != "" || o.Updates[0].ApplyTime != "" || o.Updates[0].ApplyTimeFrom != "" || o.Updates[0].Members != nil {
		t.Errorf("fields an older plugin never sent are set: %+v", o)
	}
}

// TestTargetDeviceRoundTrips: a device's kind reaches the plugin, so it
// reads the device through its Manager, never /redfish/v1/Systems.
func TestTargetDeviceRoundTrips(t *testing.T) {
	in := providers.Target{Name: "c/r1/nvswitch-1", Endpoint: "https://127.0.0.9", Device: "switch_tray", Auth: providers.AuthSession}
	if diff := cmp.Diff(in, targetFromProto(targetToProto(in))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestTargetsShareWhatTheyHaveInCommon: the targets of one request read
// as each does alone, and servers with equal updates and credentials share
// one copy of them (a large fleet's plugin holds them while it observes);
// a server whose updates or credentials differ in any field has its own.
func TestTargetsShareWhatTheyHaveInCommon(t *testing.T) {
	creds := providers.Credentials{Username: "root", Password: "pw"}
	other := providers.Credentials{Username: "root", Password: "pw2"}
	bios := providers.UpdateIntent{Component: "bios", Match: providers.Match{SoftwareID: "159", Count: 1}, ImageURI: "https://repo/bios.exe", ApplyTime: "OnReset"}
	in := []providers.Target{
		{Name: "a", Endpoint: "https://127.0.0.1", Credentials: &creds, Updates: []providers.UpdateIntent{bios}},
		{Name: "b", Endpoint: "https://127.0.0.2", Credentials: &providers.Credentials{Username: "root", Password: "pw"}, Updates: []providers.UpdateIntent{bios}},
		{Name: "c", Endpoint: "https://127.0.0.3", Credentials: &other, Updates: []providers.UpdateIntent{{Component: "bios", Match: providers.Match{SoftwareID: "159", Count: 2}, ImageURI: bios.ImageURI, ApplyTime: bios.ApplyTime}}},
		{Name: "d", Endpoint: "https://127.0.0.4", Updates: []providers.UpdateIntent{{Component: "bios", Match: bios.Match, ImageURI: bios.ImageURI + "x", ApplyTime: bios.ApplyTime}}},
		{Name: "e", Endpoint: "https://127.0.0.5"},
	}
	var wire []*pb.Target
	for _, tg := range in {
		wire = append(wire, targetToProto(tg))
	}
	got := targetsFromProto(wire)
	if diff := cmp.Diff(in, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got[0].Credentials != got[1].Credentials || &got[0].Updates[0] != &got[1].Updates[0] {
		t.Error("equal credentials and updates are converted once per server, not shared")
	}
	if got[0].Credentials == got[2].Credentials || &got[0].Updates[0] == &got[2].Updates[0] || &got[0].Updates[0] == &got[3].Updates[0] {
		t.Error("servers with other credentials or updates share the first server's")
	}
}
