package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/providers/sim"
)

// profileCase is one simulated hardware profile in a mixed fleet: its
// cluster's release targets the next version of each component in the
// format that profile's real BMC reports (the simulator's defaults are
// the strings of the public captures).
type profileCase struct {
	profile string
	// from and to are the versions before and after, by component key.
	from, to map[string]string
	// scheme decides the versions of each component.
	scheme map[string]string
	// match is the match attribute (software_id, or id where the versions
	// are read from the System and the Manager).
	match string
	// method is the update method plan must choose for the profile's
	// BIOS, as the plan text shows it.
	method string
	// nonUpdateable is a member the BMC reports with Updateable false.
	nonUpdateable string
}

// mixedProfiles are the six profiles. Every from is the simulator's
// default: the real string of the capture the profile copies.
var mixedProfiles = []profileCase{
	{profile: "dmtf", match: "software_id", method: "simple_update HTTP, targets /redfish/v1/UpdateService/FirmwareInventory/BIOS, apply time OnReset", nonUpdateable: "AC-RoT0",
		from:   map[string]string{"BIOS": "P79 v1.45", "BMC": "1.45.455b66-rev4"},
		to:     map[string]string{"BIOS": "P79 v1.46", "BMC": "1.46.455b66-rev1"},
		scheme: map[string]string{"BIOS": "vendor", "BMC": "vendor"}},
	{profile: "ilo5", match: "software_id", method: "simple_update HTTP, apply time OnReset", nonUpdateable: "6",
		from:   map[string]string{"BIOS": "A43 v2.52 (10/29/2021)", "BMC": "2.46 May 11 2021"},
		to:     map[string]string{"BIOS": "A43 v2.60 (03/01/2022)", "BMC": "2.55 Oct 01 2021"},
		scheme: map[string]string{"BIOS": "vendor", "BMC": "vendor"}},
	{profile: "ami", match: "software_id", method: "simple_update HTTP, apply time OnReset", nonUpdateable: "BPB_CPLD1",
		from:   map[string]string{"BIOS": "C27", "BMC": "12.84.13"},
		to:     map[string]string{"BIOS": "C28", "BMC": "12.84.14"},
		scheme: map[string]string{"BIOS": "vendor", "BMC": "dotted"}},
	{profile: "openbmc", match: "software_id", method: "multipart_push, targets /redfish/v1/UpdateService/FirmwareInventory/bios_active, no apply time (the BMC lists no apply times for multipart_push; it applies the image as it does by default)", nonUpdateable: "a3f1d5b2",
		from:   map[string]string{"BIOS": "1.0.0", "BMC": "2.15.0-dev-686-g100c36de90"},
		to:     map[string]string{"BIOS": "1.0.1", "BMC": "2.16.0"},
		scheme: map[string]string{"BIOS": "dotted", "BMC": "semver"}},
	{profile: "basic", match: "id", method: "simple_update HTTP, targets /redfish/v1/Systems/1, apply time OnReset, version read from ComputerSystem.BiosVersion",
		from:   map[string]string{"BIOS": "3.4", "BMC": "1.71.11"},
		to:     map[string]string{"BIOS": "3.5", "BMC": "1.71.12"},
		scheme: map[string]string{"BIOS": "dotted", "BMC": "dotted"}},
	{profile: "crayex", match: "software_id", method: "simple_update HTTP, targets /redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS, apply time OnReset", nonUpdateable: "FPGA0",
		from:   map[string]string{"BIOS": "ex235a.bios-1.3.6", "BMC": "nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff"},
		to:     map[string]string{"BIOS": "ex235a.bios-1.3.7", "BMC": "nc.1.6.17-0-gabcdef"},
		scheme: map[string]string{"BIOS": "vendor", "BMC": "vendor"}},
}

