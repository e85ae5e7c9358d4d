package applyview_test

import (
	"strings"
	"testing"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/executor"
)

// The commands named in a message get the options the run was driven
// with: PLANFILE becomes the plan file (or the apply a continue), the state
// directory and the option that vouched for the plan go to every apply,
// continue and approve.
func TestResumeText(t *testing.T) {
	for _, tc := range []struct{ dir, plan, flag, in, want string }{
		{".rackform", "plan.json", "", "rackform continue", "rackform continue"},
		{"st", "plan.json", "", "rackform continue", "rackform continue -state-dir st"},
		{"st", "", "", "rackform approve stage.a.gate.b", "rackform approve -state-dir st stage.a.gate.b"},
		{"st", "p.json", "", "rackform apply PLANFILE", "rackform apply -state-dir st p.json"},
		{".rackform", "-allow-unsigned p.json", "", "rackform apply PLANFILE", "rackform apply -allow-unsigned p.json"},
		{".rackform", "", "", "rackform apply PLANFILE", "rackform continue"},
		{"st", "", "", "rackform skip x", "rackform skip x"},
		{"st", "p.json", "", "resume the run: rackform apply PLANFILE", "resume the run: rackform apply -state-dir st p.json"},
		{".rackform", "", "", "resume the run: rackform apply PLANFILE", "resume the run: rackform continue"},
		{"st", "", "", "again: rackform plan -target a -out r.plan && rackform apply r.plan", "again: rackform plan -target a -out r.plan && rackform apply -state-dir st r.plan"},
		// The option that vouched for the plan is given again to continue
		// and approve (apply's is in its plan path): the command printed
		// works outside a terminal.
		{".rackform", "-expect-sha256 abc p.json", "-expect-sha256 abc", "rackform continue", "rackform continue -expect-sha256 abc"},
		{"st", "-expect-sha256 abc p.json", "-expect-sha256 abc", "rackform approve stage.a.gate.b", "rackform approve -state-dir st -expect-sha256 abc stage.a.gate.b"},
		{"st", "-expect-sha256 abc p.json", "-expect-sha256 abc", "rackform apply PLANFILE", "rackform apply -state-dir st -expect-sha256 abc p.json"},
		{"st", "", "-expect-sha256 abc", "rackform apply PLANFILE", "rackform continue -state-dir st -expect-sha256 abc"},
		{".rackform", "", "-allow-unsigned", "resume the run: rackform apply PLANFILE", "resume the run: rackform continue -allow-unsigned"},
		{"st", "", "-allow-unsigned", "rackform skip x", "rackform skip x"},
	} {
		r := &applyview.Resume{StateDir: tc.dir, PlanFile: tc.plan, Vouch: tc.flag}
		if got := r.Text(tc.in); got != tc.want {
			t.Errorf("%+v.Text(%q) = %q, want %q", *r, tc.in, got, tc.want)
		}
	}
}

// A next action is rendered as the command line the executor's canonical
// one becomes with the run's options, byte for byte, and a nil Resume
// prints the canonical one.
func TestResumeCommand(t *testing.T) {
	actions := []executor.NextAction{
		{Kind: executor.NextApply}, {Kind: executor.NextContinue}, {Kind: executor.NextApprove, Gate: "stage.a.gate.b"},
		{Kind: executor.NextStatus}, {Kind: executor.NextSkip}, {Kind: executor.NextSkip, Target: "c/r/s1"},
		{Kind: executor.NextStop}, {Kind: executor.NextPlan, Target: "c/r/s2"}, {Kind: executor.NextForceUnlock, Target: "corrupt-0a1b"},
	}
	for _, r := range []*applyview.Resume{
		{StateDir: ".rackform"}, {StateDir: "st"}, {StateDir: "st", PlanFile: "p.json"},
		{StateDir: ".rackform", PlanFile: "-expect-sha256 abc p.json", Vouch: "-expect-sha256 abc"},
		{StateDir: "st", PlanFile: "-expect-sha256 abc p.json", Vouch: "-expect-sha256 abc"},
		{StateDir: "st", Vouch: "-allow-unsigned"},
	} {
		for _, a := range actions {
			if got, want := r.Command(a), r.Text(views.Canonical(a)); got != want {
				t.Errorf("%+v.Command(%+v) = %q, want %q", *r, a, got, want)
			}
		}
	}
	for want, r := range map[string]*applyview.Resume{
		"rackform approve -state-dir st -expect-sha256 abc stage.a.gate.b": {StateDir: "st", Vouch: "-expect-sha256 abc"},
		"rackform approve stage.a.gate.b":                                  nil,
	} {
		if got := r.Command(executor.NextAction{Kind: executor.NextApprove, Gate: "stage.a.gate.b"}); got != want {
			t.Errorf("%+v: approve rendered %q, want %q", r, got, want)
		}
	}
	var r *applyview.Resume
	if got := r.Command(executor.NextAction{Kind: executor.NextApply}); got != "rackform apply PLANFILE" {
		t.Errorf("nil Resume: apply rendered %q", got)
	}
}

// After a run cut short by an error, the command that resumes it is the
// plan file's apply with continue as the other way; without a plan file,
// continue alone.
func TestLeftBehind(t *testing.T) {
	out := executor.Outcome{Next: []executor.NextAction{{Kind: executor.NextApply}}}
	var b strings.Builder
	applyview.LeftBehind(&b, out, &applyview.Resume{StateDir: "st", PlanFile: "p.json"})
	if want := "To resume, run: rackform apply -state-dir st p.json (or: rackform continue -state-dir st)\n"; b.String() != want {
		t.Errorf("with a plan file:\n got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	applyview.LeftBehind(&b, out, &applyview.Resume{StateDir: "st"})
	if want := "To resume, run: rackform continue -state-dir st\n"; b.String() != want {
		t.Errorf("without a plan file:\n got %q\nwant %q", b.String(), want)
	}
}
