package executor

import (
	"context"
	"fmt"
	"math"
)

// The journal of a Run: every state change is a record, applied to the
// model at once and made durable before anything it announces starts.

// unflushed is the position of a record applied but not yet durable: no
// continue or approval can answer it until it has its real position.
const unflushed = math.MaxInt64

type pendingRecord struct {
	rec  *Record
	data []byte
}

// emit records a state change: it is applied to the model and its event
// sent at once, and made durable by the next flush, which happens before
// any operation it announces is started (group commit: one fsync per
// scheduling pass, not per record). After the first error nothing more is
// written.
func (r *runner) emit(ctx context.Context, rec *Record) {
	if r.err != nil {
		return
	}
	if err := ctx.Err(); err != nil {
		r.err = err
		return
	}
	rec.V = JournalVersion
	rec.Time = r.o.Clock.Now().UTC()
	b, err := encodeRecord(rec)
	if err != nil {
		r.err = fmt.Errorf("encoding a journal record: %w", err)
		return
	}
	var old State
	if rec.Type == recState {
		old = r.m.nodes[rec.ID].st
	}
	if err := r.m.apply(rec, unflushed); err != nil {
		r.err = err
		return
	}
	r.pending = append(r.pending, pendingRecord{rec, b})
	r.changed = true
	r.recordEvent(rec, old)
}

// flush makes pending records durable, gives them their positions, and
// then starts the operations they announced.
func (r *runner) flush(ctx context.Context) {
	if r.err == nil && len(r.pending) > 0 {
		batch := make([][]byte, len(r.pending))
		for i, p := range r.pending {
			batch[i] = p.data
		}
		pos, err := r.o.Backend.Append(ctx, r.sha, batch...)
		if err != nil {
			r.err = fmt.Errorf("writing the journal of plan %s: %w", short(r.sha), err)
		} else {
			for i, p := range r.pending {
				r.own[pos[i]] = true
				switch p.rec.Type {
				case recState:
					r.m.nodes[p.rec.ID].at = pos[i]
				case recRunStarted:
					r.m.lastResume = pos[i]
				}
			}
		}
		r.pending = r.pending[:0]
	}
	if r.err != nil {
		return
	}
	r.holdStarts(ctx) // workers.go
	for _, o := range r.launchQ {
		r.begin(ctx, o)
	}
	r.launchQ = r.launchQ[:0]
}

// poll applies records other processes appended (stop, skip, continue,
// approve) since the last read.
func (r *runner) poll(ctx context.Context) {
	if r.err != nil {
		return
	}
	entries, err := r.o.Backend.Read(ctx, r.sha, r.cursor)
	if err != nil {
		r.err = fmt.Errorf("reading the journal of plan %s: %w", short(r.sha), err)
		return
	}
	for _, en := range entries {
		r.cursor = en.Pos
		if r.own[en.Pos] {
			delete(r.own, en.Pos)
			continue
		}
		if crashDebris(en.Data) {
			continue
		}
		rec, err := decodeRecord(en.Data)
		if err != nil {
			r.err = fmt.Errorf("journal of plan %s is corrupt at position %d: %w", short(r.sha), en.Pos, err)
			return
		}
		if err := r.m.apply(rec, en.Pos); err != nil {
			r.err = err
			return
		}
		r.changed = true
		r.recordEvent(rec, State{})
	}
}

// set changes a node's state through the journal.
func (r *runner) set(ctx context.Context, n *node, st State) {
	if n.st.equal(st) || !r.writes(n) {
		return
	}
	r.emit(ctx, &Record{Type: recState, ID: n.id, State: st.Name, Reason: st.Reason, Message: st.Message, Until: st.Until})
}
