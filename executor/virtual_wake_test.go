package executor_test

import (
	"context"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/internal/vclock"
	"github.com/rackform/rackform/providers"
)

// advanceCounter counts the scheduler's moves of a virtual clock.
type advanceCounter struct {
	*vclock.Clock
	advances int
}

func (c *advanceCounter) AdvanceTo(t time.Time) {
	c.advances++
	c.Clock.AdvanceTo(t)
}

// On a virtual clock the scheduler moves from event to event: a run whose
// updates take a thousand times as long (the critical path three weeks)
// costs about as many moves of the clock as the ordinary one, not one per
// simulated poll interval (about a million), and takes exactly its
// critical path.
func TestVirtualTimeCostFollowsEvents(t *testing.T) {
	moves := map[int]int{}
	for _, factor := range []int{1, 1000} {
		f := newVirtualFleet()
		slow := map[string]time.Duration{}
		for k, d := range took {
			slow[k] = d
		}
		slow["update"] *= time.Duration(factor)
		clock := &advanceCounter{Clock: f.clock}
		o := f.options()
		o.Clock = clock
		o.Providers = map[string]providers.Provider{"fake": &executortest.Timed{Provider: f.prov, Clock: f.clock, Took: slow}}
		o.Hooks = &executortest.TimedHooks{HookRunner: executortest.NewHooks(), Clock: f.clock, Took: slow}
		out := f.run(t, o, context.Background(), context.Background())
		wantOutcome(t, out, executor.OutcomeCompleted, "")
		want := time.Hour + 3*(serverPath+time.Duration(factor-1)*took["update"]) + 2*15*time.Minute
		if got := f.clock.Now().Sub(executortest.Epoch); got != want {
			t.Errorf("×%d: the run took %v of virtual time, want the critical path %v", factor, got, want)
		}
		moves[factor] = clock.advances
	}
	if moves[1000] > 2*moves[1]+100 {
		t.Errorf("the clock moved %d times for steps a thousand times as long, %d for the ordinary ones: the cost follows simulated time, not events", moves[1000], moves[1])
	}
	t.Logf("clock moves: %v", moves)
}
