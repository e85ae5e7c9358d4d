package executor

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rackform/rackform/executor/rollout"
	"github.com/rackform/rackform/planner/plan"
)

// node is one element of the run tree. Containers (stage, group, cluster,
// phase, run) derive most of their state from their children; scopes,
// servers, gates, waits and pauses are driven by the scheduler.
type node struct {
	id, name string
	kind     Kind
	parent   *node
	kids     []*node
	st       State
	// at is the journal position of the last state change: a continue or
	// an approval counts only when it comes after the pause it answers.
	at int64
	// skip is set by a `skip` record for this node or an ancestor.
	skip bool
	// dirty: a child changed state since this container was last derived.
	dirty bool
	// cleared: a failed(threshold) scope that a skip took out of the
	// breach count.
	cleared bool
	// index: a server's position in the plan's servers, the order in
	// which the scheduler takes simultaneous worker messages (Virtual).
	index int
	// seq: the node's position in the model's tree order (model.order).
	seq int

	stage   *plan.Stage
	gate    *plan.Gate
	cluster *plan.Cluster
	scope   *plan.Scope
	srv     *plan.Server

	// stage: the parts in order; scope: wait and pause nodes.
	before, groups, after []*node
	wait, pause           *node
	// phase: the scopes in order.
	scopes []*node
	// first is the index of the first scope that may still need work.
	first int
	// cluster: control-plane servers in flight or down (rule 4).
	cpBusy int
	// group: the clusters in order.
	clusters []*node

	sc *scopeRun
	sv *serverRun
}

// scopeRun counts a scope's servers by outcome (kept incrementally so the
// scheduler never scans a 10,000-server rack).
type scopeRun struct {
	servers                                         []*node
	cursor                                          int
	notStarted, running, succeeded, failed, skipped int
	// down counts failed servers that were touched (step, unhealthy): in a
	// serial scope they block the next start (rule 4).
	down int
}

// Counts are a scope's numbers, in status and events.
type Counts struct {
	Servers    int `json:"servers"`
	Eligible   int `json:"eligible"`
	Required   int `json:"required"`
	Budget     int `json:"budget"`
	NotStarted int `json:"not_started"`
	Running    int `json:"running"`
	Succeeded  int `json:"succeeded"`
	Failed     int `json:"failed"`
	Skipped    int `json:"skipped"`
}

func (s *scopeRun) eligible() int { return len(s.servers) - s.skipped }

// tally is what the scope's threshold is decided on (rules 9-13).
func (s *scopeRun) tally() rollout.Counts {
	return rollout.Counts{Eligible: s.eligible(), Succeeded: s.succeeded, Failed: s.failed, Down: s.down}
}

func (n *node) counts() *Counts {
	s := n.sc
	e := s.eligible()
	return &Counts{
		Servers: len(s.servers), Eligible: e, Required: rollout.Required(n.scope, e), Budget: n.scope.Budget,
		NotStarted: s.notStarted, Running: s.running, Succeeded: s.succeeded, Failed: s.failed, Skipped: s.skipped,
	}
}

// model is the run tree rebuilt from the plan and the journal.
type model struct {
	// startedAt is the time of the journal's first record: when the run
	// first started, across continues and resumes (for elapsed and ETA).
	startedAt time.Time

	run     *node
	nodes   map[string]*node
	servers map[string]*node
	// order lists every node in tree order, for Status.
	order []*node
	// mayStrand holds the servers a step has begun on that are off,
	// drained or have staged images (what stranded reports), kept as
	// records apply so that an outcome does not read every server.
	mayStrand map[*node]struct{}

	// Control positions: a stop is in force when it comes after the last
	// run start or continue.
	lastStop, lastResume, lastContinue int64
	approved                           map[string]bool
	skips                              []string
	// available are the clusters planned pending whose release a continue
	// found available, with what it checked (availability.go).
	available map[string]string
	// records counts the journal records applied.
	records int
	// breaches counts scopes and stages paused or failed for threshold;
	// pauses counts pause nodes paused: both stop new starts everywhere.
	breaches, pauses int
}

