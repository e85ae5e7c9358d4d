package planner

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

// benchFleet writes a one-cluster configuration of n servers in racks of
// 40: three control-plane servers (racks 0-2) and a spare (rack 0), two management servers per
// rack, the rest compute.
func benchFleet(b *testing.B, n int) *config.Config {
	b.Helper()
	var sb strings.Builder
	sb.WriteString(`provider "redfish" {}
release "r" {
  version = "4.6.1"
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bios.bin"
    match {
      software_id = "BIOS"
    }
  }
  component "runtime" {
    kind    = "runtime"
    version = "4.6.1"
    image   = "http://127.0.0.1:9/rt.iso"
    match {
      id = "RT"
    }
  }
}
cluster "bench" {
  release = release.r
`)
	const perRack = 40
	for r := 0; r*perRack < n; r++ {
		fmt.Fprintf(&sb, "  rack \"rack%d\" {\n", r)
		for s := 0; s < perRack && r*perRack+s < n; s++ {
			role := "compute"
			switch {
			case s == 0 && r < 3:
				role = "control_plane"
			case s == 3 && r == 0:
				role = "control_plane_spare"
			case s == 1 || s == 2:
				role = "management"
			}
			i := r*perRack + s
			fmt.Fprintf(&sb, "    server \"s%05d\" {\n      bmc  = \"https://127.6.%d.%d:8443\"\n      role = %q\n    }\n", i, i/250, i%250+1, role)
		}
		sb.WriteString("  }\n")
	}
	sb.WriteString("}\n")
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, diags := config.NewLoader(config.LoadOptions{}).Load(dir)
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	return cfg
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPlan measures Plan against an in-process provider that takes
// latency L per BMC request, k requests per server, C servers at once.
// The reported ratio is wall time over the lower bound ⌈N/C⌉·k·L: what is
// left above 1 is the planner's (and the fake's) own overhead.
func BenchmarkPlan(b *testing.B) {
	const (
		latency     = 50 * time.Millisecond
		k           = 1
		parallelism = 100
	)
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			cfg := benchFleet(b, n)
			fakes := plannertest.FromConfig(cfg, func(i int, _ *config.Server) plannertest.State {
				if i%10 == 0 {
					return plannertest.AtTarget
				}
				return plannertest.Behind
			})
			f := fakes["redfish"]
			f.Latency, f.Requests = latency, k
			provs := map[string]providers.Provider{"redfish": f}
			opts := Options{Providers: provs, Now: testNow, Parallelism: parallelism}
			var size int
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, wall0 := cpuTime(), time.Now()
			for i := 0; i < b.N; i++ {
				p, diags := Plan(context.Background(), cfg, opts)
				if diags.HasErrors() {
					b.Fatal(diags.Error())
				}
				file, err := plan.Encode(p)
				if err != nil {
					b.Fatal(err)
				}
				size = len(file)
			}
			wall := time.Since(wall0) / time.Duration(b.N)
			cpu := (cpuTime() - cpu0) / time.Duration(b.N)
			bound := time.Duration(math.Ceil(float64(n)/parallelism)) * k * latency
			b.ReportMetric(float64(wall)/float64(bound), "x-lower-bound")
			b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms/op")
			b.ReportMetric(float64(size)/float64(n), "plan-bytes/server")
			// Peak resident memory of the whole process so far; sizes run
			// in increasing order, so it is the peak of this size.
			b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MB")
		})
	}
}

// BenchmarkPlanNoLatency is the planner's own cost: the same fleets with
// BMCs that answer at once.
func BenchmarkPlanNoLatency(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			cfg := benchFleet(b, n)
			f := plannertest.FromConfig(cfg, func(int, *config.Server) plannertest.State { return plannertest.Behind })["redfish"]
			opts := Options{Providers: map[string]providers.Provider{"redfish": f}, Now: testNow, Parallelism: 100}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p, diags := Plan(context.Background(), cfg, opts)
				if diags.HasErrors() {
					b.Fatal(diags.Error())
				}
				if _, err := plan.Encode(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// peakRSS is the process's peak resident set size in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024 // Linux reports kilobytes
}
