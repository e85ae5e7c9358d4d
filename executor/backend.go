package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rackform/rackform/internal/process"
	"github.com/rackform/rackform/planner/plan"
)

// Backend stores plans, journals and the lock. It is deliberately small and
// byte-oriented so a PostgreSQL backend (a plans table, a journal table
// with a bigserial position, a lock row taken with SELECT … FOR UPDATE)
// fits without touching the engine. The local implementation is
// executor/state.Dir; executor/state.Memory is for tests.
type Backend interface {
	// SavePlan stores a plan file under its SHA-256 and makes it the
	// current plan (what `continue` and `status` use without a path).
	SavePlan(ctx context.Context, sha string, file []byte) error
	// LoadPlan returns a stored plan file; ErrNotFound if unknown.
	LoadPlan(ctx context.Context, sha string) ([]byte, error)
	// CurrentPlan is the SHA of the most recently saved plan; ErrNotFound
	// when there is none.
	CurrentPlan(ctx context.Context) (string, error)

	// Append adds records (each one JSON object, no newline) to the plan's
	// journal, in order, and returns their positions. They must be durable
	// (fsynced, committed) before Append returns: the engine announces
	// actions this way and only then acts. One call is one fsync or one
	// transaction (group commit). Appends from several processes are
	// serialised; positions grow with append order. After a crash any
	// prefix of a batch may be present.
	Append(ctx context.Context, sha string, records ...[]byte) ([]int64, error)
	// Read returns the complete records after position `after` (-1: all),
	// in order. A torn trailing record (a crash in the middle of a write)
	// is not returned.
	Read(ctx context.Context, sha string, after int64) ([]Entry, error)

	// Lock takes the state lock for info.PlanSHA256, or returns a
	// *LockedError naming the holder. It does not wait.
	Lock(ctx context.Context, info LockInfo) error
	// Unlock releases the lock if its ID is id (force-unlock uses the ID
	// shown in the LockedError); ErrNotFound when no lock is held.
	Unlock(ctx context.Context, id string) error
	// LockHolder returns the current holder, or ErrNotFound.
	LockHolder(ctx context.Context) (*LockInfo, error)
}

// CheckPlanSHA refuses a plan SHA that a backend must not use as a key (a
// file name, a row key): 8 to 128 lowercase hex digits.
func CheckPlanSHA(sha string) error {
	if len(sha) < 8 || len(sha) > 128 {
		return fmt.Errorf("invalid plan SHA %q", sha)
	}
	for _, c := range sha {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return fmt.Errorf("invalid plan SHA %q", sha)
		}
	}
	return nil
}

// Scanner is a Backend that can hand a journal's records over one at a
// time, so a reader of a long journal (the executor rebuilding a run of
// 100,000 servers, a rehearsal continuing its own) never holds all of
// them at once. Scan calls fn with each complete record after position
// after (-1: all), in order, as Read would return them; Data is valid
// only during the call. An error from fn ends the scan with it.
type Scanner interface {
	Scan(ctx context.Context, sha string, after int64, fn func(Entry) error) error
}

// ScanJournal calls fn with each record of the plan's journal after
// position after: through b's Scan when it has one, else from Read.
func ScanJournal(ctx context.Context, b Backend, sha string, after int64, fn func(Entry) error) error {
	if s, ok := b.(Scanner); ok {
		return s.Scan(ctx, sha, after, fn)
	}
	entries, err := b.Read(ctx, sha, after)
	if err != nil {
		return err
	}
	for _, en := range entries {
		if err := fn(en); err != nil {
			return err
		}
	}
	return nil
}

// Entry is one journal record with its position.
type Entry struct {
	Pos  int64
	Data []byte
}

// ErrNotFound is returned by backends for a missing plan, journal or lock.
var ErrNotFound = errors.New("not found")

// LockInfo describes the lock holder.
type LockInfo struct {
	// ID is what `rackform force-unlock ID` takes.
	ID         string    `json:"id"`
	Who        string    `json:"who"` // user@host
	PID        int       `json:"pid"`
	PlanSHA256 string    `json:"plan_sha256"`
	Since      time.Time `json:"since"`
	// LeaseExpires is set by backends whose lock is a lease renewed by a
	// heartbeat while its holder runs (postgres): when it passes, the
	// holder is gone wherever it ran. Zero for the local lock file.
	LeaseExpires time.Time `json:"lease_expires,omitzero"`
	// Expired: the backend found the lease expired by its own clock (the
	// database's), so the next apply may take the lock over.
	Expired bool `json:"-"`
}

// LockedError says the lock is held, by whom, since when, for which plan.
type LockedError struct {
	Holder LockInfo
}

func (e *LockedError) Error() string {
	h := e.Holder
	if !h.LeaseExpires.IsZero() {
		return fmt.Sprintf("the state is locked by %s (pid %d) since %s, applying plan %s; its lease runs until %s and is renewed while that apply runs: if it is gone, the lease expires and the next apply takes over, or run now: %s",
			h.Who, h.PID, h.Since.UTC().Format(time.RFC3339), plan.ShortSHA(h.PlanSHA256), h.LeaseExpires.UTC().Format(time.RFC3339), NextAction{Kind: NextForceUnlock, Target: h.ID}.Ref())
	}
	return fmt.Sprintf("the state is locked by %s (pid %d) since %s, applying plan %s; if that apply is gone, run: %s",
		h.Who, h.PID, h.Since.UTC().Format(time.RFC3339), plan.ShortSHA(h.PlanSHA256), NextAction{Kind: NextForceUnlock, Target: h.ID}.Ref())
}

