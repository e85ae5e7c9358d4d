package config

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	// Embedded so window time zones resolve the same on every machine,
	// including minimal CI images without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// Window recurrences.
const (
	RecurNone   = "none"
	RecurDaily  = "daily"
	RecurWeekly = "weekly"
)

// MaintenanceWindow is a time span, possibly recurring, in which clusters
// (or servers) may start upgrading. It gates only starts (rule 20).
type MaintenanceWindow struct {
	Name string
	// Start is the first opening, in Location.
	Start    time.Time
	Duration time.Duration
	// Recurrence is "none", "daily" or "weekly". Recurring windows keep
	// the wall-clock start time in Location across DST changes.
	Recurrence string
	Location   *time.Location
	DeclRange  hcl.Range
}

// WindowState is a window's state at an instant.
type WindowState struct {
	Open bool
	// OpensAt is when the window opens next (now's opening when Open);
	// zero when it never opens again.
	OpensAt time.Time
	// ClosesAt is when the current (Open) or next opening closes; zero
	// when it never opens again.
	ClosesAt time.Time
}

// At returns the window's state at now.
func (w *MaintenanceWindow) At(now time.Time) WindowState {
	now = now.In(w.Location)
	start := w.Start
	if w.Recurrence != RecurNone && now.After(start) {
		// Step back to the latest occurrence at or before now, then
		// consider it and the next one.
		start = w.occurrenceAtOrBefore(now)
	}
	for i := 0; i < 2; i++ {
		end := start.Add(w.Duration)
		if !now.Before(start) && now.Before(end) {
			return WindowState{Open: true, OpensAt: start, ClosesAt: end}
		}
		if now.Before(start) {
			return WindowState{OpensAt: start, ClosesAt: end}
		}
		if w.Recurrence == RecurNone {
			return WindowState{}
		}
		start = w.next(start)
	}
	return WindowState{}
}

func (w *MaintenanceWindow) step() (days int) {
	if w.Recurrence == RecurWeekly {
		return 7
	}
	return 1
}

// next is the occurrence after t, same wall clock in Location.
func (w *MaintenanceWindow) next(t time.Time) time.Time {
	return t.AddDate(0, 0, w.step())
}

func (w *MaintenanceWindow) occurrenceAtOrBefore(now time.Time) time.Time {
	days := int(now.Sub(w.Start).Hours()/24) / w.step() * w.step()
	t := w.Start.AddDate(0, 0, days)
	for t.After(now) {
		t = t.AddDate(0, 0, -w.step())
	}
	for w.next(t).Before(now) || w.next(t).Equal(now) {
		t = w.next(t)
	}
	return t
}

// WindowPriority orders clusters whose turn it is (rule 20):
// lower values go first.
type WindowPriority int

// Window priorities, best first.
const (
	WindowOpenNow WindowPriority = iota
	WindowOpeningSoon
	WindowNone
	WindowClosed
)

// SoonHorizon is how far ahead an opening counts as "opening soon".
const SoonHorizon = 4 * time.Hour

func (p WindowPriority) String() string {
	switch p {
	case WindowOpenNow:
		return "open"
	case WindowOpeningSoon:
		return "opening within 4h"
	case WindowNone:
		return "no window"
	}
	return "closed"
}

// Priority returns w's priority at now; a nil window is WindowNone.
func (w *MaintenanceWindow) Priority(now time.Time) WindowPriority {
	if w == nil {
		return WindowNone
	}
	st := w.At(now)
	switch {
	case st.Open:
		return WindowOpenNow
	case !st.OpensAt.IsZero() && st.OpensAt.Sub(now) <= SoonHorizon:
		return WindowOpeningSoon
	}
	return WindowClosed
}

var windowSchema = &hcl.BodySchema{
	Attributes: append(required("start", "duration"), optional("recurrence", "timezone")...),
}

func (s *loadState) decodeWindow(b *hcl.Block, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := b.Body.Content(windowSchema)
	a := s.attrs(content.Attributes, ctx, &diags)
	w := &MaintenanceWindow{Name: b.Labels[0], DeclRange: b.DefRange, Location: time.UTC}
	w.Recurrence = a.oneOf("recurrence", RecurNone, RecurNone, RecurDaily, RecurWeekly)
	if tz, ok := a.str("timezone"); ok {
		loc, err := time.LoadLocation(tz)
		if err != nil || tz == "" || tz == "Local" {
			a.errorf(a.rng("timezone", b.DefRange), "Invalid time zone",
				"%q is not an IANA time zone name such as \"UTC\" or \"Europe/Berlin\".", tz)
		} else {
			w.Location = loc
		}
	}
	if start, ok := a.str("start"); ok {
		t, err := time.Parse(time.RFC3339, start)
		if err != nil {
			a.errorf(a.rng("start", b.DefRange), "Invalid window start",
				"%q is not an RFC 3339 time such as \"2026-07-01T22:00:00Z\" or \"2026-07-01T22:00:00+02:00\".", start)
		} else {
			w.Start = t.In(w.Location)
		}
	}
	w.Duration = a.duration("duration", 0)
	if at := content.Attributes["duration"]; at != nil && w.Duration == 0 && !diags.HasErrors() {
		a.errorf(at.Expr.Range(), "Invalid duration", "A maintenance window must last longer than zero.")
	}
	if w.Recurrence == RecurDaily && w.Duration > 24*time.Hour || w.Recurrence == RecurWeekly && w.Duration > 7*24*time.Hour {
		a.errorf(a.rng("duration", b.DefRange), "Invalid duration",
			"A %s window lasting %s would overlap its next opening.", w.Recurrence, w.Duration)
	}
	s.windows[w.Name] = w
	s.setObject(kindMaintenanceWindow, w.Name, map[string]cty.Value{})
	return diags
}

// String describes the window for messages.
func (w *MaintenanceWindow) String() string {
	return fmt.Sprintf("%s (%s, %s, %s)", w.Name, w.Start.Format(time.RFC3339), w.Duration, w.Recurrence)
}
