package applyview

import (
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal"
)

// WriteStatus renders a run's state tree for `rackform status`: every
// container and scope with its state and counts, the servers that are
// running, failed or skipped (completed and not-started ones are only
// counted), waits, gates and pauses, and the commands that move the run on.
// r renders the commands printed (see Options.Resume).
func WriteStatus(w io.Writer, p *plan.Plan, st *executor.Status, r *Resume) error {
	var b strings.Builder
	run := st.Run.State
	run.Message = ""
	fmt.Fprintf(&b, "Plan %s: run %s\n", plan.ShortSHA(st.PlanSHA256), stateText(run))
	if st.StopRequested {
		b.WriteString("A stop is requested: nothing new starts; servers in flight finish.\n")
	}
	labels := map[string]string{}
	for _, e := range planview.Scopes(p) {
		labels[e.Scope.ID] = rehearsal.ScopeLabel(e.Cluster.Name, *e.Phase, *e.Scope)
	}
	critical := map[string]bool{}
	for i := range p.Servers {
		critical[p.Servers[i].Address] = p.Servers[i].UpgradeWhenCritical != nil
	}
	var walk func(n *executor.Node, depth int)
	walk = func(n *executor.Node, depth int) {
		ind := strings.Repeat("  ", depth)
		switch n.Kind {
		case executor.KindRun:
		case executor.KindServer:
			switch {
			case n.State.Name == executor.Completed && critical[n.ID] && n.State.Message != "":
				// Upgraded although Critical: how it came back (rule 50).
				fmt.Fprintf(&b, "%s%s: completed: %s\n", ind, n.ID, n.State.Message)
				return
			case n.State.Name == executor.Completed, n.State.Name == executor.NotStarted:
				return
			}
			fmt.Fprintf(&b, "%s%s: %s\n", ind, n.ID, stateText(n.State))
			for _, s := range n.Steps {
				if s.State == executor.Running || s.State == executor.Failed {
					what := s.Kind
					if s.Component != "" {
						what = s.Component + " " + what
					}
					fmt.Fprintf(&b, "%s  %s %s: %s", ind, s.Op, what, s.State)
					if s.Message != "" {
						fmt.Fprintf(&b, " %s", s.Message)
					}
					if s.TaskURI != "" {
						fmt.Fprintf(&b, " (task %s)", s.TaskURI)
					}
					b.WriteString("\n")
				}
			}
			return
		case executor.KindScope:
			l := labels[n.ID]
			if l == "" {
				l = n.ID
			}
			fmt.Fprintf(&b, "%s%s (%s): %s", ind, l, n.ID, stateText(n.State))
			if c := n.Counts; c != nil {
				fmt.Fprintf(&b, "; %s, %d running, %d must succeed", countsText(*c), c.Running, c.Required)
			}
			b.WriteString("\n")
		default:
			// Containers repeat their child's message; the scope or
			// server below says it.
			st := n.State
			if n.Kind != executor.KindCluster || st.Name != executor.Pending {
				st.Message = "" // a pending cluster says why itself
			}
			fmt.Fprintf(&b, "%s%s %s: %s\n", ind, n.Kind, n.ID, stateText(st))
		}
		d := depth + 1
		if n.Kind == executor.KindRun {
			d = depth
		}
		for _, c := range n.Children {
			walk(c, d)
		}
	}
	walk(st.Run, 0)
	for _, l := range StrandedLines(st.Stranded, r) {
		b.WriteString(l + "\n")
	}
	for _, n := range st.Next {
		fmt.Fprintf(&b, "To continue, run: %s\n", r.Command(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Nodes yields n and every node under it, each before its children.
func Nodes(n *executor.Node) iter.Seq[*executor.Node] {
	var walk func(n *executor.Node, yield func(*executor.Node) bool) bool
	walk = func(n *executor.Node, yield func(*executor.Node) bool) bool {
		if n == nil {
			return true
		}
		if !yield(n) {
			return false
		}
		for _, c := range n.Children {
			if !walk(c, yield) {
				return false
			}
		}
		return true
	}
	return func(yield func(*executor.Node) bool) { walk(n, yield) }
}
