// Package applyview renders a running apply for people: plain lines when
// the output is not a terminal (CI logs), and a live view redrawn in place
// on a terminal (per rack or batch: a bar, done/failed/running counts, and
// an ETA from the plan's estimates). It is an executor.Sink; the JSON-lines
// stream is the executor's own JSONSink.
package applyview

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal"
)

// Options choose the rendering.
type Options struct {
	// Live redraws a block of per-scope bars in place with ANSI escapes;
	// otherwise every notable event is one plain line.
	Live bool
	// Color colours bars and states (live view only).
	Color bool
	// Now is the wall clock of the live view's ETA between events; nil
	// means time.Now.
	Now func() time.Time
	// Refresh is how often the live view redraws without events (default
	// 1s; negative: never).
	Refresh time.Duration
	// MaxRows bounds the scope rows of the live view (default 12); the
	// others are summarised in one line.
	MaxRows int
	// Width is the terminal's width in columns, so the live view knows how
	// many screen rows a long line takes when it moves the cursor back up
	// (0: lines never wrap).
	Width int
	// Heartbeat is, for the plain view, the longest silence while the run
	// goes on: when no line was printed for this long, a line says what is
	// in flight, so CI systems that kill silent jobs do not (default 50s,
	// checked every tenth of it, so a line comes at least every minute;
	// negative: never). Tick checks it; New starts a ticker for it.
	Heartbeat time.Duration
	// Resume renders the commands printed to go on with the options the
	// run was driven with (the state directory, the plan file's name);
	// nil prints the executor's canonical ones.
	Resume *Resume
}

// row is one scope (rack, batch or the serial control plane).
type row struct {
	id      string
	label   string
	est     time.Duration
	wait    time.Duration
	counts  executor.Counts
	state   executor.State
	started time.Time
}

// View is the human apply view. It is safe for use from the executor's
// scheduler goroutine and its own refresh goroutine.
type View struct {
	mu   sync.Mutex
	w    io.Writer
	opts Options
	sha  string
	p    *plan.Plan

	rows    []*row
	byID    map[string]*row
	servers map[string]string // server address → scope id
	// critical are the servers upgraded although Critical (rule 50): their
	// wait for readiness and their outcome are said in their own words.
	critical map[string]bool

	start    time.Time     // first event of this process
	runStart time.Time     // when the run first started (status), across continues
	baseDone time.Duration // estimated work already done when this process started
	last     time.Time     // latest event
	drawn    int           // lines of the live block on screen
	dirty    bool
	lastDraw time.Time
	ended    bool
	closed   bool
	stop     chan struct{}
	header   bool

	// inflight is what each server is doing now, for the heartbeat and
	// the live view's per-server lines.
	inflight  map[string]*flight
	lastPrint time.Time // wall clock of the last line (opts.Now)
	waiting   string    // the latest wait or window line, "" once work runs
}

// flight is one server's current step.
type flight struct {
	server  string
	what    string // "updating bios", "rebooting"
	percent int    // -1 when unknown
	printed int    // the last percent printed, -1 none
	// since: a quorum check has waited since then for a peer to answer.
	since time.Time
}

// New returns a view writing to w for plan p with identity sha.
func New(w io.Writer, p *plan.Plan, sha string, opts Options) *View {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Refresh == 0 {
		opts.Refresh = time.Second
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = 12
	}
	if opts.Heartbeat == 0 {
		opts.Heartbeat = 50 * time.Second
	}
	v := &View{w: w, opts: opts, sha: sha, p: p, byID: map[string]*row{}, servers: map[string]string{}, stop: make(chan struct{}), inflight: map[string]*flight{},
		critical: map[string]bool{}}
	for i := range p.Servers {
		if p.Servers[i].UpgradeWhenCritical != nil {
			v.critical[p.Servers[i].Address] = true
		}
	}
	for _, e := range planview.Scopes(p) {
		sc := e.Scope
		r := &row{id: sc.ID, label: rehearsal.ScopeLabel(e.Cluster.Name, *e.Phase, *sc), est: time.Duration(sc.Estimate), wait: time.Duration(sc.WaitAfter),
			counts: executor.Counts{Servers: len(sc.Servers), Eligible: sc.Eligible, Required: sc.Required, Budget: sc.Budget, NotStarted: sc.Eligible, Skipped: len(sc.Servers) - sc.Eligible},
			state:  executor.State{Name: executor.NotStarted}}
		v.rows = append(v.rows, r)
		v.byID[sc.ID] = r
		for _, s := range sc.Servers {
			v.servers[s] = sc.ID
		}
	}
	if opts.Live && opts.Refresh > 0 {
		go v.every(v.opts.Refresh, v.redraw)
	}
	if !opts.Live && opts.Heartbeat > 0 && opts.Refresh > 0 {
		go v.every(max(v.opts.Heartbeat/10, 100*time.Millisecond), func() { v.Tick(v.opts.Now()) })
	}
	return v
}

