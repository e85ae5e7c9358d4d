package history_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rackform/rackform/executor/history"
)

// BenchmarkLoad reads 20 runs of a fleet of servers (four steps each),
// stored in a state directory as apply leaves them: what plan adds when
// it learns from a full history. It reports the time per run and per
// server of a run.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			servers := make([]fleetServer, n)
			for i := range servers {
				servers[i] = fleetServer{addr: fmt.Sprintf("c/r%03d/s%05d", i/40, i), vendor: "Contoso", model: "R640",
					shutdown: minutes(1), update: minutes(10 + i%3), reset: minutes(1), waitReady: minutes(5)}
			}
			const runs = history.DefaultRuns
			for r := range runs {
				file, _ := planFile(b, fmt.Sprintf("run%d", r), servers)
				j := &journal{t: b, at: epoch.Add(time.Duration(r) * time.Hour)}
				j.run(servers)
				store(b, dir, file, j)
			}
			src, err := history.OpenStateDir(dir)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				e, err := history.Load(context.Background(), []history.Source{src}, history.Options{})
				if err != nil || e.Runs() != runs {
					b.Fatalf("%d runs, %v", e.Runs(), err)
				}
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per/runs/1e6, "ms/run")
			b.ReportMetric(per/runs/float64(n)/1e3, "µs/server-run")
		})
	}
}
