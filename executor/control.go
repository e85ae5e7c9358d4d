package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/rackform/rackform/planner/plan"
)

// Control operations record a request in the journal, after checking it
// against the state replayed from the same journal. They take no lock, so
// another CI job can stop, skip or approve while an apply runs; the running
// apply reads new records between scheduling decisions (and every
// PollInterval while it waits) and obeys them. A request that became moot
// in the meantime (e.g. skipping a server that just completed) is ignored
// by the apply.

func (e *Executor) control(ctx context.Context, rec *Record) error {
	rec.V = JournalVersion
	rec.Time = e.o.Clock.Now().UTC()
	rec.By = e.o.Holder
	b, err := encodeRecord(rec)
	if err != nil {
		return err
	}
	if _, err := e.o.Backend.Append(ctx, e.o.PlanSHA256, b); err != nil {
		return fmt.Errorf("recording %s for plan %s: %w", rec.Type, plan.ShortSHA(e.o.PlanSHA256), err)
	}
	// The request's own event, in this process's stream: the run this
	// process then drives replays the record as history, and an apply
	// running elsewhere reports it in its own stream when it reads it.
	e.o.Events.Event(Event{V: EventVersion, Time: rec.Time, Type: requestEvents[rec.Type], Target: rec.Target, By: rec.By})
	return nil
}

// requestEvents names the event of each operator request record.
var requestEvents = map[string]string{recContinue: "continue_requested", recApprove: "gate_approved", recStop: "stop_requested", recSkip: "skip_requested", recRerun: "rerun_requested"}

func (e *Executor) started(ctx context.Context, op string) (*model, error) {
	m, _, err := e.load(ctx)
	if err != nil {
		return nil, err
	}
	if m.records == 0 {
		return nil, &RefusedError{Op: op, Reason: "plan " + plan.ShortSHA(e.o.PlanSHA256) + " has not been applied yet; run " + NextAction{Kind: NextApply}.Ref()}
	}
	switch m.run.st.Name {
	case Completed, Skipped:
		return nil, &RefusedError{Op: op, Reason: "the run is already " + m.run.st.String(), Already: m.run.st.Name}
	case Failed:
		return nil, &RefusedError{Op: op, Reason: "the run failed (" + m.run.st.Message + "); plan again to pick up the servers not at target"}
	}
	return m, nil
}

// Continue records a continue: pauses after a rack end, a stop is lifted,
// and breached scopes are re-evaluated (rule 15: one still breached stays
// paused and says why). The CLI then calls Run to drive the run.
func (e *Executor) Continue(ctx context.Context) error {
	if _, err := e.started(ctx, "continue"); err != nil {
		return err
	}
	return e.control(ctx, &Record{Type: recContinue})
}

// Approve records the approval of a pending gate (rule 18), named by its
// address ("stage.canary.gate.canary-ok") or, when no other gate of the
// plan has it, its own name ("canary-ok"). A gate not yet reached,
// already approved or skipped is refused, and so is a name several gates
// share (the refusal lists them).
func (e *Executor) Approve(ctx context.Context, gateID string) error {
	m, err := e.started(ctx, "approve")
	if err != nil {
		return err
	}
	n, refused := m.gateNamed(gateID)
	if refused != nil {
		return refused
	}
	gateID = n.id
	switch n.st.Name {
	case Pending:
	case NotStarted:
		return &RefusedError{Op: "approve", Target: gateID, Reason: "the gate has not been reached yet (approvals are given when the run waits at the gate)"}
	default:
		return &RefusedError{Op: "approve", Target: gateID, Reason: "the gate is already " + n.st.String(), Already: n.st.Name}
	}
	return e.control(ctx, &Record{Type: recApprove, Target: gateID})
}

// GateAddress returns the address of the gate an operator names, by its
// address or by its own name where exactly one gate has it (so commands
// can say which gate they approved).
func (e *Executor) GateAddress(ctx context.Context, name string) (string, error) {
	m, _, err := e.load(ctx)
	if err != nil {
		return "", err
	}
	n, refused := m.gateNamed(name)
	if refused != nil {
		return "", refused
	}
	return n.id, nil
}

// gateNamed finds the gate an operator names: by its address, or by its
// own name when exactly one gate has it.
func (m *model) gateNamed(name string) (*node, *RefusedError) {
	if n := m.nodes[name]; n != nil && n.kind == KindGate {
		return n, nil
	}
	var named, all []string
	for _, n := range m.order {
		if n.kind != KindGate {
			continue
		}
		all = append(all, n.id)
		if n.gate.Name == name {
			named = append(named, n.id)
		}
	}
	switch {
	case len(named) == 1:
		return m.nodes[named[0]], nil
	case len(named) > 1:
		return nil, &RefusedError{Op: "approve", Target: name, Reason: fmt.Sprintf("%d gates of the plan are named %s: %s; approve one by its address", len(named), name, strings.Join(named, ", "))}
	case len(all) == 0:
		return nil, &RefusedError{Op: "approve", Target: name, Reason: "the plan has no such gate: it has no approval gates"}
	}
	return nil, &RefusedError{Op: "approve", Target: name, Reason: "the plan has no such gate; its gates: " + strings.Join(all, ", ")}
}

// Stop records a stop (rule 22): nothing new starts, work in flight
// finishes, the run becomes stopped; apply or continue resumes it.
func (e *Executor) Stop(ctx context.Context) error {
	m, err := e.started(ctx, "stop")
	if err != nil {
		return err
	}
	if m.stopRequested() || m.run.st.Name == Stopped {
		return &RefusedError{Op: "stop", Reason: "the run is already stopped or stopping"}
	}
	return e.control(ctx, &Record{Type: recStop})
}

// Skip records skipping a server, scope (rack or batch), phase, cluster,
// group, stage, wait, pause or gate that is not terminal (rule 23). A
// skipped server is neither success nor failure and leaves N; a server with
// an operation in flight is skipped when that operation returns.
func (e *Executor) Skip(ctx context.Context, addr string) error {
	m, _, err := e.load(ctx)
	if err != nil {
		return err
	}
	n := m.nodes[addr]
	if n == nil {
		return &RefusedError{Op: "skip", Target: addr, Reason: "the plan has no server, rack, batch, cluster, group, stage, wait or gate with this address"}
	}
	if n.kind == KindRun {
		return &RefusedError{Op: "skip", Target: addr, Reason: "the run itself cannot be skipped; use " + NextAction{Kind: NextStop}.Ref()}
	}
	if n.st.Name.Terminal() && !(n.kind == KindServer && n.st.Name == Failed) { // a failed server may be skipped (runstate.go)
		return &RefusedError{Op: "skip", Target: addr, Reason: "it is already " + n.st.String(), Already: n.st.Name}
	}
	switch m.run.st.Name {
	case Completed, Failed, Skipped:
		return &RefusedError{Op: "skip", Target: addr, Reason: "the run is already " + m.run.st.String(), Already: m.run.st.Name}
	}
	return e.control(ctx, &Record{Type: recSkip, Target: addr})
}
