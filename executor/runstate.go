package executor

import (
	"context"
	"slices"
	"strings"
)

// Run-state semantics of an update run (Fleet update runs): in a stage
// of a declared rollout, a member cluster that fails — a scope of it
// breached — fails its group, the stage and the run, and nothing more
// starts (fail fast); and skipping never turns a scope that had failures
// into "skipped (empty)": a container whose parts were all skipped, some
// by the operator, is skipped by the operator, with the failures named.

// runState adjusts the state derive computed for a container.
func (sch *scheduler) runState(n *node, st State) State {
	switch {
	case n.kind == KindCluster && st.Name == Paused && st.Reason == ReasonThreshold && failFast(n):
		return State{Name: Failed, Reason: ReasonThreshold, Message: "member failed (fail fast): " + st.Message}
	case st.Name == Skipped && st.Reason == ReasonEmpty:
		if userSkipped(n) {
			msg := "its parts were skipped by the operator"
			if f := failedUnder(n); len(f) > 0 {
				msg += "; failed before the skip: " + strings.Join(f, ", ")
			}
			return State{Name: Skipped, Reason: ReasonUser, Message: msg}
		}
	}
	return st
}

// failFast reports whether n is in a fail-fast stage.
func failFast(n *node) bool {
	st := ancestor(n, KindStage)
	return st != nil && st.stage != nil && st.stage.FailFast
}

// userSkipped reports whether a kid of n was skipped by the operator (or
// is itself a container skipped that way).
func userSkipped(n *node) bool {
	return slices.ContainsFunc(n.kids, func(k *node) bool { return k.st.Name == Skipped && k.st.Reason == ReasonUser })
}

// failedUnder lists the servers under n that failed, or were skipped by
// the operator after they failed (up to 5).
func failedUnder(n *node) []string {
	var out []string
	var walk func(*node)
	walk = func(x *node) {
		if len(out) == 5 {
			return
		}
		if x.kind == KindServer {
			if x.st.Name == Failed || (x.st.Name == Skipped && strings.Contains(x.st.Message, "after it failed")) {
				out = append(out, x.id)
			}
			return
		}
		for _, k := range x.kids {
			walk(k)
		}
	}
	walk(n)
	return out
}

// skipFailed skips a failed server the operator named (the update-run
// seed: a member, and here a single server, can be skipped during the
// run): it leaves its scope's N and its failure count, so a breached
// scope can go on when continued. What its steps left it as is still
// reported (skipped after its steps began; left out of service).
func (sch *scheduler) skipFailed(ctx context.Context, n *node) {
	if n.kind != KindServer || n.st.Name != Failed {
		return
	}
	sch.r.set(ctx, n, State{Name: Skipped, Reason: ReasonUser, Message: "skipped by the operator after it failed: " + n.st.Message})
}
