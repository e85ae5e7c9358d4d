package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// faithfulConfig is one cluster of three racks, each a control-plane
// server and compute servers (the spare in r3); compute racks need 2 successes (count).
// Waits are short and the provider fast, so the real apply against the
// simulator takes seconds.
const faithfulConfig = `
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
  verify_timeout   = "3s"
  shutdown_timeout = "2s"
  compute {
    wait_after_rack = "1s"
    threshold {
      type  = "count"
      value = 2
    }
  }
}

cluster "lab" {
  release  = release.r
  strategy = strategy.fast
  rack "r1" {
    server "cp1" {
      bmc  = "http://127.77.138.1:18443"
      role = "control_plane"
    }
    server "c1" {
      bmc  = "http://127.77.138.2:18443"
      role = "compute"
    }
    server "c2" {
      bmc  = "http://127.77.138.3:18443"
      role = "compute"
    }
    server "c3" {
      bmc  = "http://127.77.138.4:18443"
      role = "compute"
    }
  }
  rack "r2" {
    server "cp2" {
      bmc  = "http://127.77.138.5:18443"
      role = "control_plane"
    }
    server "c4" {
      bmc  = "http://127.77.138.6:18443"
      role = "compute"
    }
    server "c5" {
      bmc  = "http://127.77.138.7:18443"
      role = "compute"
    }
  }
  rack "r3" {
    server "cp3" {
      bmc  = "http://127.77.138.8:18443"
      role = "control_plane"
    }
    server "c6" {
      bmc  = "http://127.77.138.9:18443"
      role = "compute"
    }
    server "c7" {
      bmc  = "http://127.77.138.10:18443"
      role = "compute"
    }
    server "spare" {
      bmc  = "http://127.77.138.11:18443"
      role = "control_plane_spare"
    }
  }
}
`

// faithfulScenario: c2's BIOS update task fails (rack r1 still meets its
// threshold, 2 of 3); c4's BMC drops off a minute into the run, so when
// rack r2 starts, hours of rehearsed time or a second of the real apply
// later, its pre-flight finds it unreachable and r2 (2 of 2 required)
// breaches at once; c5, started beside it, never comes back after its
// reboot (remediation reimages it, it still does not, it is powered off)
// and fails while the run is paused before r3. The timed fault cannot
// depend on the wall clock's jitter: in both runs the BMC is gone long
// before anything asks it (a minute after the start in the rehearsal;
// a millisecond after the simulator starts at -speed 60000, which is
// started anew after planning, just before the apply), and stays gone.
const faithfulScenario = `
description = "An update that fails in r1; in r2 a BMC that dropped off and a server that never comes back."

fault "update_fails" {
  servers   = ["lab/r1/c2"]
  component = "bios"
}

fault "bmc_down" {
  servers = ["lab/r2/c4"]
  at      = "1m"
}

fault "never_ready" {
  servers = ["lab/r2/c5"]
}
`

