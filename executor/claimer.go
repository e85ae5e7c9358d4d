package executor

import (
	"context"
	"time"
)

// Claimer is implemented by backends on which several applies (on several
// machines) drive one run together: executor/postgres. The run's units are
// its rollout groups, the parts the strategy lets run in parallel; a worker
// steps only the groups it claimed, and the scopes above them (the run, its
// stages, their gates and waits) only while it holds the state lock (the
// leader). Every worker applies the others' records from its journal poll.
//
// A claim is valid while its worker's lease is: Join starts the lease and
// its heartbeat, and from then on every Append of the backend fences on it
// in the journal transaction, so a worker whose lease expired can no longer
// journal, and so can no longer act, before another worker may adopt its
// claims. Backends without it (Memory, Dir) run one apply at a time.
type Claimer interface {
	// Join registers this process as a worker of the plan's run, with a
	// lease renewed by a heartbeat until Leave or Close.
	Join(ctx context.Context, w WorkerInfo) error
	// Leave releases this worker's claims and ends its lease.
	Leave(ctx context.Context) error
	// Claim takes, in the order given, units that are free or whose
	// worker's lease expired (adopted), with SELECT … FOR UPDATE SKIP
	// LOCKED, until this worker holds max units of the plan. It returns
	// the units of the list this worker holds now, and which of them it
	// adopted from a worker whose lease expired.
	Claim(ctx context.Context, sha string, units []string, max int) (held, adopted []string, err error)
	// Release gives up units this worker holds: ended ones, and, when more
	// workers are live than it claimed for, ones beyond its fair share that
	// nothing has started in (the runner's rebalance); another worker may
	// claim them at once, so the caller writes nothing of them afterwards.
	Release(ctx context.Context, sha string, units []string) error
	// Claims returns the units of the plan held by live workers (unit →
	// worker ID) and how many workers of the plan are live.
	Claims(ctx context.Context, sha string) (held map[string]string, live int, err error)
	// Workers returns the plan's live workers, longest joined first, each
	// with the units it holds (sorted): what status shows.
	Workers(ctx context.Context, sha string) ([]WorkerStatus, error)
}

// WorkerStatus is a live worker of a run and the units (rollout groups)
// it holds; status shows it, and status -json prints it as "workers".
type WorkerStatus struct {
	ID           string    `json:"id"`
	Who          string    `json:"who"`
	PID          int       `json:"pid"`
	Since        time.Time `json:"since"`
	LeaseExpires time.Time `json:"lease_expires"`
	Units        []string  `json:"groups"`
}

// WorkerInfo names a worker.
type WorkerInfo struct {
	ID         string
	Who        string
	PID        int
	PlanSHA256 string
}
