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
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"slices"
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
	return slices.DeleteFunc(out, func(s string) bool { return len(s) < 3 })
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
func (b *Backend) Lease() time.Duration { return b.cfg().Lease }

// Where names the database for messages (never the password).
func (b *Backend) Where() string {
	return "the PostgreSQL state backend (" + Describe(b.o.ConnString) + ")"
}

// Close stops the heartbeat (a held lock then expires after its lease
// unless Unlock released it) and closes the connections.
func (b *Backend) Close() error {
	b.drop(&b.lease, "")
	b.drop(&b.worker, "")
	b.pool.Close()
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
