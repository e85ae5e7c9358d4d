package executor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Remediation triggers (rack resiliency, automated remediation). A plan
// that carries them watches every wait_ready of an upgrade (the plan's and
// the one after each remediation action) instead of only waiting its
// timeout: it asks the provider to wait in short slices and, between
// them, observes the server and names what holds it:
//   - provisioning: not back on, healthy and at target (off, booting, old
//     versions): the wait fails once Provisioning (and the step's own
//     timeout) passed since the wait began;
//   - read_only_filesystem: on, but health Critical: the wait fails once
//     that lasted ReadOnlyFilesystem;
//   - unknown_state (control-plane and management servers only): on with
//     no health, or its BMC cannot be read: the wait fails once that
//     lasted UnknownState.
// A failed wait starts the role's remediation (rule 30: reboot once, then
// reimage once, as the role allows), each action an event and a line in
// the progress, then the server is failed(unhealthy) and counts against
// its threshold. The trigger is named in the step_failed event and in a
// remediation_triggered event.

// Trigger names, as events and messages give them.
const (
	TriggerProvisioning       = "provisioning"
	TriggerReadOnlyFilesystem = "read_only_filesystem"
	TriggerUnknownState       = "unknown_state"
)

// watched reports whether o is a wait_ready to watch for triggers.
func watched(o *opRun) *plan.RemediationTriggers {
	if o.kind != opApply || o.pstep.Kind != providers.StepWaitReady || strings.HasPrefix(o.op, "safety:") {
		return nil
	}
	return clusterOf(o.sv).cluster.Settings.Triggers
}

// classify names the condition an observation shows, and why in words.
// A server upgraded although Critical (critical) that is on and Critical is
// as it was before the upgrade, not a read-only filesystem: it is still
// provisioning until it reports its versions (rule 50).
func classify(obs *providers.Observation, err error, unknownApplies, critical bool) (string, string) {
	switch {
	case err != nil || obs == nil || !obs.Reachable:
		why := "its BMC cannot be read"
		if err != nil {
			why += ": " + err.Error()
		} else if obs != nil {
			if e := obs.Diagnostics.Err(); e != nil {
				why += ": " + e.Error()
			}
		}
		if unknownApplies {
			return TriggerUnknownState, why
		}
		return TriggerProvisioning, why
	case obs.PowerState == providers.PowerOn && obs.Health == "Critical" && critical:
		return TriggerProvisioning, "the host is on and reports health Critical, as before the upgrade"
	case obs.PowerState == providers.PowerOn && obs.Health == "Critical":
		return TriggerReadOnlyFilesystem, "the host is on and reports health Critical"
	case obs.PowerState == providers.PowerOn && obs.Health == "" && unknownApplies:
		return TriggerUnknownState, "the host is on and reports no health"
	}
	return TriggerProvisioning, fmt.Sprintf("power %s, health %s", orNone(obs.PowerState), orNone(obs.Health))
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// watchReady runs a watched wait_ready (see above). It runs on a worker.
func (wk *worker) watchReady(ctx context.Context, prov providers.Provider, o *opRun, tr *plan.RemediationTriggers) msg {
	sv := o.sv
	unknownApplies := isCP(sv.srv.Role) || sv.srv.Role == "management"
	start := wk.r.o.Clock.Now()
	limit := time.Duration(tr.Provisioning)
	if t := o.pstep.Timeout; t > 0 && (limit <= 0 || t < limit) {
		limit = t
	}
	slice := time.Duration(tr.ReadOnlyFilesystem)
	if u := time.Duration(tr.UnknownState); unknownApplies && u > 0 && (slice <= 0 || u < slice) {
		slice = u
	}
	slice /= 5
	if limit > 0 && limit < slice {
		slice = limit // never wait past the provisioning limit between looks
	}
	slice = max(slice, wk.r.o.PollInterval, time.Millisecond)
	var cond, why string
	var since time.Time
	for {
		now := wk.r.o.Clock.Now()
		left := limit - now.Sub(start)
		if limit > 0 && left <= 0 {
			if m, ok := wk.checkTaken(ctx, prov, o); ok {
				return m // on and healthy: an update no task confirmed did not take (nottaken.go)
			}
			return wk.triggered(o, TriggerProvisioning, fmt.Sprintf("provisioning not done within %s (%s)", limit, why))
		}
		attempt := now
		step := o.pstep
		step.Timeout = slice
		if limit > 0 && left < slice {
			step.Timeout = left
		}
		res, diags := prov.Apply(ctx, &providers.ApplyRequest{Target: wk.r.target(sv), Step: step, Last: o.last}, func(p *providers.Progress) error {
			if p.Message != "" || p.Percent >= 0 {
				wk.progress(ctx, msg{o: o, prog: true, percent: p.Percent, progMsg: p.Message})
			}
			return nil
		})
		if diags.Unavailable() {
			return wk.providerFault(ctx, prov, o, diags.Err())
		}
		if diags.Err() == nil {
			return msg{o: o, done: true, message: cameBack(o, res, confirmed(o.op, o.pstep.Kind, res))}
		}
		if ctx.Err() != nil {
			return msg{o: o, err: ctx.Err()}
		}
		obs, err := observe(ctx, prov, wk.r.target(sv))
		if _, ok := err.(*providerError); ok {
			return wk.providerFault(ctx, prov, o, err)
		}
		c, w := classify(obs, err, unknownApplies, o.pstep.AcceptCritical)
		now = wk.r.o.Clock.Now()
		if c != cond {
			cond, since = c, now
			wk.progress(ctx, msg{o: o, prog: true, percent: -1, progMsg: "remediation trigger watch: " + strings.ReplaceAll(c, "_", " ") + " (" + w + ")"})
		}
		why = w
		switch held := now.Sub(since); {
		case c == TriggerReadOnlyFilesystem && held >= time.Duration(tr.ReadOnlyFilesystem):
			return wk.triggered(o, c, fmt.Sprintf("read-only root filesystem for %s (%s)", time.Duration(tr.ReadOnlyFilesystem), w))
		case c == TriggerUnknownState && held >= time.Duration(tr.UnknownState):
			return wk.triggered(o, c, fmt.Sprintf("Unknown state for %s (%s)", time.Duration(tr.UnknownState), w))
		}
		next := attempt.Add(slice)
		if end := start.Add(limit); limit > 0 && end.Before(next) {
			next = end
		}
		wk.sleepUntil(ctx, next)
	}
}

// triggered ends a watched wait_ready with the trigger that fired.
func (wk *worker) triggered(o *opRun, trigger, what string) msg {
	return msg{o: o, err: fmt.Errorf("remediation trigger %s: %s", trigger, what)}
}

// sleepUntil waits until t on the run's clock (a fake clock in a
// synchronous run is moved there).
func (wk *worker) sleepUntil(ctx context.Context, t time.Time) {
	if !wk.r.o.Clock.Now().Before(t) {
		return
	}
	if sk, ok := wk.r.o.Clock.(Skipper); ok && wk.r.o.Synchronous {
		sk.SkipTo(t)
		return
	}
	_ = wk.sleep(ctx, t) // a cancelled ctx ends the watch at its next call
}
