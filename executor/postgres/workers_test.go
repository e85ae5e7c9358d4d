package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/backendtest"
	"github.com/rackform/rackform/internal/pgtest"
)

// TestClaimerConformance: the claims of several workers on one run
// (executor/backendtest.RunClaimer) against PostgreSQL, each worker its own
// connection pool, as on its own machine.
func TestClaimerConformance(t *testing.T) {
	pgtest.Need(t, srv)
	backendtest.RunClaimer(t, func(t *testing.T) backendtest.Store {
		conn := srv.Database(t)
		return func(t *testing.T) executor.Backend { return open(t, Options{ConnString: conn}) }
	})
}

func worker(id string) executor.WorkerInfo {
	return executor.WorkerInfo{ID: id, Who: "ci@" + id, PID: 99999, PlanSHA256: strings.Repeat("a", 64)}
}

// TestClaimSkipsUnitsBeingClaimed: a unit whose claims row another worker
// has locked in its claiming transaction is skipped (SELECT … FOR UPDATE
// SKIP LOCKED), not waited for: the claim returns at once with the other
// units; once that transaction ends, the unit can be claimed.
func TestClaimSkipsUnitsBeingClaimed(t *testing.T) {
	pgtest.Need(t, srv)
	ctx := context.Background()
	conn := srv.Database(t)
	sha := strings.Repeat("a", 64)
	a := open(t, Options{ConnString: conn})
	b := open(t, Options{ConnString: conn})
	must(t, a.Join(ctx, worker("w-a")))
	must(t, b.Join(ctx, worker("w-b")))
	// Rows exist once a claim saw the units.
	held, _, err := a.Claim(ctx, sha, []string{"g1", "g2"}, 0)
	must(t, err)
	if len(held) != 0 {
		t.Fatalf("a claim with a share of 0 took %v", held)
	}
	tx, err := a.pool.Begin(ctx)
	must(t, err)
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM rackform.claims WHERE plan_sha256 = $1 AND unit = 'g1' FOR UPDATE`, sha); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	held, _, err = b.Claim(cctx, sha, []string{"g1", "g2"}, 2)
	must(t, err)
	if !slices.Equal(held, []string{"g2"}) {
		t.Fatalf("while g1 is being claimed, b took %v, want g2 only (g1 skipped, not waited for)", held)
	}
	must(t, tx.Rollback(ctx))
	held, _, err = b.Claim(ctx, sha, []string{"g1", "g2"}, 2)
	must(t, err)
	if !slices.Equal(held, []string{"g1", "g2"}) {
		t.Fatalf("after the other transaction ended, b holds %v, want g1 g2", held)
	}
}

// TestExpiredWorkerIsAdoptedAndFenced: a worker whose heartbeat stopped (a
// process frozen, or cut off from the database) keeps its claim only until
// its lease passes by the database's clock. Then another worker adopts the
// unit, and the old worker can neither journal (its Append is refused in
// the journal transaction, nothing written) nor claim again: it cannot act
// on what it no longer holds.
func TestExpiredWorkerIsAdoptedAndFenced(t *testing.T) {
	pgtest.Need(t, srv)
	ctx := context.Background()
	conn := srv.Database(t)
	sha := strings.Repeat("a", 64)
	lease := 1500 * time.Millisecond
	a := open(t, Options{ConnString: conn, Lease: lease})
	b := open(t, Options{ConnString: conn, Lease: lease})
	must(t, a.Join(ctx, worker("w-a")))
	must(t, b.Join(ctx, worker("w-b")))
	held, _, err := a.Claim(ctx, sha, []string{"g1"}, 1)
	must(t, err)
	if !slices.Equal(held, []string{"g1"}) {
		t.Fatalf("a holds %v", held)
	}
	if _, err := a.Append(ctx, sha, []byte(`{"t":"a while it holds g1"}`)); err != nil {
		t.Fatal(err)
	}
	// While a's heartbeat runs, g1 stays a's past the first lease.
	time.Sleep(2 * lease)
	if held, _, err := b.Claim(ctx, sha, []string{"g1"}, 1); err != nil || len(held) != 0 {
		t.Fatalf("b took a live worker's unit: %v %v", held, err)
	}
	a.mu.Lock()
	a.worker.halt() // frozen: no heartbeat, the lease still believed held
	a.mu.Unlock()
	deadline := time.Now().Add(10 * lease)
	var adopted []string
	for {
		held, adopted, err = b.Claim(ctx, sha, []string{"g1"}, 1)
		must(t, err)
		if len(held) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the frozen worker's claim never expired")
		}
		time.Sleep(lease / 5)
	}
	if !slices.Equal(adopted, []string{"g1"}) {
		t.Fatalf("b took g1 but reports adopted %v, want g1", adopted)
	}
	_, err = a.Append(ctx, sha, []byte(`{"t":"a after its lease expired"}`))
	if !errors.Is(err, ErrWorkerLeaseLost) {
		t.Fatalf("Append by the worker whose lease expired: %v, want the worker lease lost", err)
	}
	t.Log(err)
	if _, _, err := a.Claim(ctx, sha, []string{"g1", "g2"}, 2); !errors.Is(err, ErrWorkerLeaseLost) {
		t.Fatalf("Claim by the worker whose lease expired: %v, want the worker lease lost", err)
	}
	if _, err := b.Append(ctx, sha, []byte(`{"t":"b adopted g1"}`)); err != nil {
		t.Fatal(err)
	}
	es, err := b.Read(ctx, sha, -1)
	must(t, err)
	if len(es) != 2 || string(es[1].Data) != `{"t":"b adopted g1"}` {
		t.Fatalf("journal = %d records, want a's first and b's only", len(es))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
