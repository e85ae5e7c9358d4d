package run

import (
	"context"
)

// OpenForControl opens, for a command that records requests and reads
// state without providers (stop, skip, status), the run (runID: -run, may
// be empty) recorded in the state directory dir or, when
// RACKFORM_PG_CONN_STR is set, in PostgreSQL (Backend.Choose). Its
// Control is that executor. The caller closes it.
func OpenForControl(ctx context.Context, env Env, dir, runID string) (*Run, error) {
	b, err := OpenControl(ctx, env, dir)
	if err != nil {
		return nil, err
	}
	s, err := b.Choose(ctx, runID)
	if err != nil {
		b.Close()
		return nil, err
	}
	return controlled(b, s)
}

// OpenPlanForControl is OpenForControl for the run of the plan in
// planFile (status -plan, skip -plan), which need not have been applied
// yet (skips recorded before apply are obeyed from its start), wherever
// its state is: dir when dirSet (-state-dir), else the state directory
// the plan records (StateDir) or, when that holds no run of it, the one
// its run started in on this machine (the registry of started runs).
func OpenPlanForControl(ctx context.Context, env Env, planFile, dir string, dirSet bool) (*Run, error) {
	f, p, err := ReadPlan(planFile)
	if err != nil {
		return nil, err
	}
	if !dirSet {
		dir = registeredDir(env, f.SHA256, StateDir(p, planFile, dir, false))
	}
	b, err := OpenForPlan(ctx, env, p, dir)
	if err != nil {
		return nil, err
	}
	return controlled(b, &Stored{Plan: p, SHA256: f.SHA256, Bytes: f.Bytes})
}

// controlled is the run of s on b with its Control executor; it closes b
// when that cannot be made.
func controlled(b *Backend, s *Stored) (*Run, error) {
	e, err := Control(b, s.Plan, s.SHA256)
	if err != nil {
		b.Close()
		return nil, err
	}
	return &Run{Plan: s.Plan, SHA256: s.SHA256, File: s.Bytes, Backend: b, Control: e}, nil
}
