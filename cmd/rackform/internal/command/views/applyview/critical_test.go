package applyview_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// A server upgraded although Critical (rule 50): apply's output says how
// its wait for readiness judges it and how it came back, and status lists
// it with that outcome though it completed; the other servers are said as
// before.
func TestUpgradedAlthoughCriticalIsSaid(t *testing.T) {
	const srv, other = "c1/r01/r01-s02", "c1/r01/r01-s01"
	prov := executortest.NewProvider()
	b := executortest.NewBuilder(prov)
	b.Scripts = map[string]executortest.Script{srv: {Health: "Critical", HealthAfter: "OK"}}
	b.Stage("main").Group(b, "all").Cluster("c1").Scope(S{Name: "r01", Servers: 2})
	p := b.Plan()
	for i := range p.Servers {
		if p.Servers[i].Address == srv {
			p.Servers[i].Observed.Health = "Critical"
			p.Servers[i].UpgradeWhenCritical = &plan.CriticalOverride{Reason: "INC-4711"}
		}
	}
	var out bytes.Buffer
	clock := executortest.NewClock(executortest.Epoch)
	view := applyview.New(&out, p, sha, applyview.Options{Refresh: -1, Now: clock.Now})
	e, err := executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: state.NewMemory(), Clock: clock,
		Providers: map[string]providers.Provider{"fake": prov}, Hooks: executortest.NewHooks(), Holder: "tester@host", Synchronous: true,
		Events: executor.SinkFunc(view.Event)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	view.Start(st)
	if o, err := e.Run(context.Background(), context.Background()); err != nil || o.Status != executor.OutcomeCompleted {
		t.Fatalf("Run: %s, %v", o, err)
	}
	view.Close()
	const came = "upgraded although Critical (INC-4711): ready: on, at target and healthy again (health OK); it was Critical before the upgrade"
	got := out.String()
	for _, want := range []string{
		"  " + srv + ": health check: waiting for it to come back on and at target (upgraded although Critical: any health its BMC reports is accepted)\n",
		"  " + srv + ": completed: " + came + " (",
		"  " + other + ": health check: waiting for it to come back healthy\n",
		"  " + other + ": completed (",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("apply's output lacks %q:\n%s", want, got)
		}
	}
	if st, err = e.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	var status bytes.Buffer
	if err := applyview.WriteStatus(&status, p, st, &applyview.Resume{StateDir: "st"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status.String(), "    "+srv+": completed: "+came+"\n") {
		t.Errorf("status does not list the server with how it came back:\n%s", status.String())
	}
	if strings.Contains(status.String(), other) {
		t.Errorf("status lists a completed server upgraded as any other:\n%s", status.String())
	}
}
