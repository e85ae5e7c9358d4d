package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rackform/rackform/internal/testenv"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers/mockup"
)

// memberComp is one release component against a capture: its match rule
// and version scheme (HCL), the version the capture runs and a newer one,
// and the members each update of a plan to the newer one must be for.
type memberComp struct {
	name, match, scheme string
	at, newer           string
	steps               [][]string
}

// memberCapture is one public capture of ../shared/redfish-mockups.
type memberCapture struct {
	dir, system string
	// images is the scheme of the image URLs ("https" unless the BMC
	// takes only HTTP or FTP).
	images string
	comps  []memberComp
}

const (
	dotted = `scheme = "dotted"`
	vendor = `scheme = "vendor"`
	// lenovoVersion reads XCC's "<build>-<version>" ("22J-1.51").
	lenovoVersion = `version_pattern = "[0-9A-Z]{3}-(\\d+)\\.(\\d+)"`
)

func gpus() []string {
	var out []string
	for i := 1; i <= 8; i++ {
		out = append(out, fmt.Sprintf("HGX_FW_GPU_SXM_%d", i))
	}
	return out
}

// memberCaptures: every vendor folder, each component by a rule a user
// would write, its at-target version as the capture reports it.
var memberCaptures = []memberCapture{
	{dir: "dmtf/public-rackmount1", comps: []memberComp{
		{"bios", `id = "BIOS"`, vendor, "P79 v1.45", "P79 v1.46", [][]string{{"BIOS"}}},
		{"bmc", `id = "BMC"`, vendor, "1.45.455b66-rev4", "1.46.455b66-rev1", [][]string{{"BMC"}}},
	}},
	{dir: "dmtf/public-liquid-cooled-server", comps: []memberComp{
		{"bios", `id = "BIOS"`, vendor, "P79 v1.45", "P79 v1.46", [][]string{{"BIOS"}}},
	}},
	{dir: "csm/DL325", comps: []memberComp{
		{"bios", `name = "*System ROM"`, vendor, "A43 v2.52 (10/29/2021)", "A43 v2.60 (03/01/2022)", [][]string{{"2"}}},
		{"bmc", `name = "iLO 5"`, vendor, "2.46 May 11 2021", "2.55 Oct 01 2021", [][]string{{"1"}}},
	}},
	{dir: "csm/XL675d_A40", comps: []memberComp{
		{"bios", `name = "*System ROM"`, vendor, "A47 v2.52 (10/29/2021)", "A47 v2.60 (03/01/2022)", [][]string{{"2"}}},
		{"bmc", `name = "iLO 5"`, vendor, "2.55 Oct 01 2021", "2.60 Feb 01 2022", [][]string{{"1"}}},
	}},
	{dir: "csm/EX235a", system: "Node0", comps: []memberComp{
		{"bios", `id = "Node0.BIOS"`, vendor, "ex235a.bios-1.3.6", "ex235a.bios-1.3.7", [][]string{{"Node0.BIOS"}}},
		{"bmc", `id = "BMC"`, vendor, "nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff", "nc.1.6.17-0-gabcdef", [][]string{{"BMC"}}},
	}},
	{dir: "csm/Gigabyte", images: "http", comps: []memberComp{
		{"bios", `id = "BIOS"`, vendor, "C27", "C28", [][]string{{"BIOS"}}},
		{"bmc", `id = "BMC"`, dotted, "12.84.13", "12.84.14", [][]string{{"BMC"}}},
	}},
	{dir: "csm/OpenBMC-stock", comps: []memberComp{
		{"bmc", `id = "5d0869c4"`, `scheme = "semver"`, "2.15.0-dev-686-g100c36de90", "2.16.0", [][]string{{"5d0869c4"}}},
	}},
	// Dell: the rollback and available images share the running one's
	// SoftwareId; two LOM ports are two members of one.
	{dir: "dell/R750", comps: []memberComp{
		{"bios", `software_id = "159"`, dotted, "1.8.2", "1.13.2", [][]string{{"Installed-159-1.8.2__BIOS.Setup.1-1"}}},
		{"idrac", `software_id = "25227"`, dotted, "6.00.30.00", "7.10.30.00", [][]string{{"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1"}}},
		{"lom", `software_id = "108255"`, dotted, "21.80.9", "22.00.6", [][]string{{"Installed-108255-21.80.9__NIC.Embedded.1-1-1", "Installed-108255-21.80.9__NIC.Embedded.2-1-1"}}},
	}},
	// Lenovo: the UEFI and XCC read from their running members, beside a
	// pending placeholder and a standby backup named alike.
	{dir: "lenovo/SR670V2", comps: []memberComp{
		{"uefi", `name = "Firmware:UEFI"`, lenovoVersion, "22J-1.51", "32E-3.20", [][]string{{"UEFI"}}},
		{"xcc", `name = "Firmware:BMC"`, lenovoVersion, "42S-2.83", "56D-5.10", [][]string{{"BMC-Primary"}}},
		{"bluefield", `id = "Slot_15.Bundle"`, dotted, "24.41.1000", "24.42.1000", [][]string{{"Slot_15.Bundle"}}},
	}},
	// Supermicro HGX: eight GPUs, one rule, one SimpleUpdate naming all.
	{dir: "supermicro/SYS-821GE-TNHR", comps: []memberComp{
		{"bios", `id = "BIOS"`, `version_pattern = "BIOS Date: [0-9/]+ Ver (\\d+)\\.(\\d+)"`, "BIOS Date: 08/04/2023 Ver 1.4", "BIOS Date: 03/22/2024 Ver 2.1", [][]string{{"BIOS"}}},
		{"bmc", `name = "BMC*"`, dotted, "11.01.01", "11.02.01", [][]string{{"BMC"}}},
		{"gpu", "software_id = \"0x0020\"\n      count       = 8", dotted, "96.00.61.00.01", "96.00.89.00.01", [][]string{gpus()}},
		{"hgx", `software_id = "0x0010"`, `version_pattern = "HGX-(\\d+)\\.(\\d+)-(\\d+)-rc(\\d+)"`, "HGX-22.10-1-rc34", "HGX-22.10-1-rc57", [][]string{{"HGX_FW_BMC_0"}}},
	}},
}

