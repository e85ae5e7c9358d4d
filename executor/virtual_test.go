package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/internal/vclock"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// How long each call takes in the virtual-time tests: one server's path is
// observe, drain, shutdown, update, reimage, wait_ready, uncordon.
var took = map[string]time.Duration{
	"observe": 30 * time.Second, "drain": 3 * time.Minute, "shutdown": 2 * time.Minute, "update": 10 * time.Minute,
	"reimage": 20 * time.Minute, "wait_ready": 5 * time.Minute, "uncordon": time.Minute,
}

const serverPath = 30*time.Second + 3*time.Minute + 2*time.Minute + 10*time.Minute + 20*time.Minute + 5*time.Minute + time.Minute

// virtualFleet is a run on a virtual clock: two groups in parallel; lab's
// cluster waits an hour for its window, then runs three racks (3, 3 and 2
// servers in parallel) with 15 minutes between them; east's one rack of 2
// starts at once.
type virtualFleet struct {
	clock   *vclock.Clock
	prov    *executortest.Provider
	backend *state.Memory
	plan    *plan.Plan
	events  bytes.Buffer
}

func newVirtualFleet() *virtualFleet {
	f := &virtualFleet{clock: vclock.New(executortest.Epoch), prov: executortest.NewProvider(), backend: state.NewMemory()}
	f.prov.PerBMCTasks = true
	b := executortest.NewBuilder(f.prov)
	st := b.Stage("all")
	window := plan.Interval{Start: executortest.Epoch.Add(time.Hour), End: executortest.Epoch.Add(12 * time.Hour)}
	st.Group(b, "lab").Cluster("c1", window).
		Scope(S{Name: "r01", Servers: 3, WaitAfter: 15 * time.Minute}).
		Scope(S{Name: "r02", Servers: 3, WaitAfter: 15 * time.Minute}).
		Scope(S{Name: "r03", Servers: 2})
	st.Group(b, "east").Cluster("c2").Scope(S{Name: "r01", Servers: 2})
	f.plan = b.Plan()
	return f
}

func (f *virtualFleet) options() executor.Options {
	return executor.Options{
		Plan: f.plan, PlanSHA256: sha, Backend: f.backend, Clock: f.clock, Holder: "tester@host",
		Providers: map[string]providers.Provider{"fake": &executortest.Timed{Provider: f.prov, Clock: f.clock, Took: took}},
		Hooks:     &executortest.TimedHooks{HookRunner: executortest.NewHooks(), Clock: f.clock, Took: took},
		Events:    jsonSink(&f.events),
	}
}

