package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/providers/sim"
)

// stagedRelease upgrades one compute server's BIOS, staged for the next
// reset (OnReset), its NIC at once (Immediate) and its runtime image (the
// reimage boots it: the reset that applies the BIOS), with remediation
// triggers watching the wait for readiness.
const stagedRelease = e2eProvider + `
release "r" {
  version = "4.6.1"
  component "bios" {
    version    = "2.80"
    scheme     = "dotted"
    image      = "http://127.0.0.1:9/bios-2.80.bin"
    apply_time = "OnReset"
    match {
      id = "BIOS"
    }
  }
  component "nic" {
    version    = "3.1"
    scheme     = "dotted"
    image      = "http://127.0.0.1:9/nic-3.1.bin"
    apply_time = "Immediate"
    match {
      id = "NIC"
    }
  }
  component "runtime" {
    kind    = "runtime"
    version = "4.6.1"
    image   = "http://127.0.0.1:9/runtime-4.6.1.iso"
    match {
      id = "Runtime"
    }
  }
}

strategy "fast" {
  verify_timeout   = "5s"
  drain_timeout    = "2s"
  shutdown_timeout = "2s"
  remediation_triggers {
    provisioning         = "3s"
    read_only_filesystem = "800ms"
    unknown_state        = "800ms"
  }
  compute {
    wait_after_rack = "0s"
  }
}

cluster "lab" {
  release  = release.r
  strategy = strategy.fast
  rack "r1" {
    server "s1" {
      bmc  = "http://127.77.%d.1:18443"
      role = "compute"
    }
  }
}
`

// TestStagedUpdateLostWithBMCRestart (issue 33, item 1): the real binary
// and its plugin against a simulated BMC that restarts during the NIC's
// flash, after the BIOS was staged for the next reset. The NIC's update,
// whose task vanished, is sent once more and takes. When the restart
// keeps the staged BIOS, the reset applies it; when it drops it, the BIOS
// reads its old version after the reset, and it is sent once more, as the
// plan did it (the host powered off, the BIOS sent, the host reset On,
// the wait for readiness again): it takes, and the server completes,
// never called a provisioning problem, reimaged again or remediated.
func TestStagedUpdateLostWithBMCRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("applies with the real binary")
	}
	for _, tc := range []struct {
		name        string
		drops       bool
		want, never []string
		// biosFlashes, updates and boots: the BIOS flashed, updates sent
		// (the NIC's twice), host boots.
		biosFlashes, updates, boots int
	}{
		{name: "staged image kept", biosFlashes: 1, updates: 3, boots: 1,
			want:  []string{"Apply complete: 1 server upgraded, 0 failed, 0 skipped"},
			never: []string{"did not take effect: bios", "powering off: as the plan did"}},
		{name: "staged image dropped", drops: true, biosFlashes: 2, updates: 4, boots: 2,
			want: []string{"Apply complete: 1 server upgraded, 0 failed, 0 skipped",
				"lab/r1/s1: powering off: as the plan did, to send again the staged updates that did not take effect",
				"lab/r1/s1: updating bios: sending the update again: it did not take effect: bios reads 1.0 after the reset, expected 2.80; it was staged for the next reset, and the BMC restarted before the reset (a later update's task vanished), which can discard a staged image",
				"lab/r1/s1: rebooting: as the plan did, so that the staged updates sent again apply"},
			never: []string{"provisioning", "replace", "remedy", "remediation", "powered off", "update failed", "wait_ready failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			octet := freeOctet(t, 171, 1)
			// 600× real time: a flash takes 1 s, the BMC's reset 0.3 s.
			f := startE2EFleetWith(t, octet, 1, 1, 600, nil, nil, map[string]string{"BIOS": "1.0", "NIC": "1.0"})
			if err := os.WriteFile(filepath.Join(f.dir, "main.rf.hcl"), []byte(fmt.Sprintf(stagedRelease, octet)), 0o644); err != nil {
				t.Fatal(err)
			}
			e := newE2EEnv(t)
			if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 || !strings.Contains(out, "bios 1.0 → 2.80") || !strings.Contains(out, "nic 1.0 → 3.1") {
				t.Fatalf("plan: exit %d\n%s", code, out)
			}
			// The BMC restarts during the NIC's first flash (lost), not the BIOS's.
			if err := f.fleet.SetFault("bmc-0001", sim.Fault{Kind: sim.FaultBMCRestartDuringUpdate, Count: 1, DropsStaged: tc.drops, Timed: sim.Timed{Component: "NIC"}}); err != nil {
				t.Fatal(err)
			}
			code, out := e.run(t, "apply", "-allow-unsigned", "-no-color", "-state-dir", "st", "plan.json")
			t.Logf("apply:\n%s", out)
			if code != 0 {
				t.Errorf("apply: exit %d, want 0", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("apply's output lacks %q", w)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(strings.ToLower(out), n) {
					t.Errorf("apply's output says %q", n)
				}
			}
			st := f.stats(t)["bmc-0001"]
			t.Logf("stats: %+v", st)
			if st.Flashes["BIOS"] != tc.biosFlashes || st.Flashes["NIC"] != 1 || st.UpdatesLost != 1 || st.Updates != tc.updates {
				t.Errorf("BIOS flashed %d, NIC flashed %d, updates sent %d, lost %d; want %d, 1, %d, 1", st.Flashes["BIOS"], st.Flashes["NIC"], st.Updates, st.UpdatesLost, tc.biosFlashes, tc.updates)
			}
			if st.Reimages != 1 || st.Boots != tc.boots {
				t.Errorf("%d reimages, %d boots; want the plan's one reimage, %d boots", st.Reimages, st.Boots, tc.boots)
			}
			if st.Versions["BIOS"] != "2.80" || st.Versions["NIC"] != "3.1" {
				t.Errorf("BIOS at %s, NIC at %s; want 2.80 and 3.1", st.Versions["BIOS"], st.Versions["NIC"])
			}
			if p, _ := f.fleet.PowerState("bmc-0001"); p != "On" {
				t.Errorf("power %s: the server, healthy, was powered off", p)
			}
		})
	}
}
