package planview

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
)

// ConfigName is how a review names the configuration: its directory's
// own name, never the path it had on the machine that planned (which may
// be absolute and says nothing to a reviewer).
func ConfigName(dir string) string {
	d := filepath.Clean(filepath.FromSlash(dir))
	if d == "." || d == "" || d == string(filepath.Separator) {
		return "" // planned in the configuration's own directory
	}
	return "`" + filepath.Base(d) + "`"
}

// SnapshotLineNamed is SnapshotLine with the configuration called name
// ("" leaves the name out).
func SnapshotLineNamed(s plan.Snapshot, name string) string {
	line := SnapshotLine(s)
	if i := strings.Index(line, ": "); i >= 0 && line[:i] == s.Dir {
		if name == "" {
			return line[i+2:]
		}
		return name + line[i:]
	}
	return line
}

// timeText is an instant for reviewers, in UTC to the minute.
func timeText(t time.Time) string { return t.UTC().Format("Mon 2006-01-02 15:04 UTC") }

// WindowFit says whether a cluster's estimated duration fits in one
// opening of its maintenance window, and when the window next opens, as
// seen at plan time.
func WindowFit(c *plan.Cluster, now time.Time) (window, fits, next string) {
	if len(c.Windows) == 0 {
		if c.WindowPriority == "closed" {
			return "closed", "no: no opening before the plan expires", "not before the plan expires"
		}
		return "none", "yes: no window, may run any time", "—"
	}
	var longest time.Duration
	for _, iv := range c.Windows {
		start := iv.Start
		if start.Before(now) {
			start = now
		}
		longest = max(longest, iv.End.Sub(start))
	}
	first := c.Windows[0]
	if first.Contains(now) {
		next = "open now, until " + timeText(first.End)
		window = "open"
	} else {
		next = timeText(first.Start)
		window = "closed now"
	}
	est := time.Duration(c.Estimate)
	if longest >= est {
		fits = fmt.Sprintf("yes: ~%s in an opening of %s", Duration(c.Estimate), Duration(plan.Duration(longest)))
	} else {
		fits = fmt.Sprintf("**no**: ~%s is longer than its longest opening (%s)", Duration(c.Estimate), Duration(plan.Duration(longest)))
	}
	return window, fits, next
}

