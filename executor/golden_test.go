package executor_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
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

// TestGoldenEventStream pins a representative event stream and journal: a
// control plane, a management batch, compute racks with a server already
// at target, a drifted one, a wait and a pause, then a gated second stage.
// It takes three applies: pause after rack, continue, approve.
func TestGoldenEventStream(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Scripts = map[string]executortest.Script{
		"c1/r01/r01-s02": {AtTarget: true},
		"c1/r01/r01-s03": {Drift: true},
	}
	b.Stage("canary").Group(b, "lab").Cluster("c1").
		Scope(S{Phase: plan.PhaseControlPlane, Kind: "serial", Name: "cp", Servers: 1, Role: "control_plane_spare"}).
		Scope(S{Phase: plan.PhaseManagement, Kind: "batch", Name: "m1", Servers: 2, Threshold: plan.Threshold{Type: "percent", Value: 50}}).
		Scope(S{Name: "r01", Servers: 3, Threshold: plan.Threshold{Type: "count", Value: 1}, WaitAfter: 15 * time.Minute, PauseAfter: true}).
		Scope(S{Name: "r02", Servers: 1})
	b.Stage("prod").Gate("qa", "before").Group(b, "east").Cluster("c2").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	var events bytes.Buffer
	sink := jsonSink(&events)
	run := func() executor.Outcome {
		o := h.options()
		o.Events = sink
		e, err := executor.New(o)
		if err != nil {
			t.Fatal(err)
		}
		out, err := e.Run(context.Background(), context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ctx := context.Background()
	wantOutcome(t, run(), executor.OutcomePaused, executor.ReasonAfterRack)
	h.clock.Advance(time.Hour)
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, run(), executor.OutcomePaused, executor.ReasonApproval)
	h.clock.Advance(time.Hour)
	if err := h.exec().Approve(ctx, "stage.prod.gate.qa"); err != nil {
		t.Fatal(err)
	}
	// The drifted server failed (untouched): the run completes, not cleanly.
	wantOutcome(t, run(), executor.OutcomeCompletedWithFailures, "")
	golden(t, "events.golden.jsonl", events.Bytes())
	pid := regexp.MustCompile(`"pid":[0-9]+`)

	golden(t, "journal.golden.jsonl", pid.ReplaceAll(journalOf(t, h.backend), []byte(`"pid":1`)))
}