// imageServer serves any path with a small image body, as a web server
// holding firmware images would; push methods download the image from it
// before streaming it to the BMC.
func imageServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(strings.Repeat("firmware image\n", 256))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		_, _ = w.Write(body)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// imageURI names the image of a component's version so the simulator
// knows what it carries: the version in the file name where it can be
// one (a push sends the file name only), else in the query.
func imageURI(base, comp, version string) string {
	if !strings.ContainsAny(version, " /():+") {
		return fmt.Sprintf("%s/images/%s-%s.bin", base, strings.ToLower(comp), version)
	}
	return fmt.Sprintf("%s/images/%s.bin?version=%s", base, strings.ToLower(comp), url.QueryEscape(version))
}

// mixedFleet serves one BMC per profile on 127.77.OCTET.1.., the crayex
// BMC with two systems (a server each), and writes a configuration with
// one cluster (and release) per profile.
type mixedFleet struct {
	fleet *sim.Fleet
	dir   string
	// bmc is the BMC name of each profile.
	bmc map[string]string
}

// e2eFastConfig is e2eProvider and a strategy "fast" with short waits.
const e2eFastConfig = e2eProvider + `
strategy "fast" {
  verify_timeout   = "10s"
  drain_timeout    = "2s"
  shutdown_timeout = "2s"
  compute {
    wait_after_rack = "0s"
  }
}
`

