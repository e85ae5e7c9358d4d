package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/backendtest"
	"github.com/rackform/rackform/internal/pgtest"
)

// srv is the package's PostgreSQL server (nil: no binaries, tests skip).
var srv *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &srv)) }

func open(t testing.TB, o Options) *Backend {
	t.Helper()
	b, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestConformance: the PostgreSQL backend gives the guarantees of every
// backend (executor/backendtest); two handles are two connections pools on
// one database, as two CI jobs on two machines.
func TestConformance(t *testing.T) {
	pgtest.Need(t, srv)
	backendtest.Run(t, func(t *testing.T) backendtest.Store {
		conn := srv.Database(t)
		return func(t *testing.T) executor.Backend { return open(t, Options{ConnString: conn}) }
	})
}

// TestConformanceTCP runs the same suite over loopback TCP with a password.
func TestConformanceTCP(t *testing.T) {
	pgtest.Need(t, srv)
	backendtest.Run(t, func(t *testing.T) backendtest.Store {
		name, err := srv.NewDatabase(context.Background(), "tcp")
		if err != nil {
			t.Fatal(err)
		}
		conn := srv.TCPConn(name)
		return func(t *testing.T) executor.Backend { return open(t, Options{ConnString: conn}) }
	})
}

// TestNewerSchemaRefused: a database migrated by a newer rackform is
// refused by this one with a message that says so, and nothing is changed.
func TestNewerSchemaRefused(t *testing.T) {
	pgtest.Need(t, srv)
	ctx := context.Background()
	conn := srv.Database(t)
	b := open(t, Options{ConnString: conn})
	if _, err := b.pool.Exec(ctx, `INSERT INTO rackform.schema_version (version) VALUES ($1)`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, Options{ConnString: conn})
	var se *SchemaError
	if !errors.As(err, &se) || se.Found != SchemaVersion+1 {
		t.Fatalf("Open of a newer schema: %v, want a SchemaError", err)
	}
	for _, want := range []string{"newer than this rackform understands", "version 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestMigrationOnFirstUse: concurrent first opens of an empty database
// create the schema once and record its version.
func TestMigrationOnFirstUse(t *testing.T) {
	pgtest.Need(t, srv)
	ctx := context.Background()
	conn := srv.Database(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := Open(ctx, Options{ConnString: conn})
			if err == nil {
				b.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent first open: %v", err)
		}
	}
	b := open(t, Options{ConnString: conn})
	var versions []int
	rows, err := b.pool.Query(ctx, `SELECT version FROM rackform.schema_version ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int
		_ = rows.Scan(&v)
		versions = append(versions, v)
	}
	if len(versions) != SchemaVersion || versions[len(versions)-1] != SchemaVersion {
		t.Fatalf("schema_version = %v, want 1..%d once each", versions, SchemaVersion)
	}
}

// TestConnectionErrorsAreClearAndSecretFree: a refused connection and a
// wrong password fail Open at once, name the database, and never show the
// password of the connection string.
func TestConnectionErrorsAreClearAndSecretFree(t *testing.T) {
	pgtest.Need(t, srv)
	ctx := context.Background()
	const secret = "Wrong-Pass-7q2"
	for _, tc := range []struct {
		name, conn string
		want       []string
	}{
		{"refused", "postgres://rackform:" + secret + "@127.0.0.1:1/state?sslmode=disable&connect_timeout=5", []string{"cannot connect to the PostgreSQL state backend", `database "state"`, "127.0.0.1 port 1"}},
		{"bad password", strings.Replace(srv.TCPConn("postgres"), pgtest.Password, secret, 1), []string{"cannot connect", "password authentication failed"}},
		{"bad password key=value", "host=127.0.0.1 port=" + strconv.Itoa(srv.Port()) + " user=" + pgtest.Admin + " password='" + secret + "' dbname=postgres sslmode=disable", []string{"password authentication failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Open(ctx, Options{ConnString: tc.conn})
			if err == nil {
				t.Fatal("Open succeeded")
			}
			t.Logf("%s (after %s)", err, time.Since(start).Round(time.Millisecond))
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q", w)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the password: %s", err)
			}
		})
	}
}

func lockInfo(id string) executor.LockInfo {
	return executor.LockInfo{ID: id, Who: "ci@" + id, PID: 99999, PlanSHA256: strings.Repeat("a", 64), Since: time.Now().UTC()}
}

// TestLeaseExpiresWhenTheHolderDies: an apply that died (its heartbeat
// stopped, here by closing its backend without unlocking) keeps the lock
// only until its lease passes by the database's clock; then another
// machine's Lock reports the holder expired, HolderGone says it is gone,
// and the lock can be taken over.
func TestLeaseExpiresWhenTheHolderDies(t *testing.T) {
	pgtest.Need(t, srv)
	ctx := context.Background()
	conn := srv.Database(t)
	lease := 1500 * time.Millisecond
	a := open(t, Options{ConnString: conn, Lease: lease})
	b := open(t, Options{ConnString: conn, Lease: lease})
	if err := a.Lock(ctx, lockInfo("apply-a")); err != nil {
		t.Fatal(err)
	}
	// While a's heartbeat runs, the lease is renewed past its first term.
	deadline := time.Now().Add(2 * lease)
	for time.Now().Before(deadline) {
		h, err := b.LockHolder(ctx)
		if err != nil || h.Expired {
			t.Fatalf("a live holder's lease expired or vanished: %+v %v", h, err)
		}
		time.Sleep(lease / 5)
	}
	a.Close() // the process dies: no heartbeat, no unlock
	var le *executor.LockedError
	for {
		err := b.Lock(ctx, lockInfo("apply-b"))
		if !errors.As(err, &le) {
			t.Fatalf("Lock while the dead holder's lease runs: %v", err)
		}
		if le.Holder.Expired {
			break
		}
		if executor.HolderGone(le.Holder) {
			t.Fatal("HolderGone says a holder with a running lease is gone")
		}
		if time.Now().After(deadline.Add(10 * lease)) {
			t.Fatal("the dead holder's lease never expired")
		}
		time.Sleep(lease / 5)
	}
	if !executor.HolderGone(le.Holder) || !strings.Contains(executor.GoneReason(le.Holder), "lease expired") {
		t.Fatalf("an expired holder is not gone: %+v", le.Holder)
	}
	if err := b.Unlock(ctx, le.Holder.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(ctx, lockInfo("apply-b")); err != nil {
		t.Fatalf("taking over the expired lock: %v", err)
	}
}

// TestStolenLeaseFencesTheOldHolder: once force-unlock (from another
// machine) removed an apply's lock, that apply can no longer write its
// journal, so it can no longer act: its Append fails naming the lost
// lease and writes nothing; control records of other processes (no lock)
// still go in.
func TestStolenLeaseFencesTheOldHolder(t *testing.T) {
	pgtest.Need(t, srv)
	ctx := context.Background()
	conn := srv.Database(t)
	sha := strings.Repeat("a", 64)
	a := open(t, Options{ConnString: conn})
	b := open(t, Options{ConnString: conn})
	if err := a.Lock(ctx, lockInfo("apply-a")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, sha, []byte(`{"t":"before"}`)); err != nil {
		t.Fatal(err)
	}
	if err := executor.ForceUnlock(ctx, b, "apply-a"); err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(ctx, lockInfo("apply-b")); err != nil {
		t.Fatal(err)
	}
	_, err := a.Append(ctx, sha, []byte(`{"t":"after"}`))
	if !errors.Is(err, ErrLeaseLost) && (err == nil || !strings.Contains(err.Error(), "lost")) {
		t.Fatalf("Append by the holder whose lock was removed: %v, want the lease lost", err)
	}
	t.Log(err)
	if _, err := b.Append(ctx, sha, []byte(`{"t":"new holder"}`)); err != nil {
		t.Fatal(err)
	}
	es, err := b.Read(ctx, sha, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || string(es[1].Data) != `{"t":"new holder"}` {
		t.Fatalf("journal = %d records, want before + new holder only", len(es))
	}
}

// TestDatabaseRestartDuringAppends: the server stops and starts again
// while records are appended; Append waits and retries, each record is
// written exactly once, in order, and the lease survives a short outage.
func TestDatabaseRestartDuringAppends(t *testing.T) {
	pgtest.Need(t, srv)
	ctx := context.Background()
	conn := srv.Database(t)
	sha := strings.Repeat("c", 64)
	var warns []string
	var wmu sync.Mutex
	a := open(t, Options{ConnString: conn, Lease: 90 * time.Second, RetryFor: 90 * time.Second, Warn: func(s string) {
		wmu.Lock()
		warns = append(warns, s)
		wmu.Unlock()
	}})
	if err := a.Lock(ctx, lockInfo("apply-a")); err != nil {
		t.Fatal(err)
	}
	const total = 30
	done := make(chan error, 1)
	go func() {
		for i := range total {
			if _, err := a.Append(ctx, sha, []byte(`{"n":`+strconv.Itoa(i)+`}`)); err != nil {
				done <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		done <- nil
	}()
	time.Sleep(150 * time.Millisecond)
	if err := srv.StopServer(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := srv.StartServer(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Append across a database restart: %v", err)
	}
	es, err := a.Read(ctx, sha, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != total {
		t.Fatalf("%d records after the restart, want %d", len(es), total)
	}
	for i, e := range es {
		if string(e.Data) != `{"n":`+strconv.Itoa(i)+`}` {
			t.Fatalf("record %d = %s", i, e.Data)
		}
	}
	wmu.Lock()
	t.Logf("notes: %q", warns)
	wmu.Unlock()
	if h, err := a.LockHolder(ctx); err != nil || h.ID != "apply-a" || h.Expired {
		t.Fatalf("after the restart the lock is %+v, %v; want apply-a's, live", h, err)
	}
}

// TestMalformedConnStringNamesNoSecret: a connection string that cannot be
// parsed is refused with a message that never quotes it (it may hold a
// password), whatever is wrong with it.
func TestMalformedConnStringNamesNoSecret(t *testing.T) {
	const secret = "Secr3tPW"
	for _, c := range []string{
		"postgres://u:" + secret + "@host:notaport/db",
		"host=x password=" + secret + " port=abc",
		"postgres://u:" + secret + "@h/db?sslmode=bogus",
		"host=x password='" + secret + "' connect_timeout=forever",
		"::::" + secret,
	} {
		_, err := Open(context.Background(), Options{ConnString: c})
		if err == nil {
			t.Errorf("%d: a malformed connection string was accepted", len(c))
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the password: %s", err)
		}
		if !strings.Contains(err.Error(), "RACKFORM_PG_CONN_STR is not a usable PostgreSQL connection string") {
			t.Errorf("unclear error: %s", err)
		}
	}
}

// TestFenceRefusalNamesTheLease: the fences refuse with their code and a
// message that names the lease (what PostgreSQL logs, and what a DBA who
// calls the function sees), not a Go formatting error.
func TestFenceRefusalNamesTheLease(t *testing.T) {
	pgtest.Need(t, srv)
	ctx := context.Background()
	conn := srv.Database(t)
	old := open(t, Options{ConnString: conn})
	// A schema migrated by a rackform whose fences read "…!i(MISSING)s no
	// longer held": opening it again rewrites them.
	for _, k := range []*leaseKind{lockLease, workerLease} {
		garbled := strings.Replace(fmt.Sprintf(k.fenceFunction(), old.s), "% is", "%!i(MISSING)s", 1)
		if _, err := old.pool.Exec(ctx, garbled); err != nil {
			t.Fatal(err)
		}
	}
	b := open(t, Options{ConnString: conn})
	for _, k := range []*leaseKind{lockLease, workerLease} {
		_, err := b.pool.Exec(ctx, `SELECT `+b.s+`.`+k.fn+`($1)`, "apply-gone")
		var pe interface {
			SQLState() string
			Error() string
		}
		if !errors.As(err, &pe) || pe.SQLState() != k.code {
			t.Fatalf("%s of an ID that holds nothing: %v, want SQLSTATE %s", k.fn, err, k.code)
		}
		if want := k.subject + " apply-gone is no longer held by this apply"; !strings.Contains(err.Error(), want) {
			t.Errorf("%s refuses with %q, want it to say %q", k.fn, err, want)
		}
	}
}
