// Package postgres is the PostgreSQL state backend: plans, journals and the
// lock of executor.Backend in a database that every CI job of a rollout
// reaches, so the job that continues, approves or looks at a run need not
// be the one that started it.
//
// Schema (in its own PostgreSQL schema, "rackform" by default; created and
// migrated on first use, its version recorded in schema_version):
//
//	schema_version(version PK, applied_at, applied_by)
//	plans(sha256 PK, plan bytea, saved_at, save_seq)   current plan: highest save_seq
//	runs(plan_sha256 PK, started_at, last_append_at)    one row per journal; its row
//	                                                     lock orders appends
//	journal(pos bigserial PK, plan_sha256, batch, batch_seq, record bytea, written_at)
//	lock(singleton PK, id, who, pid, plan_sha256, since, heartbeat_at,
//	     lease_expires, lease_seconds)
//	workers(id PK, plan_sha256, who, pid, since, heartbeat_at, lease_expires)   (version 2)
//	claims(plan_sha256, unit, worker, claimed_at; PK (plan_sha256, unit))      (version 2)
//
// Append is one transaction (one round trip): it locks the plan's runs row,
// so positions grow in commit order and a reader never skips a record
// committed late; while this process holds the lock, it also checks the
// lease is still its own (fence), so an apply whose lease was taken over
// can no longer journal, and so can no longer act; a worker of a run shared
// by several applies (workers.go) likewise fences on its worker lease, which
// its claims hang on. Records are stored as
// the exact bytes the engine wrote (bytea); query them with
// convert_from(record, 'UTF8')::jsonb.
//
// The lock is a lease: Lock writes the holder with lease_expires = now() +
// lease; a heartbeat renews it every lease/3 while the holder runs. A lease
// is judged by the database's clock only. A holder that died stops
// renewing; once its lease has passed, Lock reports it Expired and the next
// apply takes it over (executor.HolderGone) from any machine. An expired
// lease is never renewed: a holder that could not reach the database for
// longer than its lease has lost it and its next Append fails.
//
// While the database is unreachable (a restart, a failover), calls retry
// with backoff for Options.RetryFor (default: the lease), then fail. An
// Append whose commit was cut off is not written twice: each batch carries a
// random ID with a unique (batch, batch_seq) key, and a retry returns the
// positions of the batch that did commit.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rackform/rackform/executor"
)

// SchemaVersion is the schema this binary writes and understands.
const SchemaVersion = 2

// Defaults.
const (
	DefaultSchema = "rackform"
	// DefaultLease: an apply whose process or machine died is taken over
	// this long after its last heartbeat at most.
	DefaultLease = 30 * time.Second
)

// Options configure a Backend.
type Options struct {
	// ConnString is a libpq URL or key=value string. It is never written
	// anywhere, and its password never appears in an error.
	ConnString string
	// Schema is the PostgreSQL schema holding the tables; DefaultSchema
	// when empty.
	Schema string
	// Lease is how long a lock lasts without a heartbeat; DefaultLease
	// when 0. Heartbeat defaults to Lease/3.
	Lease     time.Duration
	Heartbeat time.Duration
	// RetryFor bounds how long a call retries while the database cannot
	// be reached; default Lease.
	RetryFor time.Duration
	// Warn receives notes about retries and a lost lease; nil: discarded.
	Warn func(string)
}

// Backend implements executor.Backend on PostgreSQL.
type Backend struct {
	pool   *pgxpool.Pool
	o      Options
	s      string // quoted schema name
	secret []string

	mu    sync.Mutex
	lease *lease
	// worker is this process's worker lease on a run (workers.go).
	worker *lease
}

var _ executor.Backend = (*Backend)(nil)

// lease is the lock this Backend holds, renewed by its heartbeat.
type lease struct {
	id   string
	dur  time.Duration // the lease
	hb   time.Duration // heartbeat interval
	stop chan struct{}
	done chan struct{}
	// worker: a worker lease (workers.go), not the lock.
	worker bool

	mu   sync.Mutex
	lost error
}

