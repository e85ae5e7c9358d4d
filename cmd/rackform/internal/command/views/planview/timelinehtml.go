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
	Title string
	Notes []string
	Ticks []htmlTick
	Rows  []htmlRow
	// Now is the style placing the line at the run's present ("" none).
	Now template.CSS
	// Keys are the legend's entries: the bar kinds this timeline draws.
	Keys []htmlKey
}

// htmlKey is one entry of the timeline's legend: a swatch drawn like the
// bar (no text on it) and what it means.
type htmlKey struct {
	Class, Text string
}

type htmlTick struct {
	// Sub is a second line under Label ("" none).
	Label, Sub, Align string
	Style             template.CSS
}

type htmlRow struct {
	ID, Kind, Label string
	Indent          template.CSS
	Bars            []htmlBar
}

type htmlBar struct {
	Kind, ID, State, Title string
	// Instant: a moment, not an interval (drawn as a narrow mark).
	Rehearsed, Instant bool
	Style              template.CSS
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

// calendarAxis returns the axis of a timeline on the calendar: its step
// and end as axis does, and lead, how far before the timeline's start
// the axis begins so that its ticks fall on round times (UTC): multiples
// of the step within a day, midnights from a day up.
func calendarAxis(start time.Time, length time.Duration) (step, end, lead time.Duration) {
	origin := func(step time.Duration) time.Duration {
		return start.Sub(start.Truncate(min(step, 24*time.Hour)))
	}
	step, end = axis(length)
	for range 4 {
		lead = origin(step)
		s, e := axis(length + lead)
		if s == step {
			return step, e, lead
		}
		step, end = s, e
	}
	return step, end, origin(step)
}

// calendarLabel names a tick on the calendar in two short lines, so that
// seven of them fit a narrow track: the time and its weekday within a
// day's steps (an axis of such steps spans at most three days), the date
// and its weekday from a day up.
func calendarLabel(t time.Time, step time.Duration) (label, sub string) {
	t = t.UTC()
	if step < 24*time.Hour {
		return t.Format("15:04"), t.Format("Mon")
	}
	return t.Format("2 Jan"), t.Format("Mon")
}

// drawTimeline places tl's rows and bars in percent of the axis. state
// says a bar's state class from its ID (a run's state: "done",
// "failed", ...); nil, or "" for a bar, draws it as planned. A rehearsed
// bar is never coloured by the run's state. workKeys: the legend keys the
// work's bars (when state colours them all, the grid's legend does).
func drawTimeline(tl Timeline, state func(id string) string, workKeys bool) htmlTimeline {
	step, end := axis(tl.Length)
	var lead time.Duration
	if tl.Calendar {
		step, end, lead = calendarAxis(tl.Start, tl.Length)
	}
	pct := func(d time.Duration) float64 { return min(max(float64(d+lead)/float64(end)*100, 0), 100) }
	out := htmlTimeline{Title: tl.Title, Notes: tl.Notes}
	for t := time.Duration(0); t <= end; t += step {
		align := "middle"
		switch t {
		case 0:
			align = "first"
		case end:
			align = "last"
		}
		label, sub := axisLabel(t), ""
		if tl.Calendar {
			label, sub = calendarLabel(tl.Start.Add(t-lead), step)
		}
		out.Ticks = append(out.Ticks, htmlTick{Label: label, Sub: sub, Align: align, Style: template.CSS(fmt.Sprintf("left: %.3f%%", pct(t-lead)))})
	}
	if tl.Now != nil {
		out.Now = template.CSS(fmt.Sprintf("left: %.3f%%", pct(*tl.Now)))
	}
	kinds := map[string]bool{}
	rehearsed := false
	for _, r := range tl.Rows {
		hr := htmlRow{ID: r.ID, Kind: r.Kind, Label: r.Label, Indent: template.CSS(fmt.Sprintf("padding-left: %.1fem", float64(r.Depth)))}
		for _, b := range r.Bars {
			if b.From+lead >= end {
				continue
			}
			kinds[b.Kind] = true
			rehearsed = rehearsed || b.Rehearsed
			st := "planned"
			if state != nil && b.ID != "" && !b.Rehearsed {
				if s := state(b.ID); s != "" {
					st = s
				}
			}
			left, right := pct(b.From), pct(b.To)
			style := fmt.Sprintf("left: %.3f%%; width: %.3f%%", left, right-left)
			if b.To == b.From {
				style = fmt.Sprintf("left: %.3f%%", left)
			}
			hr.Bars = append(hr.Bars, htmlBar{Kind: b.Kind, ID: b.ID, State: st, Title: b.Title, Rehearsed: b.Rehearsed, Instant: b.To == b.From, Style: template.CSS(style)})
		}
		out.Rows = append(out.Rows, hr)
	}
	for _, k := range timelineKeys {
		// Coloured by a run's state, the work's bars are keyed by the
		// grid's legend.
		if kinds[k.Class] && (workKeys || !k.Work) {
			out.Keys = append(out.Keys, htmlKey{Class: "bar-" + k.Class + " state-planned", Text: k.Text})
		}
	}
	if rehearsed {
		out.Keys = append(out.Keys, htmlKey{Class: "bar-scope state-planned rehearsed", Text: "rehearsed (not happened yet)"})
	}
	return out
}

// timelineKeys are the legend's words for the bar kinds, in its order.
var timelineKeys = []struct {
	Class, Text string
	Work        bool
}{
	{"stage", "stage", true}, {"group", "group", true}, {"cluster", "cluster", true}, {"scope", "rack, batch or control plane", true},
	{"wait", "wait", true}, {"window", "maintenance window", false}, {"window-wait", "waiting for the window", false},
	{"overrun", "past the window's close", false}, {"gate", "approval gate", true}, {"pause", "pause", true}, {"breach", "threshold breached", false},
}