// membersConfig writes a configuration with one server per capture, its
// release at the capture's versions (at) or the newer ones.
func membersConfig(t *testing.T, servers map[string]*mockup.Server, at bool) string {
	t.Helper()
	var cfg strings.Builder
	cfg.WriteString(`provider "redfish" {
  username           = "admin"
  password           = env("RACKFORM_SIM_PASSWORD")
  insecure           = true
  timeout            = "5s"
  retry_max_attempts = 1
}
`)
	for i, mc := range memberCaptures {
		name := fmt.Sprintf("m%d", i+1)
		fmt.Fprintf(&cfg, "\nrelease %q {\n  version = \"1.0.0\"\n", name)
		scheme := mc.images
		if scheme == "" {
			scheme = "https"
		}
		for _, c := range mc.comps {
			v := c.newer
			if at {
				v = c.at
			}
			fmt.Fprintf(&cfg, "  component %q {\n    version = %q\n    %s\n    image   = \"%s://127.0.0.1:9/%s.bin\"\n    match {\n      %s\n    }\n  }\n", c.name, v, c.scheme, scheme, c.name, c.match)
		}
		fmt.Fprintf(&cfg, "}\n\ncluster %q {\n  release = release.%s\n  rack \"r1\" {\n    server %q {\n      bmc  = %q\n      role = \"compute\"\n", name, name, serverName(mc), servers[mc.dir].URL)
		if mc.system != "" {
			fmt.Fprintf(&cfg, "      system = %q\n", mc.system)
		}
		cfg.WriteString("    }\n  }\n}\n")
	}
	dir := filepath.Join(t.TempDir(), "captures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func serverName(mc memberCapture) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(filepath.Base(mc.dir)))
}

// showJSON is the part of show -json the test reads.
type showJSON struct {
	PlanFormat string `json:"plan_format_version"`
	Servers    map[string]struct {
		Action    string `json:"action"`
		Reason    string `json:"reason"`
		Auth      string `json:"auth"`
		Inventory []struct {
			ID, Version, State string
			StateSign          string `json:"state_sign"`
		} `json:"inventory"`
		Changes []struct {
			Component, From, To string
			Members, Moving     int
		} `json:"changes"`
		Steps []struct {
			Kind, Component string
			Members         []string
			Targets         []string
			ApplyTime       string `json:"apply_time"`
			ApplyTimeFrom   string `json:"apply_time_from"`
			Count           int
		} `json:"steps"`
	} `json:"servers"`
}

// TestPlanMembersOfEveryCapture runs rackform plan (the real binary, the
// redfish provider out of process) against every capture in
// ../shared/redfish-mockups, served unmodified by providers/mockup: with
// each release at what the capture runs, nothing is planned (no rollback,
// staged or standby copy read as the running firmware); with newer
// releases, each component's updates are for exactly the members that
// run (all eight GPUs in one request, both LOM ports, never the copies),
// each with the apply time the BMC lists or none, and show -json records
// each member's state. The table of what was read and planned is logged
// (go test -v).
func TestPlanMembersOfEveryCapture(t *testing.T) {
	servers := map[string]*mockup.Server{}
	for _, mc := range memberCaptures {
		servers[mc.dir] = mockup.NewServer(t, testenv.Mockup(t, mc.dir), mockup.Options{Username: "admin", Password: e2ePassword, Sessions: true})
	}
	e := newE2EEnv(t)

	atDir := membersConfig(t, servers, true)
	code, out := e.run(t, "plan", "-detailed-exitcode", "-no-color", atDir)
	if code != 0 {
		t.Errorf("plan with every release at what the captures run: exit %d, want 0 (no changes)\n%s", code, out)
	}
	if n := strings.Count(out, "skip: already at target"); n != len(memberCaptures) {
		t.Errorf("%d servers at target, want %d:\n%s", n, len(memberCaptures), out)
	}

	newDir := membersConfig(t, servers, false)
	code, out = e.run(t, "plan", "-detailed-exitcode", "-no-color", "-out", "plan.json", newDir)
	if code != 2 {
		t.Fatalf("plan to newer releases: exit %d, want 2 (changes)\n%s", code, out)
	}
	for _, want := range []string{
		"members of bios: Installed-159-1.8.2__BIOS.Setup.1-1 1.8.2; not compared: Current-159-1.8.2__BIOS.Setup.1-1 1.8.2 available, Previous-159-1.2.4__BIOS.Setup.1-1 1.2.4 previous",
		"gpu 96.00.61.00.01 → 96.00.89.00.01 (8 members)",
		"members of uefi: UEFI 22J-1.51; not compared: UEFI-Pending (no version) pending",
		"members of xcc: BMC-Primary 42S-2.83; not compared: BMC-Backup 42S-2.83 standby, BMC-Primary-Pending -* pending",
		"bios 1.8.2 → 1.13.2, idrac 6.00.30.00 → 7.10.30.00, lom 21.80.9 → 22.00.6 (2 members)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan does not show %q", want)
		}
	}
	for _, bad := range []string{"1.2.4 → ", "Undecidable", "not observed", "Error:"} {
		if strings.Contains(out, bad) {
			t.Errorf("plan says %q", bad)
		}
	}
	code, js := e.run(t, "show", "-json", "plan.json")
	if code != 0 {
		t.Fatalf("show -json: exit %d\n%s", code, js)
	}
	var show showJSON
	if err := json.Unmarshal([]byte(js), &show); err != nil {
		t.Fatal(err)
	}
	if show.PlanFormat != plan.FormatVersion {
		t.Errorf("plan format %s, want %s", show.PlanFormat, plan.FormatVersion)
	}
	var table strings.Builder
	for i, mc := range memberCaptures {
		addr := fmt.Sprintf("m%d/r1/%s", i+1, serverName(mc))
		s, ok := show.Servers[addr]
		if !ok {
			t.Errorf("%s: not in the plan", mc.dir)
			continue
		}
		if s.Action != "upgrade" || s.Auth != "session" {
			t.Errorf("%s: %s (%s), auth %q; want an upgrade over a session", mc.dir, s.Action, s.Reason, s.Auth)
		}
		fmt.Fprintf(&table, "\n%s (%s):\n", mc.dir, addr)
		for _, c := range mc.comps {
			var got [][]string
			for _, st := range s.Steps {
				if st.Kind == "update" && st.Component == c.name {
					got = append(got, st.Members)
					if len(st.Targets) > 0 && len(st.Targets) != len(st.Members) {
						t.Errorf("%s %s: %d targets for %d members", mc.dir, c.name, len(st.Targets), len(st.Members))
					}
					at := st.ApplyTime
					if at == "" {
						at = "none sent"
					}
					fmt.Fprintf(&table, "  %-9s step: %d member(s), %d target(s), apply time %s (%s)\n", c.name, len(st.Members), len(st.Targets), at, st.ApplyTimeFrom)
				}
			}
			if !slices.EqualFunc(got, c.steps, slices.Equal[[]string]) {
				t.Errorf("%s %s: updates for %v, want %v", mc.dir, c.name, got, c.steps)
			}
		}
		for _, m := range s.Inventory {
			fmt.Fprintf(&table, "    read %-50s %-9s %-32q %s\n", m.ID, m.State, m.Version, m.StateSign)
		}
		for _, ch := range s.Changes {
			fmt.Fprintf(&table, "    change %s %s → %s: %d of %d members\n", ch.Component, ch.From, ch.To, ch.Moving, ch.Members)
		}
	}
	t.Logf("what each capture's plan read and does:%s", table.String())
	if t.Failed() {
		t.Logf("plan:\n%s", out)
	}
}

