package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/internal/testenv"
	"github.com/rackform/rackform/providers/mockup"
)

// devicesConfig is two racks of two compute servers, each rack with an
// NVLink-style switch tray and rack r1 with a switch blade's controller;
// the devices go before the servers. %d is the octet of the BMCs.
const devicesConfig = `
provider "redfish" {
  username           = "admin"
  password           = env("RACKFORM_SIM_PASSWORD")
  timeout            = "2s"
  poll_interval      = "10ms"
  retry_base_delay   = "5ms"
  retry_max_delay    = "20ms"
  retry_max_attempts = 3
  allow_http         = true
}

release "r" {
  version = "4.6.1"
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bios-2.80.bin"
    match {
      id = "BIOS"
    }
  }
  component "switch_bmc" {
    devices = ["switch_tray", "switch_blade"]
    version = "1.7.3"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bmc-1.7.3.bin"
    match {
      id    = "BMC"
      count = 1
    }
  }
}

strategy "fast" {
  verify_timeout   = "10s"
  shutdown_timeout = "2s"
  devices          = "before_servers"
  compute {
    wait_after_rack = "0s"
  }
}

cluster "lab" {
  release  = release.r
  strategy = strategy.fast
  rack "r2" {
    server "r2-s1" {
      bmc  = "http://127.77.%[1]d.21:18443"
      role = "compute"
    }
    device "r2-tray" {
      kind = "switch_tray"
      bmc  = "http://127.77.%[1]d.29:18443"
    }
    server "r2-s2" {
      bmc  = "http://127.77.%[1]d.22:18443"
      role = "compute"
    }
  }
  rack "r1" {
    device "r1-tray" {
      kind = "switch_tray"
      bmc  = "http://127.77.%[1]d.19:18443"
    }
    server "r1-s1" {
      bmc  = "http://127.77.%[1]d.11:18443"
      role = "compute"
    }
    server "r1-s2" {
      bmc  = "http://127.77.%[1]d.12:18443"
      role = "compute"
    }
    device "r1-blade" {
      kind = "switch_blade"
      bmc  = "http://127.77.%[1]d.18:18443"
    }
  }
}
`

// TestDevicesAppliedInRackOrder: rack members that are not servers (switch
// trays and a switch blade's controller, simulated by rackform sim from
// the configuration with the slingshot profile: no ComputerSystem) are
// planned, applied and planned again clean beside the servers. The plan
// gives each device one update and a wait for readiness and no host step;
// apply runs the devices phase rack by rack (r1, then r2) before any
// server starts, as devices = "before_servers" says; the re-plan has
// nothing to do.
func TestDevicesAppliedInRackOrder(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet) and work directory
	e := newE2EEnv(t)
	octet := freeOctet(t, 180, 1)
	dir := filepath.Join(e.work, "lab")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(fmt.Sprintf(devicesConfig, octet)), 0o644); err != nil {
		t.Fatal(err)
	}
	startSim(t, e, "sim", "-config", "lab", "-speed", "60000")

	code, out := e.run(t, "plan", "-detailed-exitcode", "-no-color", "-out", "plan.json", "lab")
	if code != 2 {
		t.Fatalf("plan: exit %d, want 2 (changes)\n%s", code, out)
	}
	for _, bad := range []string{"Error:", "not observed", "unreachable", "answered without"} {
		if strings.Contains(out, bad) {
			t.Fatalf("plan says %q\n%s", bad, out)
		}
	}
	_, js := e.run(t, "show", "-json", "plan.json")
	var show struct {
		Servers map[string]struct {
			Kind  string `json:"kind"`
			Steps []struct {
				Kind string `json:"kind"`
			} `json:"steps"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(js), &show); err != nil {
		t.Fatalf("show -json: %v\n%s", err, js)
	}
	for _, d := range []string{"lab/r1/r1-tray", "lab/r1/r1-blade", "lab/r2/r2-tray"} {
		s := show.Servers[d]
		var kinds []string
		for _, st := range s.Steps {
			kinds = append(kinds, st.Kind)
		}
		if s.Kind == "" || strings.Join(kinds, " ") != "update wait_ready" {
			t.Errorf("%s: kind %q, steps %v; want a device with an update and a wait_ready", d, s.Kind, kinds)
		}
	}

	applied := exec.Command(e.bin, "apply", "-allow-unsigned", "-json", "-state-dir", "st", "plan.json")
	applied.Dir, applied.Env = e.work, e.env
	var stream bytes.Buffer
	applied.Stdout, applied.Stderr = &stream, os.Stderr
	if err := applied.Run(); err != nil {
		t.Fatalf("apply: %v\n%s", err, stream.String())
	}
	// The order servers and devices started and ended in.
	var order []string
	sc := bufio.NewScanner(&stream)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Event *struct {
				ID, Kind, State string
			} `json:"event"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Event == nil || line.Event.Kind != "server" {
			continue
		}
		if st := line.Event.State; st == "running" || st == "completed" {
			order = append(order, line.Event.ID[strings.LastIndex(line.Event.ID, "/")+1:]+" "+st)
		}
	}
	at := func(what string) int {
		for i, x := range order {
			if x == what {
				return i
			}
		}
		t.Fatalf("%q never happened: %v", what, order)
		return -1
	}
	lastDevice := max(at("r1-tray completed"), at("r1-blade completed"), at("r2-tray completed"))
	for _, s := range []string{"r1-s1", "r1-s2", "r2-s1", "r2-s2"} {
		if at(s+" running") < lastDevice {
			t.Errorf("server %s started before the devices were done: %v", s, order)
		}
	}
	if at("r2-tray running") < max(at("r1-tray completed"), at("r1-blade completed")) {
		t.Errorf("rack r2's device started before rack r1's were done: %v", order)
	}
	t.Logf("apply order: %s", strings.Join(order, ", "))

	code, again := e.run(t, "plan", "-detailed-exitcode", "-no-color", "lab")
	if code != 0 {
		t.Fatalf("re-plan after apply: exit %d, want 0 (every server and device at target)\n%s", code, again)
	}
}

