package planview

import (
	"fmt"

	"github.com/rackform/rackform/planner/plan"
)

// ReleaseLine is one cluster's chosen release and why.
type ReleaseLine struct {
	Cluster string
	Choice  *plan.ReleaseChoice
}

// Releases lists the clusters whose release a channel or the catalog
// decided, in run order; empty when none did.
func Releases(p *plan.Plan) []ReleaseLine {
	var out []ReleaseLine
	for _, cr := range Clusters(p) {
		if cr.Cluster.Release != nil {
			out = append(out, ReleaseLine{cr.Cluster.Name, cr.Cluster.Release})
		}
	}
	return out
}

// ReleasesTitle heads the list: the channel and image selection when a
// channel chose.
func ReleasesTitle(lines []ReleaseLine) string {
	for _, l := range lines {
		if l.Choice.Channel != "" {
			return fmt.Sprintf("Releases (channel %s, image selection %s)", l.Choice.Channel, l.Choice.Selection)
		}
	}
	return "Releases"
}

// Text is "east-1 → 4.6.2: WHY", with "(pending)" after the version when
// the release is not yet available at the cluster's site.
func (l ReleaseLine) Text() string {
	state := ""
	if l.Choice.Pending != "" {
		state = " (pending)"
	}
	return fmt.Sprintf("%s → %s%s: %s", l.Cluster, l.Choice.Version, state, l.Choice.Why)
}

// pendingText is the cluster heading's note for a pending cluster.
func pendingText(c *plan.Cluster) string {
	if c.Release == nil || c.Release.Pending == "" {
		return ""
	}
	return ", pending: " + c.Release.Pending + " (apply moves on to the next cluster; rackform continue checks again)"
}

// releaseText is the cluster heading's release, when chosen.
func releaseText(c *plan.Cluster) string {
	if c.Release == nil {
		return ""
	}
	return ", release " + c.Release.Version
}
