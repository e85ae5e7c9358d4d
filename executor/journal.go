package executor

import (
	"context"
	"fmt"
	"math"

	"github.com/rackform/rackform/planner/plan"
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

// journal is a Run's side of the plan's journal: the records this process
// writes and those it reads. "Durable before launch" holds here and only
// here: an operation is queued with the records that announce it
// (announce), and commit releases it only once they are appended; nothing
// else hands an operation to a worker. The model changes only through it:
// a record written is applied at once (at position unflushed until its
// append gives it one), a record read at its position.
type journal struct {
	b     Backend
	sha   string
	m     *model
	clock Clock
	// cursor is the position of the last record read (at start, the
	// journal's end as loaded); own marks the positions this process
	// appended, which a read skips: they are applied already.
	cursor int64
	own    map[int64]bool
	// pending records are applied but not yet durable; launch holds the
	// operations they announce.
	pending []pendingRecord
	launch  []*opRun
}

func newJournal(b Backend, sha string, m *model, clock Clock, cursor int64) *journal {
	return &journal{b: b, sha: sha, m: m, clock: clock, cursor: cursor, own: map[int64]bool{}}
}

// write stamps rec, applies it to the model and queues it for the next
// commit. For a state record it returns the node's state before.
func (j *journal) write(rec *Record) (State, error) {
	rec.V = JournalVersion
	rec.Time = j.clock.Now().UTC()
	b, err := encodeRecord(rec)
	if err != nil {
		return State{}, fmt.Errorf("encoding a journal record: %w", err)
	}
	var old State
	if rec.Type == recState {
		old = j.m.nodes[rec.ID].st
	}
	if err := j.m.apply(rec, unflushed); err != nil {
		return State{}, err
	}
	j.pending = append(j.pending, pendingRecord{rec, b})
	return old, nil
}

// announce queues o to start once the records written before it are
// durable.
func (j *journal) announce(o *opRun) { j.launch = append(j.launch, o) }

// commit makes the pending records durable in one append (one fsync or
// transaction for a scheduling pass: group commit), gives them their
// positions, and then releases the operations they announced. After a
// failed append nothing is released.
func (j *journal) commit(ctx context.Context) ([]*opRun, error) {
	if len(j.pending) > 0 {
		batch := make([][]byte, len(j.pending))
		for i, p := range j.pending {
			batch[i] = p.data
		}
		pos, err := j.b.Append(ctx, j.sha, batch...)
		if err == nil {
			for i, p := range j.pending {
				j.own[pos[i]] = true
				switch p.rec.Type {
				case recState:
					j.m.nodes[p.rec.ID].at = pos[i]
				case recRunStarted:
					j.m.lastResume = pos[i]
				}
			}
		}
		j.pending = j.pending[:0]
		if err != nil {
			return nil, fmt.Errorf("writing the journal of plan %s: %w", plan.ShortSHA(j.sha), err)
		}
	}
	launch := j.launch
	j.launch = nil
	return launch, nil
}

// read applies the records other processes appended since the last read
// (stop, skip, continue, approve; with several workers, theirs), calling
// applied after each.
func (j *journal) read(ctx context.Context, applied func(*Record)) error {
	entries, err := j.b.Read(ctx, j.sha, j.cursor)
	if err != nil {
		return fmt.Errorf("reading the journal of plan %s: %w", plan.ShortSHA(j.sha), err)
	}
	for _, en := range entries {
		j.cursor = en.Pos
		if j.own[en.Pos] {
			delete(j.own, en.Pos)
			continue
		}
		if crashDebris(en.Data) {
			continue
		}
		rec, err := DecodeRecord(en.Data)
		if err != nil {
			return fmt.Errorf("journal of plan %s is corrupt at position %d: %w", plan.ShortSHA(j.sha), en.Pos, err)
		}
		if err := j.m.apply(rec, en.Pos); err != nil {
			return err
		}
		applied(rec)
	}
	return nil
}

// emit records a state change: it is applied to the model and its event
// sent at once, and made durable by the next flush, which happens before
// any operation it announces is started. After the first error nothing
// more is written.
func (r *runner) emit(ctx context.Context, rec *Record) {
	if r.err != nil {
		return
	}
	if err := ctx.Err(); err != nil {
		r.err = err
		return
	}
	old, err := r.j.write(rec)
	if err != nil {
		r.err = err
		return
	}
	r.changed = true
	r.recordEvent(rec, old)
}

// flush commits the journal and then starts the operations it released.
func (r *runner) flush(ctx context.Context) {
	if r.err != nil {
		return
	}
	launch, err := r.j.commit(ctx)
	if err != nil {
		r.err = err
		return
	}
	for _, o := range r.crew.holdStarts(ctx, launch) { // workers.go
		r.begin(ctx, o)
	}
}

// poll applies records other processes appended since the last read.
func (r *runner) poll(ctx context.Context) {
	if r.err != nil {
		return
	}
	err := r.j.read(ctx, func(rec *Record) {
		r.changed = true
		r.recordEvent(rec, State{})
	})
	if err != nil {
		r.err = err
	}
}

// set changes a node's state through the journal.
func (r *runner) set(ctx context.Context, n *node, st State) {
	if n.st.equal(st) || !r.writes(n) {
		return
	}
	r.emit(ctx, &Record{Type: recState, ID: n.id, State: st.Name, Reason: st.Reason, Message: st.Message, Until: st.Until})
}
