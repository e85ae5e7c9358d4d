package executor_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// resumePlan has a serial control plane, a wait and two compute racks.
func resumePlan(p *executortest.Provider) *plan.Plan {
	return executortest.Single(p, nil,
		S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 2},
		S{Name: "r01", Servers: 3, MaxUnavailable: 2, WaitAfter: 5 * time.Minute},
		S{Name: "r02", Servers: 2})
}

// assertExactlyOnce checks every server completed and had each
// version-changing step applied exactly once across all runs.
func assertExactlyOnce(t *testing.T, h *harness) {
	t.Helper()
	for _, s := range h.plan.Servers {
		if got := h.state(s.Address); got != "completed" {
			t.Errorf("%s is %s", s.Address, got)
		}
		for _, k := range []providers.StepKind{providers.StepUpdate, providers.StepReimage} {
			if n := h.prov.Count(s.Address, k); n != 1 {
				t.Errorf("%s: %s applied %d times, want exactly 1", s.Address, k, n)
			}
		}
	}
}

// runToCompletion applies again until the run completes (at most n times).
func runToCompletion(t *testing.T, h *harness, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		out, err := h.exec().Run(context.Background(), context.Background())
		if errors.Is(err, executor.ErrAlreadyApplied) {
			return // the crash came after the run completed
		}
		if err != nil {
			t.Fatalf("resume %d: %v", i, err)
		}
		if out.Status == executor.OutcomeCompleted {
			return
		}
	}
	t.Fatalf("not completed after %d resumes", n)
}

func TestResumeAfterCrashAtEveryJournalRecord(t *testing.T) {
	clean := newHarness(t)
	clean.plan = resumePlan(clean.prov)
	counter := &executortest.Crash{Backend: clean.backend, After: 1 << 30}
	clean.backend = counter
	clean.run()
	total := counter.Appended()
	if total < 50 {
		t.Fatalf("only %d records in a clean run", total)
	}
	for k := 0; k < total; k++ {
		h := newHarness(t)
		h.plan = resumePlan(h.prov)
		mem := h.backend
		h.backend = &executortest.Crash{Backend: mem, After: k}
		_, err := h.exec().Run(context.Background(), context.Background())
		if !errors.Is(err, executortest.ErrCrashed) {
			t.Fatalf("crash after %d records: Run returned %v", k, err)
		}
		h.backend = mem
		runToCompletion(t, h, 3)
		assertExactlyOnce(t, h)
		if t.Failed() {
			t.Fatalf("failed after a crash at record %d of %d", k, total)
		}
	}
}

func TestResumePollsTheRecordedTask(t *testing.T) {
	// Find the record right after the first task_uri and crash there: the
	// update was accepted by the BMC and its task URI is durable.
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	mem := h.backend.(*state.Memory)
	crash := &executortest.Crash{Backend: mem, After: 1 << 30}
	h.backend = crash
	h.run()
	entries, _ := mem.Read(context.Background(), sha, -1)
	k := 0
	for i, e := range entries {
		if bytes.Contains(e.Data, []byte(`"type":"task_uri"`)) {
			k = i + 1
			break
		}
	}
	h2 := newHarness(t)
	h2.plan = executortest.Single(h2.prov, nil, S{Name: "r01", Servers: 1})
	mem2 := h2.backend
	h2.backend = &executortest.Crash{Backend: mem2, After: k}
	if _, err := h2.exec().Run(context.Background(), context.Background()); !errors.Is(err, executortest.ErrCrashed) {
		t.Fatal(err)
	}
	h2.backend = mem2
	runToCompletion(t, h2, 2)
	if h2.prov.Polls() != 1 {
		t.Errorf("task polled %d times, want 1", h2.prov.Polls())
	}
	assertExactlyOnce(t, h2)
	if h2.index("step_resumed", rackServer("r01", 1)) < 0 {
		t.Error("no step_resumed event")
	}
}

func TestResumeAfterHardStopAtRandomPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 25; i++ {
		h := newHarness(t)
		h.async = true
		h.plan = resumePlan(h.prov)
		mem := h.backend
		hard, cancel := context.WithCancel(context.Background())
		k := 1 + rng.IntN(90)
		h.backend = &executortest.Crash{Backend: mem, After: k, OnCrash: cancel}
		out, err := h.exec().Run(context.Background(), hard)
		cancel()
		if err != nil && !errors.Is(err, executortest.ErrCrashed) {
			t.Fatalf("hard stop at %d: %v", k, err)
		}
		if err == nil && out.Status != executor.OutcomeInterrupted && out.Status != executor.OutcomeCompleted {
			t.Fatalf("hard stop at %d: %v", k, out)
		}
		h.backend = mem
		runToCompletion(t, h, 3)
		assertExactlyOnce(t, h)
		if t.Failed() {
			t.Fatalf("failed after a hard stop at record %d", k)
		}
	}
}

func TestGracefulInterruptFinishesInFlightThenResumes(t *testing.T) {
	h := newHarness(t)
	h.async = true
	// The reimage (3rd Apply) changes the BMC in several requests: it is
	// waited for. (Polls and waits are given up: TestGracefulInterruptAbandonsPolls.)
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {HangApply: 3}}, S{Name: "r01", Servers: 2, MaxUnavailable: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan executor.Outcome)
	go func() {
		out, err := h.exec().Run(ctx, context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	<-h.prov.Hanging(rackServer("r01", 1)) // in the reimage
	cancel()
	h.prov.Release(rackServer("r01", 1))
	out := <-done
	wantOutcome(t, out, executor.OutcomeInterrupted, executor.ReasonInterrupted)
	n := h.node(rackServer("r01", 1))
	if n.State.Name != executor.Running || n.Steps[3].State != executor.Completed || n.Steps[4].State != executor.NotStarted {
		t.Errorf("after interrupt: %s, steps %+v", n.State, n.Steps)
	}
	if got := h.state("run"); got != "stopped(interrupted)" {
		t.Errorf("run is %s", got)
	}
	h.async = false
	runToCompletion(t, h, 1)
	assertExactlyOnce(t, h)
}

func TestHardStopReturnsAtOnce(t *testing.T) {
	h := newHarness(t)
	h.async = true
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {HangApply: 1}}, S{Name: "r01", Servers: 1})
	hard, cancel := context.WithCancel(context.Background())
	done := make(chan executor.Outcome)
	go func() {
		out, _ := h.exec().Run(context.Background(), hard)
		done <- out
	}()
	<-h.prov.Hanging(rackServer("r01", 1))
	cancel() // the provider call is still hanging: Run must not wait for it
	wantOutcome(t, <-done, executor.OutcomeInterrupted, executor.ReasonInterrupted)
	h.async = false
	runToCompletion(t, h, 1)
	assertExactlyOnce(t, h)
}

