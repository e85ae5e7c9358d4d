package postgres

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/rackform/rackform/executor"
)

// Several workers on one run (executor.Claimer).
//
//	workers(id PK, plan_sha256, who, pid, since, heartbeat_at, lease_expires)
//	claims(plan_sha256, unit, worker, claimed_at; PK (plan_sha256, unit))
//
// A worker's lease works like the lock's: renewed every lease/3, judged by
// the database's clock, never renewed once expired. A claim is held while
// its worker's lease is; Append fences on the worker lease
// (worker_fence), so a worker that lost its lease can journal nothing
// before or after another worker adopts its units.

var _ executor.Claimer = (*Backend)(nil)

// ErrWorkerLeaseLost says this process's worker lease expired.
var ErrWorkerLeaseLost = errors.New("the worker lease of this apply was lost")

// heldWorker returns the ID of this Backend's worker lease, or an error
// when it was lost.
func (b *Backend) heldWorker() (string, error) { return b.held(&b.worker) }

// Join implements executor.Claimer.
func (b *Backend) Join(ctx context.Context, w executor.WorkerInfo) error {
	if err := executor.CheckPlanSHA(w.PlanSHA256); err != nil {
		return err
	}
	o := b.cfg()
	err := b.retry(ctx, "registering the worker", func(ctx context.Context) error {
		// Workers that died long ago and hold nothing are forgotten.
		if _, err := b.pool.Exec(ctx, `DELETE FROM `+b.s+`.workers w WHERE lease_expires < now() - interval '1 day'
			AND NOT EXISTS (SELECT 1 FROM `+b.s+`.claims c WHERE c.worker = w.id)`); err != nil {
			return err
		}
		_, err := b.pool.Exec(ctx, `INSERT INTO `+b.s+`.workers (id, plan_sha256, who, pid, lease_expires)
			VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
			ON CONFLICT (id) DO NOTHING`, w.ID, w.PlanSHA256, w.Who, w.PID, o.Lease.Seconds())
		return err
	})
	if err != nil {
		return err
	}
	b.hold(&b.worker, workerLease, w.ID, o)
	return nil
}

