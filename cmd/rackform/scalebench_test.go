//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackform/rackform/internal/nexusfleet"
)

// TestScaleBench is the benchmark of a large fleet, what a user runs at N
// servers (issue 30): a configuration written the way examples/nexus-lab
// writes one (one inventory CSV, clusters of 8 racks of 30 servers, each
// cluster picking its racks with a `for` filter, as config's
// TestWriteNexusFleet generates), planned through the CLI and the redfish
// plugin process against N simulated HTTPS BMCs (latency L, M firmware
// members, `$expand`) served by shard processes of RACKFORM_BENCH_PER_SIM
// BMCs each (default 8,000: a listener and a connection of the floor's each,
// under the 20,000 open files a process may hold); the floor, the same
// requests by a minimal Go client, in the same run; then `show` of the plan
// in every format, `rehearse` of it, and `status` of a run of it (apply
// started, stopped at once, the run's journal replayed). For each it prints
// wall time, CPU of the CLI and its plugin, peak RSS (both at one instant)
// and the output's bytes per server. It runs only with
// RACKFORM_BENCH_SCALE=1 (make bench-scale).
func TestScaleBench(t *testing.T) {
	if os.Getenv("RACKFORM_BENCH_SCALE") == "" {
		t.Skip("scale benchmark: set RACKFORM_BENCH_SCALE=1 (make bench-scale)")
	}
	const password = "bench-password"
	n := envInt(t, "RACKFORM_BENCH_N", 10000)
	perShard := envInt(t, "RACKFORM_BENCH_PER_SIM", 8000)
	members := envInt(t, "RACKFORM_BENCH_MEMBERS", 24)
	latency := envDuration(t, "RACKFORM_BENCH_LATENCY", 200*time.Millisecond)
	dir := t.TempDir()
	bin := os.Getenv("RACKFORM_BENCH_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "rackform")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	began := time.Now()
	f := startBenchShards(t, n, perShard, members, latency, true, password, 60000)
	t.Logf("%d BMCs served by %d shard processes, started in %v; load %s", n, len(f.shards), time.Since(began).Round(time.Second), loadavg())
	cfg := filepath.Join(dir, "config")
	writeScaleConfig(t, cfg, f)
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(work, "plan.json")

	// RACKFORM_BENCH_PROFILE=DIR: CPU and heap profiles of each command's
	// CLI and plugin processes in DIR (go tool pprof BIN DIR/plan.cli.cpu).
	profiles := os.Getenv("RACKFORM_BENCH_PROFILE")
	profile := func(name string) {
		if profiles == "" {
			return
		}
		name = strings.NewReplacer(" ", "", "-format", "-").Replace(name)
		for env, suffix := range map[string]string{"RACKFORM_CPUPROFILE": ".cli.cpu", "RACKFORM_HEAPPROFILE": ".cli.heap",
			"RACKFORM_PLUGIN_CPUPROFILE": ".plugin.cpu", "RACKFORM_PLUGIN_HEAPPROFILE": ".plugin.heap"} {
			t.Setenv(env, filepath.Join(profiles, name+suffix))
		}
	}
	var rows []string
	row := func(cmd string, r cliRun, floor time.Duration, bytes int64) {
		ratio, fl := "", ""
		if floor > 0 {
			fl, ratio = floor.Round(10*time.Millisecond).String(), fmt.Sprintf("%.2f×", r.wall.Seconds()/floor.Seconds())
		}
		line := fmt.Sprintf("| %d | %s | %s | %s | %s | %d MB | %s | %d | %s |", n, cmd, r.wall.Round(10*time.Millisecond), fl, ratio,
			r.rss.total>>20, r.cpu.Round(10*time.Millisecond), bytes/int64(n), loadavg())
		t.Log(line)
		rows = append(rows, line)
	}

	// The floor asks RACKFORM_BENCH_FLOOR_BMCS BMCs at once (default
	// 4,096: rackform's default is 2,560 here; at 100,000 every BMC the
	// open files allow, 19,000, outlasts the simulator's handshake
	// timeout on two cores).
	floorBMCs = envInt(t, "RACKFORM_BENCH_FLOOR_BMCS", 4096)
	t.Cleanup(func() { floorBMCs = 0 })
	// RACKFORM_BENCH_ROUNDS (make bench-scale ROUNDS=3) plans and times
	// the floor that many times in turn and reports each round and the
	// median ratio: on a shared machine one round's ratio moves by a
	// tenth from run to run.
	rounds := max(1, envInt(t, "RACKFORM_BENCH_ROUNDS", 1))
	var (
		pr     cliRun
		st     os.FileInfo
		ratios []float64
	)
	for round := 1; round <= rounds; round++ {
		if round > 1 {
			f.record(t) // the simulators count and record this round afresh
		}
		profile("plan")
		simsBefore := f.cpu()
		pr = runCLI(t, bin, password, "plan", "-no-color", "-out", planFile, cfg)
		simsPlan := f.cpu() - simsBefore
		got := f.collect(t)
		var err error
		if st, err = os.Stat(planFile); err != nil {
			t.Fatal(err)
		}
		t.Logf("plan (round %d of %d): %d sessions left open, %.1f TLS handshakes and %.1f requests per server; peak RSS CLI %d MB, plugin %d MB; CPU CLI %v, plugin %v (%.2f ms per server); floor next",
			round, rounds, got.Open, float64(got.Connections)/float64(n), float64(got.Requests)/float64(n), pr.rss.cli>>20, pr.rss.plugin>>20,
			(pr.cpu - pr.rss.pluginCPU).Round(10*time.Millisecond), pr.rss.pluginCPU.Round(10*time.Millisecond), float64(pr.rss.pluginCPU.Microseconds())/1000/float64(n))
		t.Logf("| %d | plan | %s | (floor next) | | %d MB | %s | %d | %s |", n, pr.wall.Round(10*time.Millisecond), pr.rss.total>>20, pr.cpu.Round(10*time.Millisecond), st.Size()/int64(n), loadavg())
		stopProfile := profileFloor(t, profiles)
		before, simsBefore := selfCPU(), f.cpu()
		floor := benchFloor(t, f, got.Recorded, password, 1)
		floorCPU, simsFloor := selfCPU()-before, f.cpu()-simsBefore
		stopProfile()
		t.Logf("floor: %v, CPU %v (%.2f ms per server; this process: the floor client alone while it runs)", floor.Round(10*time.Millisecond),
			floorCPU.Round(10*time.Millisecond), float64(floorCPU.Microseconds())/1000/float64(n))
		t.Logf("the simulators' CPU serving them: plan %v (%.2f ms per server), floor %v (%.2f ms per server)", simsPlan.Round(10*time.Millisecond),
			float64(simsPlan.Microseconds())/1000/float64(n), simsFloor.Round(10*time.Millisecond), float64(simsFloor.Microseconds())/1000/float64(n))
		got.Recorded = nil
		row("plan", pr, floor, st.Size())
		ratios = append(ratios, pr.wall.Seconds()/floor.Seconds())
	}
	if rounds > 1 {
		sorted := slices.Sorted(slices.Values(ratios))
		t.Logf("plan against the floor over %d rounds: median %.2f× (%s)", rounds, sorted[len(sorted)/2], fmtRatios(ratios))
	}
	// RACKFORM_BENCH_KEEP=DIR: the plan file is kept as DIR/plan.json,
	// to profile show, rehearse or status of it again without planning.
	if keep := os.Getenv("RACKFORM_BENCH_KEEP"); keep != "" {
		b, err := os.ReadFile(planFile)
		if err == nil {
			err = os.WriteFile(filepath.Join(keep, "plan.json"), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if os.Getenv("RACKFORM_BENCH_PLAN_ONLY") != "" {
		// Plan and the floor only, for measuring plan again and again.
		return
	}

	for _, format := range []string{"text", "json", "markdown", "html"} {
		profile("show-" + format)
		r := runCLI(t, bin, password, "show", "-no-color", "-format", format, planFile)
		row("show -format "+format, r, 0, int64(len(r.out)))
	}
	profile("rehearse")
	r := runCLI(t, bin, password, "rehearse", "-no-color", "-start", "2026-11-27T16:00:00Z", planFile)
	row("rehearse", r, 0, int64(len(r.out)))
	profile("rehearse-html")
	r = runCLI(t, bin, password, "rehearse", "-no-color", "-format", "html", "-start", "2026-11-27T16:00:00Z", planFile)
	row("rehearse -format html", r, 0, int64(len(r.out)))

	// A run to show: apply started and stopped as soon as its journal is
	// there (the control plane's first servers may finish meanwhile).
	state := filepath.Join(work, "state")
	profile("apply")
	ar := startStoppedApply(t, bin, password, planFile, state)
	row("apply, stopped at once", ar, 0, 0)
	for _, format := range []string{"text", "json"} {
		profile("status-" + format)
		r := runCLI(t, bin, password, "status", "-format", format, "-state-dir", state)
		row("status -format "+format, r, 0, int64(len(r.out)))
	}
	profile("status-html")
	r = runCLI(t, bin, password, "status", "-format", "html", "-state-dir", state)
	row("status -format html", r, 0, int64(len(r.out)))

	table := "| N | command | wall | floor | ratio | peak RSS (CLI + plugin) | CPU | bytes / server | load |\n|---|---|---|---|---|---|---|---|---|\n" + strings.Join(rows, "\n")
	t.Log("\n" + table)
	fmt.Println(table)
}

// profileFloor writes the floor client's CPU profile to DIR/floor.cpu
// (dir "": none) until the returned func is called, to set beside the
// plugin's: what the plugin does that the floor does not.
func profileFloor(t *testing.T, dir string) (stop func()) {
	if dir == "" {
		return func() {}
	}
	out, err := os.Create(filepath.Join(dir, "floor.cpu"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		t.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// selfCPU is the user and system CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startStoppedApply starts apply of planFile, records a stop as soon as
// the run's journal exists, and waits for apply to end there.
func startStoppedApply(t *testing.T, bin, password, planFile, state string) cliRun {
	cmd := exec.Command(bin, "apply", "-no-color", "-allow-unsigned", "-state-dir", state, planFile)
	cmd.Env = append(os.Environ(), "RACKFORM_BMC_PASSWORD="+password)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopRSS := make(chan struct{})
	rss := make(chan treeRSS, 1)
	go func() { rss <- watchTreeRSS(cmd.Process.Pid, stopRSS) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	stopped, lastStop := false, ""
	for {
		select {
		case <-done:
			close(stopRSS)
			r := cliRun{wall: time.Since(start), out: out.String(), rss: <-rss}
			r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			if !stopped {
				t.Fatalf("apply ended before its run could be stopped: %s", tail(r.out, 3000))
			}
			return r
		case <-tick.C:
		}
		if stopped {
			continue
		}
		b, err := exec.Command(bin, "stop", "-state-dir", state).CombinedOutput()
		if err == nil {
			stopped = true
			t.Logf("apply stopped after %v: %s", time.Since(start).Round(10*time.Millisecond), strings.TrimSpace(string(b)))
		} else if lastStop = string(b); time.Since(start) > 10*time.Minute {
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("no stop recorded in 10 minutes: %s\napply: %s", lastStop, tail(out.String(), 3000))
		}
	}
}

// writeScaleConfig writes the fleet f as config's TestWriteNexusFleet lays
// one out (internal/nexusfleet: racks of 30 servers, clusters of 8 racks,
// each cluster filtering its racks from the one inventory), the provider
// trusting the fleet's CAs at its default concurrency.
func writeScaleConfig(t *testing.T, dir string, f *benchFleet) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := nexusfleet.Files(nexusfleet.Fleet{
		Servers: len(f.bmcs), Examples: examplesDir,
		Provider: fmt.Sprintf("  username  = var.bmc_username\n  password  = env(\"RACKFORM_BMC_PASSWORD\")\n  ca_bundle = %q\n", filepath.Join(dir, "ca.pem")),
		BMC:      func(i int) string { return f.bmcs[i].URL },
	})
	if err != nil {
		t.Fatal(err)
	}
	files["ca.pem"] = string(f.ca)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fmtRatios is each round's ratio in run order, "1.17×, 1.09×, 1.24×".
func fmtRatios(ratios []float64) string {
	parts := make([]string, len(ratios))
	for i, r := range ratios {
		parts[i] = fmt.Sprintf("%.2f×", r)
	}
	return strings.Join(parts, ", ")
}
