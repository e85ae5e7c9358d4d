package executor

import (
	"context"
	"strings"

	"github.com/rackform/rackform/executor/rollout"
)

// Pending for availability (the Fleet seed's "target version isn't yet
// available in the member's region"): a cluster the plan marks pending
// (plan.Cluster.Release.Pending) is not started; the group tries its next
// member, and a group, stage or run whose remaining members are all
// pending is pending itself (derive). The run then ends paused with
// reason availability and "rackform continue". A continue whose caller
// found the release available (Options.Available) journals an "available"
// record for the cluster and starts it like any other; the plan's steps
// are what was reviewed, so only the availability is checked again.

// awaitsRelease reports whether cluster c waits for its release, setting
// it pending(availability) when it does.
func (sch *scheduler) awaitsRelease(ctx context.Context, c *node) bool {
	if !rollout.AwaitsRelease(c.cluster) {
		return false
	}
	if _, ok := sch.r.m.available[c.id]; ok {
		return false
	}
	if note, ok := sch.r.o.Available[c.id]; ok {
		sch.r.emit(ctx, &Record{Type: recAvailable, ID: c.id, Message: note})
		return false
	}
	sch.r.set(ctx, c, State{Name: Pending, Reason: ReasonAvailability, Message: c.cluster.Release.Pending})
	return true
}

// awaiting lists the clusters pending for their release, for the outcome;
// "" when none is.
func (m *model) awaiting() string {
	var out []string
	for _, n := range m.order {
		if n.kind == KindCluster && n.st.Name == Pending && n.st.Reason == ReasonAvailability {
			out = append(out, n.id+": "+n.st.Message)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "pending until the release is available: " + strings.Join(out, "; ") + "; " + NextAction{Kind: NextContinue}.Ref() + " checks the catalog again"
}
