package rollout

import "github.com/rackform/rackform/planner/plan"

// Remediation actions (rule 30).
const (
	ActionReboot  = "reboot"
	ActionReimage = "reimage"
)

// defaultRemediation is rule 30 when the plan does not say.
func defaultRemediation(role string) []string {
	switch {
	case IsControlPlane(role):
		return []string{ActionReboot}
	case role == "management":
		return []string{ActionReboot, ActionReimage}
	case role == "compute":
		return []string{ActionReimage}
	}
	return nil
}

// RemedyActions resolves the remediation actions for a role (rule 30):
// the plan's for the role (a control plane's kinds fall back to
// control_plane's), or the default. A reimage needs a runtime image to
// reimage with (hasReimage: the server's steps carry one; firmware_only
// plans do not); skipped lists what the role calls for but this plan
// cannot do.
func RemedyActions(set plan.Settings, role string, hasReimage bool) (actions, skipped []string) {
	var acts []string
	if set.Remediation != nil {
		acts = set.Remediation[role]
		if acts == nil && IsControlPlane(role) {
			acts = set.Remediation["control_plane"]
		}
	} else {
		acts = defaultRemediation(role)
	}
	for _, a := range acts {
		if a == ActionReimage && !hasReimage {
			skipped = append(skipped, a)
			continue
		}
		actions = append(actions, a)
	}
	return actions, skipped
}

// Remedy is remediation's next move for a server that did not come back
// healthy and at target (rule 30).
type Remedy struct {
	Kind RemedyKind
	// Round is the action's place in the role's actions (from 1), for
	// RemedyAction and RemedyWaitReady.
	Round int
	// Action (RemedyAction): ActionReboot or ActionReimage.
	Action string
}

// RemedyKind is what a Remedy does.
type RemedyKind int

const (
	// RemedyWaitReady: wait for the server again after action Round.
	RemedyWaitReady RemedyKind = iota
	// RemedyAction: the next action, once each, in the role's order.
	RemedyAction
	// RemedyPowerOff: a compute server that no action brought back is
	// powered off, out of the way.
	RemedyPowerOff
	// RemedyGiveUp: the server failed(unhealthy) and needs a replace.
	RemedyGiveUp
)

// NextRemedy decides remediation's next move: round actions were taken,
// waiting says the last one's wait_ready is due, poweredOff that a power
// off was done or tried.
func NextRemedy(role string, actions []string, round int, waiting, poweredOff bool) Remedy {
	switch {
	case waiting:
		return Remedy{Kind: RemedyWaitReady, Round: round}
	case round < len(actions):
		return Remedy{Kind: RemedyAction, Round: round + 1, Action: actions[round]}
	case role == "compute" && !poweredOff:
		return Remedy{Kind: RemedyPowerOff}
	}
	return Remedy{Kind: RemedyGiveUp}
}
