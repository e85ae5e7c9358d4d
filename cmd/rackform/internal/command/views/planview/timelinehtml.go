package planview

import (
	"fmt"
	"html/template"
	"time"
)

// Drawing a Timeline: HTML and CSS only, positions in percent of the
// track, so the timeline takes the page's width whatever the plan's size
// or length (no pixels per hour). Each row's label is in a column of its
// own and bars carry no text, so no label can overlap or clip another;
// the axis has at most maxTicks intervals at a round step, its first and
// last labels kept inside the track.

// maxTicks is the most intervals the axis is divided into: with the track
// at least 400 px wide, labels such as "1d 12h" stay apart.
const maxTicks = 6

// tickSteps are the axis's round steps, smallest first.
var tickSteps = []time.Duration{
	5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 3 * 24 * time.Hour, 7 * 24 * time.Hour,
	14 * 24 * time.Hour, 28 * 24 * time.Hour, 91 * 24 * time.Hour, 364 * 24 * time.Hour,
}

type htmlTimeline struct {
	Ticks []htmlTick
	Rows  []htmlRow
}

type htmlTick struct {
	Label, Align string
	Style        template.CSS
}

type htmlRow struct {
	ID, Kind, Label string
	Indent          template.CSS
	Bars            []htmlBar
}

type htmlBar struct {
	Kind, ID, State, Title string
	Style                  template.CSS
}

// axis returns the axis's step and end for a timeline of length d: the
// smallest round step that divides it into at most maxTicks intervals.
func axis(d time.Duration) (step, end time.Duration) {
	for _, step = range tickSteps {
		if n := (d + step - 1) / step; n <= maxTicks {
			return step, max(n, 1) * step
		}
	}
	n := (d + step - 1) / step
	return step, max(n, 1) * step
}

// axisLabel names an offset on the axis: "0", "45m", "6h", "1d 6h".
func axisLabel(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	out := ""
	for _, p := range []struct {
		n    int
		unit string
	}{{days, "d"}, {hours, "h"}, {mins, "m"}} {
		if p.n > 0 {
			if out != "" {
				out += " "
			}
			out += fmt.Sprintf("%d%s", p.n, p.unit)
		}
	}
	return out
}

// drawTimeline places tl's rows and bars in percent of the axis. state
// says a bar's state class from its ID (a run's state: "done",
// "failed", ...); nil, or "" for a bar, draws it as planned.
func drawTimeline(tl Timeline, state func(id string) string) htmlTimeline {
	step, end := axis(tl.Length)
	pct := func(d time.Duration) float64 { return min(max(float64(d)/float64(end)*100, 0), 100) }
	var out htmlTimeline
	for t := time.Duration(0); t <= end; t += step {
		align := "middle"
		switch t {
		case 0:
			align = "first"
		case end:
			align = "last"
		}
		out.Ticks = append(out.Ticks, htmlTick{Label: axisLabel(t), Align: align, Style: template.CSS(fmt.Sprintf("left: %.3f%%", pct(t)))})
	}
	for _, r := range tl.Rows {
		hr := htmlRow{ID: r.ID, Kind: r.Kind, Label: r.Label, Indent: template.CSS(fmt.Sprintf("padding-left: %.1fem", float64(r.Depth)))}
		for _, b := range r.Bars {
			if b.From >= end {
				continue
			}
			st := "planned"
			if state != nil && b.ID != "" {
				if s := state(b.ID); s != "" {
					st = s
				}
			}
			left, right := pct(b.From), pct(b.To)
			style := fmt.Sprintf("left: %.3f%%; width: %.3f%%", left, right-left)
			if b.To == b.From {
				style = fmt.Sprintf("left: %.3f%%", left)
			}
			hr.Bars = append(hr.Bars, htmlBar{Kind: b.Kind, ID: b.ID, State: st, Title: b.Title, Style: template.CSS(style)})
		}
		out.Rows = append(out.Rows, hr)
	}
	return out
}
