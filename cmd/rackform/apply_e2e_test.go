package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rackform/rackform/providers/sim"
)

// rackformBin makes the test binary callable as "rackform" (testscript.Main
// dispatches on the program name) and returns its path.
func rackformBin(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "rackform")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// e2eFleet is an in-process simulated fleet with its admin API on loopback,
// and a configuration for it.
type e2eFleet struct {
	fleet *sim.Fleet
	admin string
	dir   string // the configuration directory
}

const e2ePassword = "e2e-Planted-pw"

// startE2EFleet serves racks×perRack BMCs on 127.77.OCTET.x:18443 at speed,
// with faults by BMC name, and writes a matching configuration.
// A BMC named in moved listens on the address given there instead (a test
// puts a proxy on the configured address).
func startE2EFleet(t *testing.T, octet, racks, perRack int, speed float64, faults map[string]string, moved ...map[string]string) *e2eFleet {
	t.Helper()
	var mv map[string]string
	if len(moved) > 0 {
		mv = moved[0]
	}
	return startE2EFleetWith(t, octet, racks, perRack, speed, faults, mv, map[string]string{"BIOS": "2.70", "Runtime": "4.6.0"})
}

// startE2EFleetWith is startE2EFleet with every BMC's firmware given.
func startE2EFleetWith(t *testing.T, octet, racks, perRack int, speed float64, faults, moved, firmware map[string]string) *e2eFleet {
	t.Helper()
	var specs []sim.BMCSpec
	for i := 0; i < racks*perRack; i++ {
		name := fmt.Sprintf("bmc-%04d", i+1)
		addr := fmt.Sprintf("127.77.%d.%d:18443", octet, i+1)
		if moved[name] != "" {
			addr = moved[name]
		}
		fw := map[string]string{}
		for k, v := range firmware {
			fw[k] = v
		}
		specs = append(specs, sim.BMCSpec{
			Name:     name,
			Addr:     addr,
			Firmware: fw,
			PowerOn:  true,
		})
	}
	f, err := sim.New(sim.Options{Speed: speed, Username: "admin", Password: e2ePassword}, specs)
	if err != nil {
		t.Fatal(err)
	}
	for name, spec := range faults {
		ft, err := sim.ParseFault(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SetFault(name, ft); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := f.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f.AdminHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		f.Close()
	})
	dir := filepath.Join(t.TempDir(), "fleet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(e2eConfig(octet, racks, perRack)), 0o644); err != nil {
		t.Fatal(err)
	}
	return &e2eFleet{fleet: f, admin: ln.Addr().String(), dir: dir}
}

// freeOctet returns the first octet from o on whose 127.77.OCTET.1..n port
// 18443 nothing listens now (another test run on this machine may hold the
// first choice, the addresses being fixed) and that no test of this process
// holds: the end-to-end tests run in parallel, each on octets of its own
// until it ends. The octets tests write out as constants are never handed
// out.
func freeOctet(t *testing.T, o, n int) int {
	t.Helper()
	octets.Lock()
	defer octets.Unlock()
	for ; o < 255; o++ {
		if octets.held[o] {
			continue
		}
		free := true
		for i := 1; i <= n && free; i++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.77.%d.%d:18443", o, i))
			if err != nil {
				free = false
				continue
			}
			ln.Close()
		}
		if free {
			octets.held[o] = true
			t.Cleanup(func() {
				octets.Lock()
				defer octets.Unlock()
				delete(octets.held, o)
			})
			return o
		}
	}
	t.Fatal("no free 127.77.x.0/24 for the simulated fleet")
	return 0
}

// octets are the 127.77.OCTET.0/24 networks tests of this process hold:
// those freeOctet handed out, and the fixed ones of
// TestApplyCrashAfterUpdateAccepted (29) and TestRehearsalIsFaithful (138).
var octets = struct {
	sync.Mutex
	held map[int]bool
}{held: map[int]bool{29: true, 138: true}}

