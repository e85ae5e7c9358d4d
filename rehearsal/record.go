package rehearsal

import (
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// recorder turns the executor's events (on the virtual clock) into the
// schedule: bars from each node's start to its end, marks where the run
// waited or decided. It is the executor's Sink, called from its scheduler
// goroutine only, and from the control operations between runs.
type recorder struct {
	p     *plan.Plan
	tree  []treeNode
	nodes map[string]*nodeRec

	// failOnBreach are the scopes whose breached threshold fails the run
	// (on_breach = "fail") rather than pausing it.
	failOnBreach map[string]bool

	marks []*schedule.Mark
	open  map[string]*schedule.Mark // by kind + ID
	met   map[string]bool
	// noOpening: the cluster waits for a window that has no opening
	// before the plan expires (its pending state has no until).
	noOpening map[string]bool
	// steps counts step_started events: whether a run after a continue
	// made progress.
	steps int
	last  time.Time
	// command renders the actions a message names (Options.Command).
	command func(executor.NextAction) string
}

// treeNode is a node of the plan's run tree that takes time, in tree
// order.
type treeNode struct {
	kind, id, parent, name, scope string
}

type nodeRec struct {
	start, end time.Time
	started    bool
	ended      bool
	st         executor.State
}

func newRecorder(p *plan.Plan, command func(executor.NextAction) string) *recorder {
	r := &recorder{p: p, command: command, nodes: map[string]*nodeRec{}, failOnBreach: map[string]bool{}, open: map[string]*schedule.Mark{}, met: map[string]bool{}, noOpening: map[string]bool{}}
	add := func(kind, id, parent, name, scope string) {
		r.tree = append(r.tree, treeNode{kind, id, parent, name, scope})
	}
	for _, st := range p.Run.Stages {
		add(schedule.KindStage, st.ID, "run", st.Name, "")
		for _, g := range st.Groups {
			add(schedule.KindGroup, g.ID, st.ID, g.Name, "")
			for _, c := range g.Clusters {
				add(schedule.KindCluster, c.ID, g.ID, c.Name, "")
				for _, ph := range c.Phases {
					add(schedule.KindPhase, ph.ID, c.ID, phaseName(ph), "")
					for _, sc := range ph.Scopes {
						add(schedule.KindScope, sc.ID, ph.ID, ScopeLabel(c.Name, ph, sc), sc.Kind)
						r.failOnBreach[sc.ID] = sc.OnBreach == "fail"
						for _, addr := range sc.Servers {
							add(schedule.KindServer, addr, sc.ID, addr, "")
						}
						if sc.WaitAfter > 0 {
							add(schedule.KindWait, sc.ID+".wait", ph.ID, "wait "+sc.WaitAfter.Human()+" after "+ScopeLabel(c.Name, ph, sc), "")
						}
					}
				}
			}
		}
		if st.AfterWait > 0 {
			add(schedule.KindWait, st.ID+".wait", st.ID, "wait "+st.AfterWait.Human()+" after stage "+st.Name, "")
		}
	}
	return r
}

func phaseName(ph plan.Phase) string {
	switch ph.Kind {
	case plan.PhaseControlPlane:
		return "control plane"
	case plan.PhaseStage:
		return "stage " + ph.Name
	}
	return string(ph.Kind)
}

// ScopeLabel names a scope for people, as apply's output does: "east/e01"
// for a rack, "east/e01 devices" for the rack's devices (switch trays,
// power shelves…), "east control plane", "east management A1" for a batch.
func ScopeLabel(cluster string, ph plan.Phase, sc plan.Scope) string {
	if sc.Kind == "rack" && sc.Rack != "" && ph.Kind == plan.PhaseDevices {
		return cluster + "/" + sc.Rack + " devices"
	}
	return scopeLabel(cluster, ph, sc)
}

func scopeLabel(cluster string, ph plan.Phase, sc plan.Scope) string {
	switch {
	case sc.Kind == "rack" && sc.Rack != "":
		return cluster + "/" + sc.Rack
	case ph.Kind == plan.PhaseControlPlane:
		return cluster + " control plane"
	}
	name := sc.Name
	if name == "" {
		name = sc.ID
	}
	return cluster + " " + strings.ReplaceAll(name, "_", " ")
}

// Event implements executor.Sink.
func (r *recorder) Event(e executor.Event) {
	e.Message = executor.RenderText(e.Message, r.command)
	if e.Time.After(r.last) {
		r.last = e.Time
	}
	switch e.Type {
	case "step_started":
		r.steps++
		return
	case "apply_ended":
		return
	case "breach":
		r.breach(e)
		return
	}
	if e.ID == "" || e.State == "" {
		return
	}
	st := executor.State{Name: e.State, Reason: e.Reason, Message: e.Message, Until: e.Until}
	if e.Kind != executor.KindPause && e.Kind != executor.KindGate {
		n := r.nodes[e.ID]
		if n == nil {
			n = &nodeRec{}
			r.nodes[e.ID] = n
		}
		if st.Name == executor.Running && !n.started {
			n.start, n.started = e.Time, true
		}
		if st.Name.Terminal() && !n.ended {
			if !n.started {
				n.start, n.started = e.Time, true
			}
			n.end, n.ended = e.Time, true
		}
		n.st = st
	}
	switch e.Kind {
	case executor.KindPause:
		scope := strings.TrimSuffix(e.ID, ".pause")
		if st.Name == executor.Paused {
			r.openMark(schedule.MarkPause, scope, e.Time, executor.ReasonAfterRack, e.Message, nil)
		} else if st.Name.Terminal() {
			r.closeMark(schedule.MarkPause, scope, e.Time)
		}
	case executor.KindGate:
		if st.Name == executor.Pending {
			m := r.openMark(schedule.MarkGate, e.ID, e.Time, executor.ReasonApproval, e.Message, nil)
			m.Holds = r.gateHolds(e.ID)
		} else if st.Name.Terminal() {
			r.closeMark(schedule.MarkGate, e.ID, e.Time)
		}
	case executor.KindCluster:
		switch {
		case st.Name == executor.Pending && st.Reason == executor.ReasonWindow:
			r.noOpening[e.ID] = e.Until == nil
			if m := r.open[schedule.MarkWindow+" "+e.ID]; m != nil {
				m.Message = e.Message
			} else {
				r.openMark(schedule.MarkWindow, e.ID, e.Time, executor.ReasonWindow, e.Message, nil)
			}
		case st.Name == executor.Running:
			r.closeMark(schedule.MarkWindow, e.ID, e.Time)
		}
	case executor.KindScope:
		switch {
		case st.Name == executor.Paused && (st.Reason == executor.ReasonThreshold || st.Reason == executor.ReasonQuorum):
			if r.open[schedule.MarkPause+" "+e.ID] == nil {
				r.openMark(schedule.MarkPause, e.ID, e.Time, st.Reason, e.Message, counts(e.Counts))
			}
		case st.Name == executor.Running || st.Name.Terminal():
			r.closeMark(schedule.MarkPause, e.ID, e.Time)
		}
		r.thresholdMet(e.ID, e.Counts, e.Time)
	case executor.KindServer:
		r.thresholdMet(e.Parent, e.Counts, e.Time)
	}
}

// thresholdMet marks the moment a scope first has the successes it needs.
func (r *recorder) thresholdMet(scope string, c *executor.Counts, at time.Time) {
	if c == nil || r.met[scope] || c.Eligible == 0 || c.Succeeded < c.Required {
		return
	}
	r.met[scope] = true
	m := &schedule.Mark{Kind: schedule.MarkThreshold, ID: scope, At: at, Until: at, Result: schedule.ResultMet,
		Message: fmt.Sprintf("threshold met: %d of %d succeeded, %d required, %d may fail (%d failed)", c.Succeeded, c.Eligible, c.Required, c.Budget, c.Failed),
		Counts:  counts(c)}
	r.marks = append(r.marks, m)
}

func (r *recorder) breach(e executor.Event) {
	res := schedule.ResultPaused
	if r.failOnBreach[e.ID] {
		res = schedule.ResultFailed
	}
	r.marks = append(r.marks, &schedule.Mark{Kind: schedule.MarkThreshold, ID: e.ID, At: e.Time, Until: e.Time, Result: res,
		Reason: executor.ReasonThreshold, Message: "threshold breached: " + e.Message, Counts: counts(e.Counts)})
}

func (r *recorder) openMark(kind, id string, at time.Time, reason, msg string, c *schedule.Counts) *schedule.Mark {
	m := &schedule.Mark{Kind: kind, ID: id, At: at, Reason: reason, Message: msg, Counts: c, Open: true}
	r.open[kind+" "+id] = m
	r.marks = append(r.marks, m)
	return m
}

func (r *recorder) closeMark(kind, id string, at time.Time) {
	if m := r.open[kind+" "+id]; m != nil {
		m.Until, m.Open = at, false
		m.Held = schedule.Duration(at.Sub(m.At))
		delete(r.open, kind+" "+id)
	}
}

// gateHolds is what cannot start until a gate is approved: its stage
// (a gate before it) or the next stage (a gate after it).
func (r *recorder) gateHolds(id string) []string {
	for i, st := range r.p.Run.Stages {
		for _, g := range st.Gates {
			if g.ID != id {
				continue
			}
			if g.When != "after" {
				return []string{st.ID}
			}
			if i+1 < len(r.p.Run.Stages) {
				return []string{r.p.Run.Stages[i+1].ID}
			}
			return []string{}
		}
	}
	return []string{}
}

func counts(c *executor.Counts) *schedule.Counts {
	if c == nil {
		return nil
	}
	return &schedule.Counts{Servers: c.Servers, Eligible: c.Eligible, Required: c.Required, Budget: c.Budget,
		Succeeded: c.Succeeded, Failed: c.Failed, Skipped: c.Skipped, Running: c.Running}
}

// schedule assembles what was recorded, ending at end.
func (r *recorder) schedule(end time.Time) *schedule.Schedule {
	s := &schedule.Schedule{FormatVersion: schedule.FormatVersion, End: end, NotAfter: r.p.NotAfter, Bars: []schedule.Bar{}, Marks: []schedule.Mark{}, Windows: []schedule.ClusterWindow{}}
	for _, t := range r.tree {
		n := r.nodes[t.id]
		if n == nil || !n.started {
			continue
		}
		b := schedule.Bar{Kind: t.kind, ID: t.id, Parent: t.parent, Name: t.name, Scope: t.scope, Start: n.start, End: n.end,
			State: string(n.st.Name), Reason: n.st.Reason, Message: n.st.Message}
		if !n.ended {
			b.End, b.Open = end, true
		}
		s.Bars = append(s.Bars, b)
	}
	for _, m := range r.marks {
		mm := *m
		if mm.Open {
			mm.Until = end
			mm.Held = schedule.Duration(end.Sub(mm.At))
		}
		if mm.Holds == nil {
			mm.Holds = []string{}
		}
		s.Marks = append(s.Marks, mm)
	}
	for c := range r.p.Run.Clusters() {
		s.Windows = append(s.Windows, r.window(c, end))
	}
	return s
}

// window says how a cluster's work fits its maintenance window.
func (r *recorder) window(c *plan.Cluster, end time.Time) schedule.ClusterWindow {
	w := schedule.ClusterWindow{Cluster: c.ID, Name: c.Name, Windows: append([]schedule.Interval{}, c.Windows...), Fits: true}
	n := r.nodes[c.ID]
	if n == nil || !n.started {
		w.Fits = len(c.Windows) == 0
		switch m := r.open[schedule.MarkWindow+" "+c.ID]; {
		case m != nil && r.noOpening[c.ID]:
			w.Fits, w.Miss = false, fmt.Sprintf("cannot start: its window has no opening before the plan expires at %s", stamp(r.p.NotAfter))
		case m != nil:
			w.Fits, w.Miss = false, "did not start before the rehearsal ended: "+m.Message
		default:
			w.Fits, w.Miss = false, "did not start before the rehearsal ended"
		}
		return w
	}
	w.Start, w.End = n.start, n.end
	if !n.ended {
		w.End = end
	}
	if len(c.Windows) == 0 {
		return w
	}
	for _, iv := range c.Windows {
		if iv.Contains(w.Start) {
			w.Opening = &iv
		}
	}
	if w.Opening == nil {
		w.Fits, w.Miss = false, "started outside its window's openings"
		return w
	}
	if over := w.End.Sub(w.Opening.End); over > 0 {
		w.Fits, w.Overrun = false, schedule.Duration(over)
		verb := "ends"
		if !n.ended {
			verb = "was still running"
		}
		w.Miss = fmt.Sprintf("its work %s at %s, %s past the close of its window at %s (a window gates only the start: the work goes on past it)",
			verb, stamp(w.End), schedule.Duration(over).Human(), stamp(w.Opening.End))
	}
	return w
}

// stamp is a time in messages: RFC 3339 in UTC.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
