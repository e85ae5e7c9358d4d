package rollout

import "github.com/rackform/rackform/planner/plan"

// GateAfter reports whether a stage's gate holds what comes after the
// stage (rule 19: it starts with the after-stage wait), not the stage
// itself (rule 18: before it starts).
func GateAfter(g plan.Gate) bool { return g.When == "after" }

// Hold is what stops anything new from starting anywhere in the run.
type Hold struct {
	// Pauses and Breaches: pauses after scopes not yet continued, and
	// breached scopes (rule 12).
	Pauses, Breaches int
	// Interrupted, Stopping, ProviderDown: the first interrupt (rule 43),
	// a stop (rule 22), a provider that could not be restarted (rule 41).
	Interrupted, Stopping, ProviderDown bool
	// Ended: the run ended; GroupFailed: a group failed fast (rule 34).
	Ended, GroupFailed bool
}

// Halted reports whether nothing new may start: no server, scope or
// cluster, in any group; what is in flight finishes.
func (h Hold) Halted() bool {
	return h.Pauses > 0 || h.Breaches > 0 || h.Interrupted || h.Stopping || h.ProviderDown || h.Ended || h.GroupFailed
}

// AwaitsRelease reports whether a cluster waits for its release to be
// available at its site (rule 35): it is not started, and its group
// tries its next cluster, until a continue finds the release there.
func AwaitsRelease(c *plan.Cluster) bool { return c.Release != nil && c.Release.Pending != "" }
