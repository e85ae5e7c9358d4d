package applyview

import (
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
)

// The live view: on a terminal, a block of per-scope bars and the servers
// in flight, redrawn in place (cursor moved back up over what it drew).

// redraw draws the live block again, unless the run ended.
func (v *View) redraw() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.closed && !v.ended {
		v.draw(v.opts.Now())
	}
}

// SetWidth sets the terminal's width after a resize and redraws the live
// view at it. The rows already on screen were counted at the old width;
// they are erased by that count, which is what the terminal showed before
// it reflowed (the next picture is then exact).
func (v *View) SetWidth(cols int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if cols == v.opts.Width {
		return
	}
	v.opts.Width = cols
	if v.opts.Live && !v.closed && !v.ended {
		v.draw(v.opts.Now())
	}
}

// clear erases the live block so log lines can be printed above it.
func (v *View) clear() {
	if v.drawn > 0 {
		fmt.Fprintf(v.w, "\x1b[%dA\x1b[J", v.drawn)
		v.drawn = 0
	}
}

const barWidth = 20

// draw redraws the live block at now.
func (v *View) draw(now time.Time) {
	var b strings.Builder
	elapsed := time.Duration(0)
	if !v.start.IsZero() {
		elapsed = v.etaTime(now).Sub(v.origin())
	}
	eta, _ := v.eta(v.etaTime(now))
	fmt.Fprintf(&b, "plan %s  elapsed %s  ETA %s\n", plan.ShortSHA(v.sha), clock(elapsed), human(eta))
	var shown []*row
	done, waiting := 0, 0
	for _, r := range v.rows {
		switch {
		case r.state.Name == executor.NotStarted:
			waiting++
		case r.state.Name.Terminal() && r.state.Name != executor.Failed:
			done++
			if len(v.rows) <= v.opts.MaxRows {
				shown = append(shown, r)
			}
		default:
			shown = append(shown, r)
		}
	}
	if len(v.rows) <= v.opts.MaxRows {
		shown = shown[:0]
		shown = append(shown, v.rows...)
	}
	width := 0
	for _, r := range shown {
		width = max(width, len(r.label))
	}
	for i, r := range shown {
		if i == v.opts.MaxRows {
			break
		}
		c := r.counts
		fmt.Fprintf(&b, "  %-*s %s %7s done %3d failed %3d running  %s\n", width, r.label, v.bar(c), fmt.Sprintf("%d/%d", c.Succeeded, c.Eligible), c.Failed, c.Running, v.colorState(r.state))
	}
	if len(v.rows) > v.opts.MaxRows {
		fmt.Fprintf(&b, "  %d scopes done, %d not started, %d in all\n", done, waiting, len(v.rows))
	}
	// Each server in flight with its step and its BMC task's percent.
	fl := v.flights()
	sw := 0
	for _, f := range fl {
		sw = max(sw, len(f.server))
	}
	for i, f := range fl {
		if i == v.opts.MaxRows {
			fmt.Fprintf(&b, "    … and %d more servers in flight\n", len(fl)-i)
			break
		}
		fmt.Fprintf(&b, "    %-*s  %s\n", sw, f.server, f.text(v.etaTime(now)))
	}
	v.clear()
	out := b.String()
	fmt.Fprint(v.w, out)
	v.drawn = screenRows(out, v.opts.Width)
	v.lastDraw = now
	v.dirty = false
}

// etaTime is the time the ETA is computed at: the wall clock, unless the
// events run on another clock (a fake one), then the latest event.
func (v *View) etaTime(now time.Time) time.Time {
	if v.last.IsZero() || now.Sub(v.last) > 24*time.Hour || v.last.Sub(now) > time.Minute {
		return v.last
	}
	return now
}

func (v *View) bar(c executor.Counts) string {
	n := c.Eligible
	if n <= 0 {
		return "[" + strings.Repeat("-", barWidth) + "]"
	}
	ok := c.Succeeded * barWidth / n
	bad := (c.Succeeded+c.Failed)*barWidth/n - ok
	if c.Failed > 0 && bad == 0 {
		bad = 1
	}
	if ok+bad > barWidth {
		ok = barWidth - bad
	}
	st := views.Style(v.opts.Color)
	return "[" + st.Wrap(strings.Repeat("#", ok), views.ANSIGreen) + st.Wrap(strings.Repeat("x", bad), views.ANSIRed) + strings.Repeat("-", barWidth-ok-bad) + "]"
}

func (v *View) colorState(s executor.State) string {
	st, t := views.Style(v.opts.Color), HumanState(s)
	switch s.Name {
	case executor.Completed:
		return st.Wrap(t, views.ANSIGreen)
	case executor.Failed:
		return st.Wrap(t, views.ANSIRed)
	case executor.Paused, executor.Pending, executor.Stopped, executor.Stopping:
		return st.Wrap(t, views.ANSIYellow)
	}
	return t
}

// screenRows is how many terminal rows text (lines ending in newlines)
// takes at width columns, escape sequences not counted.
func screenRows(text string, width int) int {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if width <= 0 {
		return len(lines)
	}
	rows := 0
	for _, l := range lines {
		n := visibleLen(l)
		rows += max(1, (n+width-1)/width)
	}
	return rows
}

// visibleLen counts the runes of s outside ANSI CSI escape sequences.
func visibleLen(s string) int {
	n, esc := 0, false
	for i, r := range s {
		switch {
		case esc:
			if r >= 0x40 && r <= 0x7e && s[i-1] != '\x1b' {
				esc = false
			}
		case r == '\x1b':
			esc = true
		default:
			n++
		}
	}
	return n
}