// distinct joins the distinct values in first-seen order.
func distinct(vals []string) string {
	var out []string
	for _, v := range vals {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return strings.Join(out, "; ")
}

// thresholdText is a threshold as configured: "2" servers, "80%".
func thresholdText(t plan.Threshold) string {
	if t.Type == "count" {
		return fmt.Sprintf("%d", t.Value)
	}
	return fmt.Sprintf("%d%%", t.Value)
}

// writeRiskSummary writes the summary a reviewer reads before any server:
// the headline numbers, each cluster with its window, the parallelism and
// thresholds of each phase, gates, waits and pauses, the version changes
// with counts and the servers not changing with their reasons.
func writeRiskSummary(b *bytes.Buffer, p *plan.Plan) {
	byAddr := make(map[string]*plan.Server, len(p.Servers))
	for i := range p.Servers {
		byAddr[p.Servers[i].Address] = &p.Servers[i]
	}
	reboots := 0
	for _, s := range p.Servers {
		if s.Action == plan.ActionUpgrade {
			reboots += s.Reboots
		}
	}
	cls := Clusters(p)
	var gates, waits, pauses []string
	var onBreach []string
	maxGroups := 0
	for _, st := range p.Run.Stages {
		maxGroups = max(maxGroups, len(st.Groups))
		for _, g := range st.Gates {
			line := fmt.Sprintf("approval gate `%s` %s stage `%s` (`rackform approve %s`)", g.ID, g.When, st.Name, g.ID)
			if g.Description != "" {
				line += ": " + mdEscape(g.Description)
			}
			gates = append(gates, line)
		}
		if st.AfterWait > 0 {
			waits = append(waits, fmt.Sprintf("%s after stage `%s`", Duration(st.AfterWait), st.Name))
		}
		if st.OnBreach != "" {
			onBreach = append(onBreach, fmt.Sprintf("a failed cluster in stage `%s`: %s", st.Name, st.OnBreach))
		}
	}
	for _, cr := range cls {
		for _, ph := range cr.Cluster.Phases {
			var w []string
			for _, sc := range ph.Scopes {
				if sc.WaitAfter > 0 {
					w = append(w, Duration(sc.WaitAfter))
				}
				if sc.PauseAfter {
					pauses = append(pauses, fmt.Sprintf("after %s of cluster `%s` until `rackform continue`", ScopeTitle(&sc), cr.Cluster.Name))
				}
			}
			if len(w) > 0 {
				what := "scope"
				if len(ph.Scopes) > 0 && ph.Scopes[0].Kind == "rack" {
					what = "rack"
				}
				waits = append(waits, fmt.Sprintf("%s after %s in %s of cluster `%s`", distinct(w), views.Plural(len(w), what), strings.ToLower(PhaseTitle(&ph)), cr.Cluster.Name))
			}
		}
	}

	b.WriteString("\n#### Summary\n\n| risk | this plan |\n|---|---|\n")
	total := p.Summary.Upgrade + p.Summary.Skip
	fmt.Fprintf(b, "| Servers changing | **%d** of %d, in %s (%d not changing) |\n", p.Summary.Upgrade, total, views.Plural(p.Summary.Racks, "rack"), p.Summary.Skip)
	fmt.Fprintf(b, "| Reboots | %d |\n", reboots)
	fmt.Fprintf(b, "| Estimated duration | ~%s |\n", Duration(p.Summary.Estimate))
	fmt.Fprintf(b, "| Clusters | %d, in %s |\n", len(cls), views.Plural(len(p.Run.Stages), "stage"))
	par := "stages one after another; clusters of a group one after another; in each cluster the control plane one server at a time, then management, then compute"
	if maxGroups > 1 {
		par = fmt.Sprintf("stages one after another; up to %d groups of a stage in parallel; clusters of a group one after another; in each cluster the control plane one server at a time, then management, then compute", maxGroups)
	}
	fmt.Fprintf(b, "| Parallelism | %s (per phase below) |\n", par)
	fmt.Fprintf(b, "| Approval gates | %d |\n", len(gates))
	fmt.Fprintf(b, "| Waits and pauses | %s, %s |\n", views.Plural(len(waits), "wait"), views.Plural(len(pauses), "pause"))
	if len(onBreach) > 0 {
		fmt.Fprintf(b, "| On breach | %s |\n", mdEscape(distinct(onBreach)))
	}

	b.WriteString("\n**Clusters and windows**\n\n| cluster | stage › group | changing | reboots | estimate | window at plan time | fits its window | next opens |\n|---|---|---|---|---|---|---|---|\n")
	for _, cr := range cls {
		changing, rb := 0, 0
		for _, ph := range cr.Cluster.Phases {
			for _, sc := range ph.Scopes {
				for _, a := range sc.Servers {
					if s := byAddr[a]; s != nil && s.Action == plan.ActionUpgrade {
						changing++
						rb += s.Reboots
					}
				}
			}
		}
		window, fits, next := WindowFit(cr.Cluster, p.CreatedAt)
		fmt.Fprintf(b, "| `%s` | `%s` › `%s` | %d | %d | ~%s | %s | %s | %s |\n", cr.Cluster.Name, cr.Stage.Name, cr.Group.Name, changing, rb, Duration(cr.Cluster.Estimate), window, fits, next)
	}

	b.WriteString("\n**Parallelism and thresholds**\n\n| cluster | phase | scopes | changing | at once | must succeed | may fail | on breach | after each |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, cr := range cls {
		for _, ph := range cr.Cluster.Phases {
			var atOnce, th, budget, breach, after []string
			eligible, required := 0, 0
			for _, sc := range ph.Scopes {
				if sc.Eligible == 0 {
					continue
				}
				eligible += sc.Eligible
				required += sc.Required
				if sc.MaxUnavailable == 1 {
					atOnce = append(atOnce, "one")
				} else {
					atOnce = append(atOnce, fmt.Sprint(sc.MaxUnavailable))
				}
				th = append(th, thresholdText(sc.Threshold))
				budget = append(budget, fmt.Sprint(sc.Budget))
				breach = append(breach, sc.OnBreach)
				a := ""
				switch {
				case sc.PauseAfter && sc.WaitAfter > 0:
					a = "wait " + Duration(sc.WaitAfter) + ", pause"
				case sc.PauseAfter:
					a = "pause"
				case sc.WaitAfter > 0:
					a = "wait " + Duration(sc.WaitAfter)
				}
				if a != "" {
					after = append(after, a)
				}
			}
			if len(after) == 0 {
				after = []string{"—"}
			}
			if eligible == 0 {
				fmt.Fprintf(b, "| `%s` | %s | %d | 0 | — | — | — | — | — |\n", cr.Cluster.Name, PhaseTitle(&ph), len(ph.Scopes))
				continue
			}
			fmt.Fprintf(b, "| `%s` | %s | %d | %d | %s | %d of %d (threshold %s) | %s per scope | %s | %s |\n",
				cr.Cluster.Name, PhaseTitle(&ph), len(ph.Scopes), eligible, distinct(atOnce), required, eligible, distinct(th), distinct(budget), distinct(breach), distinct(after))
		}
	}

	if len(gates)+len(waits)+len(pauses) > 0 {
		b.WriteString("\n**Gates, waits and pauses**\n\n")
		for _, g := range gates {
			fmt.Fprintf(b, "- %s\n", g)
		}
		for _, w := range waits {
			fmt.Fprintf(b, "- wait %s\n", w)
		}
		for _, ps := range pauses {
			fmt.Fprintf(b, "- pause %s\n", ps)
		}
	}

	if vs := versionCounts(p); len(vs) > 0 {
		b.WriteString("\n**Versions**\n\n| component | from | to | servers |\n|---|---|---|---|\n")
		for _, v := range vs {
			to := mdEscape(v.to)
			if v.note != "" {
				to += " (" + v.note + ")"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %d |\n", mdEscape(v.component), mdEscape(v.from), to, v.n)
		}
	}

	if rs := skipReasons(p); len(rs) > 0 {
		b.WriteString("\n**Not changing**\n\n| reason | servers |\n|---|---|\n")
		for _, r := range rs {
			names := r.addrs
			const show = 8
			list := "`" + strings.Join(names[:min(show, len(names))], "`, `") + "`"
			if len(names) > show {
				list += fmt.Sprintf(", … and %d more", len(names)-show)
			}
			fmt.Fprintf(b, "| %s | %d: %s |\n", mdEscape(r.reason), len(names), list)
		}
	}
}

type versionCount struct {
	component, from, to, note string
	n                         int
}

// versionCounts are the distinct component changes with how many servers
// get each, by component, then most servers first.
func versionCounts(p *plan.Plan) []versionCount {
	idx := map[[3]string]int{}
	var out []versionCount
	for _, s := range p.Servers {
		if s.Action != plan.ActionUpgrade {
			continue
		}
		for _, c := range s.Changes {
			if c.FlashedBy != "" {
				continue // counted once, on the server that flashes it
			}
			k := [3]string{c.Component, c.From, c.To}
			i, ok := idx[k]
			if !ok {
				note := ""
				switch {
				case c.Downgrade:
					note = "**downgrade**"
				case c.Unordered:
					note = "change, not an upgrade"
				}
				idx[k] = len(out)
				out = append(out, versionCount{component: c.Component, from: c.From, to: c.To, note: note})
				i = len(out) - 1
			}
			out[i].n++
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].component != out[j].component {
			return out[i].component < out[j].component
		}
		return out[i].n > out[j].n
	})
	return out
}

type skipReason struct {
	reason string
	addrs  []string
}

// skipReasons groups the servers not changing by reason, the reasons that
// hide the most (not observed, held back) first.
func skipReasons(p *plan.Plan) []skipReason {
	idx := map[string]int{}
	var out []skipReason
	for _, s := range p.Servers {
		if s.Action == plan.ActionUpgrade {
			continue
		}
		r := ReasonText(s.Reason)
		i, ok := idx[r]
		if !ok {
			idx[r] = len(out)
			out = append(out, skipReason{reason: r})
			i = len(out) - 1
		}
		out[i].addrs = append(out[i].addrs, s.Address)
	}
	rank := func(r string) int {
		switch {
		case strings.HasPrefix(r, "not observed"):
			return 0
		case r == "held back", r == "unhealthy":
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i].reason) < rank(out[j].reason) })
	return out
}