// bladeRelease is a release for the Slingshot switch blade's controller
// as a device: its running BMC image at BMC (scheme vendor orders the
// controller's release strings) and, as an operator might add it, its
// Bootloader, which the BMC marks not updateable.
const bladeRelease = `
provider "redfish" {
  username           = "admin"
  password           = env("RACKFORM_SIM_PASSWORD")
  insecure           = true
  timeout            = "2s"
  retry_max_attempts = 1
}

release "r" {
  version = "1.0.0"
  component "blade_bmc" {
    devices = ["switch_blade"]
    version = %q
    scheme  = "vendor"
    image   = "https://127.0.0.1:9/bmc-sc.bin"
    match {
      id    = "BMC"
      count = 1
    }
  }
  component "bootloader" {
    devices      = ["switch_blade"]
    version      = %q
    scheme       = "opaque"
    allow_change = true
    image        = "https://127.0.0.1:9/bootloader.bin"
    match {
      id = "Bootloader"
    }
  }
}

cluster "c" {
  release = release.r
  rack "r1" {
    device "blade-1" {
      kind = "switch_blade"
      bmc  = %q
    }
  }
}
`

// TestPlanSwitchBladeAsDevice plans the Slingshot switch blade's
// controller (../shared capture, served unmodified) as a device: at its
// target there is no change; a newer BMC version is exactly one update,
// of the running member BMC and not the Recovery image beside it, with a
// wait for readiness and no host step; the Bootloader, which the BMC marks
// not updateable, is never planned (a note at target, an error naming it
// when the release wants another version).
func TestPlanSwitchBladeAsDevice(t *testing.T) {
	const running, bootloader = "sc.1.7.2-118-slingshot-release.arm64.2022-04-11T09:19:12+00:00.735ee40", "1.4-sc-ros"
	blade := mockup.NewServer(t, testenv.Mockup(t, "csm/Slingshot_Switch_Blade"), mockup.Options{Username: "admin", Password: e2ePassword, Sessions: true})
	e := newE2EEnv(t)
	write := func(bmcVersion, bootVersion string) string {
		dir := filepath.Join(t.TempDir(), "blade")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(fmt.Sprintf(bladeRelease, bmcVersion, bootVersion, blade.URL)), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	code, out := e.run(t, "plan", "-detailed-exitcode", "-no-color", write(running, bootloader))
	if code != 0 || !strings.Contains(out, "skip: already at target") || !strings.Contains(out, `its BMC says it is not updateable`) {
		t.Errorf("at target: exit %d, want 0 (no changes), the device at target and a note on the bootloader\n%s", code, out)
	}
	for _, req := range blade.Log() {
		if strings.Contains(req, "/Systems") {
			t.Errorf("the device was read through the Systems collection: %s", req)
		}
	}

	newer := "sc.1.7.3-7-slingshot-release.arm64.2022-09-01T10:00:00+00:00.1a2b3c4"
	code, out = e.run(t, "plan", "-detailed-exitcode", "-no-color", "-out", "blade.plan", write(newer, bootloader))
	if code != 2 {
		t.Fatalf("newer BMC: exit %d, want 2 (changes)\n%s", code, out)
	}
	_, js := e.run(t, "show", "-json", "blade.plan")
	var show struct {
		Servers map[string]struct {
			Kind  string `json:"kind"`
			Steps []struct {
				Kind      string   `json:"kind"`
				Component string   `json:"component"`
				Members   []string `json:"members"`
				Targets   []string `json:"targets"`
				ApplyTime string   `json:"apply_time"`
			} `json:"steps"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(js), &show); err != nil {
		t.Fatalf("show -json: %v\n%s", err, js)
	}
	s := show.Servers["c/r1/blade-1"]
	if s.Kind != "switch_blade" || len(s.Steps) != 2 || s.Steps[0].Kind != "update" || s.Steps[1].Kind != "wait_ready" {
		t.Fatalf("device %+v: want one update and a wait_ready\n%s", s, out)
	}
	up := s.Steps[0]
	if up.Component != "blade_bmc" || strings.Join(up.Members, ",") != "BMC" || strings.Join(up.Targets, ",") != "/redfish/v1/UpdateService/FirmwareInventory/BMC" || up.ApplyTime == "OnReset" {
		// The capture lists no apply times: none is sent, and never a
		// reset's (a device has none).
		t.Errorf("update %+v: want the running member BMC only, never staged for a reset", up)
	}

	code, out = e.run(t, "plan", "-no-color", write(running, "1.5-sc-ros"))
	flat := strings.Join(strings.Fields(out), " ")
	if code != 1 || !strings.Contains(flat, "Component not updateable") || !strings.Contains(flat, `inventory member "Bootloader" as not updateable`) {
		t.Errorf("a new bootloader: exit %d, want 1 and the bootloader refused as not updateable\n%s", code, out)
	}
}