// basicDell adds a BMC's write side around the unmodified Dell R750
// capture, as a BMC that wants Basic credentials on the session request
// itself (sushy-emulator with an auth file) would behave: a session
// request without them is refused (401) while every request with Basic
// credentials is served; SimpleUpdate stages the BIOS image, which the
// next power-on makes the running BIOS; resets change the power state.
type basicDell struct {
	mu      sync.Mutex
	srv     *mockup.Server
	dir     string
	power   string
	staged  string
	bios    string
	updates []string // SimpleUpdate bodies
}

const (
	dellSystem = "/redfish/v1/Systems/System.Embedded.1"
	dellBIOS   = "/redfish/v1/UpdateService/FirmwareInventory/Installed-159-1.8.2__BIOS.Setup.1-1"
)

func (d *basicDell) intercept(w http.ResponseWriter, r *http.Request) bool {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if r.Method == http.MethodPost && p == mockup.SessionsURI {
		if _, _, ok := r.BasicAuth(); !ok {
			mockup.WriteError(w, http.StatusUnauthorized, "Base.1.8.InsufficientPrivilege", "Basic credentials are required.")
			return true
		}
		return false
	}
	overlay := map[string]func(map[string]any){
		dellSystem: func(doc map[string]any) { doc["PowerState"] = d.power; doc["BiosVersion"] = d.bios },
		dellBIOS:   func(doc map[string]any) { doc["Version"] = d.bios },
	}
	switch {
	case r.Method == http.MethodPost && (p == dellSystem+"/Actions/ComputerSystem.Reset" || p == "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"):
		if !d.srv.Authorized(r) {
			mockup.WriteError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "Not authorized.")
			return true
		}
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		d.mu.Lock()
		if strings.HasSuffix(p, "SimpleUpdate") {
			d.updates = append(d.updates, string(raw))
			d.staged = "1.13.2"
		} else {
			switch body["ResetType"] {
			case "On":
				d.power = "On"
				if d.staged != "" {
					d.bios, d.staged = d.staged, ""
				}
			case "GracefulShutdown", "ForceOff":
				d.power = "Off"
			}
		}
		d.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return true
	case r.Method == http.MethodGet && overlay[p] != nil:
		if !d.srv.Authorized(r) {
			mockup.WriteError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "Not authorized.")
			return true
		}
		b, err := os.ReadFile(d.srv.File(p))
		var doc map[string]any
		if err != nil || json.Unmarshal(b, &doc) != nil {
			return false
		}
		d.mu.Lock()
		overlay[p](doc)
		d.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
		return true
	}
	return false
}

