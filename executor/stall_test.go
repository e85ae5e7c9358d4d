package executor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// stalledEvents lists the step_stalled events of a stream.
func stalledEvents(t *testing.T, f *virtualFleet) []executor.Event {
	t.Helper()
	var out []executor.Event
	for _, e := range decodeEvents(t, f.events.Bytes()) {
		if e.Type == "step_stalled" {
			out = append(out, e)
		}
	}
	return out
}

// A resumed apply polling a task frozen at 42 % says so once it has not
// moved for 10 minutes of the run's clock: one step_stalled event with the
// task, its percent and since when, and the run goes on polling it.
func TestResumedTaskStalledIsSaid(t *testing.T) {
	// 15 minutes of polls every 2 s at 42 %, then the task completes.
	f := oneServer(executortest.Script{TaskRunning: 450, TaskPercent: 42}, func(*plan.Settings) {})
	srv := rackServer("r01", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := f.options()
	sink := o.Events
	o.Events = executor.SinkFunc(func(e executor.Event) {
		sink.Event(e)
		if e.Type == "step_task" && e.Server == srv {
			cancel() // the task is journaled: the next apply polls it
		}
	})
	wantOutcome(t, f.run(t, o, ctx, context.Background()), executor.OutcomeInterrupted, executor.ReasonInterrupted)
	if got := stalledEvents(t, f); len(got) != 0 {
		t.Fatalf("stalled before any poll: %+v", got)
	}
	resumedAt := f.clock.Now()
	wantOutcome(t, f.run(t, f.options(), context.Background(), context.Background()), executor.OutcomeCompleted, "")
	got := stalledEvents(t, f)
	if len(got) != 1 {
		t.Fatalf("%d step_stalled events, want 1: %+v", len(got), got)
	}
	e := got[0]
	if e.Server != srv || e.Op != "step:3" || e.StepKind != "update" || e.TaskURI != "/redfish/v1/TaskService/Tasks/1" || e.Percent == nil || *e.Percent != 42 {
		t.Errorf("event %+v", e)
	}
	if e.Since == nil || !e.Since.Equal(resumedAt) || !e.Time.Equal(resumedAt.Add(10*time.Minute)) {
		t.Errorf("stalled since %v, said at %v; want since the first poll %v, said 10 minutes later", e.Since, e.Time, resumedAt)
	}
	if want := "task /redfish/v1/TaskService/Tasks/1 has stayed at 42% since " + resumedAt.UTC().Format(time.RFC3339) + " (10m0s); still polling it"; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
}

// frozen is a provider whose update reports its task, then 42 % every 2
// minutes for 30 minutes, then 43 % for 12 more, as a BMC whose flash froze
// and moved on once.
type frozen struct {
	*executortest.Timed
}

func (p frozen) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	if req.Step.Kind != providers.StepUpdate {
		return p.Timed.Apply(ctx, req, fn)
	}
	res, d := p.Timed.Provider.Apply(ctx, req, fn)
	for i := 1; i <= 21; i++ {
		if err := p.Clock.Sleep(ctx, p.Clock.Now().Add(2*time.Minute)); err != nil {
			return nil, providers.Errorf(req.Target.Name, "cancelled", err.Error())
		}
		pct := 42
		if i > 15 {
			pct = 43
		}
		if err := fn(&providers.Progress{Percent: pct, Message: "flashing"}); err != nil {
			return nil, providers.Errorf(req.Target.Name, "cancelled", err.Error())
		}
	}
	return res, d
}

// While the provider follows the task itself, its percent is watched the
// same way: said stalled 10 minutes after it last moved, again after it
// moved and froze again.
func TestLiveTaskStalledIsSaid(t *testing.T) {
	f := oneServer(executortest.Script{}, func(*plan.Settings) {})
	o := f.options()
	o.Providers["fake"] = frozen{o.Providers["fake"].(*executortest.Timed)}
	wantOutcome(t, f.run(t, o, context.Background(), context.Background()), executor.OutcomeCompleted, "")
	got := stalledEvents(t, f)
	if len(got) != 2 {
		t.Fatalf("%d step_stalled events, want 2: %+v", len(got), got)
	}
	for i, want := range []int{42, 43} {
		e := got[i]
		if *e.Percent != want || e.Time.Sub(*e.Since) < 10*time.Minute || !strings.Contains(e.Message, "has stayed at") {
			t.Errorf("event %d: %+v", i, e)
		}
	}
}
