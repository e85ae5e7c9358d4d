package executor_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// benchPlan: one cluster, compute racks of 20 servers, every server in a
// rack at once, six steps per server (drain, shutdown, update, reimage,
// wait_ready, uncordon).
func benchPlan(p *executortest.Provider, servers int) *plan.Plan {
	b := executortest.NewBuilder(p)
	c := b.Stage("default").Group(b, "default").Cluster("c1")
	for r := 0; r < servers/20; r++ {
		c.Scope(executortest.Scope{Name: fmt.Sprintf("r%04d", r), Servers: 20, Threshold: plan.Threshold{Type: "percent", Value: 90}})
	}
	return b.Plan()
}

// countAppends counts Append calls (one fsync each with the dir backend).
type countAppends struct {
	executor.Backend
	n int
}

func (c *countAppends) Append(ctx context.Context, sha string, recs ...[]byte) ([]int64, error) {
	c.n++
	return c.Backend.Append(ctx, sha, recs...)
}

// BenchmarkApply measures the executor's own overhead on an instant fake
// provider: wall time and allocations per server, and journal bytes per
// server. The "dir" variants include an fsync per journal record.
func BenchmarkApply(b *testing.B) {
	for _, bc := range []struct {
		servers int
		backend string
	}{{1000, "memory"}, {10000, "memory"}, {1000, "dir"}, {10000, "dir"}} {
		b.Run(fmt.Sprintf("servers=%d/%s", bc.servers, bc.backend), func(b *testing.B) {
			b.ReportAllocs()
			var journal int64
			var appends int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				prov := executortest.NewProvider()
				p := benchPlan(prov, bc.servers)
				var be executor.Backend
				mem := state.NewMemory()
				be = mem
				var dir *state.Dir
				if bc.backend == "dir" {
					d, err := state.Open(b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					dir, be = d, d
				}
				counted := &countAppends{Backend: be}
				e, err := executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: counted,
					Providers: map[string]providers.Provider{"fake": prov}, Hooks: executortest.NewHooks(),
					Clock: executortest.NewClock(executortest.Epoch)})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				out, err := e.Run(context.Background(), context.Background())
				b.StopTimer()
				if err != nil || out.Status != executor.OutcomeCompleted {
					b.Fatalf("%v %v", out, err)
				}
				if dir != nil {
					entries, _ := dir.Read(context.Background(), sha, -1)
					journal = entries[len(entries)-1].Pos
					dir.Close()
				} else {
					journal = mem.Size(sha)
				}
				appends = counted.n
				b.StartTimer()
			}
			b.ReportMetric(float64(appends)/float64(bc.servers), "appends/server")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bc.servers), "ns/server")
			b.ReportMetric(float64(journal)/float64(bc.servers), "journal-B/server")
		})
	}
}
