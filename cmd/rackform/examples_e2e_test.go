package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startSimConfig runs `rackform sim -config DIR` (no other flags unless
// extra, such as -speed), as a user trying an example would, and waits for
// its ready line.
func startSimConfig(t *testing.T, e *e2eEnv, dir string, extra ...string) {
	t.Helper()
	cmd := exec.Command(e.bin, append([]string{"sim", "-config", dir}, extra...)...)
	cmd.Dir, cmd.Env = e.work, e.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.Contains(sc.Text(), ": ready: ") {
				ready <- sc.Text()
			}
		}
		exited <- cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	select {
	case line := <-ready:
		t.Log(line)
	case err := <-exited:
		if strings.Contains(stderr.String(), "address already in use") {
			// The example's own addresses are taken: another run of this
			// test, or a user's `rackform sim -config` of the example.
			t.Skipf("the example's BMC addresses are in use by another process:\n%s", stderr.String())
		}
		t.Fatalf("rackform sim -config %s exited before it was ready (%v):\n%s", dir, err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("rackform sim -config %s not ready within 30s:\n%s", dir, stderr.String())
	}
}

var planSummaryRe = regexp.MustCompile(`(?m)^Plan: (\d+ servers(?: and \d+ devices)?) to upgrade in \d+ racks, 0 skipped`)

// TestEveryExamplePlansAgainstSimConfig: every configuration in examples/
// plans against `rackform sim -config examples/X`, with no flags on
// either side but the password in the environment: no error, every
// server observed (the simulator serves each at its bmc address, in each
// component's own version format, the runtime under the release's
// software_id), and every server to upgrade, since the simulator starts
// each just behind its release. Examples added later are covered too.
func TestEveryExamplePlansAgainstSimConfig(t *testing.T) {
	entries, err := os.ReadDir(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ent := range entries {
		if !ent.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(examplesDir, ent.Name(), "*.rf.hcl"))
		if len(files) == 0 {
			continue
		}
		n++
		t.Run(ent.Name(), func(t *testing.T) {
			e := newE2EEnv(t)
			// The examples read the BMC password from the environment under
			// their own names; the simulator takes RACKFORM_SIM_PASSWORD.
			e.env = append(e.env, "RACKFORM_BMC_PASSWORD="+e2ePassword, "RACKFORM_VAR_bmc_password="+e2ePassword)
			dir := filepath.Join(e.work, ent.Name())
			if err := copyDir(filepath.Join(examplesDir, ent.Name()), dir); err != nil {
				t.Fatal(err)
			}
			startSimConfig(t, e, ent.Name())
			code, out := e.run(t, "plan", "-detailed-exitcode", "-no-color", ent.Name())
			if code != 2 {
				t.Fatalf("plan %s: exit %d, want 2 (changes, no error)\n%s", ent.Name(), code, out)
			}
			for _, bad := range []string{"Error:", "not observed", "Undecidable", "Component not found"} {
				if strings.Contains(out, bad) {
					t.Errorf("plan %s says %q", ent.Name(), bad)
				}
			}
			m := planSummaryRe.FindStringSubmatch(out)
			if m == nil {
				t.Errorf("plan %s does not upgrade every server", ent.Name())
			} else {
				t.Logf("%s: %s to upgrade", ent.Name(), m[1])
			}
			if t.Failed() {
				t.Logf("plan:\n%s", out)
			}
		})
	}
	if n < 3 {
		t.Fatalf("only %d examples found in %s", n, examplesDir)
	}
}

// TestFleetExampleMultiNodeChassis: the fleet example's multi-node chassis
// (two servers on one BMC, each naming its node) plans each node's BIOS on
// its own server and the BMC's shared firmware once.
func TestFleetExampleMultiNodeChassis(t *testing.T) {
	e := newE2EEnv(t)
	e.env = append(e.env, "RACKFORM_VAR_bmc_password="+e2ePassword)
	if err := copyDir(filepath.Join(examplesDir, "fleet"), filepath.Join(e.work, "fleet")); err != nil {
		t.Fatal(err)
	}
	startSimConfig(t, e, "fleet")
	code, out := e.run(t, "plan", "-no-color", "fleet")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"~ west/w01/w01-n0  bios P79 v1.45 → P79 v1.46, bmc 1.46.455b66-rev0 → 1.46.455b66-rev1 (shared by the BMC, flashed once by west/w01/w01-n1)",
		"update bios: simple_update HTTPS, targets /redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS, apply time OnReset\n",
		"update bios: simple_update HTTPS, targets /redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS, apply time OnReset\n",
		"update bmc: simple_update HTTPS, targets /redfish/v1/UpdateService/FirmwareInventory/BMC, apply time Immediate, once west/w01/w01-n0 is shut down (shared by the BMC)\n",
		"(1 update of shared BMC components, each once)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan does not show %q", want)
		}
	}
	if strings.Count(out, "system Node0") != 1 || strings.Count(out, "system Node1") != 1 {
		t.Errorf("each node is not its own server")
	}
	if t.Failed() {
		t.Log(fmt.Sprintf("plan:\n%s", out))
	}
}