// e2eProvider is the redfish provider block of the end-to-end
// configurations: the simulator's credentials from the environment, short
// timeouts and retries, plain http on loopback.
const e2eProvider = `provider "redfish" {
  username           = "admin"
  password           = env("RACKFORM_SIM_PASSWORD")
  timeout            = "2s"
  poll_interval      = "10ms"
  retry_base_delay   = "5ms"
  retry_max_delay    = "20ms"
  retry_max_attempts = 3
  allow_http         = true
}
`

// e2eRelease is e2eProvider, release "r" (bios 2.80, runtime 4.6.1) and
// strategy "fast" (short timeouts, no wait after a rack).
const e2eRelease = e2eProvider + `
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
  verify_timeout   = "5s"
  drain_timeout    = "2s"
  shutdown_timeout = "2s"
  compute {
    wait_after_rack = "0s"
  }
}
`

// e2eConfig is a cluster of racks with the control plane placed as the
// planner requires (2 racks: control plane + spare; 3 or more: one control
// plane server per rack and a spare in the last), compute for the rest.
func e2eConfig(octet, racks, perRack int) string {
	var b strings.Builder
	b.WriteString(e2eRelease + `
cluster "lab" {
  release  = release.r
  strategy = strategy.fast
`)
	n := 0
	for r := 1; r <= racks; r++ {
		fmt.Fprintf(&b, "  rack \"r%d\" {\n", r)
		for s := 0; s < perRack; s++ {
			n++
			name, role := fmt.Sprintf("s%d", n), "compute"
			switch {
			case racks >= 3 && s == 0:
				role = "control_plane"
			case racks >= 3 && s == 1 && r == racks:
				role = "control_plane_spare"
			case racks == 2 && s == 0 && r == 1:
				role = "control_plane"
			case racks == 2 && s == 0 && r == 2:
				role = "control_plane_spare"
			}
			fmt.Fprintf(&b, "    server %q {\n      bmc  = \"http://127.77.%d.%d:18443\"\n      role = %q\n    }\n", name, octet, n, role)
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func (f *e2eFleet) stats(t *testing.T) map[string]sim.Stats {
	t.Helper()
	resp, err := http.Get("http://" + f.admin + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		BMCs map[string]sim.Stats `json:"bmcs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.BMCs
}

// checkFleet asserts from the simulator's own counters that no server was
// flashed or reimaged twice and every one is at the target. There is no
// tolerated double flash: a kill after the BMC accepted an update but
// before its task URI reached the journal is resumed by attaching to the
// BMC's task (Step.ResumeSince; TestApplyCrashAfterUpdateAccepted).
func (f *e2eFleet) checkFleet(t *testing.T) {
	t.Helper()
	st := f.stats(t)
	names := make([]string, 0, len(st))
	for n := range st {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := st[n]
		for comp, k := range s.Flashes {
			if k > 1 {
				// bmc-000K serves server sK (e2eConfig numbers them alike).
				server := "s" + strings.TrimLeft(strings.TrimPrefix(n, "bmc-"), "0")
				t.Errorf("%s (%s): %s flashed %d times (updates accepted: %d)", n, server, comp, k, s.Updates)
			}
		}
		if s.Reimages > 1 {
			t.Errorf("%s: reimaged %d times", n, s.Reimages)
		}
		if s.Versions["BIOS"] != "2.80" || s.Versions["Runtime"] != "4.6.1" {
			t.Errorf("%s left behind: BIOS %s, Runtime %s (power %s, health %s)", n, s.Versions["BIOS"], s.Versions["Runtime"], s.PowerState, s.Health)
		}
	}
}

type e2eEnv struct {
	bin, work string
	env       []string
}

func newE2EEnv(t *testing.T) *e2eEnv {
	return &e2eEnv{bin: rackformBin(t), work: t.TempDir(),
		env: append(os.Environ(), "RACKFORM_SIM_PASSWORD="+e2ePassword, "NO_COLOR=1")}
}

// run runs rackform to completion and returns its exit code and output.
func (e *e2eEnv) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Dir, cmd.Env = e.work, e.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

var lockIDRe = regexp.MustCompile(`rackform force-unlock ([0-9a-f]+)`)

// TestApplyCrash kills `rackform apply` (the real binary, the built-in
// provider out of process, an in-process simulated fleet) with SIGKILL at
// 50 random points and re-runs it until it completes, a fresh fleet per
// round, and asserts from the simulator's counters that no server was
// flashed twice and none was left behind. A killed apply leaves its lock;
// the next apply takes it over (its pid is gone on this host) with a note.
func TestApplyCrash(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	if testing.Short() {
		t.Skip("crash test: 50 kills of the real binary")
	}
	const kills = 50
	seed := uint64(20261121)
	if v := os.Getenv("RACKFORM_CRASH_SEED"); v != "" {
		// Other kill points: RACKFORM_CRASH_SEED=N go test -run TestApplyCrash$
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("RACKFORM_CRASH_SEED=%q: %v", v, err)
		}
		seed = n
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	deadline := time.Now().Add(150 * time.Second)
	e := newE2EEnv(t)
	done, round := 0, 0
	midStep, takeovers := 0, 0
	defer func() {
		t.Logf("%d kills in %d rounds, %d of them with a BMC operation in flight; %d stale locks taken over", done, round, midStep, takeovers)
	}()
	for done < kills {
		round++
		if time.Now().After(deadline) {
			t.Fatalf("only %d kills in time", done)
		}
		f := startE2EFleet(t, freeOctet(t, 130+round, 8), 2, 4, 3000, nil)
		stateDir := fmt.Sprintf("st%d", round)
		planFile := fmt.Sprintf("plan%d.json", round)
		if code, out := e.run(t, "plan", "-no-color", "-out", planFile, f.dir); code != 0 {
			t.Fatalf("plan: exit %d\n%s", code, out)
		}
		attempts := 0
		for {
			attempts++
			if attempts > 200 || time.Now().After(deadline) {
				t.Fatalf("round %d: apply did not complete after %d attempts", round, attempts)
			}
			cmd := exec.Command(e.bin, "apply", "-allow-unsigned", "-state-dir", stateDir, planFile)
			cmd.Dir, cmd.Env = e.work, e.env
			// Its own process group, so the plugin it starts can be found
			// again. A plugin exits when its host dies (Pdeathsig and its
			// parent watch, providers/plugin TestPluginExitsWithHost); the
			// group kill below is only a safety net.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			// The kill point counts from when the apply holds its lock (its
			// lock file appears), not from its start: on a loaded machine
			// the binary and its plugin take longer to start than the whole
			// window, and every kill would land before the run began. Every
			// other kill still counts from the start, so early kills (before
			// the lock) stay covered too.
			killAt := time.Duration(30+rng.IntN(570)) * time.Millisecond
			fromLock := rng.IntN(2) == 0
			armed := make(chan struct{})
			if fromLock {
				go func() {
					defer close(armed)
					lock := filepath.Join(e.work, stateDir, "lock.json")
					for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(2 * time.Millisecond) {
						select {
						case <-exited:
							return
						default:
						}
						if _, err := os.Stat(lock); err == nil {
							return
						}
					}
				}()
			} else {
				close(armed)
			}
			killed := false
			select {
			case <-exited:
			case <-armed:
			}
			select {
			case <-exited:
			case <-time.After(killAt):
				if done < kills {
					_ = cmd.Process.Signal(syscall.SIGKILL)
					killed = true
				}
				<-exited
			}
			// A plugin left behind, if any (there should be none).
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			code := cmd.ProcessState.ExitCode()
			if strings.Contains(out.String(), "Note: took over the lock") {
				takeovers++
			}
			switch {
			case killed && code == -1:
				done++
				if inFlight(e.work, stateDir) {
					midStep++
				}
				continue
			case code == 0:
			case code == 1 && strings.Contains(out.String(), "this plan has already been applied completely"):
				// The previous attempt completed the run and was killed
				// before it exited.
			case code == 1 && strings.Contains(out.String(), "the state is locked by"):
				// The killed apply's pid is gone on this host: its lock
				// must have been taken over, not refused.
				t.Fatalf("round %d attempt %d: the lock of the killed apply was not taken over:\n%s", round, attempts, out.String())
			default:
				if killed {
					// Killed just as it exited on its own.
					done++
					continue
				}
				t.Fatalf("round %d attempt %d: apply exited %d:\n%s", round, attempts, code, out.String())
			}
			break
		}
		t.Logf("round %d: completed after %d attempts (%d kills so far)", round, attempts, done)
		var journal []byte
		files, _ := filepath.Glob(filepath.Join(e.work, stateDir, "journal", "*.jsonl"))
		for _, j := range files {
			b, _ := os.ReadFile(j)
			journal = append(journal, b...)
		}
		f.checkFleet(t)
		if t.Failed() {
			t.Logf("journal:\n%s", journal)
			return
		}
		if code, out := e.run(t, "status", "-state-dir", stateDir); code != 0 || !strings.Contains(out, "run completed") {
			t.Fatalf("status after round %d: exit %d\n%s", round, code, out)
		}
		if t.Failed() {
			return
		}
	}
	if takeovers == 0 {
		t.Error("no apply took over the lock a killed apply left")
	}
}

// TestApplyCrashAfterUpdateAccepted reproduces, deterministically, the
// double flash TestApplyCrash can hit by chance: the BMC accepts the BIOS
// update (the task exists and will flash), and apply is killed before the
// task URI reaches the journal. A proxy in front of that BMC holds the
// update's response, and the kill lands while it does. The resumed apply
// observes the server and cannot see a flash that activates on the next
// reset, so it runs the update again, with ResumeSince: the provider finds
// the accepted task in the BMC's TaskService and attaches to it instead of
// flashing again.
func TestApplyCrashAfterUpdateAccepted(t *testing.T) {
	const octet = 29
	// r1: s1 control plane, s2 compute; r2: s3 spare, s4 compute. The spare
	// is the first server to be updated; its BMC sits behind the proxy.
	backend := fmt.Sprintf("127.77.%d.203:18443", octet)
	f := startE2EFleet(t, octet, 2, 2, 3000, nil, map[string]string{"bmc-0003": backend})
	accepted := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	target, _ := url.Parse("http://" + backend)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var held atomic.Bool
	proxy.ModifyResponse = func(r *http.Response) error {
		// Hold only the first update's answer: the BMC has accepted it.
		if r.Request.Method == http.MethodPost && strings.Contains(r.Request.URL.Path, "UpdateService") && held.CompareAndSwap(false, true) {
			accepted <- struct{}{}
			select {
			case <-release:
			case <-time.After(5 * time.Second):
			}
		}
		return nil
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.77.%d.3:18443", octet))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	e := newE2EEnv(t)
	if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	cmd := exec.Command(e.bin, "apply", "-allow-unsigned", "-state-dir", "st", "plan.json")
	cmd.Dir, cmd.Env = e.work, e.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-accepted:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		t.Fatal("the update never reached the BMC")
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	for i := 0; i < 3; i++ {
		code, out := e.run(t, "apply", "-allow-unsigned", "-state-dir", "st", "plan.json")
		if code == 0 {
			break
		}
		m := lockIDRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("apply after the kill: exit %d\n%s", code, out)
		}
		e.run(t, "force-unlock", "-state-dir", "st", m[1])
	}
	if st := f.stats(t)["bmc-0003"]; st.Flashes["BIOS"] != 1 {
		t.Errorf("bmc-0003 flashed BIOS %d times (updates accepted: %d), want once", st.Flashes["BIOS"], st.Updates)
	}
}

// inFlight reports whether the journal in stateDir ends with an operation
// started and not finished: the kill landed in the middle of a step.
func inFlight(work, stateDir string) bool {
	files, _ := filepath.Glob(filepath.Join(work, stateDir, "journal", "*.jsonl"))
	open := map[string]bool{}
	for _, j := range files {
		b, _ := os.ReadFile(j)
		for _, line := range bytes.Split(b, []byte("\n")) {
			var r struct{ Type, Server, Op string }
			if json.Unmarshal(line, &r) != nil {
				continue
			}
			switch r.Type {
			case "step_started":
				open[r.Server+" "+r.Op] = true
			case "step_done", "step_failed":
				delete(open, r.Server+" "+r.Op)
			}
		}
	}
	return len(open) > 0
}
