package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/internal/testenv"
	"github.com/rackform/rackform/providers/mockup"
)

// mockupCapture is one real Redfish service tree among the public captures
// in ../shared/redfish-mockups (DMTF's Redfish-Publications and Cray-HPE's
// csm-redfish-interface-emulator; read there at test time, never copied
// into the repository), and a release for it: the next version of what the
// capture reports, in the capture's own format.
type mockupCapture struct {
	dir    string // under ../shared/redfish-mockups
	system string // the server's system, where the BMC serves several
	// images is the scheme of the image URLs ("https" unless the BMC
	// takes only HTTP or FTP).
	images string
	// comps are the release's components: name, match id, target
	// version and scheme.
	comps [][4]string
	// want are lines plan must print for this server.
	want []string
}

var mockupCaptures = []mockupCapture{
	{dir: "dmtf/public-rackmount1", comps: [][4]string{
		{"bios", "BIOS", "P79 v1.46", "vendor"},
		{"bmc", "BMC", "1.46.455b66-rev1", "vendor"},
	}, want: []string{"bios P79 v1.45 → P79 v1.46, bmc 1.45.455b66-rev4 → 1.46.455b66-rev1"}},
	{dir: "dmtf/public-liquid-cooled-server", comps: [][4]string{
		{"bios", "BIOS", "P79 v1.46", "vendor"},
		{"storage", "SS", "2.50", "dotted"},
	}, want: []string{"bios P79 v1.45 → P79 v1.46"}},
	{dir: "csm/DL325", comps: [][4]string{
		{"bios", "2", "A43 v2.60 (03/01/2022)", "vendor"},
		{"bmc", "1", "2.55 Oct 01 2021", "vendor"},
		{"ipa", "3", "9.1.0 Build 36", "vendor"},
	}, want: []string{"bios A43 v2.52 (10/29/2021) → A43 v2.60 (03/01/2022), bmc 2.46 May 11 2021 → 2.55 Oct 01 2021", "serial MXQ019020B"}},
	{dir: "csm/XL675d_A40", comps: [][4]string{
		{"bios", "2", "A47 v2.60 (03/01/2022)", "vendor"},
		{"bmc", "1", "2.60 Feb 01 2022", "vendor"},
		{"ipa", "3", "9.1.0 Build 27", "vendor"},
	}, want: []string{"bios A47 v2.52 (10/29/2021) → A47 v2.60 (03/01/2022), bmc 2.55 Oct 01 2021 → 2.60 Feb 01 2022"}},
	{dir: "csm/Gigabyte", images: "http", comps: [][4]string{
		{"bios", "BIOS", "C28", "vendor"},
		{"bmc", "BMC", "12.84.14", "dotted"},
	}, want: []string{"bios C27 → C28, bmc 12.84.13 → 12.84.14", "update bios: simple_update HTTP, no apply time (the BMC lists no apply times for simple_update; it applies the image as it does by default)\n"}},
	{dir: "csm/OpenBMC-stock", comps: [][4]string{
		{"bmc", "5d0869c4", "2.16.0", "semver"},
	}, want: []string{"bmc 2.15.0-dev-686-g100c36de90 → 2.16.0", "update bmc: multipart_push, targets /redfish/v1/UpdateService/FirmwareInventory/5d0869c4, no apply time (the BMC lists no apply times for multipart_push; it applies the image as it does by default)\n"}},
	{dir: "csm/EX235a", system: "Node0", comps: [][4]string{
		{"bios", "Node0.BIOS", "ex235a.bios-1.3.7", "vendor"},
		{"bmc", "BMC", "nc.1.6.17-0-gabcdef", "vendor"},
	}, want: []string{"bios ex235a.bios-1.3.6 → ex235a.bios-1.3.7, bmc nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff → nc.1.6.17-0-gabcdef", "update bios: simple_update HTTPS, targets /redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS, no apply time (the BMC lists no apply times for simple_update; it applies the image as it does by default)\n"}},
}

// TestPlanAgainstRealCaptures: rackform plan (the real binary, the redfish
// provider out of process) against real BMCs' Redfish trees served file for
// file by a static mockup server (no simulator logic in between) plans
// without error: every version string the captures report is decided, the
// update method is chosen from what each service advertises, the EX235a
// blade's node is named by system, and no server is left unobserved.
func TestPlanAgainstRealCaptures(t *testing.T) {
	testenv.MockupsDir(t) // skips, naming what to install, where the captures are absent
	servers := map[string]*mockup.Server{}
	var cfg strings.Builder
	cfg.WriteString(`provider "redfish" {
  username           = "admin"
  password           = env("RACKFORM_SIM_PASSWORD")
  insecure           = true
  timeout            = "5s"
  retry_max_attempts = 1
}
`)
	for i, mc := range mockupCaptures {
		dir := testenv.Mockup(t, mc.dir)
		s := mockup.NewServer(t, dir, mockup.Options{Username: "admin", Password: e2ePassword, Sessions: true})
		servers[mc.dir] = s
		name := fmt.Sprintf("m%d", i+1)
		fmt.Fprintf(&cfg, "\nrelease %q {\n  version = \"1.0.0\"\n", name)
		scheme := mc.images
		if scheme == "" {
			scheme = "https"
		}
		for _, c := range mc.comps {
			fmt.Fprintf(&cfg, "  component %q {\n    version = %q\n    scheme  = %q\n    image   = \"%s://127.0.0.1:9/%s.bin\"\n    match {\n      id = %q\n    }\n  }\n", c[0], c[2], c[3], scheme, c[0], c[1])
		}
		fmt.Fprintf(&cfg, "}\n\ncluster %q {\n  release = release.%s\n  rack \"r1\" {\n    server %q {\n      bmc  = %q\n      role = \"compute\"\n", name, name, strings.ReplaceAll(filepath.Base(mc.dir), "_", "-"), s.URL)
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
	e := newE2EEnv(t)
	code, out := e.run(t, "plan", "-detailed-exitcode", "-no-color", dir)
	if code != 2 {
		t.Fatalf("plan -detailed-exitcode: exit %d, want 2 (changes, no error)\n%s", code, out)
	}
	for _, bad := range []string{"Error:", "Undecidable", "not observed"} {
		if strings.Contains(out, bad) {
			t.Errorf("plan says %q", bad)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("Plan: %d servers to upgrade", len(mockupCaptures))) {
		t.Errorf("plan does not upgrade every captured server")
	}
	for _, mc := range mockupCaptures {
		for _, w := range mc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: plan does not show %q", mc.dir, w)
			}
		}
		if servers[mc.dir].Requests() == 0 {
			t.Errorf("%s: never read", mc.dir)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("plan:\n%s", out)
	}
}