// writeHooks lists the commands apply runs around each server, per
// cluster, so a reviewer sees what runs on the fleet besides the updates.
func writeHooks(b *bytes.Buffer, p *plan.Plan) {
	var rows []string
	for _, cr := range Clusters(p) {
		st := cr.Cluster.Settings
		if len(st.DrainHook) > 0 {
			rows = append(rows, fmt.Sprintf("| `%s` | drain | `%s` |\n", cr.Cluster.Name, shellJoin(st.DrainHook)))
		}
		if len(st.UncordonHook) > 0 {
			rows = append(rows, fmt.Sprintf("| `%s` | uncordon | `%s` |\n", cr.Cluster.Name, shellJoin(st.UncordonHook)))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n**Hooks** (run for every server, with its name, node name and rack in the environment)\n\n| cluster | hook | command |\n|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r)
	}
}

// scopeBlock is one scope's detail at three sizes: every server as a row,
// servers folded into a line per kind of change, and counts only.
type scopeBlock struct {
	header            string // the cluster heading, before the scope when it starts a cluster
	full, folded, min string
}

// detail renders the per-rack detail in at most budget bytes: every scope
// as full as fits, folding server rows before leaving any scope out.
func detail(p *plan.Plan, budget, limit int) []byte {
	entries := Entries(p)
	var blocks []scopeBlock
	var outside []*plan.Server
	var last Entry
	for i := 0; i < len(entries); {
		e := entries[i]
		if e.Scope == nil {
			outside = append(outside, e.Server)
			i++
			continue
		}
		j := i
		var servers []*plan.Server
		for j < len(entries) && entries[j].Scope == e.Scope {
			servers = append(servers, entries[j].Server)
			j++
		}
		var blk scopeBlock
		if last.Scope == nil || last.Stage != e.Stage || last.Group != e.Group || last.Cluster != e.Cluster {
			blk.header = fmt.Sprintf("\n##### Stage `%s` › group `%s` › cluster `%s` (~%s, %s)\n\n", e.Stage.Name, e.Group.Name, e.Cluster.Name, Duration(e.Cluster.Estimate), windowText(e.Cluster))
		}
		blk.full, blk.folded, blk.min = scopeRenderings(e, servers)
		blocks = append(blocks, blk)
		last = e
		i = j
	}
	if len(outside) > 0 {
		title := fmt.Sprintf("<b>Servers outside the run tree</b>: %s", views.Plural(len(outside), "server"))
		blocks = append(blocks, scopeBlock{
			header: "\n##### Servers outside the run tree\n\n",
			full:   "<details><summary>" + title + "</summary>\n\n" + serverRows(outside) + "\n</details>\n\n",
			folded: "- " + title + "\n",
			min:    "- " + title + "\n",
		})
	}

	// Room for the notes, so adding them never breaks the limit.
	const noteRoom = 512
	budget -= noteRoom
	size := func(level []int) int {
		n := 0
		for i, b := range blocks {
			n += len(b.header) + len(b.at(level[i]))
		}
		return n
	}
	level := make([]int, len(blocks))
	// Every scope at least as counts; then, in run order, as much more as
	// fits: rows of the first racks, folded lines for the rest.
	for i := range level {
		level[i] = 2
	}
	for _, want := range []int{1, 0} {
		for i := range blocks {
			old := level[i]
			if old <= want {
				continue
			}
			level[i] = want
			if size(level) > budget {
				level[i] = old
			}
		}
	}
	if size(level) > budget {
		// Not even every scope folded fits: one row per cluster instead.
		return clusterRunOrder(entries, len(blocks), budget, limit)
	}
	var out bytes.Buffer
	out.WriteString("\n#### Run order, rack by rack\n")
	folded, dropped := 0, 0
	droppedServers := 0
	for i, b := range blocks {
		chunk := b.header + b.at(level[i])
		if out.Len()+len(chunk) > budget {
			dropped = len(blocks) - i
			for _, rest := range blocks[i:] {
				droppedServers += rest.servers()
			}
			break
		}
		if level[i] > 0 {
			folded++
		}
		out.WriteString(chunk)
	}
	if folded > 0 {
		fmt.Fprintf(&out, "\n> **Folded:** the server rows of %d of %d scopes are folded into one line per kind of change to keep this comment under %d KB; no rack is left out. Run `rackform show PLANFILE` for every server.\n", folded, len(blocks), limit/1024)
	}
	if dropped > 0 {
		fmt.Fprintf(&out, "\n> **Truncated:** the last %d of %d scopes (%d servers) do not fit even folded. Run `rackform show PLANFILE` for all of them.\n", dropped, len(blocks), droppedServers)
	}
	return out.Bytes()
}

