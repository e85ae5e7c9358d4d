package executor

import (
	"context"
	"strings"

	"github.com/rackform/rackform/executor/rollout"
	"github.com/rackform/rackform/planner/plan"
)

// Spare takeover (rack resiliency; the Nexus upgrade upgrades the spare
// first and rotates it in). When the plan arms it (spare_takeover), the
// upgraded spare takes a control-plane member's place: the member the plan
// found down, or the first member that fails during the run. The takeover
// is an operation on the spare, "takeover:<member>", journaled like a
// step: the takeover hook (the platform's own action) runs with
// RACKFORM_REPLACES set; without a hook it is recorded only. From then on
// the spare counts as a member for quorum and the member it replaced is
// the spare; a member that failed is skipped as replaced, and its scope
// goes on.

const opTakeover = "takeover:"

// ReasonReplaced: a failed control-plane member the spare took over from.
const ReasonReplaced = "replaced"

// takeoverOp finds the spare's takeover op and its state, if any.
func takeoverOp(spare *node) (op string, st *StepStatus) {
	for _, o := range spare.sv.extraOps {
		if strings.HasPrefix(o, opTakeover) {
			return o, spare.sv.step(o)
		}
	}
	if strings.HasPrefix(spare.sv.inflight, opTakeover) {
		return spare.sv.inflight, spare.sv.step(spare.sv.inflight)
	}
	return "", nil
}

// takeoverDone is the completed takeover of a cluster, nil when none.
func (m *model) takeoverDone(cluster string) *plan.Takeover {
	if cl := m.nodes["cluster."+cluster]; cl != nil && cl.kind == KindCluster && cl.cluster.Quorum != nil && cl.cluster.Quorum.Takeover != nil {
		t := cl.cluster.Quorum.Takeover
		spare := m.servers[t.Spare]
		if spare == nil {
			return nil
		}
		op, st := takeoverOp(spare)
		if st == nil || st.State != Completed {
			return nil
		}
		return &plan.Takeover{Spare: t.Spare, Replaces: strings.TrimPrefix(op, opTakeover), Hook: t.Hook}
	}
	return nil
}

// stepTakeover runs the takeover when it is due, before the serial
// control-plane scope starts another member. It reports whether the scope
// must wait for it.
func (sch *scheduler) stepTakeover(ctx context.Context, sc *node) bool {
	if sc.scope == nil || sc.scope.Kind != "serial" || sch.r.graceful || sch.r.m.stopRequested() {
		return false
	}
	cl := clusterOf(sc)
	if cl == nil || cl.cluster.Quorum == nil || cl.cluster.Quorum.Takeover == nil {
		return false
	}
	t := cl.cluster.Quorum.Takeover
	spare := sch.r.m.servers[t.Spare]
	if spare == nil {
		return false
	}
	op, st := takeoverOp(spare)
	state := rollout.TakeoverState{
		SpareUpgraded: spare.st.Name == Completed, // the spare goes first
		InFlight:      sch.r.ops.of(spare) != nil,
		Recorded:      op != "",
		Completed:     st != nil && st.State == Completed,
		Failed:        st != nil && st.State == Failed,
	}
	firstFailed := ""
	for _, sv := range sc.sc.servers {
		if sv.st.Name == Failed && sv.srv.Role == "control_plane" {
			firstFailed = sv.id
			break
		}
	}
	replaces := rollout.TakeoverReplaces(t, firstFailed, sch.r.downMember[cl.cluster.Name])
	switch rollout.NextTakeover(state, replaces) {
	case rollout.TakeoverRunning:
		return true
	case rollout.TakeoverDone:
		sch.afterTakeover(ctx, sc, strings.TrimPrefix(op, opTakeover))
	case rollout.TakeoverResume:
		sch.r.start(ctx, spare, op) // in flight before a restart: hooks run again
		return true
	case rollout.TakeoverStart:
		sch.r.event(Event{Type: "spare_takeover_started", ID: sc.id, Server: t.Spare, Message: t.Spare + " takes the place of " + replaces})
		sch.r.start(ctx, spare, opTakeover+replaces)
		return true
	}
	return false
}

// afterTakeover skips the member the spare replaced when it failed in
// this run, and lets its scope go on.
func (sch *scheduler) afterTakeover(ctx context.Context, sc *node, replaced string) {
	n := sch.r.m.servers[replaced]
	if n == nil || (n.st.Name != Failed && n.st.Name != NotStarted) {
		return
	}
	spare := clusterOf(sc).cluster.Quorum.Takeover.Spare
	why := "it was down"
	if n.st.Name == Failed {
		why = "it failed: " + n.st.Message
	}
	sch.r.set(ctx, n, State{Name: Skipped, Reason: ReasonReplaced, Message: "replaced by the spare " + spare + ", which took its place as a control-plane member; it is the spare now (" + why + ")"})
	sch.r.event(Event{Type: "spare_takeover", ID: sc.id, Server: spare, Message: spare + " took the place of " + replaced + "; " + replaced + " is the spare now"})
	if sc.st.Name == Paused && sc.st.Reason == ReasonThreshold && rollout.Breach(sc.scope, sc.sc.tally()) == "" {
		sch.r.set(ctx, sc, State{Name: Running, Message: "continued: the spare took over"})
	}
}

// takeoverHook is the takeover op's hook.
func takeoverHook(sv *node, op string) Hook {
	var argv []string
	if q := clusterOf(sv).cluster.Quorum; q != nil && q.Takeover != nil {
		argv = q.Takeover.Hook
	}
	env := append(hookEnv(sv), "RACKFORM_REPLACES="+strings.TrimPrefix(op, opTakeover))
	return Hook{Name: "takeover", Argv: argv, Env: env, Timeout: firstDuration(clusterOf(sv).cluster.Settings.HookTimeout, plan.Duration(defaultHookTimeout))}
}

// armedTakeover reports whether sv's cluster has a spare takeover armed
// that has not happened, with the spare upgraded.
func (qg *quorumGuard) armedTakeover(sv *node) bool {
	q := clusterOf(sv).cluster.Quorum
	if q == nil || q.Takeover == nil || qg.takeover(sv.srv.Cluster) != nil {
		return false
	}
	spare := qg.r.m.servers[q.Takeover.Spare]
	if spare == nil || spare.st.Name != Completed {
		return false
	}
	_, st := takeoverOp(spare)
	return st == nil
}

// SpareStatus is who is a cluster's control-plane spare now.
type SpareStatus struct {
	Cluster string `json:"cluster"`
	// Spare is the spare now: the planned spare, or after a takeover the
	// member it replaced.
	Spare string `json:"spare"`
	// TookOverFrom is set after a takeover: the former spare, now a
	// member, took the place of Spare.
	TookOverFrom string `json:"took_over_from,omitempty"`
}

// spares lists the clusters with a spare takeover armed or done.
func (m *model) spares() []SpareStatus {
	var out []SpareStatus
	for _, n := range m.order {
		if n.kind != KindCluster || n.cluster.Quorum == nil || n.cluster.Quorum.Takeover == nil {
			continue
		}
		s := SpareStatus{Cluster: n.cluster.Name, Spare: n.cluster.Quorum.Takeover.Spare}
		if t := m.takeoverDone(n.cluster.Name); t != nil {
			s.Spare, s.TookOverFrom = t.Replaces, t.Spare
		}
		out = append(out, s)
	}
	return out
}
