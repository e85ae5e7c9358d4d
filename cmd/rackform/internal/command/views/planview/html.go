package planview

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// Cells say how the page colours and describes each server and the
// timeline's bars: by what the plan does (PlanCells), or by the state of a
// run (rackform status).
type Cells struct {
	// Title heads the page, before the headline.
	Title string
	// Headline says what the page is about; "" is the plan's summary line.
	Headline string
	// Class is a server's class, a key of Colors.
	Class func(*plan.Server) string
	// Detail is what hovering a server says after its address and role.
	Detail func(*plan.Server) string
	Colors map[string]CellColor
	// Legend lists the classes in the order the legend shows them.
	Legend []string
	// Notices are sentences shown under the headline, such as a cluster
	// waiting for its maintenance window and when it opens.
	Notices []string
	// ClusterNote is a line under a cluster's name in the grid ("" none);
	// nil for none.
	ClusterNote func(cluster string) string
	// BarState is the state class of a timeline bar by its ID (a key of
	// BarColors; "" draws it as planned); nil draws every bar as planned.
	BarState func(id string) string
	// KeepBarKeys keeps the work's bars (stages to racks, waits, gates,
	// pauses) in the timeline's legend though BarState is set: it colours
	// only a few of them (the rest are drawn as planned).
	KeepBarKeys bool
	// TimelineTitle heads the timeline.
	TimelineTitle string
	// Timeline is the timeline the page draws (its Title heads it);
	// nil: the plan's estimate (PlanTimeline) under TimelineTitle.
	Timeline *Timeline
}

// CellColor is a grid cell's background and the colour of its text, a
// pair at least 4.5:1 in contrast (WCAG AA for text).
type CellColor struct {
	Background, Text string
}

// PlanCells colour servers by what the plan does to them.
func PlanCells() Cells {
	return Cells{Title: "rackform plan", Class: CellClass, Detail: ServerDetail, Colors: CellColors,
		Legend:        []string{"upgrade", "at-target", "not-observed", "held-back", "skip"},
		TimelineTitle: "Timeline (estimated, from plan time)"}
}

// WriteHTMLCells renders p as one self-contained HTML page (no network,
// no script or style from elsewhere): the headline, a rack elevation grid
// (each server a cell coloured and described by cells, PlanCells: by what
// the plan does to it; its role marked, details on hover) and a timeline
// of stages, groups, clusters, their maintenance windows, scopes, waits
// and gates on the estimated time axis from plan time, as wide as the
// page. sha is the plan file's SHA-256.
func WriteHTMLCells(w io.Writer, p *plan.Plan, sha string, cells Cells) error {
	return htmlPage.Execute(w, buildHTML(asApplied(p), sha, cells))
}

// CellClass is the grid's class for what the plan does to a server:
// upgrade, at-target, not-observed, held-back or skip.
func CellClass(s *plan.Server) string {
	switch {
	case s.Action == plan.ActionUpgrade:
		return "upgrade"
	case s.Reason == plan.ReasonAtTarget:
		return "at-target"
	case plan.NotObserved(s.Reason):
		return "not-observed"
	case s.Reason == plan.ReasonHeldBack:
		return "held-back"
	}
	return "skip"
}

// CellColors are the plan page's cell colours by class, as CSS rgb(): white
// text on dark backgrounds, dark text on the light one (a server the plan
// leaves alone).
var CellColors = map[string]CellColor{
	"upgrade":      {"rgb(29, 78, 216)", "rgb(255, 255, 255)"},
	"at-target":    {"rgb(21, 128, 61)", "rgb(255, 255, 255)"},
	"not-observed": {"rgb(185, 28, 28)", "rgb(255, 255, 255)"},
	"held-back":    {"rgb(194, 65, 12)", "rgb(255, 255, 255)"},
	"skip":         {"rgb(229, 231, 235)", "rgb(17, 24, 39)"},
}

// BarColors are the timeline bars' colours by a run's state, for a page
// that colours them by one (rackform status).
var BarColors = map[string]string{
	"not-started": "rgb(209, 213, 219)",
	"running":     "rgb(29, 78, 216)",
	"done":        "rgb(21, 128, 61)",
	"failed":      "rgb(185, 28, 28)",
	"waiting":     "rgb(217, 119, 6)",
	"skipped":     "rgb(75, 85, 99)",
	"stopped":     "rgb(194, 65, 12)",
}

var roleMark = map[string]string{
	"control_plane":       "CP",
	"control_plane_spare": "SP",
	"management":          "M",
	"compute":             "C",
}

