package applyview_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got), rerun with -update if intended:\n%s", path, diff)
	}
}

const sha = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

type S = executortest.Scope

// scenario is the fixed run the golden files show, on a fake clock: a
// control plane, rack r01 (3 servers, 2 must succeed; r01-s02 never comes
// back healthy, gets its reimage, and fails) with a pause after it, and
// rack r02 after a continue. Each apply renders into out through a fresh
// view, as each process does; json gets the event stream.
func scenario(t *testing.T, opts applyview.Options) (human, json string) {
	t.Helper()
	prov := executortest.NewProvider()
	clock := executortest.NewClock(executortest.Epoch)
	b := executortest.NewBuilder(prov)
	b.Scripts = map[string]executortest.Script{"c1/r01/r01-s02": {WaitReadyFails: 5}}
	b.Stage("main").Group(b, "all").Cluster("c1").
		Scope(S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 1, Role: "control_plane_spare"}).
		Scope(S{Name: "r01", Servers: 3, Threshold: plan.Threshold{Type: "count", Value: 2}, PauseAfter: true}).
		Scope(S{Name: "r02", Servers: 2, WaitAfter: 0})
	p := b.Plan()
	// The builder leaves estimates out; give each scope 40 minutes, as a
	// plan would, so the ETA has something to count down.
	for si := range p.Run.Stages {
		st := &p.Run.Stages[si]
		for gi := range st.Groups {
			for ci := range st.Groups[gi].Clusters {
				c := &st.Groups[gi].Clusters[ci]
				for pi := range c.Phases {
					for k := range c.Phases[pi].Scopes {
						c.Phases[pi].Scopes[k].Estimate = plan.Duration(40 * time.Minute)
						st.Estimate += plan.Duration(40 * time.Minute)
					}
				}
			}
		}
	}
	backend := state.NewMemory()
	var out, js bytes.Buffer
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	opts.Refresh = -1
	run := func(control func(*executor.Executor) error) executor.Outcome {
		view := applyview.New(&out, p, sha, opts)
		e, err := executor.New(executor.Options{
			Plan: p, PlanSHA256: sha, Backend: backend, Clock: clock,
			Providers: map[string]providers.Provider{"fake": prov},
			Hooks:     executortest.NewHooks(), Holder: "tester@host", Synchronous: true,
			Events: executor.SinkFunc(func(ev executor.Event) {
				view.Event(ev)
				applyview.NewJSON(&js).Event(ev)
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
		st, err := e.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		view.Start(st)
		if control != nil {
			if err := control(e); err != nil {
				t.Fatal(err)
			}
		}
		o, err := e.Run(context.Background(), context.Background())
		if err != nil {
			t.Fatal(err)
		}
		view.Close()
		return o
	}
	if o := run(nil); o.Status != executor.OutcomePaused || o.Reason != executor.ReasonAfterRack {
		t.Fatalf("first apply: %s, want paused(after_rack)", o)
	}
	clock.Advance(20 * time.Minute)
	// r01-s02 failed and was powered off (remediation): the run completes,
	// not cleanly.
	if o := run(func(e *executor.Executor) error { return e.Continue(context.Background()) }); o.Status != executor.OutcomeCompletedWithFailures {
		t.Fatalf("continue: %s, want completed_with_failures", o)
	}
	return out.String(), js.String()
}

// TestGoldenPlain pins the plain-line rendering (not a TTY) and the JSON
// stream of the same run.
func TestGoldenPlain(t *testing.T) {
	human, js := scenario(t, applyview.Options{})
	if strings.Contains(human, "\x1b") {
		t.Error("plain output holds escape sequences")
	}
	golden(t, "plain.golden", []byte(human))
	golden(t, "events.golden.jsonl", []byte(js))
}

// TestGoldenLive pins the live view: the block of bars redrawn in place
// (cursor up, clear), log lines above it, and the final picture kept.
func TestGoldenLive(t *testing.T) {
	human, _ := scenario(t, applyview.Options{Live: true})
	if !strings.Contains(human, "\x1b[") {
		t.Error("live output never redraws")
	}
	golden(t, "live.golden", []byte(human))
}

// TestPlainContent checks what the plain lines must say, independently of
// the golden file: the remediation, the failure, the pause and the exact
// command to continue, and the final summary.
func TestPlainContent(t *testing.T) {
	human, _ := scenario(t, applyview.Options{})
	for _, want := range []string{
		"Applying plan 001122334455: 6 servers to upgrade in 3 racks, 0 skipped, estimated ~2h",
		"c1/r01: started: 3 servers, 2 must succeed, 1 may fail",
		"  c1/r01/r01-s02: remediation: reimage",
		"  c1/r01/r01-s02: failed(unhealthy)",
		"c1/r01: completed: 2/3 done, 1 failed, 0 skipped",
		"Apply paused (after_rack): ",
		"To continue, run: rackform continue",
		"Resuming plan 001122334455: ",
		"c1/r02: completed: 2/2 done, 0 failed, 0 skipped",
		"Apply complete, not every server reached its target: 5 servers upgraded, 1 failed, 0 skipped; 1 left out of service\n",
		"Left out of service (1):\n",
		"  c1/r01/r01-s02 (failed(unhealthy)): powered off, drained; to bring it back: it needs a repair or a replace; then: rackform plan -target c1/r01/r01-s02 -out recover.plan && rackform apply recover.plan\n",
	} {
		if !strings.Contains(human, want) {
			t.Errorf("plain output lacks %q:\n%s", want, human)
		}
	}
}

// TestETA checks the estimate left: the plan's scope estimates, a running
// scope's less its elapsed time.
func TestETA(t *testing.T) {
	human, _ := scenario(t, applyview.Options{})
	if !strings.Contains(human, "c1 control plane: completed: 1/1 done, 0 failed, 0 skipped, ETA ~1h20m") {
		t.Errorf("no ETA after the control plane:\n%s", human)
	}
}

// TestETAPace: once work is done, the pace so far scales what is left. The
// control plane (estimated 40m) took 10m, so the two racks left (80m
// estimated) should take 20m.
func TestETAPace(t *testing.T) {
	p := &plan.Plan{Run: plan.Run{Stages: []plan.Stage{{Groups: []plan.Group{{Clusters: []plan.Cluster{{Name: "c1", Phases: []plan.Phase{
		{Kind: plan.PhaseControlPlane, Scopes: []plan.Scope{{ID: "cp", Kind: "serial", Name: "cp", Servers: []string{"c1/r1/cp"}, Eligible: 1, Required: 1, Estimate: plan.Duration(40 * time.Minute)}}},
		{Kind: plan.PhaseCompute, Scopes: []plan.Scope{
			{ID: "r1", Kind: "rack", Rack: "r1", Servers: []string{"c1/r1/a"}, Eligible: 1, Required: 1, Estimate: plan.Duration(40 * time.Minute)},
			{ID: "r2", Kind: "rack", Rack: "r2", Servers: []string{"c1/r2/b"}, Eligible: 1, Required: 1, Estimate: plan.Duration(40 * time.Minute)},
		}},
	}}}}}}}}}
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Refresh: -1})
	t0 := executortest.Epoch
	v.Event(executor.Event{Time: t0, Type: "apply_started"})
	v.Event(executor.Event{Time: t0, Type: "scope_started", ID: "cp", Kind: executor.KindScope, State: executor.Running})
	v.Event(executor.Event{Time: t0.Add(10 * time.Minute), Type: "scope_completed", ID: "cp", Kind: executor.KindScope, State: executor.Completed,
		Counts: &executor.Counts{Servers: 1, Eligible: 1, Required: 1, Succeeded: 1}})
	v.Close()
	if !strings.Contains(out.String(), "[10:00] c1 control plane: completed: 1/1 done, 0 failed, 0 skipped, ETA ~20m") {
		t.Fatalf("want an ETA of ~20m at the pace so far:\n%s", out.String())
	}
}

// TestWriteStatus renders the state of a run paused after a rack: the
// containers, the scopes with their counts, the failed server with its
// failed steps, and the command to go on (rewritten by the caller).
func TestWriteStatus(t *testing.T) {
	prov := executortest.NewProvider()
	b := executortest.NewBuilder(prov)
	b.Scripts = map[string]executortest.Script{"c1/r01/r01-s02": {FailKind: providers.StepUpdate}}
	b.Stage("main").Group(b, "all").Cluster("c1").
		Scope(S{Name: "r01", Servers: 3, Threshold: plan.Threshold{Type: "count", Value: 2}, PauseAfter: true}).
		Scope(S{Name: "r02", Servers: 1})
	p := b.Plan()
	e, err := executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: state.NewMemory(), Clock: executortest.NewClock(executortest.Epoch),
		Providers: map[string]providers.Provider{"fake": prov}, Hooks: executortest.NewHooks(), Holder: "tester@host", Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background(), context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := applyview.WriteStatus(&out, p, st, &applyview.Resume{StateDir: "st"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"Plan 001122334455: run paused(after_rack)\n",
		"stage stage.main: paused(after_rack)\n",
		"c1/r01 (cluster.c1.compute.rack.r01): completed; 2/3 done, 1 failed, 0 skipped, 0 running, 2 must succeed\n",
		"c1/r01/r01-s02: failed(step)",
		"step:3 bios update: failed",
		"c1/r02 (cluster.c1.compute.rack.r02): not_started",
		"To continue, run: rackform continue -state-dir st\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "c1/r01/r01-s01") {
		t.Errorf("a completed server is listed:\n%s", got)
	}
}

// A server the plan could not observe or held back never silently
// disappears from apply: the first lines name them.
func TestApplyNamesServersNotInTheRun(t *testing.T) {
	p := &plan.Plan{Servers: []plan.Server{
		{Address: "c1/r1/a", Action: plan.ActionUpgrade},
		{Address: "c1/r1/b", Action: plan.ActionSkip, Reason: plan.ReasonUnreachable},
		{Address: "c1/r1/c", Action: plan.ActionSkip, Reason: plan.ReasonCredentialsRefused},
		{Address: "c1/r1/d", Action: plan.ActionSkip, Reason: plan.ReasonHeldBack},
		{Address: "c1/r1/e", Action: plan.ActionSkip, Reason: plan.ReasonAtTarget},
	}}
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Refresh: -1})
	v.Event(executor.Event{Time: executortest.Epoch, Type: "apply_started"})
	v.Close()
	for _, want := range []string{
		"Not in this run: 2 servers not observed when planned: c1/r1/b, c1/r1/c",
		"Not in this run: 1 server held back when planned: c1/r1/d",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}
