package planview

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
)

// MarkdownLimit is the most bytes WriteMarkdown writes: PR comments are
// capped at 65,536 characters, and a margin keeps bots' own text fitting.
const MarkdownLimit = 60 * 1024

// WriteMarkdown renders p as a pull-request comment that leads with risk:
// the headline, what was not seen or is held back, then a summary (servers
// changing, reboots, duration, each cluster's window and whether it fits,
// gates, waits, parallelism, thresholds, versions, skipped servers, images,
// hooks), and only then the per-rack detail in <details> blocks. When the
// whole plan does not fit in limit bytes (MarkdownLimit when 0), per-server
// rows are folded into one line per rack first; only when even those do
// not fit are racks left out from the end, with a note. The summary is
// never cut. sha is the plan file's SHA-256, when known.
func WriteMarkdown(w io.Writer, p *plan.Plan, sha string, limit int) error {
	if limit <= 0 {
		limit = MarkdownLimit
	}
	p = asApplied(p)
	var head bytes.Buffer
	fmt.Fprintf(&head, "### rackform plan: %s\n\n", mdEscape(SummaryLine(p)))
	fmt.Fprintf(&head, "Rollout `%s`, scope `%s`, created %s, valid until %s.", p.Run.Name, p.Run.Scope,
		p.CreatedAt.UTC().Format(time.RFC3339), p.NotAfter.UTC().Format(time.RFC3339))
	if sha != "" {
		fmt.Fprintf(&head, " Plan SHA-256 `%s`.", sha)
	}
	if p.SignedBy != "" {
		fmt.Fprintf(&head, " Signed by `%s`.", p.SignedBy)
	} else {
		head.WriteString(" Unsigned.")
	}
	// The configuration by its own name, never a path on the machine that
	// planned: data files are already relative to it.
	if name := ConfigName(p.Config.Dir); name != "" {
		fmt.Fprintf(&head, "\n\nConfiguration %s.\n", mdEscape(SnapshotLineNamed(p.Config, name)))
	} else {
		fmt.Fprintf(&head, "\n\nConfiguration: %s.\n", mdEscape(SnapshotLineNamed(p.Config, "")))
	}
	if len(p.Targets) > 0 {
		fmt.Fprintf(&head, "\nOnly `-target %s`.\n", strings.Join(p.Targets, "`, `-target "))
	}
	if len(p.Excludes) > 0 {
		fmt.Fprintf(&head, "\nWithout `-exclude %s`.\n", strings.Join(p.Excludes, "`, `-exclude "))
	}
	for _, line := range QuorumLines(p) {
		fmt.Fprintf(&head, "\n**%s**\n", mdEscape(line))
	}
	// Servers upgraded although Critical come first of the sections: each
	// is an exception the reviewer approves by name (rule 50).
	if crit := UpgradedCritical(p); len(crit) > 0 {
		fmt.Fprintf(&head, "\n> [!CAUTION]\n> **Upgraded although Critical:** %s:\n", mdEscape(CriticalTitle(len(crit))))
		capped(&head, len(crit), limit/4, func(i int) string {
			return fmt.Sprintf("> - `%s`: %s\n", crit[i].Address, mdEscape(crit[i].UpgradeWhenCritical.Reason))
		}, "> - … and %d more upgraded although Critical (`rackform show PLANFILE` lists them all)\n")
	}
	// What was not seen or is held back comes before everything else.
	if groups := Unobserved(p); len(groups) > 0 {
		fmt.Fprintf(&head, "\n> [!WARNING]\n> **%s**\n", mdEscape(NotObservedLine(p)))
		capped(&head, len(groups), limit/4, func(i int) string {
			return fmt.Sprintf("> - %s: %s\n", groups[i][0], mdEscape(groups[i][1]))
		}, "> - … (`rackform show PLANFILE` lists every server)\n")
	}
	if held := HeldBack(p); len(held) > 0 {
		fmt.Fprintf(&head, "\n> [!CAUTION]\n> **%s held back** for their problems (`-hold-back-errored`); this plan does not upgrade them:\n", MembersText(held))
		capped(&head, len(held), limit/3, func(i int) string {
			return fmt.Sprintf("> - `%s`: %s\n", held[i].Address, mdEscape(strings.Join(held[i].Problems, "; ")))
		}, "> - … and %d more held back (`rackform show PLANFILE` lists them all)\n")
	}
	if rels := Releases(p); len(rels) > 0 {
		fmt.Fprintf(&head, "\n**%s**\n\n", ReleasesTitle(rels))
		capped(&head, len(rels), limit/4, func(i int) string {
			if rels[i].Choice.Pending != "" {
				return fmt.Sprintf("- **pending** %s\n", mdEscape(rels[i].Text()))
			}
			return fmt.Sprintf("- %s\n", mdEscape(rels[i].Text()))
		}, "- … (`rackform show PLANFILE` lists every cluster)\n")
	}
	writeRiskSummary(&head, p)
	if imgs := images(Where(p, func(*plan.Server) bool { return true })); len(imgs) > 0 {
		head.WriteString("\n**Images**\n\n| component | version | image | sha256 | delivered by |\n|---|---|---|---|---|\n")
		capped(&head, len(imgs), limit/2, func(i int) string {
			im := imgs[i]
			sum := "`" + im.sha + "`"
			if im.sha == "" {
				sum = "none given: not verified"
			}
			return fmt.Sprintf("| %s | %s | `%s` | %s | %s |\n", mdEscape(im.component), mdEscape(im.version), strings.ReplaceAll(im.url, "`", "%60"), sum, mdEscape(im.delivery()))
		}, "| … | %d more images | `rackform show PLANFILE` | |\n")
	}
	writeHooks(&head, p)
	if len(p.Warnings) > 0 {
		head.WriteString("\n**Warnings**\n\n")
		// Warnings get at most a quarter of the comment, so a fleet of
		// unreachable servers still leaves room for the plan itself.
		capped(&head, len(p.Warnings), limit/4, func(i int) string {
			return fmt.Sprintf("- %s\n", mdEscape(warningText(p.Warnings[i])))
		}, "- … and %d more warnings (`rackform show PLANFILE` lists them all)\n")
	}

	out := head
	out.Write(detail(p, limit-head.Len(), limit))
	_, err := w.Write(out.Bytes())
	return err
}