func buildModel(p *plan.Plan) (*model, error) {
	m := &model{nodes: map[string]*node{}, servers: map[string]*node{}, approved: map[string]bool{}, available: map[string]string{},
		lastStop: -1, lastResume: -1, lastContinue: -1}
	byAddr := map[string]*plan.Server{}
	index := map[string]int{}
	for i := range p.Servers {
		s := &p.Servers[i]
		byAddr[s.Address] = s
		index[s.Address] = i
	}
	// The first fault of the plan's run tree is bad, returned once the
	// tree is built: a node without an id or with one used before, a
	// server the plan does not describe or that is in two scopes.
	var bad error
	fail := func(err error) {
		if bad == nil {
			bad = err
		}
	}
	add := func(parent *node, id, name string, kind Kind) *node {
		_, dup := m.nodes[id]
		switch {
		case id == "":
			fail(fmt.Errorf("plan: a %s under %s has no id", kind, parent.id))
		case dup && kind == KindServer:
			fail(fmt.Errorf("plan: server %s is in two scopes", id))
		case dup:
			fail(fmt.Errorf("plan: %q appears twice in the run tree", id))
		}
		n := &node{id: id, name: name, kind: kind, parent: parent, st: State{Name: NotStarted}, at: -1, dirty: true}
		m.nodes[id] = n
		n.seq = len(m.order)
		m.order = append(m.order, n)
		if parent != nil {
			parent.kids = append(parent.kids, n)
		}
		return n
	}
	run := add(nil, "run", p.Run.Name, KindRun)
	m.run = run
	for si := range p.Run.Stages {
		ps := &p.Run.Stages[si]
		st := add(run, ps.ID, ps.Name, KindStage)
		st.stage = ps
		for gi := range ps.Gates {
			if !rollout.GateAfter(ps.Gates[gi]) {
				g := add(st, ps.Gates[gi].ID, ps.Gates[gi].Name, KindGate)
				g.gate = &ps.Gates[gi]
				st.before = append(st.before, g)
			}
		}
		for gi := range ps.Groups {
			pg := &ps.Groups[gi]
			g := add(st, pg.ID, pg.Name, KindGroup)
			st.groups = append(st.groups, g)
			for ci := range pg.Clusters {
				pc := &pg.Clusters[ci]
				c := add(g, pc.ID, pc.Name, KindCluster)
				c.cluster = pc
				g.clusters = append(g.clusters, c)
				for phi := range pc.Phases {
					pp := &pc.Phases[phi]
					ph := add(c, pp.ID, string(pp.Kind), KindPhase)
					for sci := range pp.Scopes {
						psc := &pp.Scopes[sci]
						sc := add(ph, psc.ID, psc.Name, KindScope)
						sc.scope = psc
						sc.sc = &scopeRun{}
						ph.scopes = append(ph.scopes, sc)
						for _, addr := range psc.Servers {
							ps := byAddr[addr]
							if ps == nil {
								fail(fmt.Errorf("plan: scope %s lists server %q, which the plan does not describe", psc.ID, addr))
								continue
							}
							sv := add(sc, addr, ps.Name, KindServer)
							sv.srv, sv.index = ps, index[addr]
							sv.sv = newServerRun(ps, pc.Settings)
							m.servers[addr] = sv
							sc.sc.servers = append(sc.sc.servers, sv)
							if ps.Action == plan.ActionSkip {
								reason := ps.Reason
								if reason == "" {
									reason = "plan"
								}
								msg := "skipped in the plan"
								if len(ps.Problems) > 0 {
									// Held back or not observed: status
									// says why, never just drops it.
									msg += ": " + strings.Join(ps.Problems, "; ")
								}
								sv.st = State{Name: Skipped, Reason: reason, Message: msg}
								sc.sc.skipped++
							} else {
								sc.sc.notStarted++
							}
						}
						if psc.WaitAfter > 0 {
							sc.wait = add(ph, psc.ID+".wait", "wait after "+psc.Name, KindWait)
						}
						if rollout.PausesAfter(pp, sci) {
							sc.pause = add(ph, psc.ID+".pause", "pause after "+psc.Name, KindPause)
						}
					}
				}
			}
		}
		for gi := range ps.Gates {
			if rollout.GateAfter(ps.Gates[gi]) {
				g := add(st, ps.Gates[gi].ID, ps.Gates[gi].Name, KindGate)
				g.gate = &ps.Gates[gi]
				st.after = append(st.after, g)
			}
		}
		if ps.AfterWait > 0 {
			st.wait = add(st, ps.ID+".wait", "wait after "+ps.Name, KindWait)
		}
	}
	if bad != nil {
		return nil, bad
	}
	return m, nil
}

// bucket moves a server between its scope's counters.
func bucket(s *scopeRun, st State, d int) {
	switch st.Name {
	case NotStarted, Pending:
		s.notStarted += d
	case Completed:
		s.succeeded += d
	case Failed:
		s.failed += d
		if st.Reason == ReasonStep || st.Reason == ReasonUnhealthy {
			s.down += d
		}
	case Skipped:
		s.skipped += d
	default:
		s.running += d
	}
}