func startMixedFleet(t *testing.T, octet int, images string) *mixedFleet {
	t.Helper()
	var specs []sim.BMCSpec
	mf := &mixedFleet{bmc: map[string]string{}}
	var cfg strings.Builder
	cfg.WriteString(e2eFastConfig)
	for i, pc := range mixedProfiles {
		name := fmt.Sprintf("bmc-%s", pc.profile)
		addr := fmt.Sprintf("127.77.%d.%d:18443", octet, i+1)
		mf.bmc[pc.profile] = name
		specs = append(specs, sim.BMCSpec{Name: name, Addr: addr, Profile: pc.profile, PowerOn: true})
		fmt.Fprintf(&cfg, "\nrelease %q {\n  version = \"1.0.0\"\n", pc.profile)
		for _, comp := range []string{"BIOS", "BMC"} {
			fmt.Fprintf(&cfg, "  component %q {\n    version = %q\n    scheme  = %q\n    image   = %q\n    match {\n      %s = %q\n    }\n  }\n",
				strings.ToLower(comp), pc.to[comp], pc.scheme[comp], imageURI(images, comp, pc.to[comp]), pc.match, comp)
		}
		fmt.Fprintf(&cfg, "}\n\ncluster %q {\n  release  = release.%s\n  strategy = strategy.fast\n  rack \"r1\" {\n", pc.profile, pc.profile)
		if pc.profile == "crayex" {
			for _, node := range []string{"Node0", "Node1"} {
				fmt.Fprintf(&cfg, "    server %q {\n      bmc    = \"http://%s\"\n      system = %q\n      role   = \"compute\"\n    }\n", strings.ToLower(node), addr, node)
			}
		} else {
			fmt.Fprintf(&cfg, "    server \"%s1\" {\n      bmc  = \"http://%s\"\n      role = \"compute\"\n    }\n", pc.profile, addr)
		}
		cfg.WriteString("  }\n}\n")
	}
	mf.fleet = startSpecs(t, specs)
	mf.dir = filepath.Join(t.TempDir(), "mixed")
	if err := os.MkdirAll(mf.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mf.dir, "main.rf.hcl"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return mf
}

// TestMixedProfileFleetPlansAppliesAndReplansClean: a fleet mixing every
// simulator profile (dmtf, ilo5, ami, openbmc, basic, and a two-system
// crayex BMC with a server per system), each reporting its real BMC's
// version strings and (but basic, which has no inventory) a
// non-updateable member, plans with every version decided and the update
// method chosen per BMC, applies to completion through the real binary and
// the plugin process, flashes every component exactly once (the crayex
// BMC's shared firmware once for both systems), and re-plans clean.
func TestMixedProfileFleetPlansAppliesAndReplansClean(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	images := imageServer(t)
	mf := startMixedFleet(t, freeOctet(t, 40, len(mixedProfiles)), images)
	e := newE2EEnv(t)

	code, out := e.run(t, "plan", "-detailed-exitcode", "-no-color", "-out", "plan.json", mf.dir)
	if code != 2 {
		t.Fatalf("plan -detailed-exitcode: exit %d, want 2 (changes)\n%s", code, out)
	}
	for _, bad := range []string{"Undecidable", "Error:", "not observed"} {
		if strings.Contains(out, bad) {
			t.Errorf("plan says %q: every version must be decided and every server observed\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "Plan: 7 servers to upgrade in 6 racks, 0 skipped") {
		t.Errorf("plan does not upgrade all 7 servers:\n%s", out)
	}
	for _, pc := range mixedProfiles {
		server := pc.profile + "/r1/" + pc.profile + "1"
		if pc.profile == "crayex" {
			server = "crayex/r1/node0"
		}
		// The versions as the BMC reports them, in its own format, and
		// the method chosen for this BMC.
		want := fmt.Sprintf("~ %s  bios %s → %s, bmc %s → %s", server, pc.from["BIOS"], pc.to["BIOS"], pc.from["BMC"], pc.to["BMC"])
		if !strings.Contains(out, want) {
			t.Errorf("%s: plan does not show %q", pc.profile, want)
		}
		if !strings.Contains(out, "update bios: "+pc.method+"\n") {
			t.Errorf("%s: plan does not choose %q for the BIOS", pc.profile, pc.method)
		}
	}
	// basic: no FirmwareInventory; the versions come from the System and
	// the Manager, and the updates name them as Targets.
	if !strings.Contains(out, "update bmc: simple_update HTTP, targets /redfish/v1/Managers/1, apply time OnReset, version read from Manager.FirmwareVersion\n") {
		t.Errorf("basic: the BMC update does not target the Manager")
	}
	// crayex: the BMC's firmware is shared by both systems, flashed once.
	if !strings.Contains(out, "(shared by the BMC, flashed once by crayex/r1/node1)") || !strings.Contains(out, "(1 update of shared BMC components, each once)") {
		t.Errorf("crayex: the shared BMC firmware is not planned once")
	}
	if t.Failed() {
		t.Fatalf("plan:\n%s", out)
	}

	// Every server but basic has a non-updateable member, which the plan
	// does not decide on: from format 1.4 it records only the components
	// its release matches (BIOS, BMC) and counts and digests the rest, the
	// non-updateable member among them, in observed.others.
	code, js := e.run(t, "show", "-json", "plan.json")
	if code != 0 {
		t.Fatalf("show -json: exit %d\n%s", code, js)
	}
	var shown struct {
		Servers map[string]struct {
			Address   string `json:"address"`
			Inventory []struct {
				ID         string `json:"id"`
				Updateable bool   `json:"updateable"`
			} `json:"inventory"`
			Others *struct {
				Count  int    `json:"count"`
				SHA256 string `json:"sha256"`
			} `json:"inventory_others"`
			Steps []struct {
				Kind      string `json:"kind"`
				Component string `json:"component"`
				Method    string `json:"method"`
			} `json:"steps"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(js), &shown); err != nil {
		t.Fatalf("show -json: %v", err)
	}
	// The method chosen per server and component is recorded in each
	// update step, as apply will use it.
	methods := map[string]string{}
	for _, s := range shown.Servers {
		for _, st := range s.Steps {
			if st.Kind == "update" {
				methods[s.Address+" "+st.Component] = st.Method
			}
		}
	}
	for _, pc := range mixedProfiles {
		server := pc.profile + "/r1/" + pc.profile + "1"
		if pc.profile == "crayex" {
			server = "crayex/r1/node0"
		}
		want, _, _ := strings.Cut(pc.method, " ")
		want = strings.TrimSuffix(want, ",")
		if got := methods[server+" bios"]; got != want {
			t.Errorf("%s: show -json records method %q for the BIOS update, want %q", server, got, want)
		}
	}
	if m := methods["crayex/r1/node0 bmc"]; m != "" {
		t.Errorf("crayex/r1/node0 has a step for the shared BMC firmware (%s): node1 flashes it", m)
	}
	if m := methods["crayex/r1/node1 bmc"]; m != "simple_update" {
		t.Errorf("crayex/r1/node1: the shared BMC firmware's step has method %q", m)
	}
	for _, pc := range mixedProfiles {
		if pc.nonUpdateable == "" {
			continue
		}
		for _, s := range shown.Servers {
			if !strings.HasPrefix(s.Address, pc.profile+"/") {
				continue
			}
			for _, c := range s.Inventory {
				if c.ID == pc.nonUpdateable {
					t.Errorf("%s: the plan records %s, which no release component matches", s.Address, c.ID)
				}
			}
			if o := s.Others; o == nil || o.Count == 0 || len(o.SHA256) != 64 {
				t.Errorf("%s: the plan does not count the members it does not decide on (%s among them): %+v", s.Address, pc.nonUpdateable, o)
			}
			if len(s.Inventory) == 0 {
				t.Errorf("%s: the plan records none of the components its release matches", s.Address)
			}
		}
	}

	start := time.Now()
	code, out = e.run(t, "apply", "-allow-unsigned", "-no-color", "-state-dir", "st", "plan.json")
	took := time.Since(start)
	t.Logf("apply of the mixed fleet (7 servers, 6 BMCs) took %s", took.Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("apply: exit %d, want 0\n%s", code, out)
	}
	if !strings.Contains(out, "Apply complete: 7 servers upgraded, 0 failed, 0 skipped") {
		t.Errorf("apply did not upgrade all 7 servers:\n%s", out)
	}

	// The simulator's own counters: every component at its target, every
	// flash exactly once (on crayex, each system's BIOS once and the shared
	// BMC firmware once).
	for _, pc := range mixedProfiles {
		name := mf.bmc[pc.profile]
		st := mf.fleet.Stats(name)
		want := map[string]string{"BIOS": pc.to["BIOS"], "BMC": pc.to["BMC"]}
		wantFlashes := map[string]int{"BIOS": 1, "BMC": 1}
		if pc.profile == "crayex" {
			// Each system's BIOS is a member of its own.
			want = map[string]string{"Node0.BIOS": pc.to["BIOS"], "Node1.BIOS": pc.to["BIOS"], "BMC": pc.to["BMC"]}
			wantFlashes = map[string]int{"Node0.BIOS": 1, "Node1.BIOS": 1, "BMC": 1}
		}
		for comp, v := range want {
			if got := st.Versions[comp]; got != v {
				t.Errorf("%s (%s): %s is %q, want %q", pc.profile, name, comp, got, v)
			}
		}
		for comp, n := range wantFlashes {
			if st.Flashes[comp] != n {
				t.Errorf("%s (%s): %s flashed %d times, want %d (flashes %v, updates %d)", pc.profile, name, comp, st.Flashes[comp], n, st.Flashes, st.Updates)
			}
		}
		if st.Updates != 2 && !(pc.profile == "crayex" && st.Updates == 3) {
			t.Errorf("%s (%s): %d updates accepted", pc.profile, name, st.Updates)
		}
	}
	// Resetting one system of the crayex BMC never resets the other: each
	// node booted once, for its own BIOS.
	systems := mf.fleet.Stats(mf.bmc["crayex"]).Systems
	if len(systems) != 2 {
		t.Errorf("crayex: %d systems in the stats, want 2", len(systems))
	}
	for id, sys := range systems {
		if sys.Boots != 1 || sys.PowerState != "On" {
			t.Errorf("crayex %s: %d boots, power %s; want 1 and On", id, sys.Boots, sys.PowerState)
		}
	}
	if t.Failed() {
		t.Fatalf("apply:\n%s", out)
	}

	// Re-plan is clean: every server observed and at target.
	code, out = e.run(t, "plan", "-detailed-exitcode", "-no-color", mf.dir)
	if code != 0 {
		t.Fatalf("re-plan -detailed-exitcode: exit %d, want 0 (no changes)\n%s", code, out)
	}
	if !strings.Contains(out, "Plan: 0 servers to upgrade") {
		t.Errorf("re-plan:\n%s", out)
	}
}

// startSpecs serves specs at speed until the test ends (or the caller
// closes the fleet).
func startSpecs(t *testing.T, specs []sim.BMCSpec) *sim.Fleet {
	t.Helper()
	f, err := sim.New(sim.Options{Speed: 60000, Username: "admin", Password: e2ePassword}, specs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := f.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		f.Close()
	})
	return f
}

// TestApplyRefusesServerWhoseIdentityChanged: plan records each server's
// fingerprint (UUID, serial, manufacturer, model); when the machine behind
// a BMC address is another one by apply time (an RMA, a DHCP change: here
// the simulator restarts with another machine at s2's address), apply
// refuses that server before touching it, naming the serials, and the
// others proceed to their target.
func TestApplyRefusesServerWhoseIdentityChanged(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	octet := freeOctet(t, 60, 3)
	specs := func(second string) []sim.BMCSpec {
		var out []sim.BMCSpec
		for i, name := range []string{"bmc-0001", second, "bmc-0003"} {
			out = append(out, sim.BMCSpec{Name: name, Addr: fmt.Sprintf("127.77.%d.%d:18443", octet, i+1), PowerOn: true,
				Firmware: map[string]string{"BIOS": "2.70", "Runtime": "4.6.0"}})
		}
		return out
	}
	before := startSpecs(t, specs("bmc-0002"))
	planned := before.Identities("bmc-0002")
	dir := filepath.Join(t.TempDir(), "fleet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(e2eConfig(octet, 1, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newE2EEnv(t)
	if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}

	// Another machine answers at s2's BMC address.
	before.Close()
	after := startSpecs(t, specs("bmc-rma-0002"))
	now := after.Identities("bmc-rma-0002")
	if len(planned) == 0 || len(now) == 0 || planned[0].SerialNumber == now[0].SerialNumber {
		t.Fatalf("the replacement machine must have another serial: %+v → %+v", planned, now)
	}

	code, out := e.run(t, "apply", "-allow-unsigned", "-no-color", "-state-dir", "st", "plan.json")
	if code == 0 {
		t.Fatalf("apply exited 0 although a server was refused:\n%s", out)
	}
	refused := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "lab/r1/s2") && strings.Contains(line, "not touched") {
			refused = line
		}
	}
	if refused == "" || !strings.Contains(refused, planned[0].SerialNumber) || !strings.Contains(refused, now[0].SerialNumber) {
		t.Errorf("apply does not refuse s2 naming the planned serial %s and the one found %s:\n%s", planned[0].SerialNumber, now[0].SerialNumber, out)
	}
	if st := after.Stats("bmc-rma-0002"); st.Updates != 0 || len(st.Flashes) != 0 || st.Reimages != 0 || st.Resets != 0 {
		t.Errorf("the other machine at s2's address was touched: %d updates, flashes %v, %d reimages, %d resets", st.Updates, st.Flashes, st.Reimages, st.Resets)
	}
	for _, name := range []string{"bmc-0001", "bmc-0003"} {
		if v := after.Versions(name); v["BIOS"] != "2.80" || v["Runtime"] != "4.6.1" {
			t.Errorf("%s did not proceed to its target: %v", name, v)
		}
	}
	t.Logf("apply exited %d; %s", code, strings.TrimSpace(refused))
	if t.Failed() {
		t.Logf("apply:\n%s", out)
	}
}

// TestNonUpdateableMemberIsHeldBackNotFlashed: a release that needs a
// change on a member its BMC reports as not updateable (the DMTF capture's
// AC-RoT0, "Updateable": false) is a plan error naming the server and the
// member, never an apply failure; with -hold-back-errored the rest of the
// fleet is planned and applied, and the held-back BMC is never touched.
func TestNonUpdateableMemberIsHeldBackNotFlashed(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	images := imageServer(t)
	octet := freeOctet(t, 70, 2)
	f := startSpecs(t, []sim.BMCSpec{
		{Name: "bmc-rot", Addr: fmt.Sprintf("127.77.%d.1:18443", octet), Profile: sim.ProfileDMTF, PowerOn: true},
		{Name: "bmc-ami", Addr: fmt.Sprintf("127.77.%d.2:18443", octet), Profile: sim.ProfileAMI, PowerOn: true},
	})
	cfg := fmt.Sprintf(e2eFastConfig+`
release "dmtf" {
  version = "1.0.0"
  component "bios" {
    version = "P79 v1.46"
    scheme  = "vendor"
    image   = %q
    match {
      software_id = "BIOS"
    }
  }
  component "rot" {
    version = "1.12"
    scheme  = "dotted"
    image   = %q
    match {
      id = "AC-RoT0"
    }
  }
}

release "ami" {
  version = "1.0.0"
  component "bios" {
    version = "C28"
    scheme  = "vendor"
    image   = %q
    match {
      software_id = "BIOS"
    }
  }
}

cluster "a" {
  release  = release.dmtf
  strategy = strategy.fast
  rack "r1" {
    server "rot1" {
      bmc  = "http://127.77.%d.1:18443"
      role = "compute"
    }
  }
}

cluster "b" {
  release  = release.ami
  strategy = strategy.fast
  rack "r1" {
    server "ami1" {
      bmc  = "http://127.77.%d.2:18443"
      role = "compute"
    }
  }
}
`, imageURI(images, "BIOS", "P79 v1.46"), images+"/images/cpld-1.12.bin", imageURI(images, "BIOS", "C28"), octet, octet)
	dir := filepath.Join(t.TempDir(), "rot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newE2EEnv(t)
	code, out := e.run(t, "plan", "-detailed-exitcode", "-no-color", dir)
	if code != 1 || !strings.Contains(out, "a/r1/rot1") || !strings.Contains(out, "AC-RoT0") {
		t.Fatalf("plan: exit %d, want 1 naming a/r1/rot1 and AC-RoT0\n%s", code, out)
	}
	t.Logf("plan: %s", firstLineWith(out, "AC-RoT0"))

	code, out = e.run(t, "plan", "-detailed-exitcode", "-hold-back-errored", "-no-color", "-out", "plan.json", dir)
	if code != 2 || !strings.Contains(out, "~ b/r1/ami1  bios C27 → C28") {
		t.Fatalf("plan -hold-back-errored: exit %d, want 2 with ami1 planned\n%s", code, out)
	}
	if l := firstLineWith(out, "- a/r1/rot1"); !strings.Contains(l, "held back") || !strings.Contains(l, "AC-RoT0") {
		t.Errorf("the held-back server is not listed with its reason: %q\n%s", l, out)
	}
	code, out = e.run(t, "apply", "-allow-unsigned", "-no-color", "-state-dir", "st", "plan.json")
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	if st := f.Stats("bmc-rot"); st.Updates != 0 || len(st.Flashes) != 0 || st.Resets != 0 {
		t.Errorf("the held-back BMC was touched: %d updates, flashes %v, %d resets", st.Updates, st.Flashes, st.Resets)
	}
	if v := f.Versions("bmc-ami"); v["BIOS"] != "C28" {
		t.Errorf("the rest of the fleet was not upgraded: ami BIOS %q", v["BIOS"])
	}
}

// firstLineWith is the first line of out containing s.
func firstLineWith(out, s string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, s) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// TestImageDigestCheckedEndToEnd: a component's sha256 is recorded in the
// plan and checked at apply before a BMC gets the image, for a pull
// (SimpleUpdate: the URL must serve those bytes) and for a push
// (multipart: the bytes streamed): the images whose digest matches are
// flashed, the ones that do not are refused and their BMCs never receive
// an update.
func TestImageDigestCheckedEndToEnd(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	images := imageServer(t)
	body := strings.Repeat("firmware image\n", 256) // what imageServer serves
	good := fmt.Sprintf("%x", sha256.Sum256([]byte(body)))
	bad := fmt.Sprintf("%x", sha256.Sum256([]byte("another image")))
	octet := freeOctet(t, 80, 4)
	f := startSpecs(t, []sim.BMCSpec{
		{Name: "pull-ok", Addr: fmt.Sprintf("127.77.%d.1:18443", octet), Profile: sim.ProfileDMTF, PowerOn: true},
		{Name: "pull-bad", Addr: fmt.Sprintf("127.77.%d.2:18443", octet), Profile: sim.ProfileDMTF, PowerOn: true},
		{Name: "push-ok", Addr: fmt.Sprintf("127.77.%d.3:18443", octet), Profile: sim.ProfileOpenBMC, PowerOn: true},
		{Name: "push-bad", Addr: fmt.Sprintf("127.77.%d.4:18443", octet), Profile: sim.ProfileOpenBMC, PowerOn: true},
	})
	var cfg strings.Builder
	cfg.WriteString(e2eFastConfig)
	for i, c := range []struct{ name, profile, version, scheme, digest string }{
		{"pull-ok", "dmtf", "P79 v1.46", "vendor", good},
		{"pull-bad", "dmtf", "P79 v1.46", "vendor", bad},
		{"push-ok", "openbmc", "1.0.1", "dotted", good},
		{"push-bad", "openbmc", "1.0.1", "dotted", bad},
	} {
		fmt.Fprintf(&cfg, `
release %q {
  version = "1.0.0"
  component "bios" {
    version = %q
    scheme  = %q
    image   = %q
    sha256  = %q
    match {
      software_id = "BIOS"
    }
  }
}

cluster %q {
  release  = release.%s
  strategy = strategy.fast
  rack "r1" {
    server %q {
      bmc  = "http://127.77.%d.%d:18443"
      role = "compute"
    }
  }
}
`, strings.ReplaceAll(c.name, "-", "_"), c.version, c.scheme, imageURI(images, "BIOS", c.version), c.digest,
			c.name, strings.ReplaceAll(c.name, "-", "_"), c.name+"1", octet, i+1)
	}
	dir := filepath.Join(t.TempDir(), "digests")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newE2EEnv(t)
	code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", dir)
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "sha256 "+good) || !strings.Contains(out, "sha256 "+bad) {
		t.Errorf("plan does not show the digests:\n%s", out)
	}
	code, md := e.run(t, "show", "-format=markdown", "plan.json")
	if code != 0 || !strings.Contains(md, good) {
		t.Errorf("show -format=markdown: exit %d, the image digest not listed\n%s", code, md)
	}
	// A failed server pauses the run (its scope's threshold is breached):
	// one run per delivery, the matching image first.
	for i, round := range [][2]string{{"pull-ok", "pull-bad"}, {"push-ok", "push-bad"}} {
		planFile := fmt.Sprintf("plan-%d.json", i)
		if code, out := e.run(t, "plan", "-no-color", "-target", round[0], "-target", round[1], "-out", planFile, dir); code != 0 {
			t.Fatalf("plan %v: exit %d\n%s", round, code, out)
		}
		code, out := e.run(t, "apply", "-allow-unsigned", "-no-color", "-state-dir", fmt.Sprintf("st%d", i), planFile)
		if code == 0 {
			t.Errorf("apply of %v exited 0 although %s's image does not match its digest:\n%s", round, round[1], out)
		}
		name := round[1]
		if st := f.Stats(name); st.Updates != 0 || len(st.Flashes) != 0 || st.PushBytes != 0 {
			t.Errorf("%s got an image whose digest does not match: %d updates, %d bytes pushed, flashes %v", name, st.Updates, st.PushBytes, st.Flashes)
		}
		if l := firstLineWith(out, name+"1: failed"); !strings.Contains(l, "SHA-256") || !strings.Contains(l, bad) {
			t.Errorf("%s: apply does not say the digest differs: %q\n%s", name, l, out)
		} else {
			t.Logf("%s", l)
		}
	}
	for _, c := range []struct{ name, version string }{{"pull-ok", "P79 v1.46"}, {"push-ok", "1.0.1"}} {
		if v := f.Versions(c.name)["BIOS"]; v != c.version {
			t.Errorf("%s: BIOS %q, want %q (its image matches its digest)", c.name, v, c.version)
		}
	}
}
