package plugin

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
)

// BenchmarkObserve measures what the protocol costs per observed server:
// the same Fake provider called directly, through the in-process gRPC shims,
// and through a real plugin process (AutoMTLS over a Unix socket).
func BenchmarkObserve(b *testing.B) {
	const n = 10_000
	targets := make([]providers.Target, n)
	for i := range targets {
		targets[i] = providers.Target{Name: fmt.Sprintf("east-1/r%03d/c%05d", i/40, i), Endpoint: providertest.FakeFleet()[i%2].Endpoint}
	}
	cfg := &providers.ConfigureRequest{Config: []byte(`{"username":"u"}`)}
	run := func(b *testing.B, p providers.Provider) {
		if d := p.Configure(context.Background(), cfg); d.HasErrors() {
			b.Fatal(d.Err())
		}
		b.ResetTimer()
		for range b.N {
			var got atomic.Int64 // the Fake calls back from several goroutines
			d := p.Observe(context.Background(), &providers.ObserveRequest{Targets: targets}, func(*providers.Observation) error {
				got.Add(1)
				return nil
			})
			if d.HasErrors() || got.Load() != n {
				b.Fatalf("%d observations, %v", got.Load(), d.Err())
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/server")
	}
	b.Run("direct", func(b *testing.B) { run(b, providertest.NewFake(providertest.FakeFleet()...)) })
	b.Run("grpc-in-process", func(b *testing.B) {
		c, _ := connectTB(b, providertest.NewFake(providertest.FakeFleet()...))
		run(b, c)
	})
	b.Run("plugin-process", func(b *testing.B) {
		c, err := Start(context.Background(), Spec{Name: "fake", Path: buildFakePluginTB(b)}, hclog.NewNullLogger())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		run(b, c)
	})
}

// BenchmarkStart measures a plugin's life: start with AutoMTLS, one
// Describe, Close (Stop, then the process ends).
func BenchmarkStart(b *testing.B) {
	bin := buildFakePluginTB(b)
	for range b.N {
		c, err := Start(context.Background(), Spec{Name: "fake", Path: bin}, hclog.NewNullLogger())
		if err != nil {
			b.Fatal(err)
		}
		if _, d := c.Describe(context.Background()); d.HasErrors() {
			b.Fatal(d.Err())
		}
		c.Close()
	}
}
