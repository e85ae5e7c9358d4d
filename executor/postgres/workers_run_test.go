package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/internal/pgtest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// workerRound runs two applies of p on two handles of one database, the
// second started once the first has journaled its start, with -join.
func workerRound(t *testing.T, a, b *Backend, p *plan.Plan, sha string, prov *executortest.Provider, during func(context.Context)) (executor.Outcome, executor.Outcome) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	before, err := a.Read(ctx, sha, -1)
	if err != nil {
		before = nil
	}
	opts := func(be *Backend, who string, join bool) executor.Options {
		return executor.Options{Plan: p, PlanSHA256: sha, Backend: be, Holder: who, Join: join,
			Providers: map[string]providers.Provider{"fake": prov}, Hooks: executortest.NewHooks(),
			PollInterval: 20 * time.Millisecond}
	}
	type res struct {
		out executor.Outcome
		err error
	}
	run := func(o executor.Options) chan res {
		ch := make(chan res, 1)
		e, err := executor.New(o)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			out, err := e.Run(ctx, ctx)
			ch <- res{out, err}
		}()
		return ch
	}
	ra := run(opts(a, "worker-a@ci", false))
	for {
		es, err := a.Read(ctx, sha, -1)
		if err == nil && len(es) > len(before) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("worker a journaled nothing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	rb := run(opts(b, "worker-b@ci", true))
	if during != nil {
		during(ctx)
	}
	x, y := <-ra, <-rb
	if errors.Is(y.err, executor.ErrAlreadyApplied) && x.err == nil && x.out.Status == executor.OutcomeCompleted {
		// The first worker finished the run before the second joined.
		y = res{out: x.out}
	}
	if x.err != nil || y.err != nil {
		t.Fatalf("worker a: %v; worker b: %v", x.err, y.err)
	}
	return x.out, y.out
}

// twoHandles skips without PostgreSQL, else returns two handles of one
// fresh database (two workers' machines, 3 s leases), a fake provider and
// a plan builder on it without drain and uncordon hooks.
func twoHandles(t *testing.T) (*Backend, *Backend, *executortest.Provider, *executortest.Builder) {
	t.Helper()
	pgtest.Need(t, srv)
	conn := srv.Database(t)
	a := open(t, Options{ConnString: conn, Lease: 3 * time.Second})
	b := open(t, Options{ConnString: conn, Lease: 3 * time.Second})
	prov := executortest.NewProvider()
	bl := executortest.NewBuilder(prov)
	bl.NoHooks = true
	return a, b, prov, bl
}

// shareStage returns a workerRound hook for a plan whose server hang
// hangs in its first step, and whose servers firsts (the first of each
// group of the next stage) hang in their first step too: hang is let go
// once both workers are live, then the firsts once each has started (each
// group claimed and started while the other still runs), so the groups of
// the stage are shared between the workers however fast the fake is.
func shareStage(t *testing.T, a *Backend, sha string, prov *executortest.Provider, hang string, firsts ...string) func(context.Context) {
	return func(ctx context.Context) {
		wait := func(addr string) bool {
			select {
			case <-prov.Hanging(addr):
				return true
			case <-ctx.Done():
				t.Errorf("%s never started", addr)
				return false
			}
		}
		if !wait(hang) {
			return
		}
		for ctx.Err() == nil {
			if _, live, err := a.Claims(ctx, sha); err == nil && live == 2 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		prov.Release(hang)
		for _, f := range firsts {
			if !wait(f) {
				return
			}
		}
		for _, f := range firsts {
			prov.Release(f)
		}
	}
}

// TestTwoWorkersKeepPausesAndGates: two workers on one run (the engine on
// PostgreSQL, a fake provider) obey the run's pauses and gates together: a
// pause after a rack stops both (both report it), continue lets the next
// rack start; the two groups of the next stage run on the two workers, one
// each; an approval gate before the last stage stops both until approve.
// The journal shows every step started once, the second rack only after
// the continue, the gated stage only after the approval.
func TestTwoWorkersKeepPausesAndGates(t *testing.T) {
	a, b, prov, bl := twoHandles(t)
	// The second rack's first server hangs in its first step until both
	// workers are live, so the next stage's groups are shared.
	const hang = "c1/r02/r02-s01"
	bl.Scripts[hang] = executortest.Script{HangApply: 1}
	bl.Scripts["c2/r01/r01-s01"] = executortest.Script{HangApply: 1}
	bl.Scripts["c3/r01/r01-s01"] = executortest.Script{HangApply: 1}
	type S = executortest.Scope
	bl.Stage("canary").Group(bl, "lab").Cluster("c1").
		Scope(S{Name: "r01", Servers: 2, PauseAfter: true}).Scope(S{Name: "r02", Servers: 2})
	prod := bl.Stage("prod")
	prod.Group(bl, "east").Cluster("c2").Scope(S{Name: "r01", Servers: 2}).Scope(S{Name: "r02", Servers: 2})
	prod.Group(bl, "west").Cluster("c3").Scope(S{Name: "r01", Servers: 2}).Scope(S{Name: "r02", Servers: 2})
	bl.Stage("final").Gate("qa", "before").Group(bl, "last").Cluster("c4").Scope(S{Name: "r01", Servers: 2})
	p := bl.Plan()
	sha := strings.Repeat("d", 64)
	ctx := context.Background()

	oa, ob := workerRound(t, a, b, p, sha, prov, nil)
	if oa.Reason != executor.ReasonAfterRack || ob.Reason != executor.ReasonAfterRack {
		t.Fatalf("round 1: a %s(%s), b %s(%s); want both paused after the rack", oa.Status, oa.Reason, ob.Status, ob.Reason)
	}
	ctl, err := executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	must(t, ctl.Continue(ctx))
	oa, ob = workerRound(t, a, b, p, sha, prov, shareStage(t, a, sha, prov, hang, "c2/r01/r01-s01", "c3/r01/r01-s01"))
	if oa.Reason != executor.ReasonApproval || ob.Reason != executor.ReasonApproval {
		t.Fatalf("round 2: a %s(%s) %s, b %s(%s) %s; want both waiting for the approval", oa.Status, oa.Reason, oa.Message, ob.Status, ob.Reason, ob.Message)
	}
	must(t, ctl.Approve(ctx, "stage.final.gate.qa"))
	oa, ob = workerRound(t, a, b, p, sha, prov, nil)
	if oa.Status != executor.OutcomeCompleted || ob.Status != executor.OutcomeCompleted {
		t.Fatalf("round 3: a %s(%s) %s, b %s(%s) %s; want both completed", oa.Status, oa.Reason, oa.Message, ob.Status, ob.Reason, ob.Message)
	}

	es, err := a.Read(ctx, sha, -1)
	must(t, err)
	started := map[string]int{}
	continueAt, approveAt := -1, -1
	by := map[string]int{}
	group := map[string]string{}
	for i, e := range es {
		var r map[string]any
		must(t, json.Unmarshal(e.Data, &r))
		switch r["type"] {
		case "continue":
			continueAt = i
		case "approve":
			approveAt = i
		case "step_started":
			key := fmt.Sprint(r["server"], " ", r["op"])
			started[key]++
			by[strings.Fields(fmt.Sprint(r["by"]))[0]]++
			srv := fmt.Sprint(r["server"])
			if strings.HasPrefix(srv, "c1/r02/") && i < continueAt {
				t.Errorf("journal: %s started at %d, before the continue after the pause (at %d)", key, i, continueAt)
			}
			if c := srv[:strings.IndexByte(srv, '/')]; c == "c2" || c == "c3" {
				group[c] = strings.Fields(fmt.Sprint(r["by"]))[0]
			}
			if strings.HasPrefix(srv, "c4/") && i < approveAt {
				t.Errorf("journal: %s started at %d, before the approval of the gate (at %d)", key, i, approveAt)
			}
		}
	}
	if continueAt < 0 || approveAt < 0 {
		t.Fatalf("journal: continue at %d, approve at %d", continueAt, approveAt)
	}
	for key, n := range started {
		if n != 1 {
			t.Errorf("journal: %s started %d times", key, n)
		}
	}
	if len(started) == 0 {
		t.Fatal("journal: no step started")
	}
	t.Logf("steps by worker: %v", by)
	if group["c2"] == group["c3"] {
		t.Errorf("journal: both groups of the parallel stage ran on %s; with two live workers each claims one", group["c2"])
	}
}

// TestTwoWorkersHaltTogetherOnABreach: a server of one worker's group
// fails, its rack breaches its threshold and pauses; the other worker,
// driving the other group, touches no new server after the breach is
// journaled (servers in flight finish; a server it recorded started in the
// moment before it read the breach is held back untouched), and both
// report the run paused on the threshold.
func TestTwoWorkersHaltTogetherOnABreach(t *testing.T) {
	a, b, prov, bl := twoHandles(t)
	const hang = "c1/r01/r01-s01"
	bl.Scripts[hang] = executortest.Script{HangApply: 1}
	bl.Scripts["c2/r01/r01-s01"] = executortest.Script{HangApply: 1, FailApply: 2}
	bl.Scripts["c3/r01/r01-s01"] = executortest.Script{HangApply: 1}
	type S = executortest.Scope
	bl.Stage("canary").Group(bl, "lab").Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	prod := bl.Stage("prod").OnBreach("pause")
	for _, c := range []string{"c2", "c3"} {
		prod.Group(bl, c).Cluster(c).Scope(S{Name: "r01", Servers: 2}).Scope(S{Name: "r02", Servers: 2}).Scope(S{Name: "r03", Servers: 2})
	}
	p := bl.Plan()
	sha := strings.Repeat("e", 64)
	oa, ob := workerRound(t, a, b, p, sha, prov, shareStage(t, a, sha, prov, hang, "c2/r01/r01-s01", "c3/r01/r01-s01"))
	if oa.Reason != executor.ReasonThreshold || ob.Reason != executor.ReasonThreshold {
		t.Fatalf("a %s(%s) %s; b %s(%s) %s; want both paused on the threshold", oa.Status, oa.Reason, oa.Message, ob.Status, ob.Reason, ob.Message)
	}
	es, err := a.Read(context.Background(), sha, -1)
	must(t, err)
	breach := -1
	seen, late := map[string]bool{}, map[string]bool{}
	by := map[string]string{}
	for i, e := range es {
		var r map[string]any
		must(t, json.Unmarshal(e.Data, &r))
		if r["type"] == "state" && r["state"] == "paused" && r["reason"] == "threshold" && breach < 0 {
			breach = i
		}
		if r["type"] == "step_started" {
			srv := fmt.Sprint(r["server"])
			by[srv[:2]] = fmt.Sprint(r["by"])
			if late[srv] {
				t.Errorf("journal: %s, recorded running after the breach, had its step %v started at %d", srv, r["op"], i)
			}
		}
		id := fmt.Sprint(r["id"])
		if r["type"] != "state" || r["state"] != "running" || strings.Count(id, "/") != 2 {
			continue
		}
		// A server started before the breach is in flight and finishes;
		// one recorded running after it (a worker that had not yet read
		// the breach) must not be touched.
		if !seen[id] && breach >= 0 {
			late[id] = true
			t.Logf("%s recorded running at %d, after the breach at %d: held back", id, i, breach)
		}
		seen[id] = true
	}
	if breach < 0 {
		t.Fatal("journal: no threshold breach")
	}
	if t.Failed() {
		for i, e := range es {
			t.Logf("%d %s", i, e.Data)
		}
	}
	if by["c2"] == by["c3"] {
		t.Errorf("journal: both groups ran on %s", by["c2"])
	}
}

// TestLeaderStopsAndTheOtherWorkerFinishes: the leader (the worker holding
// the state lock) stops at once in the middle of the parallel stage, one of
// its servers in the middle of a step. The other worker takes the lead
// (the lock was released), claims the leader's group, resumes that server
// from the journal (the update cut off is checked, not started again: it
// had taken effect on the BMC), and completes the run alone: every step
// started once.
func TestLeaderStopsAndTheOtherWorkerFinishes(t *testing.T) {
	a, b, prov, bl := twoHandles(t)
	const lab = "c1/r01/r01-s01"
	hangs := []string{"c2/r01/r01-s01", "c3/r01/r01-s01"}
	bl.Scripts[lab] = executortest.Script{HangApply: 1}
	for _, h := range hangs {
		bl.Scripts[h] = executortest.Script{HangApply: 2} // its update
	}
	type S = executortest.Scope
	bl.Stage("canary").Group(bl, "lab").Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	prod := bl.Stage("prod")
	for _, c := range []string{"c2", "c3"} {
		prod.Group(bl, c).Cluster(c).Scope(S{Name: "r01", Servers: 1}).Scope(S{Name: "r02", Servers: 1})
	}
	p := bl.Plan()
	sha := strings.Repeat("f", 64)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := func(be *Backend, who string, join bool) executor.Options {
		return executor.Options{Plan: p, PlanSHA256: sha, Backend: be, Holder: who, Join: join,
			Providers: map[string]providers.Provider{"fake": prov}, Hooks: executortest.NewHooks(),
			PollInterval: 20 * time.Millisecond}
	}
	ea, err := executor.New(opts(a, "worker-a@ci", false))
	must(t, err)
	eb, err := executor.New(opts(b, "worker-b@ci", true))
	must(t, err)
	hardA, stopA := context.WithCancel(ctx)
	type res struct {
		out executor.Outcome
		err error
	}
	ra, rb := make(chan res, 1), make(chan res, 1)
	go func() { out, err := ea.Run(hardA, hardA); ra <- res{out, err} }()
	<-prov.Hanging(lab)
	go func() { out, err := eb.Run(ctx, ctx); rb <- res{out, err} }()
	for ctx.Err() == nil {
		if _, live, err := a.Claims(ctx, sha); err == nil && live == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	prov.Release(lab)
	for _, h := range hangs {
		select {
		case <-prov.Hanging(h):
		case <-ctx.Done():
			t.Fatalf("%s never reached its update", h)
		}
	}
	stopA() // the leader stops at once, its update in flight
	x := <-ra
	if x.err != nil || x.out.Status != executor.OutcomeInterrupted {
		t.Fatalf("worker a: %s %v", x.out.Status, x.err)
	}
	for _, h := range hangs {
		prov.Release(h)
	}
	y := <-rb
	if y.err != nil || y.out.Status != executor.OutcomeCompleted {
		t.Fatalf("worker b: %s(%s) %s %v", y.out.Status, y.out.Reason, y.out.Message, y.err)
	}
	es, err := b.Read(ctx, sha, -1)
	must(t, err)
	started := map[string][]string{}
	led := false
	for _, e := range es {
		var r map[string]any
		must(t, json.Unmarshal(e.Data, &r))
		switch r["type"] {
		case "step_started":
			key := fmt.Sprint(r["server"], " ", r["op"])
			started[key] = append(started[key], strings.Fields(fmt.Sprint(r["by"]))[0])
		case "run_started":
			if strings.HasPrefix(fmt.Sprint(r["by"]), "worker-b@ci") {
				led = true
			}
		}
	}
	if !led {
		t.Error("journal: worker b never recorded taking the lead")
	}
	adopted := 0
	for key, by := range started {
		if len(by) != 1 {
			t.Errorf("journal: %s started %d times (%v)", key, len(by), by)
		}
		srv, ok := strings.CutSuffix(key, " step:3")
		if ok && by[0] == "worker-a@ci" && len(started[srv+" step:4"]) > 0 && started[srv+" step:4"][0] == "worker-b@ci" {
			adopted++ // a's update, cut off, resumed by b (it had taken effect): b went on
		}
	}
	if adopted != 1 {
		t.Errorf("journal: %d servers whose update a started and b went on from, want 1: %v", adopted, started)
	}
}

// TestTwoWorkersObeySkips: skips recorded before the run (a stage, a
// server of a group that runs on the other worker) are obeyed by whichever
// worker drives the part skipped: the skipped servers are never touched,
// the skipped stage's group and cluster are recorded skipped by the worker
// that claims them, and the run completes on both.
func TestTwoWorkersObeySkips(t *testing.T) {
	a, b, prov, bl := twoHandles(t)
	const hang = "c1/r01/r01-s01"
	bl.Scripts[hang] = executortest.Script{HangApply: 1}
	bl.Scripts["c2/r01/r01-s01"] = executortest.Script{HangApply: 1}
	bl.Scripts["c3/r01/r01-s01"] = executortest.Script{HangApply: 1}
	type S = executortest.Scope
	bl.Stage("canary").Group(bl, "lab").Cluster("c1").Scope(S{Name: "r01", Servers: 1})
	prod := bl.Stage("prod")
	for _, c := range []string{"c2", "c3"} {
		prod.Group(bl, c).Cluster(c).Scope(S{Name: "r01", Servers: 2}).Scope(S{Name: "r02", Servers: 2})
	}
	bl.Stage("extra").Group(bl, "more").Cluster("c4").Scope(S{Name: "r01", Servers: 2})
	p := bl.Plan()
	sha := strings.Repeat("c", 64)
	ctx := context.Background()
	ctl, err := executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: b})
	must(t, err)
	for _, target := range []string{"stage.extra", "c2/r02/r02-s01", "c3/r02/r02-s02"} {
		must(t, ctl.Skip(ctx, target))
	}
	oa, ob := workerRound(t, a, b, p, sha, prov, shareStage(t, a, sha, prov, hang, "c2/r01/r01-s01", "c3/r01/r01-s01"))
	if oa.Status != executor.OutcomeCompleted || ob.Status != executor.OutcomeCompleted {
		t.Fatalf("a %s(%s) %s; b %s(%s) %s; want both completed", oa.Status, oa.Reason, oa.Message, ob.Status, ob.Reason, ob.Message)
	}
	es, err := a.Read(ctx, sha, -1)
	must(t, err)
	skipped := map[string]bool{}
	by := map[string]string{}
	for _, e := range es {
		var r map[string]any
		must(t, json.Unmarshal(e.Data, &r))
		switch r["type"] {
		case "step_started":
			srv := fmt.Sprint(r["server"])
			by[srv[:2]] = fmt.Sprint(r["by"])
			if srv == "c2/r02/r02-s01" || srv == "c3/r02/r02-s02" || strings.HasPrefix(srv, "c4/") {
				t.Errorf("journal: %s, skipped, had its step %v started", srv, r["op"])
			}
		case "state":
			if r["state"] == "skipped" {
				skipped[fmt.Sprint(r["id"])] = true
			}
		}
	}
	for _, id := range []string{"stage.extra", "stage.extra.group.more", "cluster.c4", "c4/r01/r01-s01", "c2/r02/r02-s01", "c3/r02/r02-s02"} {
		if !skipped[id] {
			t.Errorf("journal: %s was not recorded skipped", id)
		}
	}
	if by["c2"] == by["c3"] {
		t.Errorf("journal: both groups of the parallel stage ran on %s", by["c2"])
		for i, e := range es {
			t.Logf("%d %s", i, e.Data)
		}
	}
}
