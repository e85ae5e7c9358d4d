package redfish

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/sim"
)

const (
	bladeBMC      = "sc.1.7.2-118-slingshot-release.arm64.2022-04-11T09:19:12+00:00.735ee40"
	bladeRecovery = "rec.1.2.cronomatic-dev.arm64.2020-02-27T21:41:10+00:00.f0f4281a"
)

// TestObserveDevice: the Slingshot switch blade's controller, served
// unmodified, read as a device (Target.Device): through its Manager, its
// Chassis and its UpdateService, never /redfish/v1/Systems. It is
// observed (not unusable_answer): the chassis gives its identity, the
// running BMC image is active, the Recovery image of another version is
// standby, Bootloader and FPGA are not updateable; an update of the BMC
// rule is SimpleUpdate naming the running member only.
func TestObserveDevice(t *testing.T) {
	m := newMockupServer(t, "csm/Slingshot_Switch_Blade")
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	bmcRule := providers.UpdateIntent{Component: "blade_bmc", Match: providers.Match{ID: "BMC"}, ImageURI: "https://127.0.0.1:9/sc.1.7.3.bin"}
	recovery := providers.UpdateIntent{Component: "recovery", Match: providers.Match{ID: "Recovery"}, ImageURI: "https://127.0.0.1:9/rec.bin"}
	o := observeAll(t, p, providers.Target{Name: "c/r1/blade-1", Endpoint: m.URL, Device: "switch_blade",
		Updates: []providers.UpdateIntent{bmcRule, recovery}})[0]
	if o.Outcome != providers.OutcomeObserved || !o.Reachable {
		t.Fatalf("outcome %q (reachable %v), want observed: %v", o.Outcome, o.Reachable, o.Diagnostics.Err())
	}
	for _, req := range m.Log() {
		if strings.Contains(req, "/Systems") {
			t.Errorf("a device was read through the Systems collection: %s", req)
		}
	}
	want := providers.Identity{SerialNumber: "HB19220057", Manufacturer: "HPE", Model: "HPE_Slingshot_1_Switch_Blade"}
	if diff := cmp.Diff(want, o.Identity); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}
	if o.System != "" || o.PowerState != providers.PowerOn || o.Health != "OK" {
		t.Errorf("system %q, power %q, health %q; want none, the chassis' On and OK", o.System, o.PowerState, o.Health)
	}
	type member struct {
		id, version, state string
		updateable         bool
	}
	var got []member
	for _, c := range o.Components {
		got = append(got, member{c.ID, c.Version, c.State, c.Updateable})
	}
	for _, w := range []member{
		{"BMC", bladeBMC, providers.StateActive, true},
		{"Recovery", bladeRecovery, providers.StateStandby, true},
		{"Bootloader", "1.4-sc-ros", providers.StateActive, false},
		{"FPGA0", "1.05", providers.StateActive, false},
	} {
		if !slices.Contains(got, w) {
			t.Errorf("no member %+v among %+v", w, got)
		}
	}
	if len(o.Updates) != 2 {
		t.Fatalf("%d update plans, want 2: %+v", len(o.Updates), o.Updates)
	}
	up := o.Updates[0]
	if up.Problem != "" || up.Method != providers.MethodSimpleUpdate || up.TransferProtocol != "HTTPS" {
		t.Errorf("BMC update %+v, want SimpleUpdate over HTTPS", up)
	}
	if diff := cmp.Diff([]string{"BMC"}, up.Members); diff != "" {
		t.Errorf("the update is for (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/redfish/v1/UpdateService/FirmwareInventory/BMC"}, up.Targets); diff != "" {
		t.Errorf("the update names (-want +got):\n%s", diff)
	}
	// Even a rule naming the Recovery image is never given it: it does
	// not run.
	if rec := o.Updates[1]; !strings.Contains(rec.Problem, "no member that runs matches") {
		t.Errorf("Recovery update %+v, want refused: it does not run", rec)
	}
}

