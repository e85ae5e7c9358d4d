package command

import (
	"context"
	"fmt"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/planner/plan"
)

// controlRun is the run a control command (stop, skip, status) acts on:
// the state backend (the state directory, or PostgreSQL when
// RACKFORM_PG_CONN_STR is set), the run's plan, and an executor without
// providers that records requests and reads state.
type controlRun struct {
	backend *stateBackend
	plan    *plan.Plan
	sha     string
	exec    *executor.Executor
}

// openControlRun opens the run (runID: -run, may be empty) recorded in
// dir or in PostgreSQL. The caller closes it.
func openControlRun(ctx context.Context, m *Meta, dir, runID string) (*controlRun, error) {
	b, err := openControlBackend(ctx, m, dir)
	if err != nil {
		return nil, err
	}
	p, sha, _, err := chooseRun(ctx, b, runID)
	if err != nil {
		b.Close()
		return nil, err
	}
	e, err := controlExecutor(b, p, sha)
	if err != nil {
		b.Close()
		return nil, err
	}
	return &controlRun{backend: b, plan: p, sha: sha, exec: e}, nil
}

// Close releases the state backend.
func (r *controlRun) Close() error { return r.backend.Close() }

// openPlanRun opens the run of the plan in file, which need not have been
// applied yet: skips recorded before apply are obeyed from its start.
func openPlanRun(ctx context.Context, m *Meta, dir, file string) (*controlRun, error) {
	raw, err := regularfile.Read(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read the plan file: %w", err)
	}
	p, err := plan.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not a usable plan: %w", file, err)
	}
	b, err := openPlanBackend(ctx, m, p, dir)
	if err != nil {
		return nil, err
	}
	sha := plan.SHA256(raw)
	e, err := controlExecutor(b, p, sha)
	if err != nil {
		b.Close()
		return nil, err
	}
	return &controlRun{backend: b, plan: p, sha: sha, exec: e}, nil
}
