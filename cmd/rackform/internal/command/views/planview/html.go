package planview

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// WriteHTML renders p as one self-contained HTML page (no network, no
// script or style from elsewhere): the headline, a rack elevation grid
// (each server a cell coloured by what the plan does to it, its role
// marked, details on hover) and a timeline of stages, clusters, scopes,
// waits and gates on the estimated time axis from plan time, with the
// clusters' maintenance windows shaded. sha is the plan file's SHA-256.
func WriteHTML(w io.Writer, p *plan.Plan, sha string) error {
	return WriteHTMLCells(w, p, sha, PlanCells())
}

// Cells say how the grid colours and describes each server: by what the
// plan does to it (PlanCells), or by the state of a run (rackform status).
type Cells struct {
	// Title heads the page, before the plan's headline.
	Title string
	// Class is a server's class, a key of Colors.
	Class func(*plan.Server) string
	// Detail is what hovering a server says after its address and role.
	Detail func(*plan.Server) string
	Colors map[string]string
	// Legend lists the classes in the order the legend shows them.
	Legend []string
}

// PlanCells colour servers by what the plan does to them.
func PlanCells() Cells {
	return Cells{Title: "rackform plan", Class: CellClass, Detail: ServerDetail, Colors: CellColors,
		Legend: []string{"upgrade", "at-target", "not-observed", "held-back", "skip"}}
}

// WriteHTMLCells is WriteHTML with the grid's cells coloured by cells.
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

// CellColors are the cells' background colours by class, as CSS rgb().
var CellColors = map[string]string{
	"upgrade":      "rgb(37, 99, 235)",
	"at-target":    "rgb(22, 163, 74)",
	"not-observed": "rgb(220, 38, 38)",
	"held-back":    "rgb(234, 88, 12)",
	"skip":         "rgb(156, 163, 175)",
}

var roleMark = map[string]string{
	"control_plane":       "CP",
	"control_plane_spare": "SP",
	"management":          "M",
	"compute":             "C",
}

type htmlCell struct {
	Address, Name, Class, Role, Mark, Title string
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
}

type htmlBar struct {
	Kind, Label, Title string
	X, W, Y            float64
}

type htmlData struct {
	Title, Headline, Meta string
	Colors                map[string]string
	Legend                []string
	Clusters              []*htmlCluster
	Bars                  []htmlBar
	Ticks                 []htmlBar
	Width, Height         float64
}

