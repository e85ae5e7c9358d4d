package executor

import "time"

// StateName is the state of any node of the run tree (docs/rollout-rules.md
// "States, at every level").
type StateName string

// States. Terminal ones never change again within a run.
const (
	NotStarted StateName = "not_started"
	Running    StateName = "running"
	Pending    StateName = "pending"
	Paused     StateName = "paused"
	Stopping   StateName = "stopping"
	Stopped    StateName = "stopped"
	Skipped    StateName = "skipped"
	Failed     StateName = "failed"
	Completed  StateName = "completed"
)

// Terminal reports whether the state never changes again.
func (s StateName) Terminal() bool { return s == Skipped || s == Failed || s == Completed }

// Reasons carried by pending, paused, skipped and failed states.
const (
	ReasonThreshold = "threshold"  // a scope was breached (rules 11, 12)
	ReasonAfterRack = "after_rack" // pause_after_rack (rule 17)
	ReasonApproval  = "approval"   // an approval gate is pending (rule 18)
	ReasonWindow    = "window"     // a maintenance window is closed (rule 20)
	// ReasonAvailability: the cluster's release is not yet available at
	// its site (the plan's Release.Pending); continue checks again.
	ReasonAvailability = "availability"
	ReasonUser         = "user"              // skipped by `rackform skip` (rule 23)
	ReasonAtTarget     = "already_at_target" // rule 24
	ReasonEmpty        = "empty"             // N = 0 (rule 9)
	ReasonDrift        = "drift"             // rule 26
	// ReasonIdentity: the BMC reports another machine than the plan was
	// made for (an RMA, a re-used BMC address): not touched.
	ReasonIdentity    = "identity_changed"
	ReasonUnreachable = "unreachable" // the BMC did not answer before the first step
	ReasonStep        = "step"        // a provider step or the drain hook failed
	ReasonUnhealthy   = "unhealthy"   // remediation was exhausted (rule 30)
	ReasonInterrupted = "interrupted" // SIGINT/SIGTERM: graceful stop of this process
	ReasonBlocked     = "blocked"     // nothing can start and nothing will change by waiting
	// ReasonQuorum: taking the next control-plane member down would leave
	// fewer healthy members than quorum (rack resiliency).
	ReasonQuorum = "quorum"
	// ReasonProviderUnavailable: a provider's plugin died and could not be
	// restarted; the run stopped with its servers resumable.
	ReasonProviderUnavailable = "provider_unavailable"
)

// State is a node's state with its reason and a human message.
type State struct {
	Name    StateName `json:"state"`
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	// Until is when a running wait ends or a pending window opens.
	Until *time.Time `json:"until,omitempty"`
}

func (s State) String() string {
	if s.Reason == "" {
		return string(s.Name)
	}
	return string(s.Name) + "(" + s.Reason + ")"
}

func (s State) equal(o State) bool {
	if s.Name != o.Name || s.Reason != o.Reason || s.Message != o.Message {
		return false
	}
	if (s.Until == nil) != (o.Until == nil) {
		return false
	}
	return s.Until == nil || s.Until.Equal(*o.Until)
}

// Kind names a level of the run tree.
type Kind string

// Kinds of nodes. Waits, gates and pauses are nodes too, so `skip` and
// `status` address them like anything else.
const (
	KindRun     Kind = "run"
	KindStage   Kind = "stage"
	KindGate    Kind = "gate"
	KindWait    Kind = "wait"
	KindGroup   Kind = "group"
	KindCluster Kind = "cluster"
	KindPhase   Kind = "phase"
	KindScope   Kind = "scope"
	KindPause   Kind = "pause"
	KindServer  Kind = "server"
)
