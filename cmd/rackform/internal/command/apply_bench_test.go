package command

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/redfish"
	"github.com/rackform/rackform/providers/sim"
)

// BenchmarkApplySim applies a plan for N servers (40 a rack) to the
// time-scaled Redfish simulator through `rackform apply` run in process:
// the plan file decoded and checked, providers configured from the plan's
// configuration snapshot, the real redfish provider in process (not as a
// plugin), the local state directory (fsynced journal) and -json-into.
//
// x-lower-bound is wall time over the strategy's own lower bound: scopes
// run one after another, so the bound is the sum over scopes (racks,
// management batches, the serial control plane) of the time the scope
// cannot go below given its servers' measured durations (server_started to
// its end, taken from the event stream) and its max_unavailable: the
// slowest server, or the sum over the slots when servers queue. Waits are
// zero here. What is left is the executor's and CLI's own overhead between
// and around servers: scheduling, gaps between scopes, start-up (plan
// checks, provider configuration). The per-step journal fsyncs and the
// provider's polling fall inside server durations, so x-sim-nominal gives
// the same ratio against the simulator's nominal server time (shutdown,
// flash, boot, install at the given speed): everything but the BMCs.
func BenchmarkApplySim(b *testing.B) {
	const speed = 60000 // a 10-minute flash takes 10 ms
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			if n > 1000 && os.Getenv("RACKFORM_BENCH_10K") == "" && testing.Short() {
				b.Skip("10,000 servers: set RACKFORM_BENCH_10K or drop -short")
			}
			var wall, bound, nominal, cpu time.Duration
			var journalBytes int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				env := newApplyBench(b, n, speed, 18600+i)
				b.StartTimer()
				cpu0, wall0 := benchCPU(), time.Now()
				code := env.apply(b)
				wall += time.Since(wall0)
				cpu += benchCPU() - cpu0
				b.StopTimer()
				if code != ExitOK {
					b.Fatalf("apply exited %d:\n%s", code, env.stderr.String())
				}
				bound += env.lowerBound(b)
				nominal += env.nominalBound(speed)
				journalBytes += env.journalSize(b)
				env.close()
				b.StartTimer()
			}
			b.ReportMetric(float64(wall)/float64(bound), "x-lower-bound")
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms/op")
			b.ReportMetric(float64(bound.Milliseconds())/float64(b.N), "bound-ms/op")
			b.ReportMetric(float64(wall)/float64(nominal), "x-sim-nominal")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(journalBytes)/float64(n*b.N), "journal-bytes/server")
			b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MB")
		})
	}
}

type applyBench struct {
	n        int
	fleet    *sim.Fleet
	cancel   context.CancelFunc
	work     string
	planFile string
	plan     *plan.Plan
	stderr   bytes.Buffer
}

func newApplyBench(b *testing.B, n int, speed float64, port int) *applyBench {
	b.Helper()
	var specs []sim.BMCSpec
	var src strings.Builder
	src.WriteString(`provider "redfish" {
  username         = "admin"
  password         = env("RACKFORM_BENCH_PASSWORD")
  timeout          = "10s"
  poll_interval    = "10ms"
  retry_base_delay = "5ms"
  retry_max_delay  = "50ms"
  concurrency      = 200
  allow_http       = true
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
strategy "bench" {
  verify_timeout   = "30s"
  drain_timeout    = "5s"
  shutdown_timeout = "5s"
  compute {
    wait_after_rack = "0s"
  }
}
cluster "bench" {
  release  = release.r
  strategy = strategy.bench
`)
	specs = benchFleet(&src, n, "rack%03d", "127.8", port)
	work := b.TempDir()
	dir := filepath.Join(work, "fleet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "RACKFORM_BENCH_PASSWORD" {
			return "bench-pw"
		}
		return ""
	}
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: getenv}).Load(dir)
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	ctx, cancel := context.WithCancel(context.Background())
	fleet, err := sim.New(sim.Options{Username: "admin", Password: "bench-pw", Speed: speed}, specs)
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	if err := fleet.Start(ctx); err != nil {
		cancel()
		b.Skipf("cannot serve %d simulated BMCs here: %v", n, err)
	}
	env := &applyBench{n: n, fleet: fleet, cancel: cancel, work: work}
	running, pd := run.StartProviders(ctx, cfg, inProcessRedfish)
	defer running.Close()
	if pd.HasErrors() {
		env.close()
		b.Fatal(pd.Error())
	}
	p, diags := planner.Plan(ctx, cfg, planner.Options{Providers: running.ByName, ProviderInfo: running.Info, Now: time.Now(), Parallelism: 200})
	if diags.HasErrors() {
		env.close()
		b.Fatal(diags.Error())
	}
	if p.Summary.Upgrade != n {
		env.close()
		b.Fatalf("%d of %d servers to upgrade", p.Summary.Upgrade, n)
	}
	file, err := plan.Encode(p)
	if err != nil {
		env.close()
		b.Fatal(err)
	}
	env.plan = p
	env.planFile = filepath.Join(work, "plan.json")
	if err := os.WriteFile(env.planFile, file, 0o644); err != nil {
		env.close()
		b.Fatal(err)
	}
	return env
}

