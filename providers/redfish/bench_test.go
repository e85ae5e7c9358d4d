package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/sim"
)

// BenchmarkObserve measures Observe of a simulated fleet (TLS, every profile
// in turn) at several sizes and added BMC latencies. Each iteration uses a
// fresh provider, so k counts what a `rackform plan` pays per server:
// service root, session, system and inventories. Reported:
//
//	s/observe   wall time of one Observe over the fleet
//	req/server  k, HTTP requests per server (from the provider's count)
//	bound-s     the latency lower bound ceil(N/C)·k·L (L > 0 only)
//	x-bound     wall time / bound
//	warm-*      the same for a second Observe on the same provider, which
//	            reuses sessions and discovered links (what apply's re-observe
//	            before each server pays)
//
// The 10,000-BMC cases take about a minute: run them with -benchtime=1x.
func BenchmarkObserve(b *testing.B) {
	const concurrency = 64
	for _, n := range []int{10, 100, 1000, 10000} {
		for _, lat := range []time.Duration{0, 50 * time.Millisecond} {
			b.Run(fmt.Sprintf("N=%d/L=%s", n, lat), func(b *testing.B) {
				benchObserve(b, n, lat, concurrency)
			})
		}
	}
}

func benchObserve(b *testing.B, n int, lat time.Duration, conc int) {
	specs := make([]sim.BMCSpec, n)
	for i := range specs {
		specs[i] = sim.BMCSpec{
			Name:    fmt.Sprintf("bmc-%05d", i),
			Addr:    fmt.Sprintf("127.88.%d.%d:0", 1+i/250, 1+i%250), // a block no other test uses
			Profile: sim.Profiles()[i%len(sim.Profiles())],
			PowerOn: true,
		}
	}
	f, err := sim.New(sim.Options{Speed: simSpeed, Username: testUser, Password: testPassword, TLS: true, Latency: lat, SessionLimit: 4}, specs)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	targets := make([]providers.Target, 0, n)
	for _, bm := range f.BMCs() {
		targets = append(targets, providers.Target{Name: bm.Name, Endpoint: bm.URL})
	}
	cfg, _ := json.Marshal(map[string]any{"username": testUser, "password": testPassword, "ca_bundle": string(f.CACertPEM()),
		"concurrency": conc, "timeout": "60s"})

	var wall, warmWall time.Duration
	var requests, warmRequests int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		p := New(Options{CountRequests: true})
		if d := p.Configure(ctx, &providers.ConfigureRequest{Config: cfg}); d.HasErrors() {
			b.Fatal(d.Err())
		}
		unreachable := 0
		b.StartTimer()
		start := time.Now()
		d := p.Observe(ctx, &providers.ObserveRequest{Targets: targets}, func(o *providers.Observation) error {
			if !o.Reachable {
				unreachable++
				if unreachable == 1 {
					b.Errorf("%s: %v", o.Server, o.Diagnostics.Err())
				}
			}
			return nil
		})
		wall += time.Since(start)
		b.StopTimer()
		if d.HasErrors() || unreachable > 0 {
			b.Fatalf("observe: %v; %d unreachable", d.Err(), unreachable)
		}
		cold := int64(0)
		for _, t := range targets {
			cold += p.RequestCount(t.Endpoint)
		}
		requests += cold
		start = time.Now()
		if d := p.Observe(ctx, &providers.ObserveRequest{Targets: targets}, func(*providers.Observation) error { return nil }); d.HasErrors() {
			b.Fatal(d.Err())
		}
		warmWall += time.Since(start)
		for _, t := range targets {
			warmRequests += p.RequestCount(t.Endpoint)
		}
		warmRequests -= cold
		p.Stop(ctx)
		b.StartTimer()
	}
	b.StopTimer()
	perObserve := wall.Seconds() / float64(b.N)
	k := float64(requests) / float64(b.N) / float64(n)
	b.ReportMetric(perObserve, "s/observe")
	b.ReportMetric(k, "req/server")
	warmPer := warmWall.Seconds() / float64(b.N)
	warmK := float64(warmRequests) / float64(b.N) / float64(n)
	b.ReportMetric(warmPer, "warm-s/observe")
	b.ReportMetric(warmK, "warm-req/server")
	if lat > 0 {
		bound := math.Ceil(float64(n)/float64(conc)) * k * lat.Seconds()
		b.ReportMetric(bound, "bound-s")
		b.ReportMetric(perObserve/bound, "x-bound")
		warmBound := math.Ceil(float64(n)/float64(conc)) * warmK * lat.Seconds()
		b.ReportMetric(warmPer/warmBound, "warm-x-bound")
	}
}
