package executor

import "context"

// Re-running a failed run (Fleet update runs: a run in the Failed state
// can be started again, to re-apply what failed). `rerun` is a journal
// record: on replay it starts a new run of the same plan over the same
// journal, keeping what finished — servers completed or skipped, waits,
// pauses and gates done — and putting everything else back to not
// started: failed servers start over (re-observed first; their own earlier
// steps are not taken for drift), breached or failed scopes and the
// containers above them are derived again.

const recRerun = "rerun"

// Rerun records a new run of a failed plan (the CLI then calls Run).
// Anything but a failed run is refused.
func (e *Executor) Rerun(ctx context.Context) error {
	m, _, err := e.load(ctx)
	if err != nil {
		return err
	}
	if m.run.st.Name != Failed {
		return &RefusedError{Op: "rerun", Reason: "only a failed run can be run again; the run is " + m.run.st.String()}
	}
	return e.control(ctx, &Record{Type: recRerun})
}

// rerun applies a rerun record to the model.
func (m *model) rerun(pos int64) {
	for _, n := range m.order {
		switch {
		case n.kind == KindServer:
			if n.st.Name != Failed {
				continue
			}
			old := n.sv
			m.setState(n, State{Name: NotStarted, Message: "run again"}, pos)
			sv := newServerRun(n.srv, clusterOf(n).cluster.Settings)
			sv.rerun = true
			// What its earlier steps left it as is still true.
			sv.begun, sv.off, sv.booting, sv.drained, sv.staged = old.begun, old.off, old.booting, old.drained, old.staged
			n.sv = sv
		case n.kind == KindScope:
			if n.st.Name == Completed || (n.st.Name == Skipped && n.st.Reason != ReasonEmpty) {
				continue
			}
			n.cleared = false
			m.setState(n, State{Name: NotStarted}, pos)
		case n.kind == KindGate || n.kind == KindWait || n.kind == KindPause:
			continue
		default:
			if n.st.Name == Completed || n.st.Name == NotStarted {
				continue
			}
			if n.st.Name == Skipped && n.st.Reason == ReasonUser {
				continue
			}
			m.setState(n, State{Name: NotStarted}, pos)
		}
	}
}
