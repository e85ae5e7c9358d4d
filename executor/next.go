package executor

import (
	"fmt"
	"strings"
)

// The executor says what moves a run on as data, never as a command line:
// the command, its options (the state directory, what vouched for the
// plan, the plan file) and its wording are the CLI's, which renders each
// NextAction with the options the run was driven with. A message for
// people (a state's message, what brings a stranded server back, why a
// request was refused) names the actions in their places in the sentence
// by their references (NextAction.Ref), and whoever shows it renders them
// (RenderText).

// NextActionKind is what an operator runs next to move a run on.
type NextActionKind string

// The next actions.
const (
	// NextApply applies the plan file again: it resumes the run.
	NextApply NextActionKind = "apply"
	// NextContinue continues the run (after a pause, a stop, a breach).
	NextContinue NextActionKind = "continue"
	// NextApprove approves the pending gate Gate.
	NextApprove NextActionKind = "approve"
	// NextStatus shows the run's state, to find what blocks it.
	NextStatus NextActionKind = "status"
	// NextSkip skips Target, or an address the operator picks when empty.
	NextSkip NextActionKind = "skip"
	// NextStop stops the run.
	NextStop NextActionKind = "stop"
	// NextPlan plans the server Target again and applies that plan: what
	// brings a stranded server back with its upgrade.
	NextPlan NextActionKind = "plan"
	// NextForceUnlock removes the state lock whose ID is Target.
	NextForceUnlock NextActionKind = "force-unlock"
)

// NextAction is one thing that moves a run on: which command, for which
// gate or address. The executor decides it; the CLI renders the command
// line with the options the run was driven with.
type NextAction struct {
	Kind NextActionKind
	// Gate is the address of the gate to approve (NextApprove).
	Gate string
	// Target is the address to skip (NextSkip; empty: one the operator
	// picks), the server to plan again (NextPlan) or the lock's ID
	// (NextForceUnlock).
	Target string
}

// String is the action as text: its kind and its argument, "continue",
// "approve stage.prod.gate.qa", "skip c1/r01/r01-s01" ("skip" alone: an
// address the operator picks).
func (a NextAction) String() string {
	if arg := a.arg(); arg != "" {
		return string(a.Kind) + " " + arg
	}
	return string(a.Kind)
}

func (a NextAction) arg() string {
	if a.Kind == NextApprove {
		return a.Gate
	}
	return a.Target
}

// MarshalText writes String.
func (a NextAction) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (a *NextAction) UnmarshalText(b []byte) error {
	fields := strings.Fields(string(b))
	if len(fields) < 1 || len(fields) > 2 || strings.Join(fields, " ") != string(b) {
		return fmt.Errorf("next action %q: want ACTION [ARG]", b)
	}
	*a = NextAction{Kind: NextActionKind(fields[0])}
	arg := ""
	if len(fields) == 2 {
		arg = fields[1]
	}
	switch a.Kind {
	case NextApprove:
		a.Gate = arg
	case NextSkip, NextPlan, NextForceUnlock:
		a.Target = arg
	case NextApply, NextContinue, NextStatus, NextStop:
	default:
		return fmt.Errorf("next action %q: unknown action %s", b, a.Kind)
	}
	switch {
	case a.Kind == NextApprove && arg == "":
		return fmt.Errorf("next action %q: approve needs a gate", b)
	case (a.Kind == NextPlan || a.Kind == NextForceUnlock) && arg == "":
		return fmt.Errorf("next action %q: %s needs an argument", b, a.Kind)
	case a.Kind != NextApprove && a.Kind != NextSkip && a.Kind != NextPlan && a.Kind != NextForceUnlock && arg != "":
		return fmt.Errorf("next action %q: %s takes no argument", b, a.Kind)
	}
	return nil
}

// Delimiters of an action's reference in a message.
const refOpen, refClose = "{{", "}}"

// Ref is how a message names a: "{{approve stage.prod.gate.qa}}", which
// RenderText replaces with the command line.
func (a NextAction) Ref() string { return refOpen + a.String() + refClose }

// RenderText is msg with every action it names (Ref) replaced by
// command(action). Text that names none comes back unchanged: so do the
// messages of journals written before actions were data, which carry their
// command lines themselves.
func RenderText(msg string, command func(NextAction) string) string {
	if !strings.Contains(msg, refOpen) {
		return msg
	}
	var b strings.Builder
	for rest := msg; ; {
		i := strings.Index(rest, refOpen)
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		j := strings.Index(rest[i:], refClose)
		var a NextAction
		if j < 0 || a.UnmarshalText([]byte(rest[i+len(refOpen):i+j])) != nil {
			// Not a reference: braces a provider's message has.
			b.WriteString(rest[:i+len(refOpen)])
			rest = rest[i+len(refOpen):]
			continue
		}
		b.WriteString(rest[:i])
		b.WriteString(command(a))
		rest = rest[i+j+len(refClose):]
	}
}
