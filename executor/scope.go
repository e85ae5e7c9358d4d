package executor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/executor/rollout"
)

// Scopes (racks, batches, serial scopes): thresholds, breaches (rules
// 9-15) and which servers start (rule 7, rule 4).

// after is a scope's wait and pause after it, as the rules read them.
func after(sc *node) rollout.After {
	return rollout.After{
		Wait: sc.wait != nil, WaitOver: sc.wait != nil && sc.wait.st.Name.Terminal(),
		Pause: sc.pause != nil, PauseOver: sc.pause != nil && sc.pause.st.Name.Terminal(),
	}
}

// scopeState is a scope's state as the rule on the next scope reads it.
func scopeState(n StateName) rollout.ScopeState {
	switch n {
	case Running:
		return rollout.ScopeRunning
	case Completed:
		return rollout.ScopeCompleted
	case Skipped:
		return rollout.ScopeSkipped
	}
	return rollout.ScopeWaiting
}

// stepPhase runs scopes in order. The next scope starts when the previous
// one is terminal with its wait and pause over, or — when it has neither a
// wait nor a pause — as soon as it met its threshold (rule 13).
func (sch *scheduler) stepPhase(ctx context.Context, ph *node) {
	for i := ph.first; i < len(ph.scopes) && sch.r.err == nil; i++ {
		sc := ph.scopes[i]
		sch.stepScope(ctx, sc)
		a := after(sc)
		done := sc.st.Name.Terminal() && sc.sc.running == 0 && a.Over()
		if i == ph.first && done {
			ph.first++
		}
		if !rollout.NextScopeMayStart(scopeState(sc.st.Name), sc.sc.running, a, rollout.Met(sc.scope, sc.sc.tally())) {
			break
		}
	}
	sch.refresh(ctx, ph)
}

// serversIn lists the servers of scope sc in state st, in plan order.
func serversIn(sc *node, st StateName) []string {
	var out []string
	for _, sv := range sc.sc.servers {
		if sv.st.Name == st {
			out = append(out, sv.id)
		}
	}
	return out
}

func (sch *scheduler) stepScope(ctx context.Context, sc *node) {
	s := sc.sc
	if sch.stepTakeover(ctx, sc) { // spare.go
		return
	}
	switch sc.st.Name {
	case NotStarted:
		if sch.r.halted() {
			return
		}
		if s.eligible() == 0 {
			sch.r.set(ctx, sc, State{Name: Skipped, Reason: ReasonEmpty, Message: "no eligible servers"})
			break
		}
		sch.startChain(ctx, sc)
	case Paused:
		if (sc.st.Reason == ReasonThreshold || sc.st.Reason == ReasonQuorum) && sch.r.m.lastContinue > sc.at {
			if why := rollout.Breach(sc.scope, sc.sc.tally()); why != "" {
				sch.r.set(ctx, sc, State{Name: Paused, Reason: ReasonThreshold, Message: "still breached after continue: " + why + sch.skipHint(sc)})
			} else {
				sch.r.set(ctx, sc, State{Name: Running, Message: "continued"})
			}
		}
	}
	if sc.st.Name == Running {
		if why := rollout.Breach(sc.scope, sc.sc.tally()); why != "" {
			st := State{Name: Paused, Reason: ReasonThreshold, Message: why + sch.skipHint(sc)}
			if sc.scope.OnBreach == "fail" {
				st = State{Name: Failed, Reason: ReasonThreshold, Message: why}
			}
			sch.r.event(Event{Type: "breach", ID: sc.id, Kind: KindScope, Message: why, Counts: sc.counts()})
			sch.r.set(ctx, sc, st)
		} else {
			sch.startServers(ctx, sc)
			if s.notStarted == 0 && s.running == 0 && s.eligible() == 0 {
				sch.r.set(ctx, sc, State{Name: Skipped, Reason: ReasonEmpty, Message: "no eligible servers left: every server of this scope was skipped, so there is nothing to upgrade"})
			} else if s.notStarted == 0 && s.running == 0 {
				msg := fmt.Sprintf("%d succeeded", s.succeeded)
				if s.failed > 0 {
					msg += fmt.Sprintf(", %d failed: %s", s.failed, strings.Join(serversIn(sc, Failed), ", "))
				}
				if s.skipped > 0 {
					msg += fmt.Sprintf(", %d skipped", s.skipped)
				}
				sch.r.set(ctx, sc, State{Name: Completed, Message: msg})
			}
		}
	}
	switch sc.st.Name {
	case Completed:
		if sc.wait != nil {
			sch.stepWait(ctx, sc.wait, time.Duration(sc.scope.WaitAfter))
		}
		// The pause after a rack begins when the wait after it has ended
		// (rules 16, 17): continue then starts the next rack, and
		// the wait is never cut short by a pause nor spent inside one.
		if p := sc.pause; after(sc).PauseBegins() {
			switch {
			case p.st.Name == NotStarted:
				sch.r.set(ctx, p, State{Name: Paused, Reason: ReasonAfterRack, Message: sc.id + " is done; run: " + NextAction{Kind: NextContinue}.Ref()})
			case p.st.Name == Paused && sch.r.m.lastContinue > p.at:
				sch.r.set(ctx, p, State{Name: Completed, Message: "continued"})
			}
		}
	case Skipped:
		for _, k := range []*node{sc.wait, sc.pause} {
			if k != nil && !k.st.Name.Terminal() {
				sch.r.set(ctx, k, State{Name: Skipped, Reason: sc.st.Reason, Message: "its scope was skipped"})
			}
		}
	}
}

// skipHint says what the operator can do about a breached scope. A failed
// server is terminal and cannot be skipped (rule 23): what can be is the
// scope itself, or its servers that have not started.
func (sch *scheduler) skipHint(sc *node) string {
	var b strings.Builder
	if f := serversIn(sc, Failed); len(f) > 0 {
		b.WriteString("; failed: " + strings.Join(f, ", ") + " (skip one to take it out of N: " + NextAction{Kind: NextSkip}.Ref() + ")")
	}
	b.WriteString("; to go on, skip the scope (" + NextAction{Kind: NextSkip, Target: sc.id}.Ref() + ")")
	if ns := serversIn(sc, NotStarted); len(ns) > 0 {
		b.WriteString(" or its servers not yet started (" + NextAction{Kind: NextSkip}.Ref() + ": " + strings.Join(ns, ", ") + ")")
	}
	b.WriteString(", or fix the servers and plan again; then " + NextAction{Kind: NextContinue}.Ref())
	return b.String()
}

// startServers starts servers of a running scope up to max_unavailable
// (rule 7), one at a time in serial scopes, and never a second control-plane
// server of a cluster while one is down (rule 4).
func (sch *scheduler) startServers(ctx context.Context, sc *node) {
	if sch.r.halted() {
		return
	}
	s := sc.sc
	limit := rollout.Slots(sc.scope, len(s.servers))
	serial := sc.scope.Kind == "serial"
	for s.cursor < len(s.servers) && sch.r.err == nil {
		sv := s.servers[s.cursor]
		if sv.st.Name != NotStarted && sv.st.Name != Pending { // pending: held for quorum
			s.cursor++
			continue
		}
		if s.running >= limit || (serial && s.down > 0) {
			return
		}
		if isCP(sv.srv.Role) && clusterOf(sv).cpBusy > 0 {
			return
		}
		sch.r.set(ctx, sv, State{Name: Running})
		sch.r.ready = append(sch.r.ready, sv)
		s.cursor++
	}
}
