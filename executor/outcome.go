package executor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rackform/rackform/internal/words"
)

// How a Run ends: the outcome and its words.

// outcome decides how Run ends once nothing is in flight; done is false
// when the run only has to wait for time to pass.
func (r *runner) outcome() (Outcome, bool) {
	run := r.m.run
	cont := []NextAction{{Kind: NextContinue}}
	stranded := r.m.stranded(true)
	switch {
	case run.st.Name == Completed || run.st.Name == Skipped:
		counts, devices := r.m.serverCounts()
		status := OutcomeCompleted
		if counts.Failed > 0 || counts.SkippedAfterStart > 0 || len(stranded) > 0 {
			status = OutcomeCompletedWithFailures
		}
		return Outcome{Status: status, Message: summary(counts, devices, len(stranded)), Servers: &counts, Stranded: stranded}, true
	case run.st.Name == Failed:
		return Outcome{Status: OutcomeFailed, Reason: run.st.Reason, Message: r.m.why(Failed), Stranded: stranded}, true
	case r.graceful:
		return Outcome{Status: OutcomeInterrupted, Reason: ReasonInterrupted, Message: "interrupted; requests that change a BMC finished, polls and waits were given up, and everything is journaled",
			Next: []NextAction{{Kind: NextApply}}, Stranded: stranded}, true
	case len(r.down) > 0:
		var why []string
		for _, name := range slices.Sorted(maps.Keys(r.down)) {
			why = append(why, r.down[name])
		}
		return Outcome{Status: OutcomeStopped, Reason: ReasonProviderUnavailable,
			Message:  "provider unavailable: " + strings.Join(why, "; ") + "; the servers in flight are not failed: their steps resume from the journal",
			Next:     []NextAction{{Kind: NextApply}},
			Stranded: stranded}, true
	case r.m.stopRequested():
		return Outcome{Status: OutcomeStopped, Message: "stopped by the operator", Next: cont, Stranded: stranded}, true
	case r.m.breaches > 0:
		return Outcome{Status: OutcomePaused, Reason: r.m.breachReason(), Message: r.m.why(Paused), Next: cont, Stranded: stranded}, true
	case r.m.pauses > 0:
		return Outcome{Status: OutcomePaused, Reason: ReasonAfterRack, Message: r.m.why(Paused), Next: cont, Stranded: stranded}, true
	}
	var gates []NextAction
	for _, n := range r.m.order {
		if n.kind == KindGate && n.st.Name == Pending {
			gates = append(gates, NextAction{Kind: NextApprove, Gate: n.id})
		}
	}
	if len(gates) > 0 {
		return Outcome{Status: OutcomePaused, Reason: ReasonApproval, Message: "waiting for approval", Next: gates, Stranded: stranded}, true
	}
	if !r.deadline.IsZero() {
		return Outcome{}, false
	}
	if why := r.m.awaiting(); why != "" {
		return Outcome{Status: OutcomePaused, Reason: ReasonAvailability, Message: why,
			Next: cont, Stranded: stranded}, true
	}
	return Outcome{Status: OutcomePaused, Reason: ReasonBlocked, Message: r.m.why(Pending),
		Next: []NextAction{{Kind: NextStatus}, {Kind: NextSkip}}, Stranded: stranded}, true
}

// why lists the deepest nodes in state s, for outcome messages.
func (m *model) why(s StateName) string {
	var out []string
	for _, n := range m.order {
		if n.st.Name != s {
			continue
		}
		switch n.kind {
		case KindScope, KindPause, KindGate, KindWait:
		case KindCluster:
			if n.st.Reason != ReasonWindow && n.st.Reason != ReasonAvailability {
				continue
			}
		default:
			continue
		}
		out = append(out, n.id+": "+n.st.String()+" "+n.st.Message)
		if len(out) == 5 {
			break
		}
	}
	if len(out) == 0 {
		return m.run.st.Message
	}
	return strings.Join(out, "; ")
}

// serverCounts counts the servers (devices among them) by how they
// ended, and how many of those upgraded are devices: -1 when the plan
// has no device, so a plan of servers only is told as before.
func (m *model) serverCounts() (ServerCounts, int) {
	var c ServerCounts
	devices := -1
	for _, sv := range m.servers {
		if sv.srv.IsDevice() && devices < 0 {
			devices = 0
		}
		switch sv.st.Name {
		case Completed:
			c.Upgraded++
			if sv.srv.IsDevice() {
				devices++
			}
		case Failed:
			c.Failed++
		case Skipped:
			c.Skipped++
			if sv.sv.begun {
				c.SkippedAfterStart++
			}
		}
	}
	return c, devices
}

// summary says how the servers of a completed run ended, the servers and
// devices upgraded apart when the plan has devices (devices >= 0): "5
// servers and 2 devices upgraded, 0 failed, 0 skipped".
func summary(c ServerCounts, devices, stranded int) string {
	upgraded := fmt.Sprintf("%d %s", c.Upgraded, words.Plural(c.Upgraded, "server", "servers"))
	if devices >= 0 {
		n := c.Upgraded - devices
		upgraded = fmt.Sprintf("%d %s and %d %s", n, words.Plural(n, "server", "servers"), devices, words.Plural(devices, "device", "devices"))
	}
	s := fmt.Sprintf("%s upgraded, %d failed, %d skipped", upgraded, c.Failed, c.Skipped)
	if c.SkippedAfterStart > 0 {
		s += fmt.Sprintf(" (%d after their steps began)", c.SkippedAfterStart)
	}
	if stranded > 0 {
		s += fmt.Sprintf("; %d left out of service", stranded)
	}
	return s
}

func (r *runner) finish(ctx context.Context, out Outcome) {
	switch out.Status {
	case OutcomeInterrupted:
		r.set(ctx, r.m.run, State{Name: Stopped, Reason: ReasonInterrupted, Message: out.Message})
	case OutcomeStopped:
		r.set(ctx, r.m.run, State{Name: Stopped, Reason: out.Reason, Message: out.Message})
	}
	if r.w == nil || r.w.leader {
		r.emit(ctx, &Record{Type: recRunEnded, Outcome: string(out.Status), Message: out.Message})
	}
	r.flush(ctx)
	o := out
	r.event(Event{Type: "apply_ended", Outcome: &o})
}

// cutShort is the outcome of a run an error ended (the journal or the
// lock failed): only the servers it leaves out of service, in flight
// included, as this process knows them, for the caller to list with the
// error, and the command that resumes it once the cause is fixed.
func (r *runner) cutShort() Outcome {
	return Outcome{Next: []NextAction{{Kind: NextApply}}, Stranded: r.m.stranded(true)}
}