// capped writes n items to head while it stays within budget bytes; the
// first item that does not fit is replaced by more, a line saying how
// many were left out when it has a %d.
func capped(head *bytes.Buffer, n, budget int, item func(i int) string, more string) {
	for i := range n {
		it := item(i)
		if head.Len()+len(it) > budget {
			if strings.Contains(more, "%d") {
				more = fmt.Sprintf(more, n-i)
			}
			head.WriteString(more)
			return
		}
		head.WriteString(it)
	}
}

func mdAction(s *plan.Server) string {
	out := "skip (" + ReasonText(s.Reason) + ")"
	if s.Action == plan.ActionUpgrade {
		out = "upgrade"
	}
	if s.IsDevice() {
		out = KindText(s) + ": " + out
	}
	return out
}

func mdChanges(s *plan.Server) string {
	var parts []string
	for _, c := range s.Changes {
		parts = append(parts, ChangeText(c))
	}
	return strings.Join(parts, ", ")
}

func mdEstimate(s *plan.Server) string {
	if s.Action != plan.ActionUpgrade {
		return ""
	}
	if s.IsDevice() {
		return fmt.Sprintf("~%s, no host steps", Duration(s.Estimate))
	}
	return fmt.Sprintf("~%s, %s", Duration(s.Estimate), views.Plural(s.Reboots, "reboot"))
}

// mdEscape keeps text from breaking a table row or turning into markup.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

// image is one image the plan's steps send (update and reimage steps),
// with the servers it goes to and the methods their steps name, and how
// many steps send it by each way of delivery ("simple_update HTTPS, apply
// time OnReset"), each in first-use order.
type image struct {
	component, version, url, sha string
	servers, methods, how        []string
	count                        map[string]int
}

func (im *image) delivery() string {
	var parts []string
	for _, h := range im.how {
		parts = append(parts, fmt.Sprintf("%s (%d)", h, im.count[h]))
	}
	return strings.Join(parts, ", ")
}

// images are the distinct images the servers' steps send, in first-use
// order: a set remembers each image's, so a fleet of any size is read
// once.
func images(servers []*plan.Server) []*image {
	var out []*image
	type key struct{ component, version, url, sha string }
	seen := map[key]*image{}
	for _, s := range servers {
		for _, st := range s.Steps {
			if st.Image == "" || !st.IsFlash() {
				continue
			}
			k := key{st.Component, st.Target.Version, st.Image, st.SHA256}
			im := seen[k]
			if im == nil {
				im = &image{component: k.component, version: k.version, url: k.url, sha: k.sha, count: map[string]int{}}
				seen[k] = im
				out = append(out, im)
			}
			if n := len(im.servers); n == 0 || im.servers[n-1] != s.Address {
				im.servers = append(im.servers, s.Address)
			}
			if m := st.Method; m != "" && !slices.Contains(im.methods, m) {
				im.methods = append(im.methods, m)
			}
			how := st.Method
			switch {
			case st.Kind == plan.StepReimage:
				how = "reimage"
			case how == "" || how == "auto":
				how = "provider's choice"
			case st.TransferProtocol != "":
				how += " " + st.TransferProtocol
			}
			if st.ApplyTimeFrom != "" {
				if st.ApplyTime != "" {
					how += ", apply time " + st.ApplyTime
				} else {
					how += ", no apply time"
				}
			}
			if im.count[how] == 0 {
				im.how = append(im.how, how)
			}
			im.count[how]++
		}
	}
	return out
}
