package planview

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
)

// WriteText renders p for people: grouped stage → group → cluster → phase
// → scope → server, every number resolved, ending with the summary line.
func WriteText(w io.Writer, p *plan.Plan, color bool) error {
	p = asApplied(p)
	bw := bufio.NewWriter(w)
	st := views.Style(color)
	fmt.Fprintf(bw, "%s rollout %q, scope %s\n", st.Wrap("Plan:", views.ANSIBold), p.Run.Name, p.Run.Scope)
	fmt.Fprintf(bw, "  created %s, valid until %s\n", p.CreatedAt.UTC().Format(time.RFC3339), p.NotAfter.UTC().Format(time.RFC3339))
	fmt.Fprintf(bw, "  configuration %s\n", SnapshotLine(p.Config))
	fmt.Fprintf(bw, "  %s\n", SignerLine(p))
	if len(p.Targets) > 0 {
		fmt.Fprintf(bw, "  only -target %s\n", strings.Join(p.Targets, ", "))
	}
	if len(p.Excludes) > 0 {
		fmt.Fprintf(bw, "  without -exclude %s\n", strings.Join(p.Excludes, ", "))
	}
	for _, line := range HistoryLines(p) {
		fmt.Fprintf(bw, "  %s\n", line)
	}
	for _, line := range QuorumLines(p) {
		fmt.Fprintf(bw, "  %s\n", st.Wrap(line, views.ANSIYellow, views.ANSIBold))
	}
	// Servers upgraded although Critical come first of the sections: each
	// is an exception the reviewer approves by name (rule 50).
	if crit := UpgradedCritical(p); len(crit) > 0 {
		fmt.Fprintf(bw, "\n%s %s:\n", st.Wrap("Upgraded although Critical:", views.ANSIRed, views.ANSIBold), CriticalTitle(len(crit)))
		for _, s := range crit {
			fmt.Fprintf(bw, "  %s\n", CriticalLine(s))
		}
	}
	// What was not seen or is held back comes next: it hides the most.
	if groups := Unobserved(p); len(groups) > 0 {
		fmt.Fprintf(bw, "\n%s\n", st.Wrap(NotObservedLine(p)+":", views.ANSIYellow, views.ANSIBold))
		for _, g := range groups {
			fmt.Fprintf(bw, "  %s: %s\n", g[0], g[1])
		}
	}
	if held := HeldBack(p); len(held) > 0 {
		fmt.Fprintf(bw, "\n%s %s held back for their problems (-hold-back-errored); this plan does not upgrade them:\n",
			st.Wrap("Held back:", views.ANSIYellow, views.ANSIBold), MembersText(held))
		for _, s := range held {
			fmt.Fprintf(bw, "  %s\n", s.Address)
			for _, pr := range s.Problems {
				fmt.Fprintf(bw, "    - %s\n", pr)
			}
		}
	}
	if rels := Releases(p); len(rels) > 0 {
		fmt.Fprintf(bw, "\n%s\n", st.Wrap(ReleasesTitle(rels)+":", views.ANSIBold))
		for _, l := range rels {
			line := l.Text()
			if l.Choice.Pending != "" {
				line = st.Wrap(line, views.ANSIYellow)
			}
			fmt.Fprintf(bw, "  %s\n", line)
		}
	}
	var last Entry
	for _, e := range Entries(p) {
		writeHeaders(bw, st, last, e)
		marker := st.Wrap("~", views.ANSIYellow, views.ANSIBold)
		if e.Server.Action != plan.ActionUpgrade {
			marker = st.Wrap("-", views.ANSIGray)
		}
		indent := strings.Repeat("  ", 5)
		if e.Scope == nil {
			indent = "  "
		}
		detail := ServerDetail(e.Server)
		if e.Server.Action != plan.ActionUpgrade {
			detail = st.Wrap(detail, views.ANSIGray)
		}
		fmt.Fprintf(bw, "%s%s %s  %s\n", indent, marker, e.Server.Address, detail)
		for _, l := range ServerLines(e.Server) {
			fmt.Fprintf(bw, "%s    %s\n", indent, st.Wrap(l, views.ANSIGray))
		}
		last = e
	}
	if len(p.Warnings) > 0 {
		fmt.Fprintf(bw, "\n%s\n", st.Wrap("Warnings:", views.ANSIYellow, views.ANSIBold))
		for _, m := range p.Warnings {
			fmt.Fprintf(bw, "  - %s\n", warningText(m))
		}
	}
	fmt.Fprintf(bw, "\n%s %s\n", st.Wrap("Plan:", views.ANSIBold), st.Wrap(SummaryLine(p), summaryColor(p.Summary)))
	return bw.Flush()
}