// Leave implements executor.Claimer.
func (b *Backend) Leave(ctx context.Context) error {
	l := b.drop(&b.worker, "")
	if l == nil {
		return nil
	}
	return b.retry(ctx, "leaving the run", func(ctx context.Context) error {
		tx, err := b.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		if _, err := tx.Exec(ctx, `UPDATE `+b.s+`.claims SET worker = NULL, claimed_at = NULL WHERE worker = $1`, l.id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM `+b.s+`.workers WHERE id = $1`, l.id); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
}

// Claim implements executor.Claimer.
func (b *Backend) Claim(ctx context.Context, sha string, units []string, max int) (held, adopted []string, err error) {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return nil, nil, err
	}
	me, err := b.heldWorker()
	if err != nil {
		return nil, nil, err
	}
	if me == "" {
		return nil, nil, errors.New("claiming units of a run: this apply has not joined it as a worker")
	}
	if len(units) == 0 {
		return nil, nil, nil
	}
	err = b.retry(ctx, "claiming units", func(ctx context.Context) error {
		held, adopted = held[:0], adopted[:0]
		tx, err := b.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		if _, err := tx.Exec(ctx, `SELECT `+b.s+`.`+workerLease.fn+`($1)`, me); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+b.s+`.claims (plan_sha256, unit) SELECT $1, u FROM unnest($2::text[]) AS u
			ON CONFLICT DO NOTHING`, sha, units); err != nil {
			return err
		}
		var mine int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+b.s+`.claims WHERE plan_sha256 = $1 AND worker = $2`, sha, me).Scan(&mine); err != nil {
			return err
		}
		if room := max - mine; room > 0 {
			take, adopt, err := b.lockClaimable(ctx, tx, sha, units, me, room)
			if err != nil {
				return err
			}
			adopted = adopt
			if len(take) > 0 {
				if _, err := tx.Exec(ctx, `UPDATE `+b.s+`.claims SET worker = $3, claimed_at = now()
					WHERE plan_sha256 = $1 AND unit = ANY($2::text[])`, sha, take, me); err != nil {
					return err
				}
			}
		}
		rows, err := tx.Query(ctx, `SELECT unit FROM `+b.s+`.claims WHERE plan_sha256 = $1 AND worker = $2 AND unit = ANY($3::text[])
			ORDER BY array_position($3::text[], unit)`, sha, me, units)
		if err != nil {
			return err
		}
		held, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
	if err != nil {
		var pe interface{ SQLState() string }
		if errors.As(err, &pe) && pe.SQLState() == workerLease.code {
			return nil, nil, workerLease.lostError(me, workerLease.expired)
		}
		return nil, nil, err
	}
	return held, adopted, nil
}

// Release implements executor.Claimer.
func (b *Backend) Release(ctx context.Context, sha string, units []string) error {
	me, err := b.heldWorker()
	if err != nil || me == "" || len(units) == 0 {
		return err
	}
	return b.retry(ctx, "releasing units", func(ctx context.Context) error {
		_, err := b.pool.Exec(ctx, `UPDATE `+b.s+`.claims SET worker = NULL, claimed_at = NULL
			WHERE plan_sha256 = $1 AND worker = $2 AND unit = ANY($3::text[])`, sha, me, units)
		return err
	})
}

// Claims implements executor.Claimer.
func (b *Backend) Claims(ctx context.Context, sha string) (map[string]string, int, error) {
	held := map[string]string{}
	live := 0
	err := b.retry(ctx, "reading the claims", func(ctx context.Context) error {
		clear(held)
		rows, err := b.pool.Query(ctx, `SELECT c.unit, c.worker FROM `+b.s+`.claims c JOIN `+b.s+`.workers w ON w.id = c.worker
			WHERE c.plan_sha256 = $1 AND w.lease_expires > now()`, sha)
		if err != nil {
			return err
		}
		var u, w string
		_, err = pgx.ForEachRow(rows, []any{&u, &w}, func() error {
			held[u] = w
			return nil
		})
		if err != nil {
			return err
		}
		return b.pool.QueryRow(ctx, `SELECT count(*) FROM `+b.s+`.workers WHERE plan_sha256 = $1 AND lease_expires > now()`, sha).Scan(&live)
	})
	return held, live, err
}

// Workers implements executor.Claimer.
func (b *Backend) Workers(ctx context.Context, sha string) ([]executor.WorkerStatus, error) {
	var out []executor.WorkerStatus
	err := b.retry(ctx, "reading the workers", func(ctx context.Context) error {
		rows, err := b.pool.Query(ctx, `SELECT id, who, pid, since, lease_expires FROM `+b.s+`.workers
			WHERE plan_sha256 = $1 AND lease_expires > now() ORDER BY since, id`, sha)
		if err == nil {
			out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (w executor.WorkerStatus, err error) {
				err = row.Scan(&w.ID, &w.Who, &w.PID, &w.Since, &w.LeaseExpires)
				return w, err
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	held, _, err := b.Claims(ctx, sha)
	if err != nil {
		return nil, err
	}
	for i := range out {
		for unit, id := range held {
			if id == out[i].ID {
				out[i].Units = append(out[i].Units, unit)
			}
		}
		slices.Sort(out[i].Units)
	}
	return out, nil
}

// lockClaimable locks, in the order of units, up to room rows this worker
// may take: free units first, then units of workers whose lease expired
// (adopt). Rows another worker is claiming right now are skipped (SKIP
// LOCKED), not waited for. Only the claims row's own columns are tested
// by the locking statements (PostgreSQL re-tests them on the newest
// version of a row changed meanwhile); a holder's lease is read after the
// lock, in a statement of its own, so it is current.
func (b *Backend) lockClaimable(ctx context.Context, tx pgx.Tx, sha string, units []string, me string, room int) (take, adopt []string, err error) {
	rows, err := tx.Query(ctx, `SELECT unit FROM `+b.s+`.claims
		WHERE plan_sha256 = $1 AND unit = ANY($2::text[]) AND worker IS NULL
		ORDER BY array_position($2::text[], unit) LIMIT $3
		FOR UPDATE SKIP LOCKED`, sha, units, room)
	if err != nil {
		return nil, nil, err
	}
	take, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(take) == room {
		return take, nil, err
	}
	// Units held by workers whose lease expired (an expired lease is
	// never renewed: such a worker can journal nothing any more).
	rows, err = tx.Query(ctx, `SELECT c.unit, c.worker FROM `+b.s+`.claims c
		WHERE c.plan_sha256 = $1 AND c.unit = ANY($2::text[]) AND c.worker IS NOT NULL AND c.worker <> $3
		  AND NOT EXISTS (SELECT 1 FROM `+b.s+`.workers w WHERE w.id = c.worker AND w.lease_expires > now())
		ORDER BY array_position($2::text[], c.unit) LIMIT $4
		FOR UPDATE OF c SKIP LOCKED`, sha, units, me, room-len(take))
	if err != nil {
		return nil, nil, err
	}
	type held struct{ Unit, Worker string }
	locked, err := pgx.CollectRows(rows, pgx.RowToStructByPos[held])
	if err != nil || len(locked) == 0 {
		return take, nil, err
	}
	var ids []string
	for _, h := range locked {
		ids = append(ids, h.Worker)
	}
	rows, err = tx.Query(ctx, `SELECT id FROM `+b.s+`.workers WHERE id = ANY($1::text[]) AND lease_expires > now()`, ids)
	if err != nil {
		return nil, nil, err
	}
	live, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, nil, err
	}
	for _, h := range locked {
		if !slices.Contains(live, h.Worker) {
			take = append(take, h.Unit)
			adopt = append(adopt, h.Unit)
		}
	}
	return take, adopt, nil
}
