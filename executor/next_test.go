package executor_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rackform/rackform/executor"
)

// Next actions are data: in the executor's JSON each is its text (kind and
// argument, no command line: the CLI writes those), read back as the same
// actions.
func TestNextActionJSON(t *testing.T) {
	out := executor.Outcome{Status: executor.OutcomePaused, Next: []executor.NextAction{
		{Kind: executor.NextApply}, {Kind: executor.NextContinue}, {Kind: executor.NextApprove, Gate: "stage.prod.gate.qa"},
		{Kind: executor.NextStatus}, {Kind: executor.NextSkip}, {Kind: executor.NextSkip, Target: "c/r/s1"},
		{Kind: executor.NextStop}, {Kind: executor.NextPlan, Target: "c/r/s2"}, {Kind: executor.NextForceUnlock, Target: "corrupt-0a1b"},
	}}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"paused","next":["apply","continue","approve stage.prod.gate.qa","status","skip","skip c/r/s1","stop","plan c/r/s2","force-unlock corrupt-0a1b"]}`
	if string(b) != want {
		t.Errorf("JSON:\n got %s\nwant %s", b, want)
	}
	var back executor.Outcome
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(out, back); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}
	for _, bad := range []string{`""`, `"approve"`, `"plan"`, `"force-unlock"`, `"continue now"`, `"apply other.plan"`, `"frobnicate"`, `"skip a b"`, `" continue"`, `"rackform continue"`} {
		var a executor.NextAction
		if err := json.Unmarshal([]byte(bad), &a); err == nil {
			t.Errorf("%s read as %+v, want an error", bad, a)
		}
	}
}

// A message names actions by reference and whoever shows it renders them;
// a message without references (a journal written before actions were
// data, whose messages carry their commands) and braces that are no
// reference come back as they are.
func TestRenderText(t *testing.T) {
	cmd := func(a executor.NextAction) string { return "<" + strings.ToUpper(a.String()) + ">" }
	gate := executor.NextAction{Kind: executor.NextApprove, Gate: "stage.prod.gate.qa"}
	for _, tc := range []struct{ in, want string }{
		{"waiting for approval: " + gate.Ref(), "waiting for approval: <APPROVE STAGE.PROD.GATE.QA>"},
		{"skip the scope (" + executor.NextAction{Kind: executor.NextSkip, Target: "cluster.a.compute.rack.r1"}.Ref() + "); then {{continue}}",
			"skip the scope (<SKIP CLUSTER.A.COMPUTE.RACK.R1>); then <CONTINUE>"},
		{"{{skip}}: a, b", "<SKIP>: a, b"},
		{"cluster.c1.compute.rack.r01 is done; run: rackform continue", "cluster.c1.compute.rack.r01 is done; run: rackform continue"},
		{"a BMC said {{oops}} and {{ continue}} then {{continue", "a BMC said {{oops}} and {{ continue}} then {{continue"},
		{"{{{{continue}}}}", "{{<CONTINUE>}}"},
		{"", ""},
	} {
		if got := executor.RenderText(tc.in, cmd); got != tc.want {
			t.Errorf("RenderText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
