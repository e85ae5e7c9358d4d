package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rackform/rackform/executor/rollout"
	"github.com/rackform/rackform/internal/words"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// The quorum guard (rack resiliency): losing etcd/KCP quorum stops the
// Kubernetes API across the instance. The plan refused any order that
// would take a control plane's healthy members below quorum; apply checks
// it again right before it takes each member down, because a member may
// have gone down since the plan (or during the run). A member's pre-flight
// observation also observes the other members; when taking this one down
// would leave fewer healthy members than quorum (⌊n/2⌋+1), the server is
// held (pending(quorum)), its scope is paused(quorum) and nothing new
// starts; `rackform continue` checks again. Control planes of fewer than
// three members, and plans with allow_quorum_loss, are not held.

// quorumGuard is the quorum guard of a run: the members it observes with a
// member's pre-flight, its decision before the member goes down
// (rollout.CheckQuorum) and what it journals and says of it. It holds the
// runner it journals through.
type quorumGuard struct {
	r *runner
	// clusters holds each cluster's servers in plan order, made on first
	// use: a member's checks read its own cluster, not the whole plan (at
	// 100,000 servers reading the plan for every member check was seconds
	// of a rehearsal). Only the scheduler's goroutine uses it.
	clusters map[string][]*plan.Server
}

// peerHealth is one other member's health as observed.
type peerHealth struct {
	server string
	srv    *plan.Server
	// why is "" when healthy, else why not ("unreachable", ...).
	why string
}

// observeOp is a server's pre-flight observation; for a guarded member it
// lists the other members to observe with it. It runs on the scheduler,
// which owns the model the membership is read from.
func (qg *quorumGuard) observeOp(sv *node) *opRun {
	o := &opRun{sv: sv, kind: opObserve}
	if qg.guarded(sv) {
		for _, s := range qg.quorumMembers(sv) {
			if s.Address != sv.srv.Address {
				o.peers = append(o.peers, peerHealth{server: s.Address, srv: s})
			}
		}
	}
	return o
}

// quorumMembers lists the control-plane members of sv's cluster in plan
// order, after any spare takeover recorded in the run.
func (qg *quorumGuard) quorumMembers(sv *node) []*plan.Server {
	if qg.clusters == nil {
		qg.clusters = map[string][]*plan.Server{}
		ss := qg.r.o.Plan.Servers
		for i := range ss {
			qg.clusters[ss[i].Cluster] = append(qg.clusters[ss[i].Cluster], &ss[i])
		}
	}
	c := sv.srv.Cluster
	return rollout.Members(qg.clusters[c], c, qg.takeover(c))
}

// guarded reports whether taking sv down is subject to the quorum guard.
func (qg *quorumGuard) guarded(sv *node) bool {
	t := qg.takeover(sv.srv.Cluster)
	if !rollout.IsMember(sv.srv, t) {
		return false // the members are counted for a member only
	}
	return rollout.Guarded(sv.srv, clusterOf(sv).cluster.Quorum, t, len(qg.quorumMembers(sv)))
}

// observePeers observes the other members listed by observeOp. It runs
// on the worker, with the member's own pre-flight observation, and
// touches only the op. A member the provider could not observe (its plugin
// died, or it answered nothing) is neither healthy nor down but unknown:
// observePeers returns that provider's name and the error, and the
// pre-flight is interrupted as under any provider failure (the plugin is
// restarted and the check runs again), so that only a member observed
// down ever holds the run for quorum.
func (wk *worker) observePeers(ctx context.Context, o *opRun) (string, error) {
	for i := range o.peers {
		p := &o.peers[i]
		prov := wk.r.o.Providers[p.srv.Provider]
		if prov == nil {
			p.why = "no provider to observe it"
			continue
		}
		o.waiting.Store(&peerWait{peer: p.server, since: wk.r.o.Clock.Now()})
		obs, err := observe(ctx, prov, providers.Target{Name: p.srv.Address, Endpoint: p.srv.BMC, System: p.srv.System, Auth: p.srv.Auth})
		if err != nil {
			return p.srv.Provider, fmt.Errorf("observing the control-plane member %s for the quorum check: %w", p.server, err)
		}
		// As the plan decides: reachable, not Critical, on.
		p.why = obs.NotHealthy()
	}
	return "", nil
}

// quorumSayAfter is how long a quorum check waits for a peer to answer
// before the run says so.
const quorumSayAfter = 30 * time.Second

// peerWait is a quorum check waiting for a peer to answer, since when.
type peerWait struct {
	peer  string
	since time.Time
}

// quorumWait starts the state message of a server whose quorum check
// waits for a peer; the check's end clears it (preflight).
const quorumWait = "waiting for quorum: "