func TestJournalTornLastLineIsIgnoredAndRepaired(t *testing.T) {
	dir := t.TempDir()
	d, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2})
	h.backend = &executortest.Crash{Backend: d, After: 20}
	if _, err := h.exec().Run(context.Background(), context.Background()); !errors.Is(err, executortest.ErrCrashed) {
		t.Fatal(err)
	}
	// The crash happened in the middle of writing a record.
	path := filepath.Join(dir, "journal", sha+".jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"v":1,"time":"2026-11-21T12:00:00Z","type":"step_do`)
	f.Close()
	h.backend = d
	if st := h.status(); st.Run.State.Name != executor.Running {
		t.Errorf("status with a torn line: run %s", st.Run.State)
	}
	runToCompletion(t, h, 1)
	assertExactlyOnce(t, h)
	b, _ := os.ReadFile(path)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Errorf("line %d is not JSON after repair: %q", lines, sc.Text())
		}
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		t.Error("journal does not end with a newline")
	}
}

func TestJournalRefusesNewerVersionAndCorruption(t *testing.T) {
	for _, tc := range []struct {
		name, line, want string
	}{
		{"newer", `{"v":2,"time":"2026-11-21T12:00:00Z","type":"stop"}`, "version 2 is not supported"},
		{"corrupt middle", `{"v":1,"type":`, "corrupt at position"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
			ctx := context.Background()
			h.backend.Append(ctx, sha, []byte(tc.line))
			h.backend.Append(ctx, sha, []byte(`{"v":1,"time":"2026-11-21T12:00:00Z","type":"continue"}`))
			_, err := h.exec().Status(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLock(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"dir", "memory"} {
		t.Run(name, func(t *testing.T) {
			var b executor.Backend = state.NewMemory()
			if name == "dir" {
				d, err := state.Open(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				b = d
			}
			since := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
			holder := executor.LockInfo{ID: "abc123", Who: "ci@runner-7", PID: 4242, PlanSHA256: "feedfacecafe0000", Since: since}
			if err := b.Lock(ctx, holder); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t)
			h.backend = b
			h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
			_, err := h.exec().Run(ctx, ctx)
			var le *executor.LockedError
			if !errors.As(err, &le) {
				t.Fatalf("Run while locked: %v", err)
			}
			for _, want := range []string{"ci@runner-7", "pid 4242", "2026-11-21T09:30:00Z", "feedfacecafe", executor.NextAction{Kind: executor.NextForceUnlock, Target: "abc123"}.Ref()} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q lacks %q", err, want)
				}
			}
			if len(h.prov.Calls()) != 0 {
				t.Error("a refused apply touched a server")
			}
			// With a timeout the apply waits on its clock, then gives up.
			o := h.options()
			o.LockTimeout = time.Minute
			e, _ := executor.New(o)
			before := h.clock.Now()
			if _, err := e.Run(ctx, ctx); !errors.As(err, &le) {
				t.Fatalf("Run with lock timeout: %v", err)
			}
			if waited := h.clock.Now().Sub(before); waited != time.Minute {
				t.Errorf("waited %v for the lock, want 1m", waited)
			}
			if err := executor.ForceUnlock(ctx, b, "wrong"); err == nil || !strings.Contains(err.Error(), "abc123") {
				t.Errorf("force-unlock with the wrong id: %v", err)
			}
			if err := executor.ForceUnlock(ctx, b, "abc123"); err != nil {
				t.Fatal(err)
			}
			if err := executor.ForceUnlock(ctx, b, "abc123"); err == nil {
				t.Error("force-unlock of an unlocked state succeeded")
			}
			wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
			if _, err := b.LockHolder(ctx); !errors.Is(err, executor.ErrNotFound) {
				t.Errorf("lock still held after Run: %v", err)
			}
		})
	}
}

// TestStaleLockTakenOver: a lock whose holder is an apply of this host
// that no longer runs (killed, crashed) is taken over with a notice in the
// journal's run_started record and the apply_started event; a holder on
// another host, or whose process runs, keeps the lock (refused with the
// force-unlock command).
func TestStaleLockTakenOver(t *testing.T) {
	ctx := context.Background()
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skip("no host name")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	deadPID := gone.Process.Pid // exited and reaped
	since := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		who      string
		pid      int
		takeOver bool
	}{
		{"this host, process gone", "ci@" + host, deadPID, true},
		{"this host, process running", "ci@" + host, os.Getpid(), false},
		{"another host", "ci@not-" + host, deadPID, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
			holder := executor.LockInfo{ID: "abc123", Who: tc.who, PID: tc.pid, PlanSHA256: sha, Since: since}
			if err := h.backend.Lock(ctx, holder); err != nil {
				t.Fatal(err)
			}
			out, err := h.exec().Run(ctx, ctx)
			if !tc.takeOver {
				var le *executor.LockedError
				if !errors.As(err, &le) || !strings.Contains(err.Error(), (executor.NextAction{Kind: executor.NextForceUnlock, Target: "abc123"}).Ref()) {
					t.Fatalf("Run: %v, want the lock refusal with the force-unlock command", err)
				}
				if len(h.prov.Calls()) != 0 {
					t.Error("a refused apply touched a server")
				}
				return
			}
			if err != nil {
				t.Fatalf("Run with a stale lock: %v", err)
			}
			wantOutcome(t, out, executor.OutcomeCompleted, "")
			entries, _ := h.backend.Read(ctx, sha, -1)
			if len(entries) == 0 || !bytes.Contains(entries[0].Data, []byte(`"type":"run_started"`)) ||
				!bytes.Contains(entries[0].Data, []byte("took over the lock abc123 of "+tc.who)) {
				t.Errorf("the takeover is not in the journal's run_started record: %s", entries[0].Data)
			}
			noted := false
			for _, e := range h.events {
				if e.Type == "apply_started" && strings.Contains(e.Message, "took over the lock abc123") {
					noted = true
				}
			}
			if !noted {
				t.Error("no notice of the takeover in the apply_started event")
			}
		})
	}
}

func TestPlanStoredForContinue(t *testing.T) {
	ctx := context.Background()
	d, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	h := newHarness(t)
	h.backend = d
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1, PauseAfter: true}, S{Name: "r02", Servers: 1})
	file, err := plan.Encode(h.plan)
	if err != nil {
		t.Fatal(err)
	}
	o := h.options()
	o.PlanFile = file
	e, _ := executor.New(o)
	if _, err := e.Run(ctx, ctx); err != nil {
		t.Fatal(err)
	}
	cur, err := d.CurrentPlan(ctx)
	if err != nil || cur != sha {
		t.Fatalf("current plan %q, %v", cur, err)
	}
	got, err := d.LoadPlan(ctx, cur)
	if err != nil || !bytes.Equal(got, file) {
		t.Fatalf("stored plan differs: %v", err)
	}
	// `continue` in another job: load the plan by SHA, continue, run.
	p, err := plan.Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	h.plan = p
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
}

func TestControlRefusals(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	var re *executor.RefusedError
	for name, err := range map[string]error{
		"continue before apply": h.exec().Continue(ctx),
		"stop before apply":     h.exec().Stop(ctx),
		"approve before apply":  h.exec().Approve(ctx, "x"),
	} {
		if !errors.As(err, &re) {
			t.Errorf("%s: %v, want refusal", name, err)
		}
	}
	if entries, _ := h.backend.Read(ctx, sha, -1); len(entries) != 0 {
		t.Errorf("refusals wrote %d records", len(entries))
	}
}

func TestExpiredPlanIsRefused(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	h.clock.Advance(31 * 24 * time.Hour)
	if _, err := h.exec().Run(context.Background(), context.Background()); !errors.Is(err, executor.ErrExpired) {
		t.Fatalf("Run of an expired plan: %v", err)
	}
	if len(h.prov.Calls()) != 0 {
		t.Error("touched a server")
	}
}

// TestExpiredPlanRehearsed: a rehearsal (AllowExpired) starts an expired
// plan afresh; the option changes nothing else.
func TestExpiredPlanRehearsed(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	h.clock.Advance(31 * 24 * time.Hour)
	o := h.options()
	o.AllowExpired = true
	e, err := executor.New(o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Run(context.Background(), context.Background())
	if err != nil {
		t.Fatalf("Run of an expired plan with AllowExpired: %v", err)
	}
	if out.Status != executor.OutcomeCompleted {
		t.Fatalf("outcome %s, want completed", out.Status)
	}
}

// TestExpiredStartedRunContinues: not_after is about trusting what plan
// observed when a run starts. A run that started before it (its journal
// exists) is continued and resumed after it; a fresh start stays refused.
func TestExpiredStartedRunContinues(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1, PauseAfter: true}, S{Name: "r02", Servers: 1})
	if out := h.run(); out.Status != executor.OutcomePaused {
		t.Fatalf("first run: %s, want paused after r01", out.Status)
	}
	h.clock.Advance(31 * 24 * time.Hour) // past not_after
	if err := h.exec().Continue(context.Background()); err != nil {
		t.Fatalf("continue after not_after: %v", err)
	}
	out, err := h.exec().Run(context.Background(), context.Background())
	if err != nil {
		t.Fatalf("Run of a started run after not_after: %v", err)
	}
	if out.Status != executor.OutcomeCompleted || h.state(rackServer("r02", 1)) != "completed" {
		t.Fatalf("outcome %s, r02 server %s; want completed", out.Status, h.state(rackServer("r02", 1)))
	}
}

func TestStatusJSONShape(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	h.run()
	b, err := json.Marshal(h.status())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"plan_sha256":"` + sha, `"id":"run","kind":"run"`, `"state":"completed"`, `"counts":{"servers":1`, `"op":"step:3","kind":"update","component":"bios","state":"completed"`, `"task_uri":"/redfish/v1/TaskService/Tasks/1"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("status JSON lacks %s\n%s", want, b)
		}
	}
}

// Stop and skip recorded through another handle on the same directory (as
// another CI job would) reach a running apply.
func TestControlFromAnotherProcessReachesRunningApply(t *testing.T) {
	dir := t.TempDir()
	apply, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer apply.Close()
	h := newHarness(t)
	h.async = true
	h.backend = apply
	h.plan = executortest.Single(h.prov, map[string]Script{rackServer("r01", 1): {HangApply: 1}},
		S{Name: "r01", Servers: 3, MaxUnavailable: 1, Threshold: plan.Threshold{Type: "count", Value: 1}})
	done := make(chan executor.Outcome)
	go func() { done <- h.run() }()
	<-h.prov.Hanging(rackServer("r01", 1))

	other, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	o := h.options()
	o.Backend, o.Providers, o.Holder = other, nil, "ops@laptop"
	ctl, err := executor.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := ctl.Skip(ctx, rackServer("r01", 2)); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	h.prov.Release(rackServer("r01", 1))
	wantOutcome(t, <-done, executor.OutcomeStopped, "")
	st, err := ctl.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Run.State.Name != executor.Stopped || len(st.Next) != 1 || st.Next[0] != (executor.NextAction{Kind: executor.NextContinue}) {
		t.Errorf("status: run %s, next %v", st.Run.State, st.Next)
	}
	wantStates(t, h, map[string]string{rackServer("r01", 1): "completed", rackServer("r01", 2): "skipped(user)", rackServer("r01", 3): "not_started"})
	if err := ctl.Continue(ctx); err != nil {
		t.Fatal(err)
	}
	h.async = false
	wantOutcome(t, h.run(), executor.OutcomeCompleted, "")
	found := false
	for _, e := range h.events {
		found = found || (e.Type == "skip_requested" && e.Target == rackServer("r01", 2) && e.By == "ops@laptop")
	}
	if !found {
		t.Error("the running apply emitted no skip_requested event from ops@laptop")
	}
}

// TestResumePassesResumeSince: a kill after an update was announced
// (step_started durable, the BMC may have accepted it) but before its task
// URI was journaled leaves nothing to poll; with an OnReset-style update
// the version is not visible yet, so the step is run again, and then it
// carries ResumeSince = when the first attempt was journaled (so the
// provider attaches to that attempt's task instead of flashing again). A
// fresh start carries none.
func TestResumePassesResumeSince(t *testing.T) {
	srv := rackServer("r01", 1)
	mk := func() *harness {
		h := newHarness(t)
		h.plan = executortest.Single(h.prov, map[string]executortest.Script{srv: {Staged: true}}, S{Name: "r01", Servers: 1})
		return h
	}
	// Find the record count right after the update's step_started.
	clean := mk()
	mem := clean.backend.(*state.Memory)
	clean.run()
	entries, _ := mem.Read(context.Background(), sha, -1)
	k := -1
	for i, e := range entries {
		if bytes.Contains(e.Data, []byte(`"type":"step_started"`)) && bytes.Contains(e.Data, []byte(`"kind":"update"`)) {
			k = i + 1
			break
		}
	}
	if k < 0 {
		t.Fatal("no update in the clean run")
	}

	h := mk()
	mem2 := h.backend
	first := h.clock.Now()
	// The provider accepts the update, then the process dies before its
	// task URI is durable.
	h.backend = &executortest.Crash{Backend: mem2, After: k}
	if _, err := h.exec().Run(context.Background(), context.Background()); !errors.Is(err, executortest.ErrCrashed) {
		t.Fatalf("first run: %v", err)
	}
	h.clock.Advance(3 * time.Minute) // the restart comes later: ResumeSince is not "now"
	h.backend = mem2
	runToCompletion(t, h, 2)

	var updates []executortest.Call
	for _, c := range h.prov.Calls() {
		if c.Server == srv && c.Kind == providers.StepUpdate {
			updates = append(updates, c)
		}
	}
	if len(updates) != 2 {
		t.Fatalf("update applied %d times, want 2 (the fresh start and the resume)", len(updates))
	}
	if !updates[0].ResumeSince.IsZero() {
		t.Errorf("fresh start carries ResumeSince %s", updates[0].ResumeSince)
	}
	if !updates[1].ResumeSince.Equal(first) {
		t.Errorf("resumed update carries ResumeSince %s, want the first attempt's start %s", updates[1].ResumeSince, first)
	}
	for _, c := range h.prov.Calls() {
		if c.Server == srv && c.Kind != providers.StepUpdate && !c.ResumeSince.IsZero() {
			t.Errorf("%s step carries ResumeSince", c.Kind)
		}
	}
}