func (l *lease) lostErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// ErrLeaseLost says this process's lock lease was taken over or removed.
var ErrLeaseLost = errors.New("the state lock lease of this apply was lost")

// SchemaError says the database holds a schema this binary cannot use.
type SchemaError struct {
	Schema       string
	Found, Known int
	PlainMessage string
}

func (e *SchemaError) Error() string { return e.PlainMessage }

// Describe names the database of a connection string for messages:
// user, host, port and database, never the password.
func Describe(conn string) string {
	cfg, err := pgconn.ParseConfig(conn)
	if err != nil {
		return "RACKFORM_PG_CONN_STR"
	}
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	}
	return fmt.Sprintf("database %q on %s port %d as user %q", cfg.Database, host, cfg.Port, cfg.User)
}

var kvPassword = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

// secrets are the strings of conn that must never be printed.
func secrets(conn string) []string {
	var out []string
	if cfg, err := pgconn.ParseConfig(conn); err == nil && cfg.Password != "" {
		out = append(out, cfg.Password, url.QueryEscape(cfg.Password), url.PathEscape(cfg.Password))
	}
	for _, m := range kvPassword.FindAllStringSubmatch(conn, -1) {
		out = append(out, strings.Trim(m[1], "'"))
	}
	if u, err := url.Parse(conn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	var keep []string
	for _, s := range out {
		if len(s) >= 3 {
			keep = append(keep, s)
		}
	}
	return keep
}

// scrub removes every secret of the connection string from err's text.
func (b *Backend) scrub(err error) error {
	if err == nil {
		return nil
	}
	return scrubErr(err, b.secret)
}

type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

func scrubErr(err error, secret []string) error {
	msg := err.Error()
	clean := msg
	for _, s := range secret {
		clean = strings.ReplaceAll(clean, s, "*****")
	}
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

// Open connects, creates or migrates the schema, and returns the backend.
// A database that cannot be reached or refuses the credentials is an
// error at once (no retry): nothing has been done yet.
func Open(ctx context.Context, o Options) (*Backend, error) {
	if strings.TrimSpace(o.ConnString) == "" {
		return nil, errors.New("no PostgreSQL connection string: set RACKFORM_PG_CONN_STR to a libpq URL (postgres://user@host/db) or key=value string")
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Heartbeat <= 0 || o.Heartbeat >= o.Lease {
		o.Heartbeat = o.Lease / 3
	}
	if o.RetryFor <= 0 {
		o.RetryFor = o.Lease
	}
	secret := secrets(o.ConnString)
	cfg, err := pgxpool.ParseConfig(o.ConnString)
	if err != nil {
		// pgx's parse error quotes the connection string; only its cause
		// (which names no value) is shown, scrubbed all the same.
		cause := errors.Unwrap(err)
		if cause == nil {
			cause = errors.New("it cannot be parsed")
		}
		return nil, fmt.Errorf("RACKFORM_PG_CONN_STR is not a usable PostgreSQL connection string (a libpq URL or key=value string): %w", scrubErr(cause, secret))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.RuntimeParams["application_name"] = "rackform"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL state backend (%s): %w", Describe(o.ConnString), scrubErr(err, secret))
	}
	b := &Backend{pool: pool, o: o, s: pgx.Identifier{o.Schema}.Sanitize(), secret: secret}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cannot connect to the PostgreSQL state backend (%s): %w", Describe(o.ConnString), b.scrub(err))
	}
	if err := b.migrate(ctx); err != nil {
		pool.Close()
		return nil, b.scrub(err)
	}
	return b, nil
}

// SetLease changes the lease of locks taken from now on (a plan's
// configuration names it; the commands that continue a run learn it only
// after opening the backend). The heartbeat is a third of it, and calls
// retry for as long as the lease lasts.
func (b *Backend) SetLease(d time.Duration) {
	if d <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.o.Lease, b.o.Heartbeat, b.o.RetryFor = d, d/3, d
}

func (b *Backend) cfg() Options {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.o
}

// Lease is the lease of locks this Backend takes.
func (b *Backend) Lease() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.o.Lease
}

// Where names the database for messages (never the password).
func (b *Backend) Where() string {
	return "the PostgreSQL state backend (" + Describe(b.o.ConnString) + ")"
}

// Close stops the heartbeat (a held lock then expires after its lease
// unless Unlock released it) and closes the connections.
func (b *Backend) Close() error {
	b.mu.Lock()
	l := b.lease
	b.lease = nil
	w := b.worker
	b.worker = nil
	b.mu.Unlock()
	if l != nil {
		l.halt()
	}
	if w != nil {
		w.halt()
	}
	b.pool.Close()
	return nil
}

func (l *lease) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

// migrations[i] brings the schema from version i to i+1. %[1]s is the
// quoted schema name.
var migrations = []string{
	`CREATE TABLE %[1]s.plans (
		sha256   text PRIMARY KEY,
		plan     bytea NOT NULL,
		saved_at timestamptz NOT NULL DEFAULT now(),
		save_seq bigserial NOT NULL
	);
	CREATE TABLE %[1]s.runs (
		plan_sha256    text PRIMARY KEY,
		started_at     timestamptz NOT NULL DEFAULT now(),
		last_append_at timestamptz NOT NULL DEFAULT now()
	);
	CREATE TABLE %[1]s.journal (
		pos         bigserial PRIMARY KEY,
		plan_sha256 text NOT NULL REFERENCES %[1]s.runs,
		batch       text NOT NULL,
		batch_seq   integer NOT NULL,
		record      bytea NOT NULL,
		written_at  timestamptz NOT NULL DEFAULT now(),
		UNIQUE (batch, batch_seq)
	);
	CREATE INDEX journal_plan_pos ON %[1]s.journal (plan_sha256, pos);
	CREATE TABLE %[1]s.lock (
		singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
		id            text NOT NULL,
		who           text NOT NULL,
		pid           integer NOT NULL,
		plan_sha256   text NOT NULL,
		since         timestamptz NOT NULL,
		heartbeat_at  timestamptz NOT NULL,
		lease_expires timestamptz NOT NULL,
		lease_seconds double precision NOT NULL
	);
	CREATE FUNCTION %[1]s.fence(lock_id text) RETURNS void LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM 1 FROM %[1]s.lock WHERE id = lock_id AND lease_expires > now() FOR SHARE;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'the state lock % is no longer held by this apply', lock_id USING ERRCODE = 'RFL01';
		END IF;
	END $$;`,
	// 2: several workers on one run (workers.go).
	`CREATE TABLE %[1]s.workers (
		id            text PRIMARY KEY,
		plan_sha256   text NOT NULL,
		who           text NOT NULL,
		pid           integer NOT NULL,
		since         timestamptz NOT NULL DEFAULT now(),
		heartbeat_at  timestamptz NOT NULL DEFAULT now(),
		lease_expires timestamptz NOT NULL
	);
	CREATE INDEX workers_plan ON %[1]s.workers (plan_sha256);
	CREATE TABLE %[1]s.claims (
		plan_sha256 text NOT NULL,
		unit        text NOT NULL,
		worker      text,
		claimed_at  timestamptz,
		PRIMARY KEY (plan_sha256, unit)
	);
	CREATE FUNCTION %[1]s.worker_fence(worker_id text) RETURNS void LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM 1 FROM %[1]s.workers WHERE id = worker_id AND lease_expires > now() FOR SHARE;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'the worker lease % is no longer held by this apply', worker_id USING ERRCODE = 'RFL02';
		END IF;
	END $$;`,
}

func (b *Backend) migrate(ctx context.Context) error {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("the PostgreSQL state backend (%s): %w", Describe(b.o.ConnString), err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// One migrator at a time per schema (several jobs may start at once).
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('rackform-migrate:' || $1))`, b.o.Schema); err != nil {
		return fmt.Errorf("migrating the state schema %s: %w", b.o.Schema, err)
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, b.o.Schema).Scan(&exists); err != nil {
		return fmt.Errorf("migrating the state schema %s: %w", b.o.Schema, err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA `+b.s); err != nil {
			return fmt.Errorf("creating the state schema %s (the user needs CREATE on the database, or create the schema for it): %w", b.o.Schema, err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+b.s+`.schema_version (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now(),
		applied_by text NOT NULL DEFAULT current_user)`); err != nil {
		return fmt.Errorf("migrating the state schema %s: %w", b.o.Schema, err)
	}
	var v int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+b.s+`.schema_version`).Scan(&v); err != nil {
		return fmt.Errorf("reading the state schema version: %w", err)
	}
	if v > SchemaVersion {
		return &SchemaError{Schema: b.o.Schema, Found: v, Known: SchemaVersion,
			PlainMessage: fmt.Sprintf("the PostgreSQL state schema %q is at version %d, newer than this rackform understands (version %d): a newer rackform migrated it; use that version (or newer) of rackform for this database", b.o.Schema, v, SchemaVersion)}
	}
	for ; v < SchemaVersion; v++ {
		if _, err := tx.Exec(ctx, fmt.Sprintf(migrations[v], b.s)); err != nil {
			return fmt.Errorf("migrating the state schema %s to version %d: %w", b.o.Schema, v+1, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+b.s+`.schema_version (version) VALUES ($1)`, v+1); err != nil {
			return fmt.Errorf("migrating the state schema %s to version %d: %w", b.o.Schema, v+1, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrating the state schema %s: %w", b.o.Schema, err)
	}
	return nil
}

// transient reports whether err is the database being unreachable for now
// (a restart, a dropped connection), worth retrying.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"): // connection exception
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03": // shutdown, crash, starting up
			return true
		case pe.Code == "40001", pe.Code == "40P01": // serialization, deadlock
			return true
		}
		return false
	}
	// Not a server error: only a failed or broken connection is retried.
	var ce *pgconn.ConnectError
	var ne net.Error
	var se syscall.Errno
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), errors.As(err, &se),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return true
	}
	return strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "connection reset")
}