func summaryColor(s plan.Summary) string {
	if s.Upgrade == 0 {
		return views.ANSIGreen
	}
	return views.ANSIBold
}

// writeHeaders writes the tree headings that change between prev and e.
func writeHeaders(w io.Writer, st views.Style, prev, e Entry) {
	if e.Scope == nil {
		if prev.Scope != nil || prev.Server == nil {
			fmt.Fprintf(w, "\nServers outside the run tree:\n")
		}
		return
	}
	changed := false
	if prev.Stage != e.Stage {
		changed = true
		gates := ""
		for _, g := range e.Stage.Gates {
			gates += fmt.Sprintf(", approval %q %s", g.Name, g.When)
		}
		wait := ""
		if e.Stage.AfterWait > 0 {
			wait = ", then wait " + Duration(e.Stage.AfterWait)
		}
		if e.Stage.FailFast {
			wait += ", fail fast (a member that fails fails its group, this stage and the run)"
		}
		fmt.Fprintf(w, "\n%s  ~%s%s%s\n", st.Wrap("Stage "+e.Stage.Name, views.ANSIBold), Duration(e.Stage.Estimate), gates, wait)
	}
	if changed || prev.Group != e.Group {
		changed = true
		fmt.Fprintf(w, "  %s  ~%s (groups of a stage run in parallel)\n", st.Wrap("Group "+e.Group.Name, views.ANSIBold), Duration(e.Group.Estimate))
	}
	if changed || prev.Cluster != e.Cluster {
		changed = true
		fmt.Fprintf(w, "    %s  ~%s, %s%s%s%s\n", st.Wrap("Cluster "+e.Cluster.Name, views.ANSIBold, views.ANSICyan), Duration(e.Cluster.Estimate), windowText(e.Cluster), nextOpening(e.Cluster), releaseText(e.Cluster), pendingText(e.Cluster))
	}
	if changed || prev.Phase != e.Phase {
		changed = true
		fmt.Fprintf(w, "      %s  ~%s\n", st.Wrap(PhaseTitle(e.Phase), views.ANSIBold), Duration(e.Phase.Estimate))
	}
	if changed || prev.Scope != e.Scope {
		fmt.Fprintf(w, "        %s  ~%s: %s\n", ScopeTitle(e.Scope), Duration(e.Scope.Estimate), ScopeRule(e.Scope))
	}
}

// nextOpening names the first window interval when the window is not open.
func nextOpening(c *plan.Cluster) string {
	if c.WindowPriority == "open" || c.WindowPriority == "none" {
		return ""
	}
	if len(c.Windows) == 0 {
		return " (no opening before the plan expires)"
	}
	return " (next opens " + c.Windows[0].Start.UTC().Format(time.RFC3339) + ")"
}

// warningText is a plan's warning in a line: "summary: detail".
func warningText(m plan.Message) string {
	if m.Detail == "" {
		return m.Summary
	}
	return m.Summary + ": " + m.Detail
}

// SignerLine says who signed the plan, as the plan records it: a key
// fingerprint, or that the plan is unsigned. It does not say whether the
// signature was checked; show and apply do that against trusted keys.
func SignerLine(p *plan.Plan) string {
	if p.SignedBy == "" {
		return "unsigned"
	}
	return "signed by " + p.SignedBy
}
