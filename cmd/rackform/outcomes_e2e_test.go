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

// TestPlanSwitchBladeAnsweredNotUnreachable plans the Slingshot switch
// blade's controller (../shared capture, served unmodified) as a server.
// It answers every request but serves no ComputerSystem: plan says the
// BMC answered without one (GET /redfish/v1/Systems returned 404), and
// counts it so, while a server behind a closed port stays unreachable
// (rule 46).
func TestPlanSwitchBladeAnsweredNotUnreachable(t *testing.T) {
	blade := mockup.NewServer(t, testenv.Mockup(t, "csm/Slingshot_Switch_Blade"), mockup.Options{Username: "admin", Password: e2ePassword, Sessions: true})
	e := newE2EEnv(t)
	var cfg strings.Builder
	cfg.WriteString(`provider "redfish" {
  username           = "admin"
  password           = env("RACKFORM_SIM_PASSWORD")
  insecure           = true
  timeout            = "2s"
  retry_max_attempts = 1
}

release "r" {
  version = "1.0.0"
  component "bmc" {
    version = "1.0"
    scheme  = "vendor"
    image   = "https://127.0.0.1:9/bmc.bin"
    match {
      id = "BMC"
    }
  }
}
`)
	for name, bmc := range map[string]string{"blade": blade.URL, "gone": "https://127.0.0.1:1"} {
		fmt.Fprintf(&cfg, "\ncluster %q {\n  release = release.r\n  rack \"r1\" {\n    server \"%s-1\" {\n      bmc  = %q\n      role = \"compute\"\n    }\n  }\n}\n", name, name, bmc)
	}
	dir := filepath.Join(t.TempDir(), "blade")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := e.run(t, "plan", "-no-color", dir)
	if code != 1 {
		t.Fatalf("plan: exit %d, want 1 (no server of either cluster observed)\n%s", code, out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"1 of 2 servers whose BMC answered without what the plan needs",
		"blade/r1/blade-1 (BMC answered without what the plan needs: BMC https://127.0.0.1:",
		"the BMC answered, but has no ComputerSystem: GET /redfish/v1/Systems returned 404 Not Found",
		`None of the 1 in-scope servers of cluster "blade" could be observed (1 answered without what the plan needs), so nothing this plan would say about it is known. Fix what the warnings above say of its servers, or -exclude blade.`,
		"1 of 2 servers unreachable",
		`None of the 1 in-scope servers of cluster "gone" could be observed (1 unreachable), so nothing this plan would say about it is known. Restore access to its BMCs, or -exclude gone.`,
		"connection refused",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("plan does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(flat, "gone/r1/gone-1 (BMC answered") || strings.Contains(flat, "blade/r1/blade-1 (Server unreachable") {
		t.Errorf("a server is named for the other's outcome:\n%s", out)
	}
}
