package views

import "github.com/rackform/rackform/executor"

// The executor says what moves a run on as data (executor.NextAction), and
// names those actions in its messages by reference; the views write them
// as command lines here, canonically (no options: JSON, a state's message,
// an error), or with the options the run was driven with
// (applyview.Resume).

// Canonical is the command line of next action a with no options, and
// PLANFILE and ADDR for what the operator fills in: "rackform apply
// PLANFILE", "rackform approve stage.prod.gate.qa", "rackform skip ADDR".
// It is how the JSON outputs write actions (docs/json.md: "next" lists
// commands) and how messages read (CanonicalText).
func Canonical(a executor.NextAction) string {
	switch a.Kind {
	case executor.NextApply:
		return "rackform apply PLANFILE"
	case executor.NextApprove:
		return "rackform approve " + a.Gate
	case executor.NextSkip:
		if a.Target == "" {
			return "rackform skip ADDR"
		}
		return "rackform skip " + a.Target
	case executor.NextPlan:
		return Replan(a.Target, "")
	case executor.NextForceUnlock:
		return "rackform force-unlock " + a.Target
	}
	return "rackform " + string(a.Kind)
}

// Commands are the canonical command lines of actions.
func Commands(actions []executor.NextAction) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = Canonical(a)
	}
	return out
}

// CanonicalText is msg (a state's or an outcome's message, an error) with
// the actions it names as their canonical command lines.
func CanonicalText(msg string) string { return executor.RenderText(msg, Canonical) }

// Replan is the command line that plans server addr again and applies
// that plan, the apply with dirFlag (" -state-dir DIR", or "").
func Replan(addr, dirFlag string) string {
	return "rackform plan -target " + addr + " -out recover.plan && rackform apply" + dirFlag + " recover.plan"
}