// CorruptLockError is a lock record that cannot be read (a torn write, a
// disk error, a hand edit). It still locks the state: a lock that cannot be
// read may be held. Force-unlock removes it by its ID, a hash of its bytes,
// so what is removed is exactly what the operator was shown.
type CorruptLockError struct {
	// Where names the record (the lock file's path).
	Where string
	// Raw is the record's bytes, as read.
	Raw []byte
	Err error
}

// ID is what `rackform force-unlock ID` takes for this record.
func (e *CorruptLockError) ID() string {
	sum := sha256.Sum256(e.Raw)
	return "corrupt-" + hex.EncodeToString(sum[:6])
}

// Readable is what could be read of the record, quoted, at most 512 bytes.
func (e *CorruptLockError) Readable() string {
	raw := e.Raw
	more := ""
	if len(raw) > 512 {
		raw, more = raw[:512], fmt.Sprintf(" … (%d bytes)", len(e.Raw))
	}
	return strconv.Quote(string(raw)) + more
}

func (e *CorruptLockError) Error() string {
	return fmt.Sprintf("the lock %s is corrupt (%v); it holds %s; if no apply is running, remove it: %s", e.Where, e.Err, e.Readable(), NextAction{Kind: NextForceUnlock, Target: e.ID()}.Ref())
}

func (e *CorruptLockError) Unwrap() error { return e.Err }

// ForceUnlock removes the lock whose ID is id, whoever holds it; the
// operator got the ID from the LockedError message, or from the
// CorruptLockError of a lock that cannot be read.
func ForceUnlock(ctx context.Context, b Backend, id string) error {
	h, err := b.LockHolder(ctx)
	var corrupt *CorruptLockError
	switch {
	case errors.As(err, &corrupt) && corrupt.ID() == id:
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("force-unlock %s: the state is not locked", id)
	case err != nil:
		return fmt.Errorf("force-unlock %s: %w", id, err)
	case h.ID != id:
		return fmt.Errorf("force-unlock %s: the lock is held by %s with ID %s, not %s", id, h.Who, h.ID, id)
	}
	return b.Unlock(ctx, id)
}

// HolderGone reports whether the lock holder h is an apply of this host
// (Who ends in "@" + this host name) whose process no longer runs: an apply
// that crashed or was killed, whose lock can be taken over. A holder on
// another host, or whose process may run, is not gone.
//
// A holder with a lease (LockInfo.LeaseExpires set) is judged by its
// lease alone, wherever it ran: gone once the backend found it expired (it
// stopped renewing it), never by its pid (a container's pid says nothing
// of another container with the same host name).
func HolderGone(h LockInfo) bool {
	if h.Expired || !h.LeaseExpires.IsZero() {
		return h.Expired
	}
	host, err := os.Hostname()
	if err != nil || host == "" || h.PID <= 0 || !strings.HasSuffix(h.Who, "@"+host) {
		return false
	}
	return !process.Running(h.PID)
}

// acquire takes the lock, retrying on the clock until timeout. A holder
// that gone reports gone is replaced at once; the replaced lock is
// returned (nil otherwise).
func acquire(ctx context.Context, b Backend, info LockInfo, timeout time.Duration, clock Clock, poll time.Duration, gone func(LockInfo) bool) (*LockInfo, error) {
	deadline := clock.Now().Add(timeout)
	var replaced *LockInfo
	for {
		err := b.Lock(ctx, info)
		if err == nil {
			return replaced, nil
		}
		var le *LockedError
		if !errors.As(err, &le) {
			return nil, err
		}
		if gone != nil && gone(le.Holder) && (replaced == nil || replaced.ID != le.Holder.ID) {
			// Unlock by the stale holder's ID: if another apply took the
			// lock meanwhile, its ID differs and nothing is removed.
			if uerr := b.Unlock(ctx, le.Holder.ID); uerr != nil && !errors.Is(uerr, ErrNotFound) {
				return nil, uerr
			}
			h := le.Holder
			replaced = &h
			continue
		}
		now := clock.Now()
		if !now.Before(deadline) {
			return nil, err
		}
		next := now.Add(min(poll, deadline.Sub(now)))
		if sk, ok := clock.(Skipper); ok {
			sk.SkipTo(next)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-clock.At(next):
		}
	}
}

// tookOverFrom says which lock was taken over from whom, and why.
func tookOverFrom(h LockInfo) string {
	return fmt.Sprintf("took over the lock %s of %s (pid %d, since %s, plan %s): %s",
		h.ID, h.Who, h.PID, h.Since.UTC().Format(time.RFC3339), plan.ShortSHA(h.PlanSHA256), GoneReason(h))
}

// GoneReason says why a replaced lock holder was taken for gone.
func GoneReason(h LockInfo) string {
	if h.Expired {
		return "its lease expired at " + h.LeaseExpires.UTC().Format(time.RFC3339) + " without being renewed: that apply is gone"
	}
	return "that process is no longer running on this host"
}
