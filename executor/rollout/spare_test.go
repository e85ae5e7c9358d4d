package rollout

import (
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

func TestNextTakeover(t *testing.T) {
	up := TakeoverState{SpareUpgraded: true}
	cases := []struct {
		name     string
		st       TakeoverState
		replaces string
		want     Takeover
	}{
		{"the spare is not upgraded yet", TakeoverState{}, "c/a", TakeoverNone},
		{"nobody to replace", up, "", TakeoverNone},
		{"starts", up, "c/a", TakeoverStart},
		{"runs", TakeoverState{SpareUpgraded: true, Recorded: true, InFlight: true}, "c/a", TakeoverRunning},
		{"in flight when the apply stopped", TakeoverState{SpareUpgraded: true, Recorded: true}, "c/a", TakeoverResume},
		{"done", TakeoverState{SpareUpgraded: true, Recorded: true, Completed: true}, "c/a", TakeoverDone},
		{"failed: the quorum guard holds", TakeoverState{SpareUpgraded: true, Recorded: true, Failed: true}, "c/a", TakeoverNone},
	}
	for _, c := range cases {
		if got := NextTakeover(c.st, c.replaces); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	planned := &plan.Takeover{Spare: "c/s", Replaces: "c/a"}
	armed := &plan.Takeover{Spare: "c/s"}
	for _, c := range []struct {
		t                   *plan.Takeover
		failed, down, wants string
	}{
		{planned, "c/b", "c/c", "c/a"}, {armed, "c/b", "c/c", "c/b"}, {armed, "", "c/c", "c/c"}, {armed, "", "", ""},
	} {
		if got := TakeoverReplaces(c.t, c.failed, c.down); got != c.wants {
			t.Errorf("TakeoverReplaces(%+v, %q, %q) = %q, want %q", c.t, c.failed, c.down, got, c.wants)
		}
	}
}
