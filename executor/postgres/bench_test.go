package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rackform/rackform/internal/pgtest"
)

// benchRecord is the size and shape of a typical journal record (a server's
// state change).
var benchRecord = []byte(`{"v":1,"type":"state","t":"2026-11-25T22:00:00.123456Z","id":"stage.prod.group.main.cluster.lab.phase.compute.rack.r1.server.s1","state":"running","message":"step 2/3: BIOS 2.70 -> 2.80 (simple_update)"}`)

// BenchmarkAppend measures the journal write per step: one Append of one
// record, committed (the engine's group commit of one record), while the
// lock is held (so the lease fence runs too), over the Unix socket and over
// loopback TCP with password authentication.
func BenchmarkAppend(b *testing.B) {
	pgtest.Need(b, srv)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		conn   func(db string) string
		worker bool
	}{
		{"socket", srv.SocketConn, false},
		{"tcp", srv.TCPConn, false},
		// With several workers on one run: the worker lease (what its
		// claims hang on) is fenced in the same transaction.
		{"socket-worker", srv.SocketConn, true},
		{"tcp-worker", srv.TCPConn, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			db, err := srv.NewDatabase(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			be := open(b, Options{ConnString: tc.conn(db)})
			if err := be.Lock(ctx, lockInfo("bench")); err != nil {
				b.Fatal(err)
			}
			if tc.worker {
				if err := be.Join(ctx, worker("bench")); err != nil {
					b.Fatal(err)
				}
			}
			sha := strings.Repeat("e", 64)
			b.ResetTimer()
			for b.Loop() {
				if _, err := be.Append(ctx, sha, benchRecord); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendWorkers measures what one run's journal takes from four
// workers appending at once (each its own pool, as four apply processes):
// the time per append of the run as a whole, so appends/s = 1/(ns/op).
// Every append of a run locks the run's row until its commit (positions
// grow in commit order, see Append), so the four wait for one another's
// commits: this is the run's journal ceiling, whatever the number of
// workers.
func BenchmarkAppendWorkers(b *testing.B) {
	pgtest.Need(b, srv)
	ctx := context.Background()
	db, err := srv.NewDatabase(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	const workers = 4
	sha := strings.Repeat("e", 64)
	var bes []*Backend
	for i := range workers {
		be := open(b, Options{ConnString: srv.SocketConn(db)})
		if err := be.Join(ctx, worker(fmt.Sprintf("bench-%d", i))); err != nil {
			b.Fatal(err)
		}
		bes = append(bes, be)
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, be := range bes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if _, err := be.Append(ctx, sha, benchRecord); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
