// Package planview renders plans for people (text, markdown) and machines
// (a JSON-lines stream) from one walk over the plan file's data, so the
// renderings cannot disagree about order, numbers or wording.
package planview

import (
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// Entry is one server in run order with where it sits in the run tree.
// Every rendering is a fold over the entries.
type Entry struct {
	Stage   *plan.Stage
	Group   *plan.Group
	Cluster *plan.Cluster
	Phase   *plan.Phase
	Scope   *plan.Scope
	Server  *plan.Server
}

// Entries lists every server of p in run order: stages, groups, clusters,
// phases, scopes, then the scope's start order. A server in no scope (a
// plan from another tool, say) comes last with nil tree fields, so
// nothing is ever left out of a rendering.
func Entries(p *plan.Plan) []Entry {
	byAddr := make(map[string]*plan.Server, len(p.Servers))
	for i := range p.Servers {
		byAddr[p.Servers[i].Address] = &p.Servers[i]
	}
	seen := make(map[string]bool, len(p.Servers))
	var out []Entry
	for si := range p.Run.Stages {
		st := &p.Run.Stages[si]
		for gi := range st.Groups {
			g := &st.Groups[gi]
			for ci := range g.Clusters {
				c := &g.Clusters[ci]
				for pi := range c.Phases {
					ph := &c.Phases[pi]
					for sci := range ph.Scopes {
						sc := &ph.Scopes[sci]
						for _, a := range sc.Servers {
							srv := byAddr[a]
							if srv == nil || seen[a] {
								continue
							}
							seen[a] = true
							out = append(out, Entry{st, g, c, ph, sc, srv})
						}
					}
				}
			}
		}
	}
	for i := range p.Servers {
		if !seen[p.Servers[i].Address] {
			out = append(out, Entry{Server: &p.Servers[i]})
		}
	}
	return out
}

// Duration formats an estimate for people: "12h", "4h36m", "45m", "30s".
func Duration(d plan.Duration) string {
	t := time.Duration(d).Round(time.Second)
	if t == 0 {
		return "0m"
	}
	h := t / time.Hour
	m := (t % time.Hour) / time.Minute
	s := (t % time.Minute) / time.Second
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s > 0 && h == 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}

// SummaryLine is the plan's headline: "N servers to upgrade in R racks,
// M skipped, ~T".
func SummaryLine(s plan.Summary) string {
	return fmt.Sprintf("%s to upgrade in %s, %d skipped, ~%s",
		plural(s.Upgrade, "server", "servers"), plural(s.Racks, "rack", "racks"), s.Skip, Duration(s.Estimate))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ChangeText is one change for people: "bios 2.70 → 2.80", marked when it
// is a downgrade, or a change between versions that are neither older nor
// newer (the opaque scheme).
func ChangeText(c plan.Change) string {
	s := fmt.Sprintf("%s %s → %s", c.Component, c.From, c.To)
	switch {
	case c.Downgrade:
		s += " (downgrade)"
	case c.Unordered:
		s += " (change, not an upgrade)"
	}
	return s
}

// Reasons for people, by plan reason code.
var reasons = map[string]string{
	plan.ReasonAtTarget:    "already at target",
	plan.ReasonUnreachable: "unreachable",
	plan.ReasonUnhealthy:   "unhealthy",
	plan.ReasonExcluded:    "excluded",
	plan.ReasonOutOfScope:  "out of scope",
}

// ReasonText is a skip reason for people.
func ReasonText(r string) string {
	if t, ok := reasons[r]; ok {
		return t
	}
	return strings.ReplaceAll(r, "_", " ")
}

// PhaseTitle names a phase for people.
func PhaseTitle(ph *plan.Phase) string {
	switch ph.Kind {
	case plan.PhaseControlPlane:
		return "Control plane"
	case plan.PhaseManagement:
		return "Management"
	case plan.PhaseCompute:
		return "Compute"
	}
	if ph.Name != "" {
		return "Stage " + ph.Name
	}
	return string(ph.Kind)
}

// ScopeTitle names a scope: "rack r01", "group A batch 1", "control plane".
func ScopeTitle(sc *plan.Scope) string {
	if sc.Kind == "rack" {
		return "rack " + sc.Name
	}
	return sc.Name
}

// ScopeRule states a scope's resolved numbers in one phrase.
func ScopeRule(sc *plan.Scope) string {
	var parts []string
	if sc.Eligible == 0 {
		parts = append(parts, "nothing to upgrade (skipped)")
	} else {
		th := fmt.Sprintf("%d%%", sc.Threshold.Value)
		if sc.Threshold.Type == "count" {
			th = fmt.Sprintf("%d", sc.Threshold.Value)
		}
		parts = append(parts, fmt.Sprintf("%d of %d must succeed (threshold %s)", sc.Required, sc.Eligible, th))
		parts = append(parts, fmt.Sprintf("%d may fail", sc.Budget))
		if sc.MaxUnavailable == 1 {
			parts = append(parts, "one at a time")
		} else {
			parts = append(parts, fmt.Sprintf("%d at a time", sc.MaxUnavailable))
		}
		parts = append(parts, "on breach "+sc.OnBreach)
	}
	if sc.WaitAfter > 0 {
		parts = append(parts, "then wait "+Duration(sc.WaitAfter))
	}
	if sc.PauseAfter {
		parts = append(parts, "then pause until `rackform continue`")
	}
	return strings.Join(parts, ", ")
}

// ServerDetail is what happens to a server, after its address.
func ServerDetail(s *plan.Server) string {
	if s.Action != plan.ActionUpgrade {
		return "skip: " + ReasonText(s.Reason)
	}
	changes := make([]string, len(s.Changes))
	for i, c := range s.Changes {
		changes[i] = ChangeText(c)
	}
	return fmt.Sprintf("%s (%s, ~%s)", strings.Join(changes, ", "), plural(s.Reboots, "reboot", "reboots"), Duration(s.Estimate))
}

// windowText describes a cluster's window for people.
func windowText(c *plan.Cluster) string {
	switch c.WindowPriority {
	case "open":
		return "window open now"
	case "opening":
		return "window opens within 4h"
	case "closed":
		return "window closed"
	}
	return "no window"
}
