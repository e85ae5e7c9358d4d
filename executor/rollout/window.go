package rollout

import (
	"slices"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// WindowClass is a cluster's maintenance window at a moment (rule 20), in
// the order a group tries its clusters: open first, then opening within
// four hours, then without windows, then closed.
type WindowClass int

const (
	WindowOpen WindowClass = iota
	WindowOpening
	WindowNone
	WindowClosed
)

// openingSoon is how close a window's opening puts its cluster before
// clusters without windows (rule 20).
const openingSoon = 4 * time.Hour

// ClassifyWindow says where cluster c's windows are at now, and when the
// next one opens (zero: it is open, it has none, or none opens again).
func ClassifyWindow(c *plan.Cluster, now time.Time) (class WindowClass, next time.Time) {
	if len(c.Windows) == 0 {
		return WindowNone, time.Time{}
	}
	for _, w := range c.Windows {
		if w.Contains(now) {
			return WindowOpen, time.Time{}
		}
		if w.Start.After(now) && (next.IsZero() || w.Start.Before(next)) {
			next = w.Start
		}
	}
	if !next.IsZero() && next.Sub(now) <= openingSoon {
		return WindowOpening, next
	}
	return WindowClosed, next
}

// MayStart reports whether a cluster of this class may start now: windows
// gate only the start (rule 20).
func (c WindowClass) MayStart() bool { return c == WindowOpen || c == WindowNone }

// Candidate is a cluster waiting to start, classified at one moment.
type Candidate struct {
	Cluster *plan.Cluster
	Class   WindowClass
	// Opens is when its next window opens (zero: open, none, or never).
	Opens time.Time
}

// ClusterOrder is the order in which a group tries its clusters that wait
// to start, at now (rule 20): by window class, in plan order within one.
// The first whose class MayStart starts (one at a time per group, rule 2);
// the ones tried before it wait for their window's Opens.
func ClusterOrder(waiting []*plan.Cluster, now time.Time) []Candidate {
	cands := make([]Candidate, 0, len(waiting))
	for _, c := range waiting {
		class, next := ClassifyWindow(c, now)
		cands = append(cands, Candidate{Cluster: c, Class: class, Opens: next})
	}
	slices.SortStableFunc(cands, func(a, b Candidate) int { return int(a.Class) - int(b.Class) })
	return cands
}
