package rollout

import "github.com/rackform/rackform/planner/plan"

// Takeover is what the spare takeover (rule 33) does before a serial
// control-plane scope starts another member.
type Takeover int

const (
	// TakeoverNone: nothing; the scope goes on.
	TakeoverNone Takeover = iota
	// TakeoverRunning: the takeover is in flight; the scope waits.
	TakeoverRunning
	// TakeoverDone: it completed; the member it replaced is skipped as
	// replaced, and the scope goes on.
	TakeoverDone
	// TakeoverResume: it was in flight when the apply stopped; it runs
	// again (its hook does no harm twice), and the scope waits.
	TakeoverResume
	// TakeoverStart: it starts now, for Replaces; the scope waits.
	TakeoverStart
)

// TakeoverState is where a cluster's armed takeover stands.
type TakeoverState struct {
	// SpareUpgraded: the spare completed its upgrade (it goes first).
	SpareUpgraded bool
	// InFlight: the takeover runs now. Recorded: it was started in this
	// run; Completed, Failed: how it ended.
	InFlight, Recorded, Completed, Failed bool
}

// NextTakeover decides the takeover. replaces is who the spare takes the
// place of when it starts (TakeoverReplaces).
func NextTakeover(st TakeoverState, replaces string) Takeover {
	switch {
	case !st.SpareUpgraded:
		return TakeoverNone
	case st.InFlight:
		return TakeoverRunning
	case st.Completed:
		return TakeoverDone
	case st.Failed:
		return TakeoverNone // the quorum guard holds the next member
	case st.Recorded:
		return TakeoverResume
	case replaces == "":
		return TakeoverNone
	}
	return TakeoverStart
}

// TakeoverReplaces is the member the spare takes the place of: the one
// the plan found down, else the first member of the scope that failed,
// else the member the quorum guard found down during the run; "" when none
// is.
func TakeoverReplaces(t *plan.Takeover, firstFailed, foundDown string) string {
	switch {
	case t.Replaces != "":
		return t.Replaces
	case firstFailed != "":
		return firstFailed
	}
	return foundDown
}
