package command

import (
	"context"
	"fmt"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
)

// controlRun is the run a control command (stop, skip, status) acts on:
// the state directory, the plan it applied last, and an executor without
// providers that records requests and reads state.
type controlRun struct {
	backend *state.Dir
	plan    *plan.Plan
	sha     string
	exec    *executor.Executor
}

// openControlRun opens the run recorded in dir. The caller closes it.
func openControlRun(ctx context.Context, dir string) (*controlRun, error) {
	b, err := openState(dir)
	if err != nil {
		return nil, err
	}
	p, sha, _, err := currentPlan(ctx, b, dir)
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

// Close releases the state directory.
func (r *controlRun) Close() error { return r.backend.Close() }

// openPlanRun opens the run of the plan in file, which need not have been
// applied yet: skips recorded before apply are obeyed from its start.
func openPlanRun(dir, file string) (*controlRun, error) {
	raw, err := readRegularFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read the plan file: %w", err)
	}
	p, err := plan.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not a usable plan: %w", file, err)
	}
	b, err := openState(dir)
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
