package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rackform/rackform/executor"
)

// Leases: the state lock and the workers' leases, each renewed by a
// heartbeat and judged by the database's clock only.

// lease is a lease this Backend holds (the lock, or its worker lease),
// renewed by its heartbeat.
type lease struct {
	id   string
	kind *leaseKind
	dur  time.Duration // the lease
	hb   time.Duration // heartbeat interval
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	lost error
}

// leaseKind is what differs between the state lock's lease and a worker's
// (workers.go): the row the heartbeat renews, its journal fence (the SQL
// function fn, which raises the SQLSTATE code), and what losing it means.
type leaseKind struct {
	table, what, label string
	fn, param, subject string
	code               string
	err                error
	// expired says how it was lost when the heartbeat finds it gone;
	// fenced (with the lease's duration) when a journal write does.
	expired, fenced string
	then            string
}

var (
	lockLease = &leaseKind{table: "lock", what: "state lock", label: "lock", code: "RFL01", err: ErrLeaseLost,
		fn: "fence", param: "lock_id", subject: "the state lock",
		expired: "it expired or was removed with force-unlock",
		fenced:  "its lease expired (the database was unreachable for longer than the lease, %s) or force-unlock removed it",
		then:    "so another apply may drive this run; this apply stops: run apply or continue again to resume from the journal"}
	workerLease = &leaseKind{table: "workers", what: "worker", label: "worker", code: "RFL02", err: ErrWorkerLeaseLost,
		fn: "worker_fence", param: "worker_id", subject: "the worker lease",
		expired: "it expired",
		fenced:  "it expired (the database was unreachable for longer than the lease, %s)",
		then:    "so other workers may have adopted what this one had claimed; this apply stops: run apply again to resume from the journal"}
)

// fenceFunction creates this kind's fence (a migration's SQL, formatted
// with %[1]s the schema, so RAISE's placeholder is written %%): it raises
// code unless the lease of the ID it is given is held and unexpired, by
// the database's clock.
func (k *leaseKind) fenceFunction() string {
	return `
	CREATE OR REPLACE FUNCTION %[1]s.` + k.fn + `(` + k.param + ` text) RETURNS void LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM 1 FROM %[1]s.` + k.table + ` WHERE id = ` + k.param + ` AND lease_expires > now() FOR SHARE;
		IF NOT FOUND THEN
			RAISE EXCEPTION '` + k.subject + ` %% is no longer held by this apply', ` + k.param + ` USING ERRCODE = '` + k.code + `';
		END IF;
	END $$;`
}

// lostError says the lease id of this kind is lost, and how.
func (k *leaseKind) lostError(id, how string) error {
	return fmt.Errorf("%w (%s %s): %s, %s", k.err, k.label, id, how, k.then)
}

// fencedBy is the lost error of a journal write that err says this kind's
// fence refused, or nil.
func (k *leaseKind) fencedBy(err error, id string, dur time.Duration) error {
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) && pe.SQLState() == k.code {
		return k.lostError(id, fmt.Sprintf(k.fenced, dur))
	}
	return nil
}

// hold makes a lease of kind k with the given ID the one in *field
// (b.lease or b.worker), and starts its heartbeat; a lease it replaces
// is halted.
func (b *Backend) hold(field **lease, k *leaseKind, id string, o Options) {
	l := &lease{id: id, kind: k, dur: o.Lease, hb: o.Heartbeat, stop: make(chan struct{}), done: make(chan struct{})}
	b.mu.Lock()
	old := *field
	*field = l
	b.mu.Unlock()
	if old != nil {
		old.halt()
	}
	go b.heartbeat(l)
}

// drop halts and forgets the lease in *field when its ID is id (any ID
// when id is ""), and returns it (nil when none was dropped).
func (b *Backend) drop(field **lease, id string) *lease {
	b.mu.Lock()
	l := *field
	if l != nil && (id == "" || l.id == id) {
		*field = nil
	} else {
		l = nil
	}
	b.mu.Unlock()
	if l != nil {
		l.halt()
	}
	return l
}

func (l *lease) lostErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// ErrLeaseLost says this process's lock lease was taken over or removed.
var ErrLeaseLost = errors.New("the state lock lease of this apply was lost")

func (l *lease) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

// fences are the leases this Backend holds, the lock's first, which every
// Append fences on; an error when one was lost.
func (b *Backend) fences() ([]*lease, error) {
	b.mu.Lock()
	held := []*lease{b.lease, b.worker}
	b.mu.Unlock()
	held = slices.DeleteFunc(held, func(l *lease) bool { return l == nil })
	for _, l := range held {
		if err := l.lostErr(); err != nil {
			return nil, err
		}
	}
	return held, nil
}

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
			b.hold(&b.lease, lockLease, info.ID, o)
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
		tag, err := b.pool.Exec(ctx, `UPDATE `+b.s+`.`+l.kind.table+` SET heartbeat_at = now(), lease_expires = now() + make_interval(secs => $2)
			WHERE id = $1 AND lease_expires > now()`, l.id, l.dur.Seconds())
		cancel()
		if err != nil {
			b.warn("renewing the %s lease %s: %v (retrying)", l.kind.what, l.id, b.scrub(err))
			continue
		}
		if tag.RowsAffected() == 0 {
			l.mu.Lock()
			l.lost = l.kind.lostError(l.id, l.kind.expired)
			l.mu.Unlock()
			b.warn("%v", l.lost)
			return
		}
	}
}

// Unlock implements executor.Backend.
func (b *Backend) Unlock(ctx context.Context, id string) error {
	b.drop(&b.lease, id)
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