func (f *virtualFleet) run(t *testing.T, o executor.Options, ctx, hard context.Context) executor.Outcome {
	t.Helper()
	e, err := executor.New(o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Run(ctx, hard)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeEvents(t *testing.T, stream []byte) []executor.Event {
	t.Helper()
	var out []executor.Event
	dec := json.NewDecoder(bytes.NewReader(stream))
	for dec.More() {
		var e executor.Event
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// A plan of hours runs in a moment of wall time on a virtual clock, with
// the servers of a rack at work at once, taking exactly its critical path,
// and the same journal and events every time.
func TestVirtualTimeRunsTheCriticalPath(t *testing.T) {
	var journals, streams [][]byte
	for range 2 {
		f := newVirtualFleet()
		start := time.Now()
		out := f.run(t, f.options(), context.Background(), context.Background())
		wall := time.Since(start)
		wantOutcome(t, out, executor.OutcomeCompleted, "")
		// The window opens after an hour; then three racks one after
		// another, 15 minutes after each of the first two. East's rack
		// runs beside them.
		want := time.Hour + 3*serverPath + 2*15*time.Minute
		if got := f.clock.Now().Sub(executortest.Epoch); got != want {
			t.Errorf("the run took %v of virtual time, want the critical path %v", got, want)
		}
		events := decodeEvents(t, f.events.Bytes())
		if end := events[len(events)-1]; end.Type != "apply_ended" || end.Time.Sub(executortest.Epoch) != want {
			t.Errorf("last event %s at %v, want apply_ended at %v", end.Type, end.Time.Sub(executortest.Epoch), want)
		}
		// The servers of a rack overlap: each step starts at one instant
		// for all of them, as it does for both groups' first racks.
		startAt := map[string]map[time.Time]int{}
		for _, e := range events {
			if e.Type == "step_started" {
				rack := e.Server[:len(e.Server)-len("-s01")]
				if startAt[rack+" "+e.Op] == nil {
					startAt[rack+" "+e.Op] = map[time.Time]int{}
				}
				startAt[rack+" "+e.Op][e.Time]++
			}
		}
		for key, times := range startAt {
			if len(times) != 1 {
				t.Errorf("%s started at %d different instants: %v", key, len(times), times)
			}
		}
		updateAt := executortest.Epoch.Add(time.Hour + 30*time.Second + 5*time.Minute)
		if n := startAt["c1/r02/r02 step:3"][updateAt.Add(serverPath+15*time.Minute)]; n != 3 {
			t.Errorf("%d of r02's 3 servers started their update at %v: %v", n, updateAt.Add(serverPath+15*time.Minute), startAt["c1/r02/r02 step:3"])
		}
		if n := startAt["c2/r01/r01 step:3"][executortest.Epoch.Add(30*time.Second+5*time.Minute)]; n != 2 {
			t.Errorf("east's rack did not run beside lab's window: %v", startAt["c2/r01/r01 step:3"])
		}
		if wall > 3*time.Second {
			t.Errorf("%v of virtual time took %v of wall time", want, wall)
		}
		t.Logf("%v of virtual time in %v of wall time", want, wall)
		journals, streams = append(journals, journalOf(t, f.backend)), append(streams, f.events.Bytes())
	}
	if !bytes.Equal(journals[0], journals[1]) {
		t.Errorf("two runs wrote different journals:\n%s\n---\n%s", journals[0], journals[1])
	}
	if !bytes.Equal(streams[0], streams[1]) {
		t.Errorf("two runs sent different events:\n%s\n---\n%s", streams[0], streams[1])
	}
}

// On a virtual clock an interrupt still works: the first one gives up the
// polls and waits in flight, a second one returns at once, and a later
// run on the same clock resumes from the journal without flashing again.
func TestVirtualTimeInterruptsAndResumes(t *testing.T) {
	for _, hardStop := range []bool{false, true} {
		name := map[bool]string{false: "graceful", true: "hard"}[hardStop]
		t.Run(name, func(t *testing.T) {
			f := newVirtualFleet()
			ctx, cancel := context.WithCancel(context.Background())
			hard, cancelHard := context.WithCancel(context.Background())
			defer cancel()
			defer cancelHard()
			o := f.options()
			sink := o.Events
			o.Events = executor.SinkFunc(func(e executor.Event) {
				sink.Event(e)
				// In r02's update: the task is journaled, the flash runs.
				if e.Type == "step_task" && e.Server == "c1/r02/r02-s01" {
					cancel()
					if hardStop {
						cancelHard()
					}
				}
			})
			out := f.run(t, o, ctx, hard)
			wantOutcome(t, out, executor.OutcomeInterrupted, executor.ReasonInterrupted)
			out = f.run(t, f.options(), context.Background(), context.Background())
			wantOutcome(t, out, executor.OutcomeCompleted, "")
			for _, s := range f.plan.Servers {
				if n := f.prov.Count(s.Address, providers.StepUpdate); n != 1 {
					t.Errorf("%s: %d updates, want 1", s.Address, n)
				}
			}
		})
	}
}

var _ executor.Virtual = (*vclock.Clock)(nil)

// oneServer is a virtual fleet of one compute server in one rack.
func oneServer(script executortest.Script, set func(*plan.Settings)) *virtualFleet {
	f := &virtualFleet{clock: vclock.New(executortest.Epoch), prov: executortest.NewProvider(), backend: state.NewMemory()}
	f.prov.PerBMCTasks = true
	b := executortest.NewBuilder(f.prov)
	b.Scripts[rackServer("r01", 1)] = script
	b.Stage("default").Group(b, "default").Cluster("c1").Settings(set).
		Scope(S{Name: "r01", Servers: 1, Threshold: plan.Threshold{Type: "count", Value: 0}})
	f.plan = b.Plan()
	return f
}

// eventAt finds the first event of a type for an op and says when it came.
func eventAt(t *testing.T, events []executor.Event, typ, op string) (executor.Event, time.Duration) {
	t.Helper()
	for _, e := range events {
		if e.Type == typ && e.Op == op {
			return e, e.Time.Sub(executortest.Epoch)
		}
	}
	t.Fatalf("no %s event for %s", typ, op)
	return executor.Event{}, 0
}

// The executor's own waits run on the virtual clock: a drain hook that
// would take 25 minutes is cut at its 20-minute timeout and the upgrade
// proceeds; a server that never comes back is watched by the remediation
// triggers for their 30 minutes, reimaged, watched again, powered off.
func TestVirtualTimeBoundsHooksAndWatchesRemediation(t *testing.T) {
	f := oneServer(executortest.Script{WaitReadyFails: 1000}, func(s *plan.Settings) {
		s.Triggers = &plan.RemediationTriggers{Provisioning: plan.Duration(30 * time.Minute),
			ReadOnlyFilesystem: plan.Duration(10 * time.Minute), UnknownState: plan.Duration(10 * time.Minute)}
	})
	o := f.options()
	slow := map[string]time.Duration{}
	for k, v := range took {
		slow[k] = v
	}
	slow["drain"] = 25 * time.Minute
	o.Hooks = &executortest.TimedHooks{HookRunner: executortest.NewHooks(), Clock: f.clock, Took: slow}
	out := f.run(t, o, context.Background(), context.Background())
	wantOutcome(t, out, executor.OutcomeCompletedWithFailures, "")
	events := decodeEvents(t, f.events.Bytes())

	drained, at := eventAt(t, events, "step_completed", "step:1")
	if want := 30*time.Second + 20*time.Minute; at != want || drained.Message != "drain did not finish within 20m0s; proceeding" {
		t.Errorf("drain ended at %v with %q, want at %v cut by its timeout", at, drained.Message, want)
	}
	waitStart := 30*time.Second + 20*time.Minute + 2*time.Minute + 10*time.Minute + 20*time.Minute
	failed, at := eventAt(t, events, "step_failed", "step:5")
	if at != waitStart+30*time.Minute || failed.Message != "remediation trigger provisioning: provisioning not done within 30m0s (power On, health OK)" {
		t.Errorf("wait_ready failed at %v with %q, want at %v, the provisioning trigger", at, failed.Message, waitStart+30*time.Minute)
	}
	if _, at := eventAt(t, events, "step_started", "remedy:1:reimage"); at != waitStart+30*time.Minute {
		t.Errorf("reimage remediation at %v", at)
	}
	if _, at := eventAt(t, events, "step_failed", "remedy:1:wait_ready"); at != waitStart+30*time.Minute+20*time.Minute+30*time.Minute {
		t.Errorf("the wait after the reimage failed at %v", at)
	}
	if got, want := f.clock.Now().Sub(executortest.Epoch), waitStart+80*time.Minute+2*time.Minute; got != want {
		t.Errorf("the run ended at %v, want %v (after the power off)", got, want)
	}
}

func TestVirtualClockIsNotSynchronous(t *testing.T) {
	f := oneServer(executortest.Script{}, func(*plan.Settings) {})
	o := f.options()
	o.Synchronous = true
	if _, err := executor.New(o); err == nil {
		t.Error("New accepted Synchronous with a virtual clock")
	}
}