// TestDeviceWaitReady: a device is ready when its Manager answers and its
// versions read back, with no ComputerSystem to read; a host step is
// refused before any request changes it.
func TestDeviceWaitReady(t *testing.T) {
	m := newMockupServer(t, "csm/Slingshot_Switch_Blade")
	p := fastConfig(t, m)
	target := providers.Target{Name: "c/r1/blade-1", Endpoint: m.URL, Device: "switch_blade"}
	res, d := apply(t, p, target, providers.Step{Kind: providers.StepWaitReady, Timeout: 2e9,
		Expect: []providers.Expectation{{Component: "blade_bmc", Match: providers.Match{ID: "BMC", Count: 1}, Target: version.Target{Version: bladeBMC}}}})
	if d.HasErrors() || res == nil || res.Observation == nil {
		t.Fatalf("wait_ready: %v", d.Err())
	}
	if got := res.Observation.Identity.SerialNumber; got != "HB19220057" {
		t.Errorf("ready observation's serial %q", got)
	}
	_, d = apply(t, p, target, providers.Step{Kind: providers.StepWaitReady, Timeout: 50e6,
		Expect: []providers.Expectation{{Component: "blade_bmc", Match: providers.Match{ID: "BMC"}, Target: version.Target{Version: "sc.1.7.3"}}}})
	if !d.HasErrors() || !strings.Contains(d.Err().Error(), "blade_bmc not at sc.1.7.3") {
		t.Errorf("wait_ready for a version the device does not run: %v", d.Err())
	}
	for _, kind := range []providers.StepKind{providers.StepShutdown, providers.StepPowerOn, providers.StepReset, providers.StepReimage} {
		before := len(m.Log())
		_, d := apply(t, p, target, providers.Step{Kind: kind, ResetType: "On"})
		if !d.HasErrors() || !strings.Contains(d.Err().Error(), "a switch blade has no host to "+string(kind)) {
			t.Errorf("%s on a device: %v", kind, d.Err())
		}
		if n := len(m.Log()); n != before {
			t.Errorf("%s on a device sent %d requests", kind, n-before)
		}
	}
	for _, req := range m.Log() {
		if strings.Contains(req, "/Systems") {
			t.Errorf("a device was read through the Systems collection: %s", req)
		}
	}
}

// TestDeviceWithoutManager: a BMC read as a device whose service lists no
// Manager answered without what the plan needs, and says so.
func TestDeviceWithoutManager(t *testing.T) {
	m := newMockupServer(t, "dmtf/public-rackmount1", serveJSON(map[string]func() any{"/redfish/v1/Managers": func() any {
		return map[string]any{"@odata.id": "/redfish/v1/Managers", "Members": []any{}, "Members@odata.count": 0}
	}}))
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL, Device: "power_shelf"})[0]
	if o.Outcome != providers.OutcomeUnusableAnswer {
		t.Fatalf("outcome %q, want %q: %v", o.Outcome, providers.OutcomeUnusableAnswer, o.Diagnostics.Err())
	}
	if msg := singleLine(t, o); !strings.Contains(msg, "the BMC answered, but has no Manager: GET /redfish/v1/Managers lists no members") {
		t.Errorf("diagnostic %q", msg)
	}
}

// TestDeviceOnTheSimulator: the simulator's switch blade (profile
// slingshot, written from the capture's facts) is observed as a device,
// its running BMC image updated by SimpleUpdate naming that member, the
// controller restarts, and wait_ready reads the version back; Recovery is
// left as it was.
func TestDeviceOnTheSimulator(t *testing.T) {
	images := imageServer(t)
	env := startSim(t, sim.Options{}, []sim.BMCSpec{{Name: "blade-1", Profile: sim.ProfileSlingshot,
		Firmware: map[string]string{"BMC": "sc.1.7.2-118"}}}, nil, Options{})
	target := env.targets["blade-1"]
	target.Device = "switch_blade"
	env.targets["blade-1"] = target
	rule := providers.Match{ID: "BMC", Count: 1}
	in := providers.UpdateIntent{Component: "blade_bmc", Match: rule, ImageURI: images.URL + "/bmc-sc.1.7.3-7.bin"}
	up := planFor(t, env.p, target, in)
	if up.Problem != "" || up.Method != providers.MethodSimpleUpdate || len(up.Targets) != 1 || up.Targets[0] != "/redfish/v1/UpdateService/FirmwareInventory/BMC" {
		t.Fatalf("update plan %+v", up)
	}
	step := stepFrom(up, in)
	step.Target.Version, step.Timeout = "sc.1.7.3-7", 5*time.Second
	env.mustApply(t, "blade-1", step)
	ready := env.mustApply(t, "blade-1", providers.Step{Kind: providers.StepWaitReady, Timeout: 5 * time.Second,
		Expect: []providers.Expectation{{Component: "blade_bmc", Match: rule, Target: version.Target{Version: "sc.1.7.3-7"}}}})
	versions := map[string]string{}
	for _, c := range ready.Observation.Components {
		versions[c.ID] = c.Version
	}
	if versions["BMC"] != "sc.1.7.3-7" || !strings.HasPrefix(versions["Recovery"], "rec.1.2.") {
		t.Errorf("after the update: %v", versions)
	}
	st := env.fleet.Stats("blade-1")
	if st.Flashes["BMC"] != 1 || st.Flashes["Recovery"] != 0 {
		t.Errorf("flashes %v, want the BMC once and Recovery never", st.Flashes)
	}
}
