package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rackform/rackform/executor"
)

// Plans and journals: executor.Backend's records in transactions.

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
		rows, err := b.pool.Query(ctx, `SELECT r.plan_sha256, r.started_at, r.last_append_at FROM `+b.s+`.runs r
			JOIN `+b.s+`.plans p ON p.sha256 = r.plan_sha256 ORDER BY r.last_append_at DESC`)
		if err == nil {
			out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Run])
		}
		return err
	})
	return out, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
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
	fences, err := b.fences()
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
		for _, l := range fences {
			bt.Queue(`SELECT `+b.s+`.`+l.kind.fn+`($1)`, l.id)
		}
		bt.Queue(`INSERT INTO `+b.s+`.journal (plan_sha256, batch, batch_seq, record)
			SELECT $1, $2, n, r FROM unnest($3::bytea[]) WITH ORDINALITY AS t(r, n) ORDER BY n
			RETURNING pos`, sha, batch, records)
		res := b.pool.SendBatch(ctx, bt)
		_, err := res.Exec()
		for range fences {
			if err == nil {
				_, err = res.Exec()
			}
		}
		if err == nil {
			var rows pgx.Rows
			if rows, err = res.Query(); err == nil {
				pos, err = pgx.CollectRows(rows, pgx.RowTo[int64])
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
		for _, l := range fences {
			if lost := l.kind.fencedBy(err, l.id, b.Lease()); lost != nil {
				return nil, lost
			}
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
		rows, err := b.pool.Query(ctx, `SELECT pos, record FROM `+b.s+`.journal WHERE plan_sha256 = $1 AND pos > $2 ORDER BY pos`, sha, after)
		if err == nil {
			out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[executor.Entry])
		}
		return err
	})
	return out, err
}
