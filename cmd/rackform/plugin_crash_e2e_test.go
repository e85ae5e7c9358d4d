//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackform/rackform/providers/sim"
)

// pluginOf returns the pid of the running (not zombie) "rackform provider
// redfish" child of the apply whose pid is parent, or 0.
func pluginOf(parent int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[0] == "Z" || f[1] != strconv.Itoa(parent) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmdline, []byte("provider\x00redfish")) {
			return pid
		}
	}
	return 0
}

// killPlugin SIGKILLs apply's provider plugin, waiting up to 10 s for one
// to run (it may be restarting).
func killPlugin(t *testing.T, apply int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if pid := pluginOf(apply); pid != 0 {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("killing the plugin %d: %v", pid, err)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("apply (pid %d) runs no provider plugin", apply)
	return 0
}

// waitEvent waits (up to 60 s) until the event file has a line matching re.
func waitEvent(t *testing.T, file string, re *regexp.Regexp, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		if re.Match(b) {
			return
		}
		select {
		case <-exited:
			t.Fatalf("apply exited before %s appeared in the events:\n%s", re, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event matching %s after 60s:\n%s", re, b)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestApplyPluginCrash SIGKILLs the real provider plugin process (the
// built-in redfish provider, out of process) while a server is in the
// middle of each kind of step, against the simulator. The plugin is a
// piece of infrastructure: apply restarts it, resumes the step from the
// journal as after a crash of apply itself (a journaled task is polled, an
// accepted update is found, never flashed again), and the run completes
// with every server at target. Lab/r1/s2 (bmc-0002) answers in 100 ms, so
// each of its steps is still running when the kill lands.
func TestApplyPluginCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("kills the real plugin process in real applies")
	}
	const server = "lab/r1/s2"
	for i, tc := range []struct {
		name string
		// at is the event that triggers the kill: a progress of the step,
		// sent by the plugin, so its RPC is surely in flight (a kill
		// between the journal write and the RPC finds no step in flight:
		// the next call restarts the plugin, correctly without an
		// interruption, which is not what these cases test).
		at string
		// runtime is the Runtime version the fleet starts at: at the
		// target, the plan has a reset instead of a reimage.
		runtime string
		// skip: skip the server once its update is accepted, so its
		// safety steps (power_on first) run.
		skip bool
		// slow: the simulator at 300× instead of 3000×, for a step whose
		// plugin progress needs the server still booting (wait_ready
		// reports only after a first check found the server not ready;
		// at 3000× a loaded machine may start it after the 140 ms the
		// reimaged host takes to boot).
		slow     bool
		wantExit int
	}{
		{name: "shutdown", at: `"type":"step_progress","server":"` + server + `","op":"step:1","step_kind":"shutdown","message":"graceful shutdown`},
		{name: "update before its task is journaled", at: `"type":"step_progress","server":"` + server + `","op":"step:2","step_kind":"update","message":"SimpleUpdate`},
		{name: "update polling its task", at: `"type":"step_task","server":"` + server + `","op":"step:2"`},
		{name: "reimage", at: `"type":"step_progress","server":"` + server + `","op":"step:3","step_kind":"reimage","message":"insert`},
		{name: "wait_ready", slow: true, at: `"type":"step_progress","server":"` + server + `","op":"step:4","step_kind":"wait_ready"`},
		{name: "reset", runtime: "4.6.1", at: `"type":"step_progress","server":"` + server + `","op":"step:3","step_kind":"reset"`},
		{name: "power_on of a skipped server", skip: true, wantExit: 4,
			at: `"type":"step_progress","server":"` + server + `","op":"safety:power_on","step_kind":"power_on","message":"power on`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each its own fleet, addresses and work directory
			runtime := tc.runtime
			if runtime == "" {
				runtime = "4.6.0"
			}
			speed := 3000.0
			if tc.skip || tc.slow {
				speed = 300 // the flash lasts 2 s: time to skip the server; a boot 1.4 s
			}
			f := startE2EFleetWith(t, freeOctet(t, 60+10*i, 4), 2, 2, speed, map[string]string{"bmc-0002": "latency:100ms"}, nil,
				map[string]string{"BIOS": "2.70", "Runtime": runtime})
			e := newE2EEnv(t)
			if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
				t.Fatalf("plan: exit %d\n%s", code, out)
			}
			events := filepath.Join(e.work, "ev.jsonl")
			cmd := exec.Command(e.bin, "apply", "-allow-unsigned", "-json-into", events, "plan.json")
			cmd.Dir, cmd.Env = e.work, e.env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			defer func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}()
			if tc.skip {
				waitEvent(t, events, regexp.MustCompile(`"type":"step_task","server":"`+server+`","op":"step:2"`), exited)
				if code, o := e.run(t, "skip", server); code != 0 {
					t.Fatalf("skip: exit %d\n%s", code, o)
				}
			}
			waitEvent(t, events, regexp.MustCompile(regexp.QuoteMeta(tc.at)), exited)
			killed := killPlugin(t, cmd.Process.Pid)
			select {
			case <-exited:
			case <-time.After(120 * time.Second):
				t.Fatalf("apply did not finish after the plugin (pid %d) was killed:\n%s", killed, out.String())
			}
			ev, _ := os.ReadFile(events)
			if code := cmd.ProcessState.ExitCode(); code != tc.wantExit {
				t.Fatalf("apply exited %d, want %d, after the plugin (pid %d) was killed:\n%s\nevents:\n%s", code, tc.wantExit, killed, out.String(), ev)
			}
			if !strings.Contains(out.String(), `Provider "redfish": restarted (1 of at most 5 restarts within 10m0s).`) {
				t.Errorf("no restart noted:\n%s", out.String())
			}
			if !regexp.MustCompile(`"type":"step_interrupted","server":"` + server + `".*"message":"provider \\"redfish\\" failed during the step`).Match(ev) {
				t.Errorf("no step_interrupted event for %s:\n%s", server, ev)
			}
			if bytes.Contains(ev, []byte(`"type":"step_failed"`)) || bytes.Contains(ev, []byte(`"type":"server_failed"`)) {
				t.Errorf("a step or server failed:\n%s", ev)
			}
			if tc.skip {
				st := f.stats(t)["bmc-0002"]
				if st.Flashes["BIOS"] != 1 || st.Reimages != 0 || st.PowerState != "On" || st.Health != "OK" {
					t.Errorf("the skipped server: flashes %v, reimages %d, power %s, health %s; want flashed once, powered on and healthy", st.Flashes, st.Reimages, st.PowerState, st.Health)
				}
				if !bytes.Contains(ev, []byte(`"message":"skipped by the operator after its steps began; brought back: powered on, healthy"`)) {
					t.Errorf("the skipped server was not brought back:\n%s", ev)
				}
				return
			}
			// Every server at target, nothing flashed or reimaged twice.
			f.checkFleet(t)
			if t.Failed() {
				t.Logf("apply output:\n%s", out.String())
			}
			if code, o := e.run(t, "status"); code != 0 || !strings.Contains(o, "run completed") {
				t.Errorf("status: exit %d\n%s", code, o)
			}
		})
	}
}