// every calls f every d until the view stops: the live view's redraw,
// the plain view's heartbeat.
func (v *View) every(d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-t.C:
			f()
		}
	}
}

// Tick prints the plain view's heartbeat when no line was printed for
// Options.Heartbeat before now: elapsed time, what each server in flight
// is doing (with its BMC task's percent), the scopes done and the ETA.
// It does nothing in the live view, before the run starts and after it
// ends.
func (v *View) Tick(now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.opts.Live || v.closed || v.ended || v.start.IsZero() || v.opts.Heartbeat < 0 {
		return
	}
	if now.Sub(v.lastPrint) < v.opts.Heartbeat {
		return
	}
	done := 0
	for _, r := range v.rows {
		if r.state.Name.Terminal() {
			done++
		}
	}
	eta, _ := v.eta(v.etaTime(now))
	at := v.etaTime(now)
	var what string
	if fl := v.flights(); len(fl) > 0 {
		const show = 6
		parts := make([]string, 0, show)
		for i, f := range fl {
			if i == show {
				parts = append(parts, fmt.Sprintf("and %d more", len(fl)-show))
				break
			}
			parts = append(parts, f.server+" "+f.text(at))
		}
		what = fmt.Sprintf("%s in flight: %s", views.Plural(len(fl), "server"), strings.Join(parts, ", "))
	} else if v.waiting != "" {
		what = v.waiting
	} else {
		what = "between steps"
	}
	line := fmt.Sprintf("Still running (elapsed %s, ETA %s): %s; %d of %d scopes done", clock(at.Sub(v.origin())), human(eta), what, done, len(v.rows))
	fmt.Fprintf(v.w, "[%s] %s\n", clock(at.Sub(v.origin())), line)
	v.lastPrint = now
}

// flights are the servers in flight in address order.
func (v *View) flights() []*flight {
	out := make([]*flight, 0, len(v.inflight))
	for _, f := range v.inflight {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *flight) int { return strings.Compare(a.server, b.server) })
	return out
}

func (f *flight) text(now time.Time) string {
	if !f.since.IsZero() {
		return fmt.Sprintf("%s for %s", f.what, max(now.Sub(f.since), 0).Round(time.Second))
	}
	if f.percent >= 0 {
		return fmt.Sprintf("%s %d%%", f.what, f.percent)
	}
	return f.what
}

// stepWords says what a step does, in words: "draining", "updating bios",
// "rebooting", "checking it is back healthy".
func stepWords(e executor.Event) string {
	comp := ""
	if e.Component != "" {
		comp = " " + e.Component
	}
	switch e.StepKind {
	case string(plan.StepDrain):
		return "draining"
	case string(plan.StepUncordon):
		return "uncordoning"
	case string(plan.StepShutdown):
		return "powering off"
	case string(plan.StepPowerOn):
		return "powering on"
	case string(plan.StepUpdate):
		return "updating" + comp
	case string(plan.StepReset):
		return "rebooting"
	case string(plan.StepReimage):
		return "reimaging" + comp
	case string(plan.StepWaitReady):
		return "health check: waiting for it to come back healthy"
	}
	if e.StepKind != "" {
		return strings.ReplaceAll(e.StepKind, "_", " ") + comp
	}
	return strings.ReplaceAll(e.Op, "_", " ")
}

