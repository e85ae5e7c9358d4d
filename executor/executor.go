package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/rackform/rackform/planner/plan"
)

// Executor applies one plan. Run drives it; Continue, Approve, Stop and Skip
// record control requests that a running or later Run obeys; Status reads
// the state. Every method replays the journal from the backend, so any
// process with the same backend sees the same state.
type Executor struct {
	o Options
}

// New checks the options and the plan's run tree. It does no I/O.
func New(opts Options) (*Executor, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	if _, err := buildModel(opts.Plan); err != nil {
		return nil, fmt.Errorf("plan %s: %w", plan.ShortSHA(opts.PlanSHA256), err)
	}
	return &Executor{o: opts}, nil
}

// load rebuilds the model from the plan and the journal. It returns the
// position of the last record read.
func (e *Executor) load(ctx context.Context) (*model, int64, error) {
	m, err := buildModel(e.o.Plan)
	if err != nil {
		return nil, 0, err
	}
	cursor := int64(-1)
	// A record that does not decode is the last line of a crashed writer
	// when nothing follows it: it announced nothing that was acted on
	// (actions follow the fsync). Anywhere else the journal is corrupt.
	var unreadable, replay error
	err = ScanJournal(ctx, e.o.Backend, e.o.PlanSHA256, -1, func(en Entry) error {
		if unreadable != nil {
			replay = unreadable
			return replay
		}
		cursor = en.Pos
		if crashDebris(en.Data) {
			return nil
		}
		r, err := DecodeRecord(en.Data)
		if err != nil {
			unreadable = fmt.Errorf("journal of plan %s is corrupt at position %d: %w", plan.ShortSHA(e.o.PlanSHA256), en.Pos, err)
			return nil
		}
		if err := m.apply(r, en.Pos); err != nil {
			replay = fmt.Errorf("journal of plan %s at position %d: %w", plan.ShortSHA(e.o.PlanSHA256), en.Pos, err)
			return replay
		}
		return nil
	})
	switch {
	case replay != nil:
		return nil, 0, replay
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, 0, fmt.Errorf("reading the journal of plan %s: %w", plan.ShortSHA(e.o.PlanSHA256), err)
	}
	if unreadable != nil {
		e.o.Logger.Warn("ignoring an unreadable last journal record", "plan", plan.ShortSHA(e.o.PlanSHA256), "pos", cursor)
	}
	return m, cursor, nil
}