// TestBasicBMCPlannedAndApplied: a BMC that refuses the session request
// but takes Basic authentication (the real Dell R750 capture behind such a
// front) is planned (one session request, refused; one Basic read decides)
// and applied with Basic auth on every request, never a session: its BIOS
// is shut down, updated with the apply time the BMC lists, powered on,
// and read back at the target from its running member.
func TestBasicBMCPlannedAndApplied(t *testing.T) {
	d := &basicDell{power: "On", bios: "1.8.2"}
	d.srv = mockup.NewServer(t, testenv.Mockup(t, "dell/R750"), mockup.Options{Username: "admin", Password: e2ePassword, Sessions: true, Intercept: d.intercept})
	cfg := fmt.Sprintf(`provider "redfish" {
  username      = "admin"
  password      = env("RACKFORM_SIM_PASSWORD")
  insecure      = true
  timeout       = "5s"
  poll_interval = "50ms"
}

release "r" {
  version = "1.0.0"
  component "bios" {
    version = "1.13.2"
    scheme  = "dotted"
    image   = "https://127.0.0.1:9/bios.bin"
    match {
      software_id = "159"
    }
  }
}

cluster "c" {
  release = release.r
  rack "r1" {
    server "r750" {
      bmc  = %q
      role = "compute"
    }
  }
}
`, d.srv.URL)
	dir := filepath.Join(t.TempDir(), "basic")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newE2EEnv(t)
	code, out := e.run(t, "plan", "-detailed-exitcode", "-no-color", "-out", "plan.json", dir)
	if code != 2 || !strings.Contains(out, "auth: Basic") || !strings.Contains(out, "update bios: simple_update HTTPS, apply time OnReset") {
		t.Fatalf("plan: exit %d, want 2 with the BIOS update over Basic auth\n%s", code, out)
	}
	planned := count(d.srv.Log(), "POST "+mockup.SessionsURI)
	if planned != 1 {
		t.Errorf("plan made %d session requests, want 1 (refused, then Basic)", planned)
	}
	planOut := out
	code, out = e.run(t, "apply", "-allow-unsigned", "-no-color", "plan.json")
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	if testing.Verbose() {
		t.Logf("plan:\n%s\napply:\n%s", planOut, out)
	}
	if n := count(d.srv.Log(), "POST "+mockup.SessionsURI); n != planned {
		t.Errorf("apply made %d session requests, want none: the plan says Basic", n-planned)
	}
	if n := count(d.srv.Log(), "DELETE "); n != 0 || d.srv.OpenSessions() != 0 {
		t.Errorf("%d logouts, %d sessions open: a Basic BMC has none", n, d.srv.OpenSessions())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.updates) != 1 || !strings.Contains(d.updates[0], `"@Redfish.OperationApplyTime":"OnReset"`) || d.bios != "1.13.2" || d.power != "On" {
		t.Errorf("updates %q, BIOS %s, power %s: want one SimpleUpdate with OnReset, the BIOS at 1.13.2 and the server on", d.updates, d.bios, d.power)
	}
}

func count(log []string, prefix string) int {
	n := 0
	for _, l := range log {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}