func isBreach(n *node, st State) bool {
	return (n.kind == KindScope || n.kind == KindStage) && (st.Name == Paused || st.Name == Failed) && (st.Reason == ReasonThreshold || st.Reason == ReasonQuorum)
}

// setState changes a node's state and keeps the counters right. It is the
// only place states change, live or on replay.
func (m *model) setState(n *node, st State, pos int64) {
	old := n.st
	if n.kind == KindServer {
		sc := n.parent.sc
		bucket(sc, old, -1)
		bucket(sc, st, +1)
		if isCP(n.srv.Role) {
			c := clusterOf(n)
			if cpBusy(old) {
				c.cpBusy--
			}
			if cpBusy(st) {
				c.cpBusy++
			}
		}
	}
	if isBreach(n, old) {
		m.breaches--
	}
	if isBreach(n, st) {
		m.breaches++
	}
	if n.kind == KindPause && old.Name == Paused {
		m.pauses--
	}
	if n.kind == KindPause && st.Name == Paused {
		m.pauses++
	}
	n.st = st
	n.at = pos
	if n.parent != nil {
		n.parent.dirty = true
		if n.kind == KindServer && n.parent.parent != nil {
			// A skipped scope's state does not change when its last
			// server comes back; its phase is derived again then.
			n.parent.parent.dirty = true
		}
	}
}

func isCP(role string) bool { return rollout.IsControlPlane(role) }

// cpBusy: a control-plane server that is down (rule 4): in flight, or
// failed after being touched.
func cpBusy(st State) bool {
	switch st.Name {
	case Running, Stopping, Paused:
		return true
	case Failed:
		return st.Reason == ReasonStep || st.Reason == ReasonUnhealthy
	}
	return false
}

// ancestor is n, or the nearest node above it, of kind k; nil when none
// is.
func ancestor(n *node, k Kind) *node {
	for ; n != nil; n = n.parent {
		if n.kind == k {
			return n
		}
	}
	return nil
}

// clusterOf is the cluster n belongs to (n itself for a cluster).
func clusterOf(n *node) *node { return ancestor(n, KindCluster) }

// apply applies one journal record at pos to the model. Replay is applying
// every record in order; the live engine appends a record and then applies
// it, so live state and replayed state cannot disagree.
func (m *model) apply(r *Record, pos int64) error {
	m.records++
	if m.startedAt.IsZero() && !r.Time.IsZero() {
		m.startedAt = r.Time
	}
	switch r.Type {
	case recRunStarted:
		m.lastResume = pos
	case recRunEnded:
	case recState:
		n := m.nodes[r.ID]
		if n == nil {
			return fmt.Errorf("journal: state of %q, which is not in the plan", r.ID)
		}
		m.setState(n, State{Name: r.State, Reason: r.Reason, Message: r.Message, Until: r.Until}, pos)
	case recObserved, recStepStarted, recTaskURI, recStepDone, recStepFailed, recRetryStaged:
		n := m.servers[r.Server]
		if n == nil {
			return fmt.Errorf("journal: record for server %q, which is not in the plan", r.Server)
		}
		err := n.sv.apply(r)
		m.trackStrand(n)
		return err
	case recContinue:
		m.lastResume = pos
		m.lastContinue = pos
	case recApprove:
		m.approved[r.Target] = true
	case recStop:
		m.lastStop = pos
	case recSkip:
		m.skips = append(m.skips, r.Target)
	case recRerun: // rerun.go
		m.rerun(pos)
	case recAvailable:
		m.available[r.ID] = r.Message
	default:
		return fmt.Errorf("journal: unknown record type %q", r.Type)
	}
	return nil
}

func (m *model) stopRequested() bool { return m.lastStop > m.lastResume }

// opKey names one operation on a server in the journal.
func stepOp(index int) string {
	if index >= 0 && index < len(stepOps) {
		return stepOps[index]
	}
	return "step:" + strconv.Itoa(index)
}

// stepOps are the ops of the first steps, made once: every server's
// status holds its steps' ops.
var stepOps = func() (ops [64]string) {
	for i := range ops {
		ops[i] = "step:" + strconv.Itoa(i)
	}
	return ops
}()

func remedyOp(k int, a string) string { return "remedy:" + strconv.Itoa(k) + ":" + a }

const opPowerOff = "power_off"
