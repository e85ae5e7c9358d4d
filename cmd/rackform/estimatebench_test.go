package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers/sim"
)

// TestEstimateBench measures how well plan estimates an apply from the
// history of earlier ones, as a user runs them: the real binary plans and
// applies a fleet on the simulator (racks of compute servers in parallel
// after a serial control plane; a BIOS update with a reboot and a runtime
// reimage each), whose boots, shutdowns, flashes and installs vary by
// ±jitter (sim.Timings.Jitter). Round 1 plans with the defaults and
// applies; every later round serves the same fleet afresh (the firmware
// behind again, other jitter draws), plans with the history of the
// rounds before it (the state directory apply wrote) and applies. Each
// round reports its plan's estimate, apply's wall time (and both on the
// simulator's clock, × speed) and the error. It fails when a learned
// round is off by more than ±10 %.
//
// It is long, so it runs only with RACKFORM_BENCH_ESTIMATE=1 (make
// bench-estimate); knobs: RACKFORM_BENCH_RACKS (4), _PER_RACK (10),
// _SPEED (100), _JITTER (0.2), _ROUNDS (2), _SEED (1: round r draws its
// jitter from seed SEED+r-1), _BIN (a binary to measure instead of this
// tree's).
func TestEstimateBench(t *testing.T) {
	if os.Getenv("RACKFORM_BENCH_ESTIMATE") == "" {
		t.Skip("estimate benchmark: set RACKFORM_BENCH_ESTIMATE=1 (make bench-estimate)")
	}
	racks := envInt(t, "RACKFORM_BENCH_RACKS", 4)
	perRack := envInt(t, "RACKFORM_BENCH_PER_RACK", 10)
	rounds := envInt(t, "RACKFORM_BENCH_ROUNDS", 2)
	speed := envFloat(t, "RACKFORM_BENCH_SPEED", 100)
	jitter := envFloat(t, "RACKFORM_BENCH_JITTER", 0.2)
	seed := envInt(t, "RACKFORM_BENCH_SEED", 1)
	dir := t.TempDir()
	bin := os.Getenv("RACKFORM_BENCH_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "rackform")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	const password = "bench-password"
	if racks < 4 || perRack < 2 {
		t.Fatalf("RACKFORM_BENCH_RACKS=%d, _PER_RACK=%d: the fleet needs at least 4 racks of 2 (its control plane is 3 servers and a spare in racks of their own)", racks, perRack)
	}
	specs := estimateFleet(racks, perRack)
	cfg, stateDir := filepath.Join(dir, "config"), filepath.Join(dir, "state")
	var lines []string
	for round := 1; round <= rounds; round++ {
		f, err := sim.New(sim.Options{TLS: true, Speed: speed, Username: "admin", Password: password,
			Timings: sim.Timings{Jitter: jitter, JitterSeed: uint64(seed + round - 1)}}, specs)
		if err == nil {
			err = f.Start(context.Background())
		}
		if err != nil {
			t.Fatal(err)
		}
		writeEstimateConfig(t, cfg, f, perRack) // each fleet has its own CA
		planFile := filepath.Join(dir, fmt.Sprintf("plan-%d.json", round))
		runCLI(t, bin, password, "plan", "-no-color", "-state-dir", stateDir, "-out", planFile, cfg)
		b, err := os.ReadFile(planFile)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		ar := runCLI(t, bin, password, "apply", "-no-color", "-allow-unsigned", "-state-dir", stateDir, planFile)
		f.Close()
		// Learned estimates are in the time the steps took here (the
		// simulator's scaled time); the defaults are a real server's, so
		// they are held against apply on the simulator's clock.
		est, wall := time.Duration(p.Summary.Estimate), ar.wall
		simEst, simWall := est, simTime(wall, speed)
		from := "the defaults"
		if p.History != nil {
			simEst = simTime(est, speed)
			from = fmt.Sprintf("the history of %s (%s)", plural(p.History.Runs, "earlier run"), learnedSummary(p.History))
		}
		errPct := 100 * (simEst.Seconds() - simWall.Seconds()) / simWall.Seconds()
		medians := ""
		if p.History != nil {
			// What the estimate would be if servers side by side took
			// their medians: the spread's share of the figure.
			m := simTime(medianMakespan(p), speed)
			medians = fmt.Sprintf(" (with medians alone, no spread for servers side by side: %s, %+.1f%%)", m, 100*(m.Seconds()-simWall.Seconds())/simWall.Seconds())
		}
		line := fmt.Sprintf("round %d: %d servers (%d racks of %d, 4 of them the control plane), speed %g, jitter ±%g%% (seed %d): estimate %s, apply %s on the simulator's clock (wall: apply %s), error %+.1f%%%s; estimated from %s",
			round, len(specs), racks, perRack, speed, 100*jitter, seed+round-1, simEst.Round(time.Second), simWall, wall.Round(10*time.Millisecond), errPct, medians, from)
		t.Log(line)
		fmt.Println(line)
		lines = append(lines, line)
		if p.History != nil && math.Abs(errPct) > 10 {
			t.Errorf("round %d: the learned estimate is %+.1f%% off apply's wall time, beyond ±10%%", round, errPct)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load %s\n", strings.TrimSpace(string(load)))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func envFloat(t *testing.T, name string, def float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		t.Fatalf("%s: want a number, got %q", name, v)
	}
	return f
}

// medianMakespan is p's estimate with every server taking the sum of its
// steps' estimates (the medians) however many run side by side: each
// scope's servers in order on max_unavailable slots, scopes, phases and
// clusters one after another, groups in parallel, waits at full length.
func medianMakespan(p *plan.Plan) time.Duration {
	est := map[string]time.Duration{}
	for _, s := range p.Servers {
		if s.Action == plan.ActionUpgrade {
			est[s.Address] = time.Duration(s.Estimate)
		}
	}
	var total time.Duration
	for _, st := range p.Run.Stages {
		var longest time.Duration
		for _, g := range st.Groups {
			var group time.Duration
			for _, c := range g.Clusters {
				for _, ph := range c.Phases {
					for _, sc := range ph.Scopes {
						slots := make([]time.Duration, max(sc.MaxUnavailable, 1))
						for _, a := range sc.Servers {
							d, ok := est[a]
							if !ok {
								continue
							}
							i := 0 // the slot free first
							for j := range slots {
								if slots[j] < slots[i] {
									i = j
								}
							}
							slots[i] += d
						}
						var end time.Duration
						for _, e := range slots {
							end = max(end, e)
						}
						group += end + time.Duration(sc.WaitAfter)
					}
				}
			}
			longest = max(longest, group)
		}
		total += longest + time.Duration(st.AfterWait)
	}
	return total
}

// simTime is d of wall time on the simulator's clock.
func simTime(d time.Duration, speed float64) time.Duration {
	return time.Duration(float64(d) * speed).Round(time.Second)
}

func learnedSummary(h *plan.History) string {
	var parts []string
	for _, l := range h.Estimates {
		parts = append(parts, fmt.Sprintf("%s median %s p90 %s from %d", l.Key, time.Duration(l.Median), time.Duration(l.P90), l.Samples))
	}
	return strings.Join(parts, "; ")
}

// estimateFleet is racks × perRack servers on loopback addresses of their
// own.
func estimateFleet(racks, perRack int) []sim.BMCSpec {
	net := 60 + os.Getpid()%40
	var specs []sim.BMCSpec
	for i := range racks * perRack {
		specs = append(specs, sim.BMCSpec{Name: fmt.Sprintf("e%04d", i), Addr: fmt.Sprintf("127.%d.%d.%d:8443", net, 1+i/250, 1+i%250),
			PowerOn: true, Firmware: map[string]string{"BIOS": "2.70", "Runtime": "4.6.0"}})
	}
	return specs
}

// writeEstimateConfig writes the fleet's configuration: the first server
// of racks 1–3 is a control_plane server and of rack 4 the spare (the
// control plane goes first, one at a time), the others compute (a rack at
// a time, all its servers at once, no wait between racks); each gets a
// BIOS update with a reboot and a runtime reimage.
func writeEstimateConfig(t *testing.T, dir string, f *sim.Fleet, perRack int) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var inv strings.Builder
	inv.WriteString("name,rack,bmc,role\n")
	for i, b := range f.BMCs() {
		rack, slot := 1+i/perRack, i%perRack
		role := "compute"
		switch {
		case slot == 0 && rack <= 3:
			role = "control_plane"
		case slot == 0 && rack == 4:
			role = "control_plane_spare"
		}
		fmt.Fprintf(&inv, "%s,r%02d,%s,%s\n", b.Name, rack, b.URL, role)
	}
	main := `provider "redfish" {
  username         = "admin"
  password         = env("RACKFORM_BMC_PASSWORD")
  ca_bundle        = "CA_PATH"
  poll_interval    = "50ms"
  retry_base_delay = "10ms"
  retry_max_delay  = "100ms"
}

release "r" {
  version = "4.6.1"
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "https://127.0.0.1:9/bios-2.80.bin"
    match {
      id = "BIOS"
    }
  }
  component "runtime" {
    kind    = "runtime"
    version = "4.6.1"
    image   = "https://127.0.0.1:9/runtime-4.6.1.iso"
    match {
      id = "Runtime"
    }
  }
}

strategy "bench" {
  verify_timeout   = "10m"
  shutdown_timeout = "10m"
  compute {
    max_unavailable = "100%"
    wait_after_rack = "0s"
  }
}

locals {
  inventory = csvdecode(file("inventory.csv"))
  racks     = distinct([for s in local.inventory : s.rack])
}

cluster "fleet" {
  strategy = strategy.bench
  release  = release.r
  provider = provider.redfish

  rack "inventory" {
    for_each = toset(local.racks)
    server "inventory" {
      for_each = [for s in local.inventory : s if s.rack == each.key]
      bmc      = each.value.bmc
      role     = each.value.role
    }
  }
}
`
	main = strings.Replace(main, "CA_PATH", filepath.Join(dir, "ca.pem"), 1)
	for name, body := range map[string][]byte{"main.rf.hcl": []byte(main), "inventory.csv": []byte(inv.String()), "ca.pem": f.CACertPEM()} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