func buildHTML(p *plan.Plan, sha string, cells Cells) htmlData {
	d := htmlData{Title: cells.Title, Headline: SummaryLine(p.Summary), Colors: cells.Colors, Legend: cells.Legend}
	d.Meta = fmt.Sprintf("Rollout %s, scope %s, created %s, valid until %s.", p.Run.Name, p.Run.Scope,
		p.CreatedAt.UTC().Format(time.RFC3339), p.NotAfter.UTC().Format(time.RFC3339))
	if name := strings.Trim(ConfigName(p.Config.Dir), "`"); name != "" {
		d.Meta += " Configuration " + name + "."
	}
	if sha != "" {
		d.Meta += " Plan SHA-256 " + sha + "."
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
			clusters[s.Cluster] = c
			d.Clusters = append(d.Clusters, c)
		}
		r := racks[s.Cluster+"/"+s.Rack]
		if r == nil {
			r = &htmlRack{Name: s.Rack}
			racks[s.Cluster+"/"+s.Rack] = r
			c.Racks = append(c.Racks, r)
		}
		mark := roleMark[s.Role]
		r.Cells = append(r.Cells, htmlCell{Address: s.Address, Name: s.Name, Class: cells.Class(s), Role: s.Role, Mark: mark,
			Title: fmt.Sprintf("%s (%s): %s", s.Address, strings.ReplaceAll(s.Role, "_", " "), cells.Detail(s))})
	}

	// The timeline: stages in turn, the groups of a stage side by side
	// (one lane each), clusters of a group in turn, scopes of a cluster in
	// turn with their waits; gates at the stage's edge.
	const pxPerHour, lane, left = 60.0, 22.0, 8.0
	x := func(t time.Duration) float64 { return left + t.Hours()*pxPerHour }
	var at time.Duration
	y := 30.0
	for _, st := range p.Run.Stages {
		for _, g := range st.Gates {
			if g.When == "before" {
				d.Bars = append(d.Bars, htmlBar{Kind: "gate", Label: "gate " + g.Name, Title: "approval gate " + g.ID + " before stage " + st.Name, X: x(at), Y: y})
			}
		}
		stageStart, longest := at, time.Duration(0)
		top := y
		for _, g := range st.Groups {
			gt := stageStart
			for ci := range g.Clusters {
				c := &g.Clusters[ci]
				for _, iv := range c.Windows {
					from, to := iv.Start.Sub(p.CreatedAt), iv.End.Sub(p.CreatedAt)
					d.Bars = append(d.Bars, htmlBar{Kind: "window", Title: "maintenance window of " + c.Name + ": " + timeText(iv.Start) + " – " + timeText(iv.End), X: x(max(from, 0)), W: x(to) - x(max(from, 0)), Y: y})
				}
				d.Bars = append(d.Bars, htmlBar{Kind: "cluster", Label: c.Name, Title: fmt.Sprintf("cluster %s (stage %s, group %s): ~%s", c.Name, st.Name, g.Name, Duration(c.Estimate)), X: x(gt), W: x(gt+time.Duration(c.Estimate)) - x(gt), Y: y})
				y += lane
				ct := gt
				for _, ph := range c.Phases {
					for _, sc := range ph.Scopes {
						est, wait := time.Duration(sc.Estimate)-time.Duration(sc.WaitAfter), time.Duration(sc.WaitAfter)
						if est < 0 {
							est, wait = time.Duration(sc.Estimate), 0
						}
						d.Bars = append(d.Bars, htmlBar{Kind: "scope", Label: ScopeTitle(&sc), Title: fmt.Sprintf("%s › %s: ~%s; %s", PhaseTitle(&ph), ScopeTitle(&sc), Duration(sc.Estimate), ScopeRule(&sc)), X: x(ct), W: max(x(ct+est)-x(ct), 2), Y: y})
						ct += est
						if wait > 0 {
							d.Bars = append(d.Bars, htmlBar{Kind: "wait", Label: "wait", Title: "wait " + Duration(sc.WaitAfter) + " after " + ScopeTitle(&sc), X: x(ct), W: x(ct+wait) - x(ct), Y: y})
							ct += wait
						}
						if sc.PauseAfter {
							d.Bars = append(d.Bars, htmlBar{Kind: "gate", Label: "pause", Title: "pause after " + ScopeTitle(&sc) + " until rackform continue", X: x(ct), Y: y})
						}
					}
				}
				y += lane
				gt += time.Duration(c.Estimate)
			}
			longest = max(longest, gt-stageStart)
		}
		d.Bars = append(d.Bars, htmlBar{Kind: "stage", Label: "stage " + st.Name, Title: fmt.Sprintf("stage %s: ~%s", st.Name, Duration(plan.Duration(longest))), X: x(stageStart), W: max(x(stageStart+longest)-x(stageStart), 2), Y: top - lane})
		at = stageStart + longest
		if st.AfterWait > 0 {
			d.Bars = append(d.Bars, htmlBar{Kind: "wait", Label: "wait", Title: "wait " + Duration(st.AfterWait) + " after stage " + st.Name, X: x(at), W: x(at+time.Duration(st.AfterWait)) - x(at), Y: top - lane})
			at += time.Duration(st.AfterWait)
		}
		for _, g := range st.Gates {
			if g.When != "before" {
				d.Bars = append(d.Bars, htmlBar{Kind: "gate", Label: "gate " + g.Name, Title: "approval gate " + g.ID + " after stage " + st.Name, X: x(at), Y: top - lane})
			}
		}
		y += lane
	}
	hours := int(at.Hours()) + 1
	for h := 0; h <= hours; h++ {
		d.Ticks = append(d.Ticks, htmlBar{Label: fmt.Sprintf("%dh", h), X: x(time.Duration(h) * time.Hour)})
	}
	d.Width = x(time.Duration(hours)*time.Hour) + 80
	d.Height = y + 10
	for i := range d.Bars {
		if d.Bars[i].Kind == "window" {
			d.Bars[i].W = min(d.Bars[i].W, d.Width-d.Bars[i].X)
		}
	}
	return d
}

