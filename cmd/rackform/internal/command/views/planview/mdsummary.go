package planview

import (
	"bytes"
	"fmt"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
)

// clusterRunOrder is the markdown's run order for a plan whose racks and
// batches do not fit in the comment even folded to a line each (tens of
// thousands of servers): one row per cluster, in run order, with its
// racks and batches, servers, servers changing, estimate and window, as
// rackform rehearse -detail clusters lists a large plan; it says so. Only
// when even those rows do not fit in budget are the last clusters left
// out, with a note. scopes is the plan's number of racks, batches and
// control planes.
func clusterRunOrder(entries []Entry, scopes, budget, limit int) []byte {
	type row struct {
		e                          Entry
		scopes, servers, upgrading int
	}
	var rows []*row
	var last *row
	seenScope := map[*plan.Scope]bool{}
	outside := 0
	for _, e := range entries {
		if e.Scope == nil {
			outside++
			continue
		}
		if last == nil || last.e.Cluster != e.Cluster || last.e.Stage != e.Stage || last.e.Group != e.Group {
			last = &row{e: e}
			rows = append(rows, last)
		}
		if !seenScope[e.Scope] {
			seenScope[e.Scope] = true
			last.scopes++
		}
		last.servers++
		if e.Server.Action == plan.ActionUpgrade {
			last.upgrading++
		}
	}
	var out bytes.Buffer
	out.WriteString("\n#### Run order, cluster by cluster\n")
	fmt.Fprintf(&out, "\n> **Summarised:** %s do not fit in this comment even folded to a line each (%d KB), so the run order is one row per cluster, as `rackform rehearse -detail clusters` shows a large plan. Run `rackform show PLANFILE` for every rack and server.\n",
		views.Plural(scopes, "rack, batch or control plane", "racks, batches and control planes"), limit/1024)
	out.WriteString("\n| stage › group | cluster | racks and batches | servers | changing | estimate | window |\n|---|---|---|---|---|---|---|\n")
	// Room for the last notes.
	budget -= 512
	for i, r := range rows {
		line := fmt.Sprintf("| `%s` › `%s` | `%s` | %d | %d | %d | ~%s | %s |\n", r.e.Stage.Name, r.e.Group.Name, r.e.Cluster.Name,
			r.scopes, r.servers, r.upgrading, Duration(r.e.Cluster.Estimate), mdEscape(windowText(r.e.Cluster)))
		if out.Len()+len(line) > budget {
			servers := 0
			for _, rest := range rows[i:] {
				servers += rest.servers
			}
			fmt.Fprintf(&out, "\n> **Truncated:** the last %d of %d clusters (%s) do not fit. Run `rackform show PLANFILE` for all of them.\n",
				len(rows)-i, len(rows), views.Plural(servers, "server"))
			break
		}
		out.WriteString(line)
	}
	if outside > 0 {
		fmt.Fprintf(&out, "\n%s outside the run tree.\n", views.Plural(outside, "server is", "servers are"))
	}
	return out.Bytes()
}
