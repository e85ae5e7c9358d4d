package command

import (
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/planner/plan"
)

// showCommand renders a saved plan file.
type showCommand struct {
	*Meta
	json     bool
	format   string
	noColor  bool
	timeline timelineFlags
}

func (c *showCommand) Synopsis() string { return "Show a saved plan" }
func (c *showCommand) Usage() string    { return "rackform show [options] PLANFILE" }

func (c *showCommand) Description() string {
	return `Verifies a plan file written by "rackform plan -out" and renders it: as
text (the default, as plan prints it), as markdown for a pull-request
comment (-format=markdown), as one self-contained HTML page with a rack
grid and a timeline (-format=html: no network needed to view it), or as
JSON for policy checks such as OPA/conftest (-json: servers, clusters and
gates keyed by address, parallelism per phase, windows, waits, pauses,
images and every property present; its own format_version, described in
docs/json.md). The plan file itself is the file; show -json is a view.

The markdown leads with the risk: a summary of the servers changing,
reboots, estimated duration, each cluster's maintenance window (whether
its estimate fits an opening and when it next opens), approval gates,
waits, parallelism and thresholds, versions from and to with counts, the
servers not changing with their reasons, images with their digests and
hooks; then the run order rack by rack, each rack in a folded block. It
stays under 60 KB: per-server rows are folded into one line per kind of
change first; when even a line per rack does not fit (thousands of
racks), the run order is one row per cluster, and it says so. The summary
is never cut. A corrupt, truncated or unknown-format file is refused.

The HTML page's grid draws a cell per server up to 2,000 servers, then
each rack as counts of its servers by what the plan does, and past 500
racks each cluster; its timeline leaves out racks and batches past 500
(each cluster's bar spans them). The page says when it summarises.

The HTML page's timeline is rehearsed: the plan's own executor runs it
without faults on a virtual clock against a simulated copy of the fleet
(as rackform rehearse does, in about a second for a small fleet and ten
for 10,000 servers), from -start (default: when the plan was made), so
that each bar starts when apply would start it: after waiting for its
cluster's maintenance window, at approval gates and pauses (answered
-approve-after after they are reached, at once by default), after waits.
It shades the windows, marks the clusters whose work runs past their
window's close, and states the total against the plan's estimate. A plan
of a format apply no longer runs is drawn on its estimate, and the page
says so.

The text says who signed the plan (the key's fingerprint) or that it is
unsigned. With ` + EnvTrustedKeys + ` set, the signature is checked: a
plan signed by another key, or changed after it was signed, is refused.
The checksum alone detects corruption, not tampering.

Exit status: 0 on success, 1 when the file cannot be read or is refused.`
}

func (c *showCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	fs.BoolVar(&c.json, "json", false, "Print the plan as JSON for policy checks (docs/json.md); same as -format=json.")
	fs.StringVar(&c.format, "format", "text", "Output `FORMAT`: text, markdown, html or json.")
	fs.BoolVar(&c.noColor, "no-color", false, "Never colour the output (also: the NO_COLOR environment variable).")
	c.timeline.add(fs)
	return fs
}

func (c *showCommand) Run(ctx context.Context, args []string) int {
	rest, code, ok := c.operands(c, args, 1, 1, "takes one plan file, got %d arguments")
	if !ok {
		return code
	}
	format := c.format
	if c.json {
		format = "json"
	}
	switch format {
	case "text", "markdown", "html", "json":
	default:
		return c.usage("-format must be text, markdown, html or json, got %q", format)
	}
	start, err := parseStart(c.timeline.start)
	if err == nil && c.timeline.approveAfter < 0 {
		err = fmt.Errorf("-approve-after must not be negative, got %s", c.timeline.approveAfter)
	}
	if err == nil && format != "html" && (c.timeline.start != "" || c.timeline.approveAfter != 0) {
		err = fmt.Errorf("-start and -approve-after set the HTML page's rehearsed timeline: they need -format=html")
	}
	if err != nil {
		return c.usage("%s", err)
	}
	name := rest[0]
	keys, err := trustedKeys(c.Getenv)
	if err != nil {
		return c.fail("%s", err)
	}
	// Reading, decoding and rendering all stop at a signal: the largest
	// plan takes long to render as JSON.
	err, ok = untilDone(ctx, func() error {
		f, p, err := run.ReadPlan(name)
		if err != nil {
			return err
		}
		if len(keys) > 0 && p.SignedBy != "" {
			// A plan signed by an untrusted key, or changed after it was
			// signed, is not rendered as if it were the reviewed one.
			if err := run.Verify(name, f.Bytes, p, keys); err != nil {
				return err
			}
		}
		if err := plan.CheckSteps(p); err != nil {
			return fmt.Errorf("%s is not a usable plan: %w", name, err)
		}
		if err := c.render(ctx, format, p, f.SHA256, keys, start); err != nil {
			return fmt.Errorf("writing the plan: %w", err)
		}
		return nil
	})
	if !ok {
		return c.interrupted("show")
	}
	if err != nil {
		return c.fail("%s", err)
	}
	return ExitOK
}

// render writes p in format on stdout; the HTML page's timeline is
// rehearsed from start (zero: when the plan was made).
func (c *showCommand) render(ctx context.Context, format string, p *plan.Plan, sha string, keys []ed25519.PublicKey, start time.Time) error {
	switch format {
	case "json":
		return planview.WriteJSON(c.Stdout, p, sha)
	case "markdown":
		return planview.WriteMarkdown(c.Stdout, p, sha, planview.MarkdownLimit)
	case "html":
		if start.IsZero() {
			start = p.CreatedAt.UTC()
		}
		cells := planview.PlanCells()
		rehearsedCells(ctx, p, sha, start, c.timeline.approveAfter, &cells)
		return planview.WriteHTMLCells(c.Stdout, p, sha, cells)
	}
	if err := planview.WriteText(c.Stdout, p, c.Color && !c.noColor); err != nil {
		return err
	}
	_, err := fmt.Fprintf(c.Stdout, "\nPlan SHA-256: %s\n%s\n", sha, signatureLine(p, keys))
	return err
}