func (b *Backend) warn(format string, args ...any) {
	if b.o.Warn != nil {
		b.o.Warn(fmt.Sprintf(format, args...))
	}
}

// retry runs fn until it succeeds, fails for good, or the database has
// been unreachable for RetryFor.
func (b *Backend) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	retryFor := b.cfg().RetryFor
	deadline := time.Now().Add(retryFor)
	delay := 100 * time.Millisecond
	warned := false
	for {
		err := fn(ctx)
		if err == nil {
			if warned {
				b.warn("the PostgreSQL state backend is reachable again; %s went through", what)
			}
			return nil
		}
		if !transient(err) {
			return b.scrub(err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the PostgreSQL state backend (%s) was unreachable for %s: %w", Describe(b.o.ConnString), retryFor, b.scrub(err))
		}
		if !warned {
			b.warn("the PostgreSQL state backend is unreachable (%v); retrying %s for up to %s", b.scrub(err), what, retryFor)
			warned = true
		}
		select {
		case <-ctx.Done():
			return b.scrub(err)
		case <-time.After(delay):
		}
		delay = min(delay*2, 2*time.Second)
	}
}

// SavePlan implements executor.Backend.
func (b *Backend) SavePlan(ctx context.Context, sha string, file []byte) error {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return err
	}
	return b.retry(ctx, "saving the plan", func(ctx context.Context) error {
		_, err := b.pool.Exec(ctx, `INSERT INTO `+b.s+`.plans (sha256, plan) VALUES ($1, $2)
			ON CONFLICT (sha256) DO UPDATE SET plan = EXCLUDED.plan, saved_at = now(),
			save_seq = nextval(pg_get_serial_sequence('`+b.s+`.plans', 'save_seq'))`, sha, file)
		return err
	})
}

