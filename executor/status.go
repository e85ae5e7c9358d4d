package executor

import (
	"context"
	"time"
)

// Status is the full state tree of a plan's run (`status -json`).
type Status struct {
	V          int    `json:"v"`
	PlanSHA256 string `json:"plan_sha256"`
	// Stopping is true while a stop is requested and not yet effective.
	StopRequested bool `json:"stop_requested,omitempty"`
	// Next are what moves a paused, stopped or gated run on (in JSON,
	// each is its canonical command: NextAction.String).
	Next []NextAction `json:"next,omitempty"`
	// Stranded lists the servers left powered off, drained or with a
	// staged image, with what brings each back (servers in flight only
	// when no apply is driving the run).
	Stranded []Stranded `json:"stranded,omitempty"`
	Run      *Node      `json:"run"`

	// Spares: who is each control-plane spare now, where a spare takeover
	// is armed or done (spare.go).
	Spares []SpareStatus `json:"spares,omitempty"`

	// StartedAt is when the run first started (its journal's first
	// record), so elapsed time and the ETA survive continue and resume;
	// nil before the run starts (optional, additive).
	StartedAt *time.Time `json:"started_at,omitempty"`

	// Workers are the applies sharing the run (apply -join on a Claimer
	// backend) with the groups each holds, when there are several; the
	// status command fills it in (optional, additive).
	Workers []WorkerStatus `json:"workers,omitempty"`
}

// Node is one node of the state tree.
type Node struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	Name string `json:"name,omitempty"`
	State
	Counts   *Counts      `json:"counts,omitempty"`
	Steps    []StepStatus `json:"steps,omitempty"`
	Children []*Node      `json:"children,omitempty"`
}

// Status replays the journal and returns the state tree.
func (e *Executor) Status(ctx context.Context) (*Status, error) {
	m, _, err := e.load(ctx)
	if err != nil {
		return nil, err
	}
	active := m.run.st.Name == Running || m.run.st.Name == Stopping
	st := &Status{V: JournalVersion, PlanSHA256: e.o.PlanSHA256, StopRequested: m.stopRequested(), Run: snapshot(m.run),
		Stranded: m.stranded(!active), Spares: m.spares()}
	if !m.startedAt.IsZero() {
		t := m.startedAt
		st.StartedAt = &t
	}
	cont := m.stopRequested() || m.run.st.Name == Stopped
	for _, n := range m.order {
		switch {
		case n.kind == KindGate && n.st.Name == Pending:
			st.Next = append(st.Next, NextAction{Kind: NextApprove, Gate: n.id})
		case (n.kind == KindScope || n.kind == KindPause || n.kind == KindStage) && n.st.Name == Paused:
			cont = true
		case n.kind == KindCluster && n.st.Name == Pending && n.st.Reason == ReasonAvailability:
			cont = true // continue checks the catalog again
		}
	}
	if cont && !m.run.st.Name.Terminal() {
		st.Next = append(st.Next, NextAction{Kind: NextContinue})
	}
	return st, nil
}

// snapshot is n's part of a Status. The model is Status's own, made for
// it and dropped after: a server's step statuses are handed over, not
// copied, when it has no others (100,000 servers' steps are 80 MB).
func snapshot(n *node) *Node {
	out := &Node{ID: n.id, Kind: n.kind, Name: n.name, State: n.st}
	if n.sc != nil {
		out.Counts = n.counts()
	}
	switch {
	case n.sv == nil:
	case len(n.sv.extraOps) == 0 && len(n.sv.stepSt) > 0:
		out.Steps = n.sv.stepSt
	case len(n.sv.extraOps) > 0:
		out.Steps = make([]StepStatus, 0, len(n.sv.stepSt)+len(n.sv.extraOps))
		n.sv.opStatuses(func(_ string, st *StepStatus) {
			out.Steps = append(out.Steps, *st)
		})
	}
	for _, k := range n.kids {
		out.Children = append(out.Children, snapshot(k))
	}
	return out
}
