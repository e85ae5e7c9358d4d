package command

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/redfish"
	"github.com/rackform/rackform/providers/sim"
)

// BenchmarkPlanSim plans N servers served by the Redfish simulator with
// 50 ms added to every response, read by the real redfish provider (in
// process: the plugin hop is per stream, not per server). k, the requests
// the provider makes per server, is measured from the simulator; the
// reported ratio is wall time over ⌈N/C⌉·k·L.
func BenchmarkPlanSim(b *testing.B) {
	const (
		latency     = 50 * time.Millisecond
		parallelism = 100
		port        = 18500
	)
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			var specs []sim.BMCSpec
			var src strings.Builder
			src.WriteString(`provider "redfish" {
  allow_http = true
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
cluster "bench" {
  release = release.r
`)
			specs = benchFleet(&src, n, "rack%d", "127.7", port)
			dir := b.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(src.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			cfg, diags := config.NewLoader(config.LoadOptions{}).Load(dir)
			if diags.HasErrors() {
				b.Fatal(diags.Error())
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fleet, err := sim.New(sim.Options{Username: "admin", Password: "bench", Latency: latency}, specs)
			if err != nil {
				b.Fatal(err)
			}
			if err := fleet.Start(ctx); err != nil {
				b.Skipf("cannot serve %d simulated BMCs here: %v", n, err)
			}
			defer fleet.Close()

			prov := redfish.New(redfish.Options{})
			conf, _ := json.Marshal(map[string]any{"username": "admin", "password": "bench", "concurrency": parallelism, "timeout": "30s"})
			if d := prov.Configure(ctx, &providers.ConfigureRequest{Config: conf}); d.HasErrors() {
				b.Fatal(d.Err())
			}
			opts := planner.Options{Providers: map[string]providers.Provider{"redfish": prov}, Now: time.Now(), Parallelism: parallelism}

			var size int
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, wall0 := benchCPU(), time.Now()
			for i := 0; i < b.N; i++ {
				p, diags := planner.Plan(ctx, cfg, opts)
				if diags.HasErrors() {
					b.Fatal(diags.Error())
				}
				if p.Summary.Upgrade != n {
					b.Fatalf("%d of %d servers to upgrade: %+v", p.Summary.Upgrade, n, p.Warnings)
				}
				file, err := plan.Encode(p)
				if err != nil {
					b.Fatal(err)
				}
				size = len(file)
			}
			wall := time.Since(wall0) / time.Duration(b.N)
			cpu := (benchCPU() - cpu0) / time.Duration(b.N)
			b.StopTimer()
			var requests int64
			for _, st := range fleet.AllStats() {
				requests += st.Requests
			}
			k := float64(requests) / float64(n*b.N)
			bound := time.Duration(math.Ceil(float64(n)/parallelism) * k * float64(latency))
			b.ReportMetric(k, "requests/server")
			b.ReportMetric(float64(wall)/float64(bound), "x-lower-bound")
			b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms/op")
			b.ReportMetric(float64(size)/float64(n), "plan-bytes/server")
			// Peak resident memory of the whole process so far; sizes run
			// in increasing order, so it is the peak of this size.
			b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MB")
		})
	}
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident set size in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024 // Linux reports kilobytes
}

// benchFleet appends n servers (racks of 40: three control-plane servers
// and a spare in the first racks, two management servers per rack, the
// rest compute) to the cluster block being written in src, closes it, and
// returns the simulated BMCs that serve them on netPrefix.X.Y:port, one
// release behind.
func benchFleet(src *strings.Builder, n int, rackFmt, netPrefix string, port int) []sim.BMCSpec {
	const perRack = 40
	specs := make([]sim.BMCSpec, n)
	for i := 0; i < n; i++ {
		r, s := i/perRack, i%perRack
		if s == 0 {
			if i > 0 {
				src.WriteString("  }\n")
			}
			fmt.Fprintf(src, "  rack \""+rackFmt+"\" {\n", r)
		}
		role := "compute"
		switch {
		case s == 0 && r < 3:
			role = "control_plane"
		case s == 3 && r == 0:
			role = "control_plane_spare"
		case s == 1 || s == 2:
			role = "management"
		}
		addr := fmt.Sprintf("%s.%d.%d:%d", netPrefix, i/250, i%250+1, port)
		fmt.Fprintf(src, "    server \"s%05d\" {\n      bmc  = \"http://%s\"\n      role = %q\n    }\n", i, addr, role)
		specs[i] = sim.BMCSpec{Name: fmt.Sprintf("s%05d", i), Addr: addr, PowerOn: true,
			Firmware: map[string]string{"BIOS": "2.70", "Runtime": "4.6.0"}}
	}
	src.WriteString("  }\n}\n")
	return specs
}
