package executor_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rackform/rackform/executor"
)

// Next actions are data for the CLI and their canonical commands in JSON
// (docs/json.md: "next" lists commands), read back as the same actions.
func TestNextActionJSON(t *testing.T) {
	out := executor.Outcome{Status: executor.OutcomePaused, Next: []executor.NextAction{
		{Kind: executor.NextApply}, {Kind: executor.NextContinue}, {Kind: executor.NextApprove, Gate: "stage.prod.gate.qa"},
		{Kind: executor.NextStatus}, {Kind: executor.NextSkip}, {Kind: executor.NextSkip, Target: "c/r/s1"},
	}}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"paused","next":["rackform apply PLANFILE","rackform continue","rackform approve stage.prod.gate.qa","rackform status","rackform skip ADDR","rackform skip c/r/s1"]}`
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
	for _, bad := range []string{`"rackform"`, `"rackform approve"`, `"rackform apply other.plan"`, `"rackform continue now"`, `"rackform frobnicate"`, `"make continue"`} {
		var a executor.NextAction
		if err := json.Unmarshal([]byte(bad), &a); err == nil {
			t.Errorf("%s read as %+v, want an error", bad, a)
		}
	}
}