// sayQuorumWaits says, once per peer, each quorum check that has waited
// quorumSayAfter for a peer to answer: in the member's state (status) and
// a quorum_wait event naming the member, the peer and since when (the
// progress view's heartbeat counts how long it has not answered), so that
// a peer whose BMC hangs holds the run visibly until the provider gives up
// on it and the check decides (scheduler side).
func (qg *quorumGuard) sayQuorumWaits(ctx context.Context, now time.Time) {
	type wait struct {
		o *opRun
		w *peerWait
	}
	var due []wait
	for o := range qg.r.ops.all() {
		if w := o.waiting.Load(); w != nil && w != o.said && now.Sub(w.since) >= quorumSayAfter {
			due = append(due, wait{o, w})
		}
	}
	slices.SortFunc(due, func(a, b wait) int { return strings.Compare(a.o.sv.id, b.o.sv.id) }) // the same events in the same order
	for _, d := range due {
		o, w := d.o, d.w
		o.said = w
		since := w.since
		what := fmt.Sprintf(quorumWait+"the control-plane member %s has not answered since %s; it is observed before %s goes down, and if its BMC does not answer the run pauses for quorum",
			w.peer, since.UTC().Format("15:04:05 UTC"), o.sv.id)
		if o.sv.st.Name == Running {
			qg.r.set(ctx, o.sv, State{Name: Running, Message: what}) // status says it too
		}
		qg.r.event(Event{Type: "quorum_wait", Server: o.sv.id, Target: w.peer, Since: &since, Message: what})
	}
}

// quorumHolds checks, before sv's first step, that taking it down keeps
// quorum. When it does not, sv is held and its scope paused naming quorum.
func (qg *quorumGuard) quorumHolds(ctx context.Context, sv *node, o *opRun) bool {
	if o == nil || !qg.guarded(sv) || len(o.peers) == 0 {
		return true
	}
	peers := make([]rollout.Peer, len(o.peers))
	for i, p := range o.peers {
		peers[i] = rollout.Peer{Server: p.server, Why: p.why}
	}
	q := rollout.CheckQuorum(len(qg.quorumMembers(sv)), peers, qg.armedTakeover(sv))
	if q.Keeps {
		return true
	}
	healthy, members, need := q.Healthy, q.Members, q.Need
	var down []string
	for _, p := range q.Down {
		down = append(down, p.Server+" ("+p.Why+")")
	}
	if q.Replace != "" {
		// The spare takes the down member's place first (spare.go); then
		// this member is checked again.
		first := q.Replace
		if qg.r.downMember == nil {
			qg.r.downMember = map[string]string{}
		}
		qg.r.downMember[sv.srv.Cluster] = first
		qg.r.set(ctx, sv, State{Name: Pending, Reason: ReasonQuorum, Message: "held until the spare takes the place of " + first + ", which is down"})
		rewind(sv)
		return false
	}
	why := fmt.Sprintf("quorum: taking %s down would leave %d of %d control-plane members healthy, %d needed for quorum; down now: %s. Restore %s, or let the spare take its place (plan again with spare_takeover = true), or leave the control plane for now (%s); then %s",
		sv.id, healthy, members, need, strings.Join(down, ", "), words.Plural(len(down), "it", "them"), NextAction{Kind: NextSkip, Target: sv.parent.id}.Ref(), NextAction{Kind: NextContinue}.Ref())
	qg.r.set(ctx, sv, State{Name: Pending, Reason: ReasonQuorum, Message: fmt.Sprintf("held before its first step: taking it down would leave %d of %d control-plane members healthy (%d needed for quorum)", healthy, members, need)})
	rewind(sv)
	sc := sv.parent
	qg.r.event(Event{Type: "quorum_hold", ID: sc.id, Server: sv.id, Kind: KindScope, Message: why})
	qg.r.set(ctx, sc, State{Name: Paused, Reason: ReasonQuorum, Message: why})
	return false
}

// rewind puts the start of sv's scope back to sv, held: it starts again
// after continue, or once the spare took its peer's place.
func rewind(sv *node) {
	sc := sv.parent.sc
	for i, x := range sc.servers {
		if x == sv && i < sc.cursor {
			sc.cursor = i
		}
	}
}

// breachReason is the outcome's reason while scopes hold the run: quorum
// when one is paused for it, else threshold.
func (m *model) breachReason() string {
	if slices.ContainsFunc(m.order, func(n *node) bool { return n.kind == KindScope && n.st.Name == Paused && n.st.Reason == ReasonQuorum }) {
		return ReasonQuorum
	}
	return ReasonThreshold
}

// takeover is the spare takeover of cluster when the run has made it
// (spare.go), nil otherwise.
func (qg *quorumGuard) takeover(cluster string) *plan.Takeover { return qg.r.m.takeoverDone(cluster) }