// kindMark marks a device's cell by its kind (its role is "device").
var kindMark = map[string]string{
	"switch_tray":               "SW",
	"switch_blade":              "SW",
	"power_shelf":               "PS",
	"chassis_controller":        "CC",
	"enclosure_controller":      "EC",
	"cooling_distribution_unit": "CDU",
}

type htmlCell struct {
	Address, Name, Class, Role, Mark, Title string
	// Critical: upgraded although its BMC reports health Critical.
	Critical bool
	// Count is how many servers a summary cell stands for (0: one
	// server's cell).
	Count int
}

// htmlCritical is a server upgraded although Critical, with its reason.
type htmlCritical struct {
	Address, Reason string
}

type htmlRack struct {
	Name  string
	Cells []htmlCell
}

type htmlCluster struct {
	Name  string
	Racks []*htmlRack
	// Release is the chosen release and why, when a channel or the
	// catalog decided it; Pending is set when it waits for its site.
	Release string
	Pending bool
	// Note is the page's word on the cluster (a run waiting for its
	// window), "" none.
	Note string
}

type htmlData struct {
	Title, Headline, Meta string
	Notices               []string
	// CriticalTitle and Critical list the servers upgraded although
	// Critical, first of all (rule 50).
	CriticalTitle string
	Critical      []htmlCritical
	Colors        map[string]CellColor
	BarColors     map[string]string
	Legend        []string
	Clusters      []*htmlCluster
	Timeline      htmlTimeline
}

func buildHTML(p *plan.Plan, sha string, cells Cells) htmlData {
	d := htmlData{Title: cells.Title, Headline: cells.Headline, Notices: cells.Notices, Colors: cells.Colors, BarColors: BarColors,
		Legend: cells.Legend}
	if d.Headline == "" {
		d.Headline = SummaryLine(p)
	}
	d.Meta = fmt.Sprintf("Rollout %s, scope %s, created %s, valid until %s.", p.Run.Name, p.Run.Scope,
		p.CreatedAt.UTC().Format(time.RFC3339), p.NotAfter.UTC().Format(time.RFC3339))
	if name := strings.Trim(ConfigName(p.Config.Dir), "`"); name != "" {
		d.Meta += " Configuration " + name + "."
	}
	if sha != "" {
		d.Meta += " Plan SHA-256 " + sha + "."
	}

	if crit := UpgradedCritical(p); len(crit) > 0 {
		d.CriticalTitle = CriticalTitle(len(crit)) + "."
		for _, s := range crit {
			d.Critical = append(d.Critical, htmlCritical{Address: s.Address, Reason: s.UpgradeWhenCritical.Reason})
		}
	}

	// The grid: clusters, racks and servers in the plan's server order.
	clusters := map[string]*htmlCluster{}
	choices := map[string]ReleaseLine{}
	for _, l := range Releases(p) {
		choices[l.Cluster] = l
	}
	racks := map[string]*htmlRack{}
	for i := range p.Servers {
		s := &p.Servers[i]
		c := clusters[s.Cluster]
		if c == nil {
			c = &htmlCluster{Name: s.Cluster}
			if l, ok := choices[s.Cluster]; ok {
				c.Release, c.Pending = l.Text(), l.Choice.Pending != ""
			}
			if cells.ClusterNote != nil {
				c.Note = cells.ClusterNote(s.Cluster)
			}
			clusters[s.Cluster] = c
			d.Clusters = append(d.Clusters, c)
		}
		r := racks[s.Cluster+"/"+s.Rack]
		if r == nil {
			r = &htmlRack{Name: s.Rack}
			racks[s.Cluster+"/"+s.Rack] = r
			c.Racks = append(c.Racks, r)
		}
		mark, title := roleMark[s.Role], fmt.Sprintf("%s (%s): %s", s.Address, strings.ReplaceAll(s.Role, "_", " "), cells.Detail(s))
		if s.IsDevice() {
			// Named by its kind, said once (the plan's detail starts with it).
			kind := KindText(s)
			mark, title = kindMark[s.Kind], fmt.Sprintf("%s (%s): %s", s.Address, kind, strings.TrimPrefix(cells.Detail(s), kind+": "))
		}
		cell := htmlCell{Address: s.Address, Name: s.Name, Class: cells.Class(s), Role: s.Role, Mark: mark, Title: title}
		if s.Action == plan.ActionUpgrade && s.UpgradeWhenCritical != nil {
			cell.Critical = true
			cell.Title += "; upgraded although its BMC reports health Critical: " + s.UpgradeWhenCritical.Reason
		}
		r.Cells = append(r.Cells, cell)
	}
	if note := summariseGrid(d.Clusters, len(p.Servers), len(racks), cells.Legend); note != "" {
		d.Notices = append(d.Notices, note)
	}
	tl := cells.Timeline
	if tl == nil {
		plan := PlanTimeline(p)
		plan.Title = cells.TimelineTitle
		tl = &plan
	}
	d.Timeline = drawTimeline(summariseTimeline(*tl, cells.BarState), cells.BarState, cells.BarState == nil || cells.KeepBarKeys)
	if d.Timeline.Title == "" {
		d.Timeline.Title = "Timeline"
	}
	return d
}

