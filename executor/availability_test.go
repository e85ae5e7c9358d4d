package executor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
)

// pendingAt marks the plan's cluster named name as planned pending: its
// release is not yet available at its site.
func pendingAt(p *plan.Plan, name string) {
	for si := range p.Run.Stages {
		for gi := range p.Run.Stages[si].Groups {
			g := &p.Run.Stages[si].Groups[gi]
			for ci := range g.Clusters {
				if c := &g.Clusters[ci]; c.Name == name {
					c.Release = &plan.ReleaseChoice{Release: "4.6.2", Version: "4.6.2", Channel: "rapid", Selection: "consistent", Site: "north",
						Why: "rapid: newest minor 4.6", Pending: "release 4.6.2 is not yet available at site north (published at east, west)"}
				}
			}
		}
	}
}

// runWith runs the harness's executor with Options.Available.
func runWith(t *testing.T, h *harness, available map[string]string) executor.Outcome {
	t.Helper()
	h.available = available
	defer func() { h.available = nil }()
	return h.run()
}

// Seed: "When a member moves to Pending, the update run will attempt to
// upgrade the next member in the group. If all members are Pending, the
// group moves to Pending state. If a group is Pending, the update run
// waits for the group to complete before moving on to the next update
// stage." and "A run is in Pending state if the current stage is in
// Pending state."
func TestPendingMemberMovesOnAndHoldsTheNextStage(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	g := b.Stage("first").Group(b, "g")
	g.Cluster("north").Scope(S{Name: "r01", Servers: 1})
	g.Cluster("east").Scope(S{Name: "r01", Servers: 1})
	b.Stage("second").Group(b, "later").Cluster("west").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	pendingAt(h.plan, "north")

	out := h.run()
	wantOutcome(t, out, executor.OutcomePaused, executor.ReasonAvailability)
	if !strings.Contains(out.Message, "cluster.north: release 4.6.2 is not yet available at site north") || !cmp.Equal(out.Next, []executor.NextAction{{Kind: executor.NextContinue}}) {
		t.Errorf("outcome = %+v", out)
	}
	wantStates(t, h, map[string]string{
		"cluster.north":            "pending(availability)",
		"cluster.east":             "completed",
		"stage.first.group.g":      "pending(availability)",
		"stage.first":              "pending(availability)",
		"run":                      "pending(availability)",
		"stage.second":             "not_started",
		"cluster.west":             "not_started",
		"stage.second.group.later": "not_started",
	})
	if n := h.prov.Count("north/r01/r01-s01", ""); n != 0 {
		t.Errorf("the pending cluster's server got %d provider calls", n)
	}
}

// Seed: "A stage is Pending if all update groups in the stage are Pending
// or not started."
func TestStagePendingWhenAllGroupsPending(t *testing.T) {
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	st := b.Stage("only")
	st.Group(b, "a").Cluster("north").Scope(S{Name: "r01", Servers: 1})
	st.Group(b, "b").Cluster("south").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	pendingAt(h.plan, "north")
	pendingAt(h.plan, "south")
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonAvailability)
	wantStates(t, h, map[string]string{
		"stage.only.group.a": "pending(availability)",
		"stage.only.group.b": "pending(availability)",
		"stage.only":         "pending(availability)",
		"run":                "pending(availability)",
	})
}

// A later continue re-checks availability: still unavailable, the cluster
// stays pending; found available (Options.Available), the finding is
// journaled and the cluster is upgraded, then the next stage runs.
func TestContinueRechecksAvailability(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Stage("first").Group(b, "g").Cluster("north").Scope(S{Name: "r01", Servers: 1})
	b.Stage("second").Group(b, "later").Cluster("west").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	pendingAt(h.plan, "north")
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonAvailability)

	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, runWith(t, h, nil), executor.OutcomePaused, executor.ReasonAvailability)
	wantStates(t, h, map[string]string{"cluster.north": "pending(availability)"})

	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	note := "release 4.6.2 is listed at site north in catalog.json"
	wantOutcome(t, runWith(t, h, map[string]string{"cluster.north": note}), executor.OutcomeCompleted, "")
	wantStates(t, h, map[string]string{"cluster.north": "completed", "cluster.west": "completed", "run": "completed"})
	var found bool
	for _, e := range h.events {
		if e.Type == "release_available" && e.Target == "cluster.north" && e.Message == note {
			found = true
		}
	}
	if !found {
		t.Errorf("no release_available event; events: %v", h.eventTypes(""))
	}
	// The finding is in the journal: a status from the journal alone (no
	// Available) sees the cluster completed, and a replay does not hold it.
	recs, err := h.backend.Read(ctx, sha, -1)
	if err != nil {
		t.Fatal(err)
	}
	var journaled int
	for _, r := range recs {
		if strings.Contains(string(r.Data), `"type":"available"`) && strings.Contains(string(r.Data), note) {
			journaled++
		}
	}
	if journaled != 1 {
		t.Errorf("available records in the journal = %d, want 1", journaled)
	}
}

// A pending member can be skipped (the seed: "User skipped update for the
// member"): its group, stage and run then complete without it.
func TestSkipPendingMember(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	g := b.Stage("first").Group(b, "g")
	g.Cluster("north").Scope(S{Name: "r01", Servers: 1})
	g.Cluster("east").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	pendingAt(h.plan, "north")
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonAvailability)
	if err := h.exec().Skip(ctx, "cluster.north"); err != nil {
		t.Fatal(err)
	}
	out := h.run()
	if out.Status != executor.OutcomeCompleted && out.Status != executor.OutcomeCompletedWithFailures {
		t.Fatalf("outcome = %+v, want completed", out)
	}
	wantStates(t, h, map[string]string{"cluster.north": "skipped(user)", "cluster.east": "completed", "run": "completed"})
}

// Seed (howto): "you can Stop a currently Running or Pending update run":
// stop is accepted on a pending run (recorded; nothing is in flight), and
// a later continue lifts it.
func TestStopPendingRun(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	b := executortest.NewBuilder(h.prov)
	b.Stage("first").Group(b, "g").Cluster("north").Scope(S{Name: "r01", Servers: 1})
	h.plan = b.Plan()
	pendingAt(h.plan, "north")
	wantOutcome(t, h.run(), executor.OutcomePaused, executor.ReasonAvailability)
	if err := h.exec().Stop(ctx); err != nil {
		t.Fatalf("stop of a pending run: %v", err)
	}
	if !h.status().StopRequested {
		t.Error("status does not show the stop")
	}
	if err := h.exec().Continue(ctx); err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, runWith(t, h, map[string]string{"cluster.north": "published"}), executor.OutcomeCompleted, "")
}