// inProcessRedfish starts the redfish provider in this process.
func inProcessRedfish(_ context.Context, decl *config.Provider) (providers.Provider, plan.Provider, func(), error) {
	return redfish.New(redfish.Options{}), plan.Provider{Name: decl.Name, Source: "builtin", SHA256: "bench"}, func() {}, nil
}

func (e *applyBench) apply(b *testing.B) int {
	m := &Meta{Streams: Streams{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &e.stderr},
		Getenv: func(k string) string {
			if k == "RACKFORM_BENCH_PASSWORD" {
				return "bench-pw"
			}
			return ""
		}}
	c := &applyCommand{Meta: m}
	c.start = inProcessRedfish
	c.hashOf = func(plan.Provider, func(string) string) (string, error) { return "bench", nil }
	return c.Run(context.Background(), []string{"-allow-unsigned", "-state-dir", filepath.Join(e.work, "state"), "-json-into", filepath.Join(e.work, "events.jsonl"), e.planFile})
}

func (e *applyBench) close() {
	e.cancel()
	e.fleet.Close()
	runtime.GC()
}

// lowerBound is the strategy's own lower bound from the measured server
// durations (see BenchmarkApplySim).
func (e *applyBench) lowerBound(b *testing.B) time.Duration {
	b.Helper()
	f, err := os.Open(filepath.Join(e.work, "events.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	start, dur := map[string]time.Time{}, map[string]time.Duration{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		// The machine-readable UI: the executor's event under "event",
		// its time in "@timestamp" (the version line has no event).
		var line struct {
			Timestamp time.Time      `json:"@timestamp"`
			Event     executor.Event `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			b.Fatal(err)
		}
		ev := line.Event
		ev.Time = line.Timestamp
		if ev.Kind != executor.KindServer {
			continue
		}
		switch ev.Type {
		case "server_started":
			start[ev.ID] = ev.Time
		case "server_completed", "server_failed", "server_skipped":
			if t0, ok := start[ev.ID]; ok {
				dur[ev.ID] = ev.Time.Sub(t0)
			}
		}
	}
	var total time.Duration
	for _, st := range e.plan.Run.Stages {
		for _, g := range st.Groups {
			for _, c := range g.Clusters {
				for _, ph := range c.Phases {
					for _, sc := range ph.Scopes {
						var longest, sum time.Duration
						for _, s := range sc.Servers {
							d := dur[s]
							sum += d
							longest = max(longest, d)
						}
						slots := max(sc.MaxUnavailable, 1)
						total += max(longest, sum/time.Duration(slots))
					}
				}
			}
		}
	}
	if len(dur) != e.n {
		b.Fatalf("%d server durations for %d servers", len(dur), e.n)
	}
	return total
}

func (e *applyBench) journalSize(b *testing.B) int64 {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(e.work, "state", "journal", "*.jsonl"))
	if err != nil || len(files) != 1 {
		b.Fatalf("journal files %v: %v", files, err)
	}
	fi, err := os.Stat(files[0])
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// nominalBound is the strategy's lower bound if every server took the
// simulator's nominal time: graceful shutdown, the BIOS flash (activated on
// reset), the reimage boot and install.
func (e *applyBench) nominalBound(speed float64) time.Duration {
	tm := sim.DefaultTimings()
	server := time.Duration(float64(tm.Shutdown+tm.Flash+tm.Boot+tm.Install) / speed)
	var total time.Duration
	for _, st := range e.plan.Run.Stages {
		for _, g := range st.Groups {
			for _, c := range g.Clusters {
				for _, ph := range c.Phases {
					for _, sc := range ph.Scopes {
						n := len(sc.Servers)
						slots := max(sc.MaxUnavailable, 1)
						total += time.Duration((n+slots-1)/slots) * server
					}
				}
			}
		}
	}
	return total
}
