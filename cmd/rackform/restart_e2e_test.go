package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// restartRelease upgrades one server's NIC from 1.0 to 3.1, applied at
// once (Immediate): an update whose BMC task vanished is read back at
// once, and sent again when it did not take (docs/rollout-rules.md, rule
// 40).
const restartRelease = e2eProvider + `
release "r" {
  version = "4.6.1"
  component "nic" {
    version    = "3.1"
    scheme     = "dotted"
    image      = "http://127.0.0.1:9/nic-3.1.bin"
    apply_time = "Immediate"
    match {
      id = "NIC"
    }
  }
}

strategy "fast" {
  verify_timeout   = "5s"
  drain_timeout    = "2s"
  shutdown_timeout = "2s"
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

// injectFault arms a fault on one BMC through the simulator's admin API,
// as a test in another process would.
func (f *e2eFleet) injectFault(t *testing.T, name, fault string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "fault": fault})
	resp, err := http.Post("http://"+f.admin+"/faults", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /faults %s on %s: %d", fault, name, resp.StatusCode)
	}
}

// TestBMCRestartDuringUpdate: the real binary and its plugin against a
// simulated BMC that restarts halfway through the NIC's flash (unreachable
// for its reset time, sessions lost, the task monitor 404 when it is
// back). The simulator's counters say how often the update was sent.
func TestBMCRestartDuringUpdate(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	if testing.Short() {
		t.Skip("applies with the real binary")
	}
	for _, tc := range []struct {
		name, fault string
		// sent is how many updates the BMC received, lost how many of
		// them the restart lost, flashed how many flashes were done.
		sent, lost, flashed int
		exit                int
		nic                 string
		want, never         []string
	}{
		{name: "the flash took", fault: "bmc-restart-during-update:took",
			sent: 1, lost: 1, flashed: 1, exit: 0, nic: "3.1",
			want:  []string{"Apply complete: 1 server upgraded, 0 failed, 0 skipped"},
			never: []string{"sending the update again", "did not take effect"}},
		{name: "the flash took on the retry", fault: "bmc-restart-during-update:lost:1",
			sent: 2, lost: 1, flashed: 1, exit: 0, nic: "3.1",
			want: []string{"lab/r1/s1: updating nic: sending the update again: it did not take effect: nic reads 1.0, expected 3.1; its BMC task vanished before it finished (as when the BMC restarts during the flash)",
				"Apply complete: 1 server upgraded, 0 failed, 0 skipped"},
			never: []string{"did not take effect: nic reads 3.1"}},
		{name: "the flash never took", fault: "bmc-restart-during-update:lost",
			sent: 2, lost: 2, flashed: 0, exit: 3, nic: "1.0",
			want: []string{"update did not take effect: nic reads 1.0, expected 3.1", "sent 2 times",
				"its BMC task vanished before it finished (as when the BMC restarts during the flash)", "check the BMC, then plan again"},
			never: []string{"provisioning", "reimag", "remedy", "remediation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			octet := freeOctet(t, 170, 1)
			// 600× real time: the flash takes 1 s, the BMC's reset 0.3 s,
			// so the provider polls through the restart.
			f := startE2EFleetWith(t, octet, 1, 1, 600, nil, nil, map[string]string{"NIC": "1.0"})
			if err := os.WriteFile(filepath.Join(f.dir, "main.rf.hcl"), []byte(fmt.Sprintf(restartRelease, octet)), 0o644); err != nil {
				t.Fatal(err)
			}
			e := newE2EEnv(t)
			if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 || !strings.Contains(out, "nic 1.0 → 3.1") {
				t.Fatalf("plan: exit %d\n%s", code, out)
			}
			f.injectFault(t, "bmc-0001", tc.fault)
			code, out := e.run(t, "apply", "-allow-unsigned", "-no-color", "-state-dir", "st", "plan.json")
			t.Logf("apply:\n%s", out)
			if code != tc.exit {
				t.Errorf("apply: exit %d, want %d", code, tc.exit)
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
			if st.Updates != tc.sent || st.UpdatesLost != tc.lost || st.Flashes["NIC"] != tc.flashed {
				t.Errorf("updates sent %d, lost to the restart %d, NIC flashed %d; want %d, %d, %d", st.Updates, st.UpdatesLost, st.Flashes["NIC"], tc.sent, tc.lost, tc.flashed)
			}
			if st.BMCResets != tc.lost {
				t.Errorf("%d BMC restarts, want %d (one per lost update)", st.BMCResets, tc.lost)
			}
			if st.Versions["NIC"] != tc.nic {
				t.Errorf("NIC at %s, want %s", st.Versions["NIC"], tc.nic)
			}
			if st.Reimages != 0 {
				t.Errorf("%d reimages: an update that did not take is never remediated", st.Reimages)
			}
		})
	}
}
