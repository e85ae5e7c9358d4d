package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The tables, created and migrated on first use.

// SchemaError says the database holds a schema this binary cannot use.
type SchemaError struct {
	Schema       string
	Found, Known int
	PlainMessage string
}

func (e *SchemaError) Error() string { return e.PlainMessage }

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
	);` + lockLease.fenceFunction(),
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
	);` + workerLease.fenceFunction(),
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
	b.repairFences(ctx, tx)
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrating the state schema %s: %w", b.o.Schema, err)
	}
	return nil
}

// repairFences rewrites the fences of a schema migrated before their
// messages were escaped: their code was right, but their words read "the
// state lock ID!i(MISSING)s no longer held". The function is replaced in
// place (no new schema version, which would shut out older rackforms);
// a role that may not replace it keeps the old words.
func (b *Backend) repairFences(ctx context.Context, tx pgx.Tx) {
	for _, k := range []*leaseKind{lockLease, workerLease} {
		var garbled bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_proc WHERE proname = $1
			AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = $2) AND prosrc LIKE '%!i(MISSING)%')`, k.fn, b.o.Schema).Scan(&garbled)
		if err != nil || !garbled {
			continue
		}
		if sp, err := tx.Begin(ctx); err == nil {
			if _, err := sp.Exec(ctx, fmt.Sprintf(k.fenceFunction(), b.s)); err != nil {
				sp.Rollback(ctx)
			} else {
				sp.Commit(ctx)
			}
		}
	}
}