// words is stepWords for e's server: a server upgraded although Critical
// is waited for until it is on and at target, whatever its health.
func (v *View) words(e executor.Event) string {
	if e.StepKind == string(plan.StepWaitReady) && v.critical[e.Server] {
		return "health check: waiting for it to come back on and at target (upgraded although Critical: any health its BMC reports is accepted)"
	}
	return stepWords(e)
}

// track keeps what each server is doing from the step events.
func (v *View) track(e executor.Event) (f *flight, changed bool) {
	server := e.Server
	if server == "" && e.Kind == executor.KindServer {
		server = e.ID
	}
	if f := v.inflight[server]; f != nil && !f.since.IsZero() && e.Type != "quorum_wait" {
		delete(v.inflight, server) // the quorum check's observation ended
	}
	switch e.Type {
	case "quorum_wait":
		// The pre-flight waits for a control-plane peer to answer.
		since := e.Time
		if e.Since != nil {
			since = *e.Since
		}
		v.inflight[e.Server] = &flight{server: e.Server, what: "waiting for quorum: the control-plane member " + e.Target + " has not answered", percent: -1, printed: -1, since: since}
		v.waiting = ""
		return nil, false
	case "step_started", "step_resumed":
		f = &flight{server: e.Server, what: v.words(e), percent: -1, printed: -1}
		if e.Type == "step_resumed" {
			if old := v.inflight[e.Server]; old != nil {
				f.what = old.what
			}
		}
		v.inflight[e.Server] = f
		v.waiting = ""
		return f, true
	case "step_progress":
		f = v.inflight[e.Server]
		if f == nil {
			f = &flight{server: e.Server, what: v.words(e), percent: -1, printed: -1}
			v.inflight[e.Server] = f
		}
		if e.Percent != nil {
			f.percent = *e.Percent
		}
		return f, true
	case "step_completed", "step_failed", "step_interrupted":
		delete(v.inflight, e.Server)
	}
	if e.Kind == executor.KindServer && executor.StateName(e.State).Terminal() {
		delete(v.inflight, e.ID)
	}
	return nil, false
}

// Start draws the initial picture of a resumed run from its status.
func (v *View) Start(st *executor.Status) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for n := range Nodes(st.Run) {
		if r := v.byID[n.ID]; r != nil && n.Kind == executor.KindScope {
			r.state = n.State
			r.state.Message = views.CanonicalText(r.state.Message)
			if n.Counts != nil {
				r.counts = *n.Counts
			}
		}
	}
	if st.StartedAt != nil {
		v.runStart = *st.StartedAt
	}
	v.baseDone, _ = v.work()
}

// origin is what elapsed time counts from: the run's first start, so it
// survives continue and resume; else this process's first event.
func (v *View) origin() time.Time {
	if !v.runStart.IsZero() && (v.start.IsZero() || v.runStart.Before(v.start)) {
		return v.runStart
	}
	return v.start
}

// Close stops the refresh and leaves the last picture on screen.
func (v *View) Close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return
	}
	v.closed = true
	close(v.stop)
	if v.opts.Live && !v.ended {
		v.draw(v.last)
	}
}

// Note prints a line for people that is not an event (an interrupt being
// handled, say): in the live view above the block, so the redraw stays
// intact; otherwise as a plain line.
func (v *View) Note(line string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return
	}
	v.println(line, executor.Event{Time: v.last})
	if v.opts.Live && !v.ended {
		v.draw(v.opts.Now())
	}
}

// Event implements executor.Sink.
func (v *View) Event(e executor.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return
	}
	e = CanonicalEvent(e)
	if v.start.IsZero() {
		v.start = e.Time
	}
	if e.Time.After(v.last) {
		v.last = e.Time
	}
	if r := v.rowOf(e); r != nil && e.Counts != nil {
		r.counts = *e.Counts
	}
	fl, _ := v.track(e)
	if e.Type == "apply_ended" && v.opts.Live {
		// Leave the last picture on screen above the outcome.
		v.draw(v.opts.Now())
		v.drawn = 0
	}
	for _, l := range v.lines(e) {
		v.println(l, e)
	}
	if !v.opts.Live && fl != nil {
		if l := v.stepLine(e, fl); l != "" {
			v.println(l, e)
		}
	}
	if v.opts.Live && !v.ended {
		// Redraw at most ten times a second; the ticker catches up.
		if now := v.opts.Now(); now.Sub(v.lastDraw) >= 100*time.Millisecond || e.Type == "apply_ended" {
			v.draw(now)
		} else {
			v.dirty = true
		}
	}
}

