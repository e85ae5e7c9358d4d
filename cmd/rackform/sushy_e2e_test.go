package main

import (
	"strings"
	"testing"

	"github.com/rackform/rackform/providers/sim"
)

// sushyBIOS upgrades the BIOS of a BMC like sushy-tools' emulator, which
// has no inventory: its version is ComputerSystem.BiosVersion (id BIOS).
const sushyBIOS = `  component "bios" {
    version = "1.1.0"
    scheme  = "dotted"
    image   = "%s/images/bios-1.1.0.bin"
    match {
      id = "BIOS"
    }
  }
`

// TestSushyUpdateNotTakenIsNotRemediated: a BMC like sushy-tools'
// emulator accepts the BIOS update with 204 (no task to follow), and the
// version does not change (the flash failed where nothing could say so).
// After the reset the server is on and healthy with the old BIOS: apply
// fails it as an update that did not take effect, sent once, and leaves
// it on: it is not powered off, reimaged or called unhealthy.
func TestSushyUpdateNotTakenIsNotRemediated(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	// Against the real emulator (a BIOS target it does not bump to),
	// apply called such a server "provisioning not done", powered it off
	// and said it "needs a replace".
	images := imageServer(t)
	vs := vendorServer{profile: sim.ProfileSushy, comps: sushyBIOS}
	fleet, dir := writeVendorFleet(t, freeOctet(t, 178, 1), images, []vendorServer{vs})
	e := newE2EEnv(t)
	if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", dir); code != 0 || !strings.Contains(out, "bios 1.0.0 → 1.1.0") || !strings.Contains(out, "auth: Basic") {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	if err := fleet.SetFault("sushy1", sim.Fault{Kind: sim.FaultTaskFail}); err != nil {
		t.Fatal(err)
	}
	code, out := e.run(t, "apply", "-allow-unsigned", "-no-color", "-state-dir", "st", "plan.json")
	if code != 3 {
		t.Errorf("apply: exit %d, want 3 (paused: the server failed)", code)
	}
	for _, want := range []string{"update did not take effect: bios reads 1.0.0 after the reset, expected 1.1.0",
		"the BMC accepted it with no task to follow, so nothing confirmed the flash", "check the BMC, then plan again"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply's output lacks %q", want)
		}
	}
	for _, bad := range []string{"provisioning", "replace", "unhealthy", "remediation"} {
		if strings.Contains(out, bad) {
			t.Errorf("apply's output says %q", bad)
		}
	}
	st := fleet.Stats("sushy1")
	if st.Updates != 1 || st.Reimages != 0 || st.PowerState != "On" || st.Versions["BIOS"] != "1.0.0" {
		t.Errorf("updates %d, reimages %d, power %s, BIOS %s; want 1, 0, On, 1.0.0", st.Updates, st.Reimages, st.PowerState, st.Versions["BIOS"])
	}
	if t.Failed() {
		t.Logf("apply:\n%s", out)
	}
}

// TestSushyRefusesManagerTarget: such a BMC updates only the System; an
// update of its own firmware (read from Manager.FirmwareVersion, so sent
// with the Manager in Targets) is refused, and apply says so in the BMC's
// words.
func TestSushyRefusesManagerTarget(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	images := imageServer(t)
	vs := vendorServer{profile: sim.ProfileSushy, comps: `  component "bmc" {
    version = "1.01"
    scheme  = "dotted"
    image   = "%s/images/bmc-1.01.bin"
    match {
      id = "BMC"
    }
  }
`}
	_, dir := writeVendorFleet(t, freeOctet(t, 179, 1), images, []vendorServer{vs})
	e := newE2EEnv(t)
	if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", dir); code != 0 || !strings.Contains(out, "version read from Manager.FirmwareVersion") {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	code, out := e.run(t, "apply", "-allow-unsigned", "-no-color", "-state-dir", "st", "plan.json")
	if code != 3 || !strings.Contains(out, "SimpleUpdate: HTTP 400 Base.1.0.GeneralError: Manager is not currently a supported Target.") {
		t.Errorf("apply: exit %d, want 3 with the BMC's refusal\n%s", code, out)
	}
}