func (b scopeBlock) at(level int) string {
	switch level {
	case 0:
		return b.full
	case 1:
		return b.folded
	}
	return b.min
}

func (b scopeBlock) servers() int { return strings.Count(b.full, "\n| `") }

// summaryHTML is markdown-ish text for a <summary> element, where
// markdown is not rendered: code spans become <code>.
func summaryHTML(s string) string {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, part := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + part + "</code>")
			continue
		}
		if i%2 == 1 {
			b.WriteString("`")
		}
		b.WriteString(part)
	}
	return b.String()
}

func scopeRenderings(e Entry, servers []*plan.Server) (full, folded, minimal string) {
	up, skip := 0, 0
	for _, s := range servers {
		if s.Action == plan.ActionUpgrade {
			up++
		} else {
			skip++
		}
	}
	counts := fmt.Sprintf("%d changing", up)
	if skip > 0 {
		counts += fmt.Sprintf(", %d not", skip)
	}
	title := fmt.Sprintf("<b>%s › %s</b> (~%s, %s): %s", PhaseTitle(e.Phase), ScopeTitle(e.Scope), Duration(e.Scope.Estimate), counts, summaryHTML(mdEscape(ScopeRule(e.Scope))))

	full = "<details><summary>" + title + "</summary>\n\n" + serverRows(servers) + "\n</details>\n\n"

	// Folded: one line per kind of change (or skip reason), naming the
	// servers by their short names.
	type kind struct {
		what  string
		names []string
	}
	var kinds []*kind
	byWhat := map[string]*kind{}
	for _, s := range servers {
		what := mdAction(s)
		if s.Action == plan.ActionUpgrade {
			what = "upgrade: " + mdEscape(mdChanges(s))
		}
		k := byWhat[what]
		if k == nil {
			k = &kind{what: what}
			byWhat[what] = k
			kinds = append(kinds, k)
		}
		k.names = append(k.names, s.Name)
	}
	var fb strings.Builder
	fb.WriteString("<details><summary>" + title + "</summary>\n\n")
	for _, k := range kinds {
		fmt.Fprintf(&fb, "- %d %s: %s\n", len(k.names), k.what, strings.Join(k.names, ", "))
	}
	fb.WriteString("\n</details>\n\n")
	folded = fb.String()
	minimal = "- " + title + "\n"
	return full, folded, minimal
}

// serverRows is the table of servers, a row each.
func serverRows(servers []*plan.Server) string {
	var rows strings.Builder
	rows.WriteString("| server | action | changes | estimate |\n|---|---|---|---|\n")
	for _, s := range servers {
		fmt.Fprintf(&rows, "| `%s` | %s | %s | %s |\n", s.Address, mdAction(s), mdEscape(mdChanges(s)), mdEstimate(s))
	}
	return rows.String()
}

// shellJoin writes argv as a shell would read it back, for a code span in
// a table: arguments with spaces or quotes are single-quoted, and the
// characters that would break the table or the span are escaped.
func shellJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$\\|&;<>()*?[]#~`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = a
	}
	return strings.NewReplacer("|", `\|`, "`", "'", "\n", " ").Replace(strings.Join(parts, " "))
}