// transitions reads a -json stream (apply's or rehearse's): for each node
// of the run tree, the sequence of its states with their reasons; and the
// order of the transitions of every node above the servers (scopes,
// phases, the cluster, waits, pauses, the run). Times and messages are
// left out: apply runs on the wall clock, a rehearsal on its own.
func transitions(t *testing.T, stream []byte) (map[string][]string, []string) {
	t.Helper()
	perNode := map[string][]string{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Event *struct {
				ID     string `json:"id"`
				Kind   string `json:"kind"`
				State  string `json:"state"`
				Reason string `json:"reason"`
			} `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not JSON: %s", sc.Bytes())
		}
		e := line.Event
		if e == nil || e.ID == "" || e.State == "" {
			continue
		}
		st := e.State
		if e.Reason != "" {
			st += "(" + e.Reason + ")"
		}
		perNode[e.ID] = append(perNode[e.ID], st)
		if e.Kind != "server" {
			order = append(order, e.ID+" "+st)
		}
	}
	return perNode, order
}

// TestRehearsalIsFaithful runs one faulty scenario twice: rackform
// rehearse of the plan, and a real rackform apply of the same plan (the
// real binary, the redfish provider plugin) against rackform sim with the
// same faults injected (sim -scenario). Per node of the run tree, the
// sequence of states and reasons is the same, and so is the order of the
// transitions above the servers.
func TestRehearsalIsFaithful(t *testing.T) {
	e := newE2EEnv(t)
	dir := filepath.Join(e.work, "lab")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(faithfulConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.work, "faults.hcl"), []byte(faithfulScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	// Planned against the simulator without the faults (its timed ones
	// would meet the plan), then served again with them for the apply.
	stop := startSim(t, e, "sim", "-config", "lab", "-speed", "60000", "-firmware", "BIOS=2.70", "-firmware", "Runtime=4.6.0")
	if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", "lab"); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	stop()
	startSim(t, e, "sim", "-config", "lab", "-speed", "60000", "-firmware", "BIOS=2.70", "-firmware", "Runtime=4.6.0", "-scenario", "faults.hcl")

	rehearsed := exec.Command(e.bin, "rehearse", "-json", "-scenario", "faults.hcl", "plan.json")
	rehearsed.Dir, rehearsed.Env = e.work, e.env
	var rstream bytes.Buffer
	rehearsed.Stdout, rehearsed.Stderr = &rstream, os.Stderr
	err := rehearsed.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3) {
		t.Fatalf("rehearse: %v (want exit 3: paused)", err)
	}

	applied := exec.Command(e.bin, "apply", "-allow-unsigned", "-json", "plan.json")
	applied.Dir, applied.Env = e.work, e.env
	var astream bytes.Buffer
	applied.Stdout, applied.Stderr = &astream, os.Stderr
	began := time.Now()
	err = applied.Run()
	wall := time.Since(began)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3) || err == nil {
		t.Fatalf("apply: %v (want exit 3: paused)\n%s", err, astream.String())
	}
	t.Logf("the real apply took %v", wall)

	rNodes, rOrder := transitions(t, rstream.Bytes())
	aNodes, aOrder := transitions(t, astream.Bytes())
	if d := cmp.Diff(aNodes, rNodes); d != "" {
		t.Errorf("per node, the states and reasons differ (-apply +rehearse):\n%s", d)
	}
	if d := cmp.Diff(aOrder, rOrder); d != "" {
		t.Errorf("the transitions above the servers differ in order (-apply +rehearse):\n%s", d)
	}
	// And they are the run the scenario describes, not two empty ones.
	for id, want := range map[string][]string{
		"lab/r1/c2":                        {"running", "failed(step)"},
		"lab/r2/c4":                        {"running", "failed(unreachable)"},
		"lab/r2/c5":                        {"running", "failed(unhealthy)"},
		"lab/r1/c1":                        {"running", "completed"},
		"cluster.lab.compute.rack.r1":      {"running", "completed"},
		"cluster.lab.compute.rack.r2":      {"running", "paused(threshold)"},
		"cluster.lab.control_plane.serial": {"running", "completed"},
	} {
		if d := cmp.Diff(want, rNodes[id]); d != "" {
			t.Errorf("%s (-want +rehearsed):\n%s", id, d)
		}
	}
	if _, ok := rNodes["cluster.lab.compute.rack.r3"]; ok {
		t.Errorf("rack r3 started after r2 breached")
	}
	t.Logf("compared the states of %d nodes and %d transitions above the servers:\n%s", len(rNodes), len(rOrder), strings.Join(rOrder, "\n"))
	if t.Failed() {
		t.Logf("rehearse:\n%s\napply:\n%s", strings.Join(rOrder, "\n"), strings.Join(aOrder, "\n"))
	}
}

// startSim runs rackform with args (a sim) until the test ends, or until
// the func it returns stops it.
func startSim(t *testing.T, e *e2eEnv, args ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
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
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), ": ready: ") {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	t.Cleanup(stop)
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("rackform %s exited before it was ready:\n%s", strings.Join(args, " "), stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("rackform %s not ready within 30s:\n%s", strings.Join(args, " "), stderr.String())
	}
	return stop
}