var htmlPage = template.Must(template.New("plan").Funcs(template.FuncMap{
	"css": func(s string) template.CSS { return template.CSS(s) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}: {{.Headline}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #111827; background: #ffffff; }
h1 { font-size: 1.2em; } h2 { font-size: 1.05em; margin-top: 1.5em; }
.meta { color: #4b5563; font-size: 0.9em; }
.legend span { display: inline-block; padding: 2px 8px; margin-right: 6px; color: #fff; border-radius: 3px; font-size: 0.85em; }
.cluster { margin: 1em 0; } .cluster h3 { font-size: 0.95em; margin: 0.3em 0; }
.racks { display: flex; flex-wrap: wrap; gap: 10px; align-items: flex-start; }
.rack { border: 2px solid #374151; border-radius: 4px; padding: 4px; background: #f3f4f6; min-width: 90px; }
.rack .name { font-weight: bold; font-size: 0.8em; text-align: center; margin-bottom: 3px; }
.cell { color: #fff; font-size: 0.75em; padding: 3px 5px; margin: 2px 0; border-radius: 2px; white-space: nowrap; }
.cell .mark { float: right; font-weight: bold; margin-left: 6px; }
.release { font-size: 0.85em; color: #374151; margin: 0.2em 0; } .release.pending { color: #b45309; font-weight: bold; }
{{range $k, $v := .Colors}}.cell.{{$k}}, .legend .{{$k}} { background: {{css $v}}; }
{{end}}svg text { font-size: 11px; fill: #111827; }
.bar-stage { fill: #e5e7eb; } .bar-cluster { fill: #93c5fd; } .bar-scope { fill: #2563eb; stroke: #ffffff; }
.bar-wait { fill: #fbbf24; } .bar-window { fill: #bbf7d0; opacity: 0.6; } .bar-gate { fill: #dc2626; }
</style>
</head>
<body>
<h1>{{.Title}}: {{.Headline}}</h1>
<p class="meta">{{.Meta}}</p>
<p class="legend">{{range .Legend}}<span class="{{.}}">{{.}}</span>{{end}} CP control plane, SP spare, M management, C compute</p>
<h2>Racks</h2>
<div id="grid">
{{range .Clusters}}<div class="cluster" data-cluster="{{.Name}}"><h3>cluster {{.Name}}</h3>{{if .Release}}<p class="release{{if .Pending}} pending{{end}}">{{.Release}}</p>{{end}}<div class="racks">
{{range .Racks}}<div class="rack" data-rack="{{.Name}}"><div class="name">{{.Name}}</div>
{{range .Cells}}<div class="cell {{.Class}}" data-server="{{.Address}}" data-state="{{.Class}}" data-role="{{.Role}}" title="{{.Title}}">{{.Name}}<span class="mark">{{.Mark}}</span></div>
{{end}}</div>
{{end}}</div></div>
{{end}}</div>
<h2>Timeline (estimated, from plan time; windows shaded)</h2>
<svg id="timeline" width="{{.Width}}" height="{{.Height}}">
{{range .Ticks}}<line x1="{{.X}}" x2="{{.X}}" y1="0" y2="{{$.Height}}" stroke="#e5e7eb"/><text x="{{.X}}" y="12">{{.Label}}</text>
{{end}}{{range .Bars}}{{if eq .Kind "gate"}}<rect class="bar-gate" data-kind="gate" x="{{.X}}" y="{{.Y}}" width="4" height="18"><title>{{.Title}}</title></rect><text x="{{.X}}" y="{{.Y}}" dx="6" dy="13">{{.Label}}</text>
{{else if eq .Kind "window"}}<rect class="bar-window" data-kind="window" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="40"><title>{{.Title}}</title></rect>
{{else}}<rect class="bar-{{.Kind}}" data-kind="{{.Kind}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="18"><title>{{.Title}}</title></rect><text x="{{.X}}" y="{{.Y}}" dx="3" dy="13">{{.Label}}</text>
{{end}}{{end}}</svg>
</body>
</html>
`))
