package planview

import (
	"fmt"
	"strings"

	"github.com/rackform/rackform/planner/plan"
)

// QuorumLines are the control-plane quorum facts a reviewer must not
// miss, one line per cluster that has any: an override that lets the run
// lose quorum, a spare taking a member's place, members already down.
// They head the plan, before the tree.
func QuorumLines(p *plan.Plan) []string {
	var out []string
	for _, cr := range Clusters(p) {
		if cr.Cluster.Quorum != nil {
			out = append(out, quorumLine(cr.Cluster.Name, cr.Cluster.Quorum))
		}
	}
	return out
}

func quorumLine(cluster string, q *plan.Quorum) string {
	var down []string
	for _, d := range q.Down {
		down = append(down, d.Server+" ("+d.Why+")")
	}
	facts := fmt.Sprintf("%d of %d control-plane members healthy, %d needed for quorum", q.Healthy, len(q.Members), q.Required)
	if len(down) > 0 {
		facts += "; down: " + strings.Join(down, ", ")
	}
	switch {
	case q.Override:
		return fmt.Sprintf("QUORUM OVERRIDE: cluster %s may lose control-plane quorum during this run (allow_quorum_loss = true): %s", cluster, facts)
	case q.Takeover != nil && q.Takeover.Replaces == "":
		return fmt.Sprintf("Spare takeover armed: in cluster %s the spare %s, upgraded first, takes the place of a member that fails during the run: %s", cluster, q.Takeover.Spare, facts)
	case q.Takeover != nil:
		how := "recorded"
		if len(q.Takeover.Hook) > 0 {
			how = "by running " + strings.Join(q.Takeover.Hook, " ")
		}
		return fmt.Sprintf("Spare takeover: in cluster %s the spare %s, upgraded first, takes the place of %s (%s), which becomes the spare: %s", cluster, q.Takeover.Spare, q.Takeover.Replaces, how, facts)
	}
	return fmt.Sprintf("Control plane of cluster %s: %s", cluster, facts)
}