var htmlPage = template.Must(template.New("plan").Funcs(template.FuncMap{
	"css": func(s string) template.CSS { return template.CSS(s) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}: {{.Headline}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: rgb(17, 24, 39); background: rgb(255, 255, 255); }
h1 { font-size: 1.2em; } h2 { font-size: 1.05em; margin-top: 1.5em; }
.meta { color: rgb(75, 85, 99); font-size: 0.9em; overflow-wrap: anywhere; }
.notice { border-left: 4px solid rgb(217, 119, 6); padding: 0.3em 0.6em; background: rgb(255, 251, 235); }
.critical { border: 2px solid rgb(185, 28, 28); padding: 0.3em 0.8em; background: rgb(254, 242, 242); }
.critical h2 { margin-top: 0.3em; color: rgb(153, 27, 27); } .cell.critical-cell { outline: 3px solid rgb(185, 28, 28); outline-offset: 1px; }
.legend span { display: inline-block; padding: 2px 8px; margin: 0 6px 4px 0; border-radius: 3px; font-size: 0.85em; }
.cluster { margin: 1em 0; } .cluster h3 { font-size: 0.95em; margin: 0.3em 0; }
.racks { display: flex; flex-wrap: wrap; gap: 10px; align-items: flex-start; }
.rack { border: 2px solid rgb(55, 65, 81); border-radius: 4px; padding: 4px; background: rgb(243, 244, 246); min-width: 90px; }
.rack .name { font-weight: bold; font-size: 0.8em; text-align: center; margin-bottom: 3px; }
.cell { font-size: 0.75em; padding: 3px 5px; margin: 2px 0; border-radius: 2px; white-space: nowrap; border: 1px solid rgb(107, 114, 128); }
.cell .mark { float: right; font-weight: bold; margin-left: 6px; }
.release, .note { font-size: 0.85em; color: rgb(55, 65, 81); margin: 0.2em 0; } .release.pending, .note { color: rgb(180, 83, 9); font-weight: bold; }
{{range $k, $v := .Colors}}.cell.{{$k}}, .legend .{{$k}} { background: {{css $v.Background}}; color: {{css $v.Text}}; }
{{end}}#timeline { display: grid; grid-template-columns: minmax(9em, max-content) minmax(0, 1fr); column-gap: 0.75em; row-gap: 2px; font-size: 12px; }
#timeline .tl-row { display: contents; }
.tl-label { max-width: 24em; overflow-wrap: anywhere; padding: 1px 0; line-height: 1.3; }
.tl-row.stage .tl-label { font-weight: bold; margin-top: 0.4em; }
.tl-track { position: relative; min-height: 16px; border-left: 1px solid rgb(156, 163, 175); }
.tl-row.axis .tl-track { border-bottom: 1px solid rgb(156, 163, 175); min-height: 18px; }
.tick { position: absolute; top: 0; font-size: 11px; line-height: 13px; white-space: nowrap; transform: translateX(-50%); }
.tl-row.axis .tl-track:has(br) { min-height: 28px; }
.tick.first { transform: none; } .tick.last { transform: translateX(-100%); }
.bar { position: absolute; top: 3px; bottom: 3px; min-width: 2px; border-radius: 2px; }
.bar-stage.state-planned { background: rgb(156, 163, 175); } .bar-group.state-planned { background: rgb(165, 180, 252); }
.bar-cluster.state-planned { background: rgb(147, 197, 253); } .bar-scope.state-planned { background: rgb(29, 78, 216); }
.bar-wait.state-planned { background: rgb(251, 191, 36); } .bar-window { background: rgb(134, 239, 172); top: 1px; bottom: 1px; }
.bar-gate, .bar-pause, .bar-breach { min-width: 4px; } .bar-gate.state-planned, .bar-pause.state-planned { background: rgb(185, 28, 28); }
.bar.instant { width: 4px; transform: translateX(-50%); }
.bar-window-wait { background: repeating-linear-gradient(135deg, rgb(217, 119, 6) 0 3px, rgb(254, 243, 199) 3px 6px); }
.bar-overrun { top: auto; bottom: 0; height: 5px; background: rgb(126, 34, 206); }
.bar-breach { top: 0; bottom: 0; background: rgb(17, 24, 39); }
{{range $k, $v := .BarColors}}.bar.state-{{$k}} { background: {{css $v}}; }
{{end}}.bar.rehearsed { background-image: repeating-linear-gradient(135deg, rgba(255, 255, 255, 0.55) 0 3px, rgba(255, 255, 255, 0) 3px 6px); }
.now { position: absolute; top: 0; bottom: 0; width: 2px; background: rgb(17, 24, 39); transform: translateX(-50%); }
.tl-notes p { margin: 0.2em 0; max-width: 70em; }
.tl-keys { font-size: 0.85em; } .tl-keys span.key { margin-right: 1em; white-space: nowrap; }
.tl-keys .swatch.bar { display: inline-block; position: relative; top: 0; bottom: 0; width: 18px; height: 10px; margin-right: 4px; vertical-align: middle; transform: none; }
.tl-keys .swatch.bar-overrun { height: 5px; } .tl-keys .swatch.bar-gate, .tl-keys .swatch.bar-pause, .tl-keys .swatch.bar-breach { width: 4px; }
</style>
</head>
<body>
<h1>{{.Title}}: {{.Headline}}</h1>
<p class="meta">{{.Meta}}</p>
{{if .Critical}}<section class="critical" id="upgraded-although-critical"><h2>Upgraded although Critical</h2>
<p>{{.CriticalTitle}}</p>
<ul>{{range .Critical}}<li data-server="{{.Address}}"><strong>{{.Address}}</strong>: {{.Reason}}</li>{{end}}</ul>
<p>Outlined in red in the racks below.</p></section>
{{end}}{{range .Notices}}<p class="notice">{{.}}</p>
{{end}}<p class="legend">{{range .Legend}}<span class="{{.}}">{{.}}</span>{{end}} CP control plane, SP spare, M management, C compute</p>
<h2>Racks</h2>
<div id="grid">
{{range .Clusters}}<div class="cluster" data-cluster="{{.Name}}"><h3>cluster {{.Name}}</h3>{{if .Release}}<p class="release{{if .Pending}} pending{{end}}">{{.Release}}</p>{{end}}{{if .Note}}<p class="note">{{.Note}}</p>{{end}}<div class="racks">
{{range .Racks}}<div class="rack" data-rack="{{.Name}}"><div class="name">{{.Name}}</div>
{{range .Cells}}{{if .Count}}<div class="cell {{.Class}}" data-count="{{.Count}}" data-state="{{.Class}}" title="{{.Title}}">{{.Name}}</div>
{{else}}<div class="cell {{.Class}}{{if .Critical}} critical-cell{{end}}" data-server="{{.Address}}" data-state="{{.Class}}" data-role="{{.Role}}" title="{{.Title}}">{{.Name}}<span class="mark">{{.Mark}}</span></div>
{{end}}{{end}}</div>
{{end}}</div></div>
{{end}}</div>
<h2>{{.Timeline.Title}}</h2>
{{with .Timeline.Notes}}<div class="tl-notes">{{range .}}<p>{{.}}</p>
{{end}}</div>
{{end}}{{with .Timeline.Keys}}<p class="tl-keys">{{range .}}<span class="key"><span class="swatch bar {{.Class}}"></span>{{.Text}}</span> {{end}}</p>
{{end}}<div id="timeline">
<div class="tl-row axis"><div class="tl-label"></div><div class="tl-track">{{range .Timeline.Ticks}}<span class="tick {{.Align}}" style="{{.Style}}">{{.Label}}{{with .Sub}}<br>{{.}}{{end}}</span>{{end}}</div></div>
{{range .Timeline.Rows}}<div class="tl-row {{.Kind}}" data-row="{{.ID}}" data-kind="{{.Kind}}"><div class="tl-label" style="{{.Indent}}">{{.Label}}</div><div class="tl-track">{{range .Bars}}<span class="bar bar-{{.Kind}} state-{{.State}}{{if .Rehearsed}} rehearsed{{end}}{{if .Instant}} instant{{end}}" data-kind="{{.Kind}}" data-id="{{.ID}}" data-state="{{.State}}" style="{{.Style}}" title="{{.Title}}"></span>{{end}}{{with $.Timeline.Now}}<span class="now" style="{{.}}"></span>{{end}}</div></div>
{{end}}</div>
</body>
</html>
`))
