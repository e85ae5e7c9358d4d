package plan

import (
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

// Equal lists are kept once; a list that differs in any field the file
// writes is kept apart.
func TestInternerSharesEqualLists(t *testing.T) {
	in := NewInterner()
	steps := func(image string) []Step {
		return []Step{
			{Index: 1, Kind: StepShutdown, Timeout: Duration(time.Minute)},
			{Index: 2, Kind: StepUpdate, Component: "bios", Target: version.TargetOf(version.MustParse("2.1", version.Dotted)), Image: image, Match: &providers.Match{ID: "BIOS"}},
		}
	}
	a, b, c := in.Steps(steps("http://127.0.0.1:9/a.bin")), in.Steps(steps("http://127.0.0.1:9/a.bin")), in.Steps(steps("http://127.0.0.1:9/b.bin"))
	if &a[0] != &b[0] {
		t.Error("two equal step lists are kept twice")
	}
	if &a[0] == &c[0] {
		t.Error("step lists with other images are kept as one")
	}
	if got := in.Steps(nil); got != nil {
		t.Errorf("an empty list interned as %v", got)
	}
	x := in.Changes([]Change{{Component: "bios", From: "2.0", To: "2.1"}})
	y := in.Changes([]Change{{Component: "bios", From: "2.0", To: "2.1"}})
	z := in.Changes([]Change{{Component: "bios", From: "1.9", To: "2.1"}})
	if &x[0] != &y[0] || &x[0] == &z[0] {
		t.Error("changes are not kept once each")
	}
	p := in.Components([]providers.Component{{ID: "BIOS", Version: "2.0"}})
	q := in.Components([]providers.Component{{ID: "BIOS", Version: "2.0", Updateable: true}})
	if &p[0] == &q[0] {
		t.Error("components that differ in Updateable are kept as one")
	}
}

// Learning an estimate for one server copies its steps first: another
// server sharing them keeps its own estimate.
func TestLearnCopiesSharedSteps(t *testing.T) {
	shared := []Step{{Index: 1, Kind: StepShutdown, Estimate: Duration(time.Minute)}, {Index: 2, Kind: StepReset, Estimate: Duration(time.Minute)}}
	other := shared
	lookup := func(k EstimateKey) (Learned, bool) {
		return Learned{Key: k, Median: Duration(7 * time.Minute)}, k.Kind == StepReset && k.Model == "R750"
	}
	got, n := Learn(providers.Identity{Model: "R750"}, shared, lookup)
	if n != 1 || time.Duration(got[1].Estimate) != 7*time.Minute || got[1].Learned == nil {
		t.Fatalf("learned %d steps: %+v", n, got)
	}
	if time.Duration(other[1].Estimate) != time.Minute || other[1].Learned != nil {
		t.Errorf("learning for one server changed the steps it shares with another: %+v", other[1])
	}
	if kept, n := Learn(providers.Identity{Model: "R640"}, other, lookup); n != 0 || &kept[0] != &other[0] {
		t.Error("steps with nothing learned are copied")
	}
}

// StepsOf keeps a copy of a list laid out in a reused buffer, never the
// buffer, and returns the kept list for an equal one.
func TestInternerStepsOfCopies(t *testing.T) {
	in := NewInterner()
	buf := []Step{{Index: 1, Kind: StepShutdown}, {Index: 2, Kind: StepWaitReady, Estimate: Duration(time.Minute)}}
	first := in.StepsOf(buf)
	if &first[0] == &buf[0] {
		t.Fatal("StepsOf kept the caller's buffer")
	}
	buf[0].Kind = StepDrain // the buffer reused for another server
	if first[0].Kind != StepShutdown {
		t.Fatal("the kept list changed with the buffer")
	}
	buf[0].Kind = StepShutdown
	if again := in.StepsOf(buf); &again[0] != &first[0] {
		t.Error("an equal list was not given the kept one")
	}
	if again := in.Steps([]Step{{Index: 1, Kind: StepShutdown}, {Index: 2, Kind: StepWaitReady, Estimate: Duration(time.Minute)}}); &again[0] != &first[0] {
		t.Error("Steps does not find the list StepsOf kept")
	}
	buf[0].Kind = StepDrain
	if other := in.StepsOf(buf); &other[0] == &first[0] || &other[0] == &buf[0] || other[0].Kind != StepDrain {
		t.Errorf("a different list: got %v", other)
	}
}
