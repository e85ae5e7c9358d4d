package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/providers/sim"
)

// vendorServer is one server of a vendor profile in an end-to-end fleet,
// and the release components that upgrade it, written as that vendor's
// BMC spells versions.
type vendorServer struct {
	profile string
	spec    func(name, addr string) sim.BMCSpec
	// comps are HCL component blocks, %s standing for the image server.
	comps string
	// flashed are the inventory members (stable Ids) apply must flash
	// exactly once, and untouched those it must not flash.
	flashed, untouched []string
}

// writeVendorFleet serves servers (one BMC each, on 127.77.octet.N) and
// writes a configuration with one cluster and release per server.
func writeVendorFleet(t *testing.T, octet int, images string, servers []vendorServer) (*sim.Fleet, string) {
	t.Helper()
	var specs []sim.BMCSpec
	var cfg strings.Builder
	cfg.WriteString(e2eFastConfig)
	for i, vs := range servers {
		name := fmt.Sprintf("%s%d", vs.profile, i+1)
		addr := fmt.Sprintf("127.77.%d.%d:18443", octet, i+1)
		spec := sim.BMCSpec{Name: name, Addr: addr, Profile: vs.profile, PowerOn: true}
		if vs.spec != nil {
			spec = vs.spec(name, addr)
		}
		specs = append(specs, spec)
		fmt.Fprintf(&cfg, "\nrelease %q {\n  version = \"1.0.0\"\n%s}\n", name, strings.ReplaceAll(vs.comps, "%s", images))
		fmt.Fprintf(&cfg, "\ncluster %q {\n  release  = release.%s\n  strategy = strategy.fast\n  rack \"r1\" {\n    server %q {\n      bmc  = \"http://%s\"\n      role = \"compute\"\n    }\n  }\n}\n", name, name, name, addr)
	}
	fleet := startSpecs(t, specs)
	dir := filepath.Join(t.TempDir(), "vendors")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return fleet, dir
}

// planApplyReplan plans (changes expected), applies to completion and
// plans again (nothing left to do), returning the first plan's text.
func planApplyReplan(t *testing.T, dir string, servers int) string {
	t.Helper()
	e := newE2EEnv(t)
	code, out := e.run(t, "plan", "-detailed-exitcode", "-no-color", "-out", "plan.json", dir)
	if code != 2 {
		t.Fatalf("plan -detailed-exitcode: exit %d, want 2 (changes)\n%s", code, out)
	}
	for _, bad := range []string{"Undecidable", "Error:", "not observed"} {
		if strings.Contains(out, bad) {
			t.Fatalf("plan says %q\n%s", bad, out)
		}
	}
	code, aout := e.run(t, "apply", "-allow-unsigned", "-no-color", "-state-dir", "st", "plan.json")
	noun := "servers"
	if servers == 1 {
		noun = "server"
	}
	if code != 0 || !strings.Contains(aout, fmt.Sprintf("Apply complete: %d %s upgraded, 0 failed", servers, noun)) {
		t.Fatalf("apply: exit %d\n%s\nplan:\n%s", code, aout, out)
	}
	code, again := e.run(t, "plan", "-detailed-exitcode", "-no-color", dir)
	if code != 0 {
		t.Fatalf("re-plan after apply: exit %d, want 0 (every server at target)\n%s", code, again)
	}
	return out
}

// checkFlashes holds the simulator's per-member counters to vs.
func checkFlashes(t *testing.T, fleet *sim.Fleet, name string, vs vendorServer) {
	t.Helper()
	st := fleet.Stats(name)
	for _, id := range vs.flashed {
		if st.MemberFlashes[id] != 1 {
			t.Errorf("%s: %s flashed %d times, want exactly once (%v)", name, id, st.MemberFlashes[id], st.MemberFlashes)
		}
	}
	for _, id := range vs.untouched {
		if st.MemberFlashes[id] != 0 {
			t.Errorf("%s: %s flashed %d times, want never (%v)", name, id, st.MemberFlashes[id], st.MemberFlashes)
		}
	}
}