func (v *View) rowOf(e executor.Event) *row {
	switch e.Kind {
	case executor.KindScope:
		return v.byID[e.ID]
	case executor.KindServer:
		if r := v.byID[e.Parent]; r != nil {
			return r
		}
		return v.byID[v.servers[e.ID]]
	}
	return nil
}

// stepLine is the plain view's line for a step starting or its BMC task
// progressing: every step start, and task progress in steps of 10%.
func (v *View) stepLine(e executor.Event, f *flight) string {
	switch e.Type {
	case "step_started":
		if strings.HasPrefix(e.Op, "remedy:") || strings.HasPrefix(e.Op, "safety:") || e.Op == "power_off" || strings.HasPrefix(e.Op, "takeover:") {
			return "" // said by lines() in its own words
		}
		if e.Message != "" {
			// Why a step runs again (an update that did not take).
			return fmt.Sprintf("  %s: %s: %s", e.Server, f.what, e.Message)
		}
		return fmt.Sprintf("  %s: %s", e.Server, f.what)
	case "step_progress":
		if e.Percent == nil {
			return ""
		}
		p := *e.Percent
		if f.printed >= 0 && p/10 == f.printed/10 && p != 100 || p == f.printed {
			return ""
		}
		f.printed = p
		l := fmt.Sprintf("  %s: %s %d%%", e.Server, f.what, p)
		if e.Message != "" {
			l += " (" + e.Message + ")"
		}
		return l
	}
	return ""
}

// println writes one log line: in the live view above the block.
func (v *View) println(l string, e executor.Event) {
	v.lastPrint = v.opts.Now()
	if v.opts.Live {
		v.clear()
		fmt.Fprintln(v.w, l)
		return
	}
	fmt.Fprintf(v.w, "[%s] %s\n", clock(e.Time.Sub(v.origin())), l)
}

// work is the plan's estimated work done and left, from the scopes'
// states: the whole estimate (and wait) of scopes not started, the share
// of a running scope's estimate its servers have not finished.
func (v *View) work() (done, left time.Duration) {
	for _, r := range v.rows {
		switch {
		case r.state.Name.Terminal():
			done += r.est
		case r.state.Name == executor.NotStarted:
			left += r.est + r.wait
		default:
			frac := 0.0
			if n := r.counts.Eligible; n > 0 {
				frac = float64(r.counts.Succeeded+r.counts.Failed) / float64(n)
			}
			done += time.Duration(frac * float64(r.est))
			left += time.Duration((1-frac)*float64(r.est)) + r.wait
		}
	}
	return done, left
}

// eta is the time left at t: the estimated work left, scaled by the pace
// of this process so far (elapsed time per estimated time done since it
// started), so the ETA follows a fleet that runs faster or slower than
// planned (or a time-scaled simulator). Work done before a continue or a
// resume does not count for the pace: the time it took is not in this
// process's elapsed time, and a pause in between is no measure of speed.
func (v *View) eta(t time.Time) (time.Duration, bool) {
	done, left := v.work()
	done -= v.baseDone
	elapsed := t.Sub(v.start)
	if v.start.IsZero() || elapsed <= 0 || done <= 0 {
		return left, true
	}
	return time.Duration(float64(left) * float64(elapsed) / float64(done)), true
}

// Summary counts the plan's servers to upgrade and skip, and the racks of
// the former.
func Summary(p *plan.Plan) (up, skip, racks int) {
	seen := map[string]bool{}
	for _, s := range p.Servers {
		if s.Action != plan.ActionUpgrade {
			skip++
			continue
		}
		up++
		if k := s.Cluster + "/" + s.Rack; !seen[k] {
			seen[k] = true
			racks++
		}
	}
	return up, skip, racks
}
