package executor

import (
	"context"
)

// Status is the full state tree of a plan's run (`status -json`).
type Status struct {
	V          int    `json:"v"`
	PlanSHA256 string `json:"plan_sha256"`
	// Stopping is true while a stop is requested and not yet effective.
	StopRequested bool  `json:"stop_requested,omitempty"`
	Run           *Node `json:"run"`
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
	return &Status{V: JournalVersion, PlanSHA256: e.o.PlanSHA256, StopRequested: m.stopRequested(), Run: snapshot(m.run)}, nil
}

func snapshot(n *node) *Node {
	out := &Node{ID: n.id, Kind: n.kind, Name: n.name, State: n.st}
	if n.sc != nil {
		out.Counts = n.counts()
	}
	if n.sv != nil {
		for _, op := range n.sv.ops {
			out.Steps = append(out.Steps, *n.sv.steps[op])
		}
	}
	for _, k := range n.kids {
		out.Children = append(out.Children, snapshot(k))
	}
	return out
}
