package rollout

import (
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

func TestHalted(t *testing.T) {
	if (Hold{}).Halted() {
		t.Error("nothing holds the run, yet it is halted")
	}
	for name, h := range map[string]Hold{
		"a pause": {Pauses: 1}, "a breach": {Breaches: 1}, "an interrupt": {Interrupted: true}, "a stop": {Stopping: true},
		"a provider down": {ProviderDown: true}, "the run ended": {Ended: true}, "a group failed fast": {GroupFailed: true},
	} {
		if !h.Halted() {
			t.Errorf("%s does not halt the run", name)
		}
	}
}

func TestGateAfter(t *testing.T) {
	for when, want := range map[string]bool{"after": true, "before": false, "": false} {
		if got := GateAfter(plan.Gate{When: when}); got != want {
			t.Errorf("when %q: after %v, want %v", when, got, want)
		}
	}
}

func TestAwaitsRelease(t *testing.T) {
	if AwaitsRelease(&plan.Cluster{}) || AwaitsRelease(&plan.Cluster{Release: &plan.ReleaseChoice{}}) {
		t.Error("a cluster without a pending release waits for it")
	}
	if !AwaitsRelease(&plan.Cluster{Release: &plan.ReleaseChoice{Pending: "4.6.1 is not yet at site east"}}) {
		t.Error("a cluster whose release is pending does not wait for it")
	}
}
