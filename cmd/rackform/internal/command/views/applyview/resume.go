package applyview

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
)

// Resume is how a run was driven, for the commands printed to go on: the
// executor says what to run next (executor.NextAction), Resume renders the
// command line with the options that reach the same run again.
type Resume struct {
	// StateDir is the state directory; -state-dir is added to every
	// apply, continue and approve when it is not the default.
	StateDir string
	// PlanFile is the plan file apply was given. Empty (continue, approve
	// and status have none): the run is resumed with continue.
	PlanFile string
	// Vouch is the option that vouched for the plan (-expect-sha256 …,
	// -allow-unsigned), added to every continue and approve: apply's is in
	// PlanFile.
	Vouch string
}

// Action is a with what this run can run: an apply of the plan file
// becomes a continue when there is no plan file. A nil Resume keeps a.
func (r *Resume) Action(a executor.NextAction) executor.NextAction {
	if r != nil && a.Kind == executor.NextApply && r.PlanFile == "" {
		return executor.NextAction{Kind: executor.NextContinue}
	}
	return a
}

// Command is the command line of next action a; a nil Resume gives the
// canonical one (views.Canonical).
func (r *Resume) Command(a executor.NextAction) string {
	if r == nil {
		return views.Canonical(a)
	}
	a = r.Action(a)
	switch a.Kind {
	case executor.NextApply:
		return "rackform apply" + r.dirFlag() + " " + r.PlanFile
	case executor.NextContinue:
		return "rackform continue" + r.resumeFlags()
	case executor.NextApprove:
		return "rackform approve" + r.resumeFlags() + " " + a.Gate
	case executor.NextPlan:
		return views.Replan(a.Target, r.dirFlag())
	}
	return views.Canonical(a)
}

// Text is a message (what brings a stranded server back) with the actions
// it names (executor.NextAction.Ref) as Command renders them. A text that
// names none but writes its commands itself, as the executor's messages
// did before actions were data, gets the same: PLANFILE becomes the plan
// file (with none, "rackform apply PLANFILE" becomes "rackform continue"),
// and every rackform apply, continue and approve in it the options Command
// gives them. A nil Resume gives views.CanonicalText.
func (r *Resume) Text(cmd string) string {
	if r == nil {
		return views.CanonicalText(cmd)
	}
	if rendered := executor.RenderText(cmd, r.Command); rendered != cmd {
		return rendered
	}
	if r.PlanFile != "" {
		cmd = strings.ReplaceAll(cmd, "PLANFILE", r.PlanFile)
	} else {
		cmd = strings.ReplaceAll(cmd, "rackform apply PLANFILE", "rackform continue")
	}
	cmd = withFlags(cmd, "apply", r.dirFlag())
	cmd = withFlags(cmd, "continue", r.resumeFlags())
	return withFlags(cmd, "approve", r.resumeFlags())
}

// dirFlag is " -state-dir DIR" when the state directory is not the
// default.
func (r *Resume) dirFlag() string {
	if r.StateDir != "" && filepath.Clean(r.StateDir) != state.DefaultDir {
		return " -state-dir " + r.StateDir
	}
	return ""
}

// resumeFlags are the options of a continue or approve.
func (r *Resume) resumeFlags() string {
	f := r.dirFlag()
	if r.Vouch != "" {
		f += " " + r.Vouch
	}
	return f
}

// withFlags adds flags (" -a b") after every "rackform sub" in cmd.
func withFlags(cmd, sub, flags string) string {
	if flags == "" {
		return cmd
	}
	prefix := "rackform " + sub
	var b strings.Builder
	for rest := cmd; ; {
		i := strings.Index(rest, prefix)
		if i < 0 {
			b.WriteString(rest)
			break
		}
		end := i + len(prefix)
		b.WriteString(rest[:end])
		if end == len(rest) || rest[end] == ' ' {
			b.WriteString(flags)
		}
		rest = rest[end:]
	}
	return b.String()
}

// LeftBehind writes to w, after a started run ended on an error (a state
// backend unreachable past its lease, a journal that cannot be written)
// or a second interrupt, what a pause's ending says: every server it leaves
// out of service with what brings it back, and the command that resumes
// once the cause is fixed (a plan file's apply, or continue).
func LeftBehind(w io.Writer, out executor.Outcome, r *Resume) {
	for _, l := range StrandedLines(out.Stranded, r) {
		fmt.Fprintln(w, l)
	}
	for _, n := range out.Next {
		next := r.Command(n)
		if cont := r.Command(executor.NextAction{Kind: executor.NextContinue}); n.Kind == executor.NextApply && next != cont {
			next += " (or: " + cont + ")"
		}
		fmt.Fprintf(w, "To resume, run: %s\n", next)
	}
}
