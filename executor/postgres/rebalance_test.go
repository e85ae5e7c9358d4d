package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// lateJoin runs p on worker A alone until A holds every group of its
// stage (ready, when not nil, is then awaited too), then starts worker B
// with -join, waits until the claims are split as want says (worker →
// groups held, A's and B's by their Holder), calls hold (the test looks at
// the claims, lets hung servers go), and waits for both applies. The
// groups' windows open at opens: until then nothing of a group with one
// has started, and the split must be reached before it.
func lateJoin(t *testing.T, a, b *Backend, p *plan.Plan, sha string, prov *executortest.Provider, groups int, opens time.Time, ready func(context.Context), want map[string]int) (executor.Outcome, executor.Outcome) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
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
	// holders returns how many groups each worker holds, by holder name.
	holders := func() map[string]int {
		held, _, err := a.Claims(ctx, sha)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := a.Workers(ctx, sha)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, id := range held {
			for _, w := range ws {
				if w.ID == id {
					out[strings.Fields(w.Who)[0]]++
				}
			}
		}
		return out
	}
	waitFor := func(what string, ok func(map[string]int) bool) {
		for {
			h := holders()
			if ok(h) {
				t.Logf("%s: %v", what, h)
				return
			}
			if time.Now().After(opens) {
				t.Fatalf("%s: not before the windows opened; the claims: %v", what, h)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	ra := run(opts(a, "worker-a@ci", false))
	waitFor("worker a alone holds every group", func(h map[string]int) bool { return h["worker-a@ci"] == groups })
	if ready != nil {
		ready(ctx)
	}
	rb := run(opts(b, "worker-b@ci", true))
	waitFor("worker b joined and claimed", func(h map[string]int) bool { return h["worker-b@ci"] > 0 })
	// Several claim passes of both later, the split holds (no group goes
	// back and forth) and is the one wanted.
	time.Sleep(300 * time.Millisecond)
	if h := holders(); !maps(h, want) {
		t.Errorf("the claims once worker b joined: %v, want %v", h, want)
	}
	x, y := <-ra, <-rb
	if x.err != nil || y.err != nil {
		t.Fatalf("worker a: %v; worker b: %v", x.err, y.err)
	}
	return x.out, y.out
}

func maps(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// driversOf reads the journal: which worker started the steps of each
// cluster (by its first address part), failing on a step started twice or
// a cluster driven by two workers.
func driversOf(t *testing.T, a *Backend, sha string) map[string]string {
	t.Helper()
	es, err := a.Read(context.Background(), sha, -1)
	must(t, err)
	started := map[string]int{}
	by := map[string]string{}
	for _, e := range es {
		var r map[string]any
		must(t, json.Unmarshal(e.Data, &r))
		if r["type"] != "step_started" {
			continue
		}
		srv := fmt.Sprint(r["server"])
		key := srv + " " + fmt.Sprint(r["op"])
		started[key]++
		c, who := srv[:strings.IndexByte(srv, '/')], strings.Fields(fmt.Sprint(r["by"]))[0]
		if by[c] != "" && by[c] != who {
			t.Errorf("journal: cluster %s driven by %s and %s; a group is one worker's", c, by[c], who)
		}
		by[c] = who
	}
	if len(started) == 0 {
		t.Fatal("journal: no step started")
	}
	for key, n := range started {
		if n != 1 {
			t.Errorf("journal: %s started %d times", key, n)
		}
	}
	return by
}

// TestLateWorkerTakesItsShareOfGroupsNotStarted: worker A starts alone on
// a stage of four groups whose clusters wait for a maintenance window, and
// claims all four (a lone worker takes them all). Worker B joins before
// the window opens: A gives up the two groups beyond its share (nothing of
// them started), B claims them, and the split holds; when the window
// opens each worker runs its two groups, every step started once.
func TestLateWorkerTakesItsShareOfGroupsNotStarted(t *testing.T) {
	a, b, prov, bl := twoHandles(t)
	opens := time.Now().Add(8 * time.Second)
	win := plan.Interval{Start: opens, End: opens.Add(time.Hour)}
	type S = executortest.Scope
	prod := bl.Stage("prod")
	for _, c := range []string{"c1", "c2", "c3", "c4"} {
		prod.Group(bl, c).Cluster(c, win).Scope(S{Name: "r01", Servers: 2})
	}
	p := bl.Plan()
	sha := strings.Repeat("7", 64)
	oa, ob := lateJoin(t, a, b, p, sha, prov, 4, opens, nil, map[string]int{"worker-a@ci": 2, "worker-b@ci": 2})
	if oa.Status != executor.OutcomeCompleted || ob.Status != executor.OutcomeCompleted {
		t.Fatalf("a %s(%s) %s; b %s(%s) %s; want both completed", oa.Status, oa.Reason, oa.Message, ob.Status, ob.Reason, ob.Message)
	}
	by := driversOf(t, a, sha)
	n := map[string]int{}
	for _, w := range by {
		n[w]++
	}
	if n["worker-a@ci"] != 2 || n["worker-b@ci"] != 2 {
		t.Errorf("journal: clusters by worker %v, want two each", by)
	}
	for _, s := range p.Servers {
		if k := prov.Count(s.Address, providers.StepUpdate); k != 1 {
			t.Errorf("%s: updated %d times", s.Address, k)
		}
	}
}

// TestStartedGroupIsNeverReleased: worker A alone starts three groups
// (their first servers hang in their first step) and holds a fourth that
// waits for its window. Worker B joins: the fair share is two, yet A gives
// up only the group not started; the three it started stay A's (above its
// share) and are driven to the end by A alone, the fourth by B.
func TestStartedGroupIsNeverReleased(t *testing.T) {
	a, b, prov, bl := twoHandles(t)
	opens := time.Now().Add(8 * time.Second)
	win := plan.Interval{Start: opens, End: opens.Add(time.Hour)}
	type S = executortest.Scope
	prod := bl.Stage("prod")
	hangs := []string{"c1/r01/r01-s01", "c2/r01/r01-s01", "c3/r01/r01-s01"}
	for _, h := range hangs {
		bl.Scripts[h] = executortest.Script{HangApply: 1}
	}
	for _, c := range []string{"c1", "c2", "c3"} {
		prod.Group(bl, c).Cluster(c).Scope(S{Name: "r01", Servers: 2})
	}
	prod.Group(bl, "c4").Cluster("c4", win).Scope(S{Name: "r01", Servers: 2})
	p := bl.Plan()
	sha := strings.Repeat("8", 64)
	started := func(ctx context.Context) {
		for _, h := range hangs {
			select {
			case <-prov.Hanging(h):
			case <-ctx.Done():
				t.Fatalf("%s never started", h)
			}
		}
	}
	go func() {
		// Let the hung servers go once B holds what it may take.
		for time.Now().Before(opens) {
			time.Sleep(50 * time.Millisecond)
		}
		for _, h := range hangs {
			prov.Release(h)
		}
	}()
	oa, ob := lateJoin(t, a, b, p, sha, prov, 4, opens, started, map[string]int{"worker-a@ci": 3, "worker-b@ci": 1})
	if oa.Status != executor.OutcomeCompleted || ob.Status != executor.OutcomeCompleted {
		t.Fatalf("a %s(%s) %s; b %s(%s) %s; want both completed", oa.Status, oa.Reason, oa.Message, ob.Status, ob.Reason, ob.Message)
	}
	by := driversOf(t, a, sha)
	want := map[string]string{"c1": "worker-a@ci", "c2": "worker-a@ci", "c3": "worker-a@ci", "c4": "worker-b@ci"}
	for c, w := range want {
		if by[c] != w {
			t.Errorf("journal: cluster %s driven by %q, want %s (started groups stay with the worker that started them)", c, by[c], w)
		}
	}
	if keys := slices.Sorted(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	}); len(keys) != 4 {
		t.Errorf("journal: clusters driven %v, want c1..c4", keys)
	}
}
