package command

import (
	"context"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
)

// controlRun is the run a control command (stop, skip, status) acts on:
// the state backend (the state directory, or PostgreSQL when
// RACKFORM_PG_CONN_STR is set), the run's plan, and an executor without
// providers that records requests and reads state.
type controlRun struct {
	backend *run.Backend
	plan    *plan.Plan
	sha     string
	exec    *executor.Executor
}

// openRun opens the run a control command names: the run of planFile
// when -plan gave one (openPlanRun), else the one recorded in the state
// backend (openControlRun).
func openRun(ctx context.Context, m *Meta, planFile, dir string, dirSet bool, runID string) (*controlRun, error) {
	if planFile != "" {
		return openPlanRun(ctx, m, dir, dirSet, planFile)
	}
	return openControlRun(ctx, m, dir, runID)
}

// openControlRun opens the run (runID: -run, may be empty) recorded in
// dir or in PostgreSQL. The caller closes it.
func openControlRun(ctx context.Context, m *Meta, dir, runID string) (*controlRun, error) {
	b, err := run.OpenControl(ctx, m.runEnv(), dir)
	if err != nil {
		return nil, err
	}
	s, err := b.Choose(ctx, runID)
	if err != nil {
		b.Close()
		return nil, err
	}
	e, err := run.Control(b, s.Plan, s.SHA256)
	if err != nil {
		b.Close()
		return nil, err
	}
	return &controlRun{backend: b, plan: s.Plan, sha: s.SHA256, exec: e}, nil
}

// Close releases the state backend.
func (r *controlRun) Close() error { return r.backend.Close() }

// openPlanRun opens the run of the plan in file, which need not have been
// applied yet (skips recorded before apply are obeyed from its start),
// wherever its state is: dir when dirSet (-state-dir), else the state
// directory the plan records or its run started in on this machine.
func openPlanRun(ctx context.Context, m *Meta, dir string, dirSet bool, file string) (*controlRun, error) {
	f, err := run.ReadFile(file)
	if err != nil {
		return nil, err
	}
	p, err := f.Decode()
	if err != nil {
		return nil, err
	}
	dir = run.LocateStateDir(m.runEnv(), p, f.SHA256, file, dir, dirSet)
	b, err := run.OpenForPlan(ctx, m.runEnv(), p, dir)
	if err != nil {
		return nil, err
	}
	e, err := run.Control(b, p, f.SHA256)
	if err != nil {
		b.Close()
		return nil, err
	}
	return &controlRun{backend: b, plan: p, sha: f.SHA256, exec: e}, nil
}