// TestApplyPluginCannotRestart kills the plugin every time it comes back:
// after five restarts within ten minutes apply gives up, and the run stops
// as "provider unavailable" (exit 3) with the server in flight resumable,
// not failed. Applying again finishes the run, nothing flashed twice.
func TestApplyPluginCannotRestart(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	if testing.Short() {
		t.Skip("kills the real plugin process in real applies")
	}
	f := startE2EFleet(t, freeOctet(t, 140, 4), 2, 2, 3000, map[string]string{"bmc-0003": "latency:100ms"})
	e := newE2EEnv(t)
	if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	events := filepath.Join(e.work, "ev.jsonl")
	cmd := exec.Command(e.bin, "apply", "-allow-unsigned", "-json-into", events, "plan.json")
	cmd.Dir, cmd.Env = e.work, e.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()
	// The spare (lab/r2/s3, bmc-0003) goes first; kill its plugin in its
	// update, then every plugin that comes back.
	waitEvent(t, events, regexp.MustCompile(`"type":"step_task","server":"lab/r2/s3","op":"step:2"`), exited)
	kills := 0
	for done := false; !done; {
		select {
		case <-exited:
			done = true
		default:
			if pid := pluginOf(cmd.Process.Pid); pid != 0 {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					kills++
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		if kills > 50 {
			t.Fatalf("apply kept restarting its plugin:\n%s", out.String())
		}
	}
	ev, _ := os.ReadFile(events)
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("apply exited %d, want 3 (stopped):\n%s\nevents:\n%s", code, out.String(), ev)
	}
	// Killed at once each time, a plugin either dies in its handshake
	// (three failed starts) or is restarted until the restart budget is
	// spent; both are "cannot be restarted".
	gaveUp := regexp.MustCompile(`Provider "redfish": the plugin of provider "redfish" (exited and could not be restarted \(3 attempts\): .*|died 6 times within 10m0s; it is not restarted again)\.`)
	if !gaveUp.MatchString(out.String()) {
		t.Errorf("output does not say the plugin could not be restarted:\n%s", out.String())
	}
	for _, want := range []string{
		`Provider "redfish": the plugin process exited; restarting it (the steps it had in flight resume from the journal).`,
		`Apply stopped: provider unavailable: provider "redfish" is unavailable: the plugin of provider "redfish" `,
		`lab/r2/s3 (running): powered off; to bring it back: resume the run: rackform apply -allow-unsigned plan.json`,
		`To resume, run: rackform apply -allow-unsigned plan.json`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !bytes.Contains(ev, []byte(`"type":"apply_ended","outcome":{"status":"stopped","reason":"provider_unavailable"`)) {
		t.Errorf("events:\n%s", ev)
	}
	if bytes.Contains(ev, []byte(`"type":"step_failed"`)) || bytes.Contains(ev, []byte(`"type":"server_failed"`)) {
		t.Errorf("a step or server failed:\n%s", ev)
	}
	code, st := e.run(t, "status")
	if code != 0 || !strings.Contains(st, "run stopped(provider_unavailable)") || !strings.Contains(st, "lab/r2/s3: running") {
		t.Errorf("status: exit %d\n%s", code, st)
	}
	// The next apply resumes and finishes; the update was never flashed twice.
	if code, o := e.run(t, "apply", "-allow-unsigned", "plan.json"); code != 0 {
		t.Fatalf("apply again: exit %d\n%s", code, o)
	}
	f.checkFleet(t)
}

// TestApplyPluginCrashDuringQuorumCheck SIGKILLs the real plugin while the
// quorum guard observes the other control-plane members before the first
// member is taken down. A member the provider could not observe is
// unknown, not down: apply restarts the plugin and checks again, and the
// run completes instead of pausing for quorum. Deterministic: the member
// the check reads (lab/r2/s3, bmc-0003) holds every request (a timeout
// fault) from after plan until the kill, and nothing else of the apply
// reaches it before that check (the spare lab/r3/s6 goes first, then
// lab/r1/s1, whose check reads it).
func TestApplyPluginCrashDuringQuorumCheck(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	if testing.Short() {
		t.Skip("kills the real plugin process in a real apply")
	}
	f := startE2EFleet(t, freeOctet(t, 150, 6), 3, 2, 3000, nil)
	e := newE2EEnv(t)
	if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	if err := f.fleet.SetFault("bmc-0003", sim.Fault{Kind: sim.FaultTimeout}); err != nil {
		t.Fatal(err)
	}
	events := filepath.Join(e.work, "ev.jsonl")
	cmd := exec.Command(e.bin, "apply", "-allow-unsigned", "-json-into", events, "plan.json")
	cmd.Dir, cmd.Env = e.work, e.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()
	// The quorum check's read of bmc-0003 is in flight once the fault
	// held a request there.
	deadline := time.Now().Add(60 * time.Second)
	for f.fleet.Stats("bmc-0003").FaultsInjected == 0 {
		select {
		case <-exited:
			t.Fatalf("apply exited before the quorum check read bmc-0003:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quorum check never read bmc-0003:\n%s", out.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	killed := killPlugin(t, cmd.Process.Pid)
	// bmc-0003 answers again before the restarted plugin checks again.
	if err := f.fleet.SetFault("bmc-0003", sim.Fault{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(120 * time.Second):
		t.Fatalf("apply did not finish after the plugin (pid %d) was killed:\n%s", killed, out.String())
	}
	ev, _ := os.ReadFile(events)
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("apply exited %d, want 0, after the plugin (pid %d) was killed during the quorum check:\n%s\nevents:\n%s", code, killed, out.String(), ev)
	}
	if bytes.Contains(ev, []byte(`"type":"quorum_hold"`)) || bytes.Contains(ev, []byte(`"reason":"quorum"`)) {
		t.Errorf("held for quorum over a member the provider could not observe:\n%s", ev)
	}
	if !regexp.MustCompile(`"type":"step_interrupted","server":"lab/r1/s1".*"message":"provider \\"redfish\\" failed during the step \(observing the control-plane member lab/r2/s3 for the quorum check`).Match(ev) {
		t.Errorf("no step_interrupted event for lab/r1/s1's quorum check:\n%s", ev)
	}
	if !strings.Contains(out.String(), `Provider "redfish": restarted (1 of at most 5 restarts within 10m0s).`) {
		t.Errorf("no restart noted:\n%s", out.String())
	}
	f.checkFleet(t)
}
