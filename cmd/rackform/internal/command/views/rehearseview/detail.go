package rehearseview

import (
	"fmt"
	"strings"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// Detail is how far down the text's tree goes (rackform rehearse
// -detail): a 10,000-server rehearsal would print a line per server.
type Detail string

// The levels of detail.
const (
	// DetailServers shows every server under its rack or batch.
	DetailServers Detail = "servers"
	// DetailRacks shows racks, batches and waits, with their thresholds
	// and pauses, and a server only when it did not complete.
	DetailRacks Detail = "racks"
	// DetailClusters shows stages, groups and clusters with their windows
	// and gates, a line per cluster counting its racks and servers, and a
	// rack or batch (and a server) only when it did not complete, breached
	// or held the run other than by a pause after the rack.
	DetailClusters Detail = "clusters"
)

// Details lists the levels, most detailed first.
func Details() []Detail { return []Detail{DetailServers, DetailRacks, DetailClusters} }

// Limits of the default detail: up to this many servers to upgrade, every
// server is shown; up to this many racks and batches, every rack.
const (
	serversShown = 100
	scopesShown  = 100
)

// DefaultDetail is the detail a plan's text is readable at: servers for
// up to 100 servers to upgrade, racks for up to 100 racks and batches,
// clusters beyond.
func DefaultDetail(p *plan.Plan) Detail {
	servers := 0
	for _, s := range p.Servers {
		if s.Action == plan.ActionUpgrade {
			servers++
		}
	}
	switch {
	case servers <= serversShown:
		return DetailServers
	case len(planview.Scopes(p)) <= scopesShown:
		return DetailRacks
	}
	return DetailClusters
}

// shown says whether a bar is a line of the text at its detail.
func (t *text) shown(b schedule.Bar) bool {
	switch {
	case t.detail == DetailServers:
		return true
	case b.Kind == schedule.KindServer:
		return b.State != "completed" && b.State != "skipped"
	case t.detail == DetailRacks:
		return true
	case b.Kind == schedule.KindScope:
		return t.notable(b)
	case b.Kind == schedule.KindWait:
		// A stage's wait stays; a rack's goes with its rack.
		return t.bars[b.Parent].Kind == schedule.KindStage
	}
	return true
}

// notable: a rack or batch a cluster-level text shows, because it did not
// complete (or skip), a server of it did not, it breached, or it held the
// run other than by a pause after it (quorum, a breach).
func (t *text) notable(sc schedule.Bar) bool {
	if sc.State != "completed" && sc.State != "skipped" {
		return true
	}
	for _, m := range t.marks[sc.ID] {
		switch {
		case m.Kind == schedule.MarkThreshold && m.Result != schedule.ResultMet,
			m.Kind == schedule.MarkPause && (m.Reason != "after_rack" || m.Open):
			return true
		}
	}
	for _, b := range t.kids[sc.ID] {
		if b.Kind == schedule.KindServer && b.State != "completed" && b.State != "skipped" {
			return true
		}
	}
	return false
}

// detailLine says, under the header, what the text leaves out; "" when
// it shows everything.
func (t *text) detailLine() string {
	switch t.detail {
	case DetailRacks:
		return "Detail: racks and batches; a server only when it did not complete (-detail=servers shows every server)."
	case DetailClusters:
		return "Detail: clusters; a rack or batch only when it did not complete, breached or held the run, a server only when it did not complete (-detail=racks or -detail=servers shows more)."
	}
	return ""
}

// clusterSummary counts, at cluster detail, what the left-out lines of a
// cluster held: its racks and batches, its servers by how they ended (or
// that the rehearsal never reached them), its pauses after racks.
func (t *text) clusterSummary(c schedule.Bar, d int) {
	if t.detail != DetailClusters {
		return
	}
	var pc *plan.Cluster
	for _, e := range planview.Clusters(t.p) {
		if e.Cluster.ID == c.ID {
			pc = e.Cluster
		}
	}
	if pc == nil {
		return
	}
	if t.upgrade == nil {
		// Once for the plan, not once per cluster (quadratic: 6 s of
		// a 100,000-server rehearsal's 48 s of CPU).
		t.upgrade = make(map[string]bool, len(t.p.Servers))
		for _, s := range t.p.Servers {
			t.upgrade[s.Address] = s.Action == plan.ActionUpgrade
		}
	}
	upgrade := t.upgrade
	scopes, shown, pauses := 0, 0, 0
	var held schedule.Duration
	ended := map[string]int{}
	for _, ph := range pc.Phases {
		for _, sc := range ph.Scopes {
			scopes++
			if b, ok := t.bars[sc.ID]; ok && t.notable(b) {
				shown++
			}
			for _, m := range t.marks[sc.ID] {
				if m.Kind == schedule.MarkPause && m.Reason == "after_rack" && !m.Open {
					pauses++
					held += m.Held
				}
			}
			for _, a := range sc.Servers {
				if !upgrade[a] {
					continue
				}
				if b, ok := t.bars[a]; ok {
					ended[b.State]++
				} else {
					ended["not reached"]++
				}
			}
		}
	}
	var counts []string
	for _, st := range []string{"completed", "failed", "skipped", "paused", "running", "stopped", "pending", "not reached"} {
		if n := ended[st]; n > 0 {
			word := map[string]string{"completed": "upgraded", "running": "still running"}[st]
			if word == "" {
				word = st
			}
			counts = append(counts, fmt.Sprintf("%d %s", n, word))
		}
	}
	line := fmt.Sprintf("%s and batches (%d shown)", views.Plural(scopes, "rack"), shown)
	if len(counts) > 0 {
		line += "; servers: " + strings.Join(counts, ", ")
	}
	if pauses > 0 {
		line += fmt.Sprintf("; paused after %s (pause_after_rack), %s held in all", views.Plural(pauses, "rack"), held.Human())
	}
	t.printf("%s%s\n", indent(d), line)
}