// vendorServers are the Dell, Lenovo and Supermicro profiles with a
// release each that upgrades BIOS and BMC, matched as an operator would
// match them on those BMCs (Dell and Lenovo by SoftwareId, which their
// rollback, backup and pending members share; Supermicro by Id).
var vendorServers = []vendorServer{
	{profile: sim.ProfileIDRAC, comps: `  component "bios" {
    version = "1.13.2"
    scheme  = "dotted"
    image   = "%s/images/bios-1.13.2.exe"
    match {
      software_id = "159"
    }
  }
  component "bmc" {
    version = "7.10.30.00"
    scheme  = "dotted"
    image   = "%s/images/bmc-7.10.30.00.exe"
    match {
      software_id = "25227"
    }
  }
`, flashed: []string{"BIOS.Setup.1-1", "iDRAC.Embedded.1-1"}},
	{profile: sim.ProfileXCC, comps: `  component "bios" {
    version         = "32E-3.20"
    version_pattern = "(?:[0-9A-Z]{3})-(\\d+)\\.(\\d+)"
    image           = "%s/images/bios-32E-3.20.bin"
    match {
      software_id = "UEFI-U8E1-6"
    }
  }
  component "bmc" {
    version         = "56D-5.10"
    version_pattern = "(?:[0-9A-Z]{3})-(\\d+)\\.(\\d+)"
    image           = "%s/images/bmc-56D-5.10.bin"
    match {
      software_id = "BMC-TGBT-10"
    }
  }
`, flashed: []string{"UEFI", "BMC-Primary"}, untouched: []string{"BMC-Backup"}},
	{profile: sim.ProfileHGX, comps: `  component "bios" {
    version         = "BIOS Date: 03/22/2024 Ver 2.1"
    version_pattern = "BIOS Date: [0-9/]+ Ver (\\d+)\\.(\\d+)"
    image           = "%s/images/bios.bin?version=BIOS%20Date%3A%2003%2F22%2F2024%20Ver%202.1"
    match {
      id = "BIOS"
    }
  }
  component "bmc" {
    version = "11.02.01"
    scheme  = "dotted"
    image   = "%s/images/bmc-11.02.01.bin"
    match {
      id = "BMC"
    }
  }
`, flashed: []string{"BIOS", "BMC"}, untouched: []string{"Golden_BIOS", "Staging_BIOS", "Golden_BMC"}},
}

// TestVendorProfilesPlanApplyReplan: a Dell iDRAC9, a Lenovo XCC and a
// Supermicro HGX server, each reporting its vendor's shapes (Dell's
// version-bearing Ids with their Previous- rollback images, Lenovo's
// BMC-Backup and -Pending placeholders of one SoftwareId, Supermicro's
// Golden and Staging copies), plan with only the active members compared,
// apply (each active member flashed exactly once, no rollback, backup or
// copy touched) and re-plan clean.
func TestVendorProfilesPlanApplyReplan(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	// Without the inventory member model the provider compared Dell's
	// Previous- rollback and Lenovo's StandbySpare BMC-Backup with the
	// target, so the re-plan after apply still showed "bios 1.13.2, 1.8.2 →
	// 1.13.2" and "bmc 42S-2.83, 56D-5.10 → 56D-5.10".
	images := imageServer(t)
	fleet, dir := writeVendorFleet(t, freeOctet(t, 60, len(vendorServers)), images, vendorServers)
	planApplyReplan(t, dir, len(vendorServers))
	for i, vs := range vendorServers {
		checkFlashes(t, fleet, fmt.Sprintf("%s%d", vs.profile, i+1), vs)
	}
}

// TestGPUFleetFlashesEachGPUOnce: two HGX servers whose release upgrades
// the GPUs (8 members of one SoftwareId, 0x0020) plan 8 GPU members each,
// apply flashes each of the 16 GPUs exactly once (the simulator's
// per-member counters), none of the host-side GPU members (not
// updateable), and a re-plan is clean.
func TestGPUFleetFlashesEachGPUOnce(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	// A rule that meant its first member planned one target
	// (HGX_FW_GPU_SXM_1) for the 8 members of SoftwareId 0x0020: 7 GPUs
	// stayed behind and the re-plan had changes.
	images := imageServer(t)
	gpu := vendorServer{profile: sim.ProfileHGX, comps: `  component "gpu" {
    version = "96.00.89.00.01"
    scheme  = "dotted"
    image   = "%s/images/gpu-96.00.89.00.01.fwpkg"
    match {
      software_id = "0x0020"
    }
  }
`}
	for i := 1; i <= 8; i++ {
		gpu.flashed = append(gpu.flashed, fmt.Sprintf("HGX_FW_GPU_SXM_%d", i))
		gpu.untouched = append(gpu.untouched, fmt.Sprintf("GPU%d", i))
	}
	servers := []vendorServer{gpu, gpu}
	fleet, dir := writeVendorFleet(t, freeOctet(t, 62, len(servers)), images, servers)
	planApplyReplan(t, dir, len(servers))
	for i, vs := range servers {
		checkFlashes(t, fleet, fmt.Sprintf("hgx%d", i+1), vs)
	}
}

// TestBasicAuthBMCPlannedAndApplied: a BMC that refuses a session login
// without Basic credentials (as sushy-tools' emulator does) is planned and
// applied with Basic auth, not called a credentials failure.
func TestBasicAuthBMCPlannedAndApplied(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	// A provider that takes a 401 on the session login as refused
	// credentials, without trying Basic once, cannot plan this BMC.
	images := imageServer(t)
	vs := vendorServer{profile: sim.ProfileSushy, comps: sushyBIOS, flashed: []string{"BIOS"}}
	fleet, dir := writeVendorFleet(t, freeOctet(t, 64, 1), images, []vendorServer{vs})
	planApplyReplan(t, dir, 1)
	checkFlashes(t, fleet, "sushy1", vs)
}