// LoadPlan implements executor.Backend.
func (b *Backend) LoadPlan(ctx context.Context, sha string) ([]byte, error) {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return nil, err
	}
	var file []byte
	err := b.retry(ctx, "loading the plan", func(ctx context.Context) error {
		return b.pool.QueryRow(ctx, `SELECT plan FROM `+b.s+`.plans WHERE sha256 = $1`, sha).Scan(&file)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("plan %s: %w", sha, executor.ErrNotFound)
	}
	return file, err
}

// CurrentPlan implements executor.Backend: the plan saved last.
func (b *Backend) CurrentPlan(ctx context.Context) (string, error) {
	var sha string
	err := b.retry(ctx, "reading the current plan", func(ctx context.Context) error {
		return b.pool.QueryRow(ctx, `SELECT sha256 FROM `+b.s+`.plans ORDER BY save_seq DESC LIMIT 1`).Scan(&sha)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("no plan has been applied in the PostgreSQL state backend (%s): %w", Describe(b.o.ConnString), executor.ErrNotFound)
	}
	return sha, err
}

// Run is a plan with a journal in the database.
type Run struct {
	PlanSHA256   string
	StartedAt    time.Time
	LastAppendAt time.Time
}

// Runs lists the plans with a journal, most recently written first.
func (b *Backend) Runs(ctx context.Context) ([]Run, error) {
	var out []Run
	err := b.retry(ctx, "listing the runs", func(ctx context.Context) error {
		out = out[:0]
		rows, err := b.pool.Query(ctx, `SELECT r.plan_sha256, r.started_at, r.last_append_at FROM `+b.s+`.runs r
			JOIN `+b.s+`.plans p ON p.sha256 = r.plan_sha256 ORDER BY r.last_append_at DESC`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r Run
			if err := rows.Scan(&r.PlanSHA256, &r.StartedAt, &r.LastAppendAt); err != nil {
				rows.Close()
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// heldLease returns the ID of the lease this Backend holds, or an error
// when it was lost.
func (b *Backend) heldLease() (string, error) { return b.held(&b.lease) }

// held returns the ID of the lease in *field (b.lease or b.worker), "" when
// none is held, or an error when it was lost.
func (b *Backend) held(field **lease) (string, error) {
	b.mu.Lock()
	l := *field
	b.mu.Unlock()
	if l == nil {
		return "", nil
	}
	if err := l.lostErr(); err != nil {
		return "", err
	}
	return l.id, nil
}

// Append implements executor.Backend: one transaction, committed before it
// returns.
func (b *Backend) Append(ctx context.Context, sha string, records ...[]byte) ([]int64, error) {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return nil, err
	}
	for _, r := range records {
		if strings.IndexByte(string(r), '\n') >= 0 {
			return nil, errors.New("a journal record must be one line")
		}
	}
	if len(records) == 0 {
		return nil, nil
	}
	leaseID, err := b.heldLease()
	if err != nil {
		return nil, err
	}
	workerID, err := b.heldWorker()
	if err != nil {
		return nil, err
	}
	batch := randomHex(16)
	var pos []int64
	err = b.retry(ctx, "writing the journal", func(ctx context.Context) error {
		pos = pos[:0]
		bt := &pgx.Batch{}
		bt.Queue(`INSERT INTO `+b.s+`.runs (plan_sha256) VALUES ($1)
			ON CONFLICT (plan_sha256) DO UPDATE SET last_append_at = now()`, sha)
		if leaseID != "" {
			bt.Queue(`SELECT `+b.s+`.fence($1)`, leaseID)
		}
		if workerID != "" {
			bt.Queue(`SELECT `+b.s+`.worker_fence($1)`, workerID)
		}
		bt.Queue(`INSERT INTO `+b.s+`.journal (plan_sha256, batch, batch_seq, record)
			SELECT $1, $2, n, r FROM unnest($3::bytea[]) WITH ORDINALITY AS t(r, n) ORDER BY n
			RETURNING pos`, sha, batch, records)
		res := b.pool.SendBatch(ctx, bt)
		_, err := res.Exec()
		if err == nil && leaseID != "" {
			_, err = res.Exec()
		}
		if err == nil && workerID != "" {
			_, err = res.Exec()
		}
		if err == nil {
			var rows pgx.Rows
			rows, err = res.Query()
			if err == nil {
				for rows.Next() {
					var p int64
					if err = rows.Scan(&p); err != nil {
						break
					}
					pos = append(pos, p)
				}
				rows.Close()
				if err == nil {
					err = rows.Err()
				}
			}
		}
		if cerr := res.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			return nil
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			// A retry of a batch that did commit (its commit was cut off).
			return b.batchPositions(ctx, batch, &pos)
		}
		if transient(err) {
			// The batch may have committed before the connection broke.
			if perr := b.batchPositions(ctx, batch, &pos); perr == nil && len(pos) == len(records) {
				return nil
			}
		}
		return err
	})
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "RFL01" {
			return nil, fmt.Errorf("%w (lock %s): its lease expired (the database was unreachable for longer than the lease, %s) or force-unlock removed it, so another apply may drive this run; this apply stops: run apply or continue again to resume from the journal", ErrLeaseLost, leaseID, b.Lease())
		}
		if errors.As(err, &pe) && pe.Code == "RFL02" {
			return nil, fmt.Errorf("%w (worker %s): it expired (the database was unreachable for longer than the lease, %s), so other workers may have adopted what this one had claimed; this apply stops: run apply again to resume from the journal", ErrWorkerLeaseLost, workerID, b.Lease())
		}
		return nil, err
	}
	if len(pos) != len(records) {
		return nil, fmt.Errorf("journal: %d records written, %d positions returned", len(records), len(pos))
	}
	return pos, nil
}

func (b *Backend) batchPositions(ctx context.Context, batch string, pos *[]int64) error {
	rows, err := b.pool.Query(ctx, `SELECT pos FROM `+b.s+`.journal WHERE batch = $1 ORDER BY batch_seq`, batch)
	if err != nil {
		return err
	}
	ps, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	*pos = ps
	return nil
}

// Read implements executor.Backend.
func (b *Backend) Read(ctx context.Context, sha string, after int64) ([]executor.Entry, error) {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return nil, err
	}
	var out []executor.Entry
	err := b.retry(ctx, "reading the journal", func(ctx context.Context) error {
		out = out[:0]
		rows, err := b.pool.Query(ctx, `SELECT pos, record FROM `+b.s+`.journal WHERE plan_sha256 = $1 AND pos > $2 ORDER BY pos`, sha, after)
		if err != nil {
			return err
		}
		for rows.Next() {
			var e executor.Entry
			if err := rows.Scan(&e.Pos, &e.Data); err != nil {
				rows.Close()
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	return out, err
}

// Lock implements executor.Backend: it writes the holder with a lease and
// starts the heartbeat that renews it until Unlock or Close.
func (b *Backend) Lock(ctx context.Context, info executor.LockInfo) error {
	o := b.cfg()
	for range 3 {
		var inserted bool
		err := b.retry(ctx, "taking the lock", func(ctx context.Context) error {
			tag, err := b.pool.Exec(ctx, `INSERT INTO `+b.s+`.lock (id, who, pid, plan_sha256, since, heartbeat_at, lease_expires, lease_seconds)
				VALUES ($1, $2, $3, $4, $5, now(), now() + make_interval(secs => $6), $6)
				ON CONFLICT (singleton) DO NOTHING`, info.ID, info.Who, info.PID, info.PlanSHA256, info.Since, o.Lease.Seconds())
			if err != nil {
				// An insert whose commit was cut off may have taken the lock.
				if h, herr := b.LockHolder(ctx); transient(err) && herr == nil && h.ID == info.ID {
					inserted = true
					return nil
				}
				return err
			}
			inserted = tag.RowsAffected() == 1
			return nil
		})
		if err != nil {
			return err
		}
		if inserted {
			l := &lease{id: info.ID, dur: o.Lease, hb: o.Heartbeat, stop: make(chan struct{}), done: make(chan struct{})}
			b.mu.Lock()
			old := b.lease
			b.lease = l
			b.mu.Unlock()
			if old != nil {
				old.halt()
			}
			go b.heartbeat(l)
			return nil
		}
		h, err := b.LockHolder(ctx)
		if errors.Is(err, executor.ErrNotFound) {
			continue // released meanwhile: try again
		}
		if err != nil {
			return err
		}
		return &executor.LockedError{Holder: *h}
	}
	return errors.New("the state lock changed hands repeatedly while taking it; try again")
}

// heartbeat renews l every Heartbeat until halted. A lease found expired or
// gone is lost for good: it is not renewed, and Append refuses.
func (b *Backend) heartbeat(l *lease) {
	defer close(l.done)
	t := time.NewTicker(l.hb)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.hb)
		table, what := "lock", "state lock"
		if l.worker {
			table, what = "workers", "worker"
		}
		tag, err := b.pool.Exec(ctx, `UPDATE `+b.s+`.`+table+` SET heartbeat_at = now(), lease_expires = now() + make_interval(secs => $2)
			WHERE id = $1 AND lease_expires > now()`, l.id, l.dur.Seconds())
		cancel()
		if err != nil {
			b.warn("renewing the %s lease %s: %v (retrying)", what, l.id, b.scrub(err))
			continue
		}
		if tag.RowsAffected() == 0 {
			l.mu.Lock()
			if l.worker {
				l.lost = fmt.Errorf("%w (worker %s): it expired, so other workers may have adopted what this one had claimed; this apply stops: run apply again to resume from the journal", ErrWorkerLeaseLost, l.id)
			} else {
				l.lost = fmt.Errorf("%w (lock %s): it expired or was removed with force-unlock, so another apply may drive this run; this apply stops: run apply or continue again to resume from the journal", ErrLeaseLost, l.id)
			}
			l.mu.Unlock()
			b.warn("%v", l.lost)
			return
		}
	}
}

// Unlock implements executor.Backend.
func (b *Backend) Unlock(ctx context.Context, id string) error {
	b.mu.Lock()
	var mine *lease
	if b.lease != nil && b.lease.id == id {
		mine, b.lease = b.lease, nil
	}
	b.mu.Unlock()
	if mine != nil {
		mine.halt()
	}
	var n int64
	err := b.retry(ctx, "releasing the lock", func(ctx context.Context) error {
		tag, err := b.pool.Exec(ctx, `DELETE FROM `+b.s+`.lock WHERE id = $1`, id)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return err
	}
	if n == 1 {
		return nil
	}
	h, err := b.LockHolder(ctx)
	if err != nil {
		return err
	}
	return fmt.Errorf("the lock is held by %s with ID %s, not %s", h.Who, h.ID, id)
}

// LockHolder implements executor.Backend. The holder's lease is judged by
// the database's clock: Expired when it has passed.
func (b *Backend) LockHolder(ctx context.Context) (*executor.LockInfo, error) {
	var h executor.LockInfo
	err := b.retry(ctx, "reading the lock", func(ctx context.Context) error {
		return b.pool.QueryRow(ctx, `SELECT id, who, pid, plan_sha256, since, lease_expires, lease_expires <= now() FROM `+b.s+`.lock`).
			Scan(&h.ID, &h.Who, &h.PID, &h.PlanSHA256, &h.Since, &h.LeaseExpires, &h.Expired)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, executor.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &h, nil
}
