package applyview

// The log lines of a run: what each event says for people, and the
// outcome's ending with what to run next.

import (
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
)

// lines are the log lines an event produces (none for most).
func (v *View) lines(e executor.Event) []string {
	live := v.opts.Live
	switch e.Type {
	case "apply_started", "apply_resumed":
		verb := "Applying"
		if e.Type == "apply_resumed" {
			verb = "Resuming"
		}
		up, skip, racks := Summary(v.p)
		devices := planview.DevicesToUpgrade(v.p)
		est := time.Duration(v.p.Summary.Estimate)
		if est == 0 {
			for _, st := range v.p.Run.Stages {
				est += time.Duration(st.Estimate)
			}
		}
		out := []string{fmt.Sprintf("%s plan %s: %s to upgrade in %s, %d skipped, estimated %s", verb, plan.ShortSHA(v.sha), planview.Members(up-devices, devices), views.Plural(racks, "rack"), skip, human(est))}
		// Servers the plan could not see or held back are named, never
		// silently left out of the run.
		if unseen := planview.NotObservedServers(v.p); len(unseen) > 0 {
			out = append(out, fmt.Sprintf("Not in this run: %s not observed when planned: %s", planview.MembersText(unseen), planview.Addresses(unseen)))
		}
		if held := planview.HeldBack(v.p); len(held) > 0 {
			out = append(out, fmt.Sprintf("Not in this run: %s held back when planned: %s", planview.MembersText(held), planview.Addresses(held)))
		}
		if e.Message != "" {
			out = append(out, "Note: "+e.Message) // a stale lock taken over
		}
		return out
	case "apply_interrupting":
		return []string{"Interrupted: starting nothing new; giving up polls and waits (the next apply resumes them); letting requests that change a BMC finish"}
	case "apply_ended":
		v.ended = true
		return v.ending(e)
	case "breach":
		return []string{fmt.Sprintf("%s: threshold breached: %s", v.label(e.ID), e.Message)}
	case "rack_pause":
		return []string{fmt.Sprintf("%s: pausing after this rack", v.label(strings.TrimSuffix(e.ID, ".pause")))}
	case "rack_pause_released":
		return []string{fmt.Sprintf("%s: pause released (%s)", v.label(strings.TrimSuffix(e.ID, ".pause")), e.Message)}
	case "continue_requested":
		return []string{"Continue requested by " + e.By}
	case "stop_requested":
		return []string{"Stop requested by " + e.By + ": nothing new starts; servers in flight finish"}
	case "skip_requested":
		return []string{"Skip of " + e.Target + " requested by " + e.By}
	case "gate_approved":
		return []string{"Gate " + e.Target + " approved by " + e.By}
	case "release_available":
		return []string{"Cluster " + e.Target + ": " + e.Message + "; starting it"}
	case "worker_joined":
		return []string{"Worker " + e.By + " " + e.Message}
	case "group_claimed":
		return []string{"Worker " + e.By + ": " + e.ID + " " + e.Message}
	case "server_held":
		return []string{fmt.Sprintf("  %s: %s", e.Server, e.Message)}
	case "server_observed":
		return nil
	case "quorum_wait":
		return []string{fmt.Sprintf("  %s: %s", e.Server, e.Message)}
	case "quorum_hold":
		return []string{fmt.Sprintf("  %s: held for control-plane quorum", e.Server)}
	case "spare_takeover_started":
		return []string{fmt.Sprintf("  %s: spare takeover: %s", e.Server, e.Message)}
	case "step_failed":
		return []string{fmt.Sprintf("  %s: %s failed: %s", e.Server, stepName(e), e.Message)}
	case "step_started":
		if strings.HasPrefix(e.Op, "remedy:") || e.Op == "power_off" {
			return []string{fmt.Sprintf("  %s: remediation: %s", e.Server, stepName(e))}
		}
		if strings.HasPrefix(e.Op, "safety:") {
			return []string{fmt.Sprintf("  %s: skipped after its steps began; bringing it back: %s", e.Server, stepName(e))}
		}
		return nil
	case "step_completed":
		if r := strings.TrimPrefix(e.Op, "takeover:"); r != e.Op {
			return []string{fmt.Sprintf("  %s: spare takeover done: it took the place of %s, which is the spare now", e.Server, r)}
		}
		// A remediation power off says what the BMC confirmed or
		// answered, never more.
		if e.Op == "power_off" && e.Message != "" {
			return []string{fmt.Sprintf("  %s: remediation: power_off: %s", e.Server, e.Message)}
		}
		return nil
	case "remediation_skipped":
		return []string{fmt.Sprintf("  %s: remediation: %s", e.Server, e.Message)}
	case "step_waiting":
		return []string{fmt.Sprintf("  %s: %s", e.Server, e.Message)}
	case "step_stalled":
		return []string{fmt.Sprintf("  %s: %s stalled: %s", e.Server, stepName(e), e.Message)}
	case "step_interrupted":
		what := "pre-flight observation"
		if e.Op != "" {
			what = stepName(e)
		}
		return []string{fmt.Sprintf("  %s: %s interrupted: %s", e.Server, what, e.Message)}
	case "step_resumed":
		if live {
			return nil
		}
		return []string{fmt.Sprintf("  %s: resuming %s", e.Server, stepName(e))}
	}
	verbIdx := strings.LastIndex(e.Type, "_")
	if verbIdx < 0 {
		return nil
	}
	verb := e.Type[verbIdx+1:]
	switch e.Kind {
	case executor.KindScope:
		r := v.byID[e.ID]
		if r == nil {
			return nil
		}
		r.state = executor.State{Name: e.State, Reason: e.Reason, Message: e.Message}
		if verb == "started" || verb == "resumed" {
			if r.started.IsZero() || verb == "started" {
				r.started = e.Time
			}
		}
		switch verb {
		case "started":
			return []string{fmt.Sprintf("%s: started: %s, %d must succeed, %d may fail", r.label, views.Plural(r.counts.Eligible, "server"), r.counts.Required, r.counts.Budget)}
		case "completed", "failed", "paused", "skipped", "stopped":
			l := fmt.Sprintf("%s: %s: %s", r.label, stateText(r.state), countsText(r.counts))
			if eta, ok := v.eta(e.Time); ok && verb == "completed" {
				l += ", ETA " + human(eta)
			}
			return []string{l}
		}
		return nil
	case executor.KindServer:
		if live && verb != "failed" {
			return nil
		}
		switch verb {
		case "completed", "failed", "skipped", "stopped":
			st := executor.State{Name: e.State, Reason: e.Reason, Message: e.Message}
			l := fmt.Sprintf("  %s: %s", e.ID, stateText(st))
			if v.critical[e.ID] && verb == "completed" && e.Message != "" {
				l += ": " + e.Message // how it came back (rule 50)
			}
			if e.Counts != nil && !live {
				c := e.Counts
				l += fmt.Sprintf(" (%s %d/%d done, %d failed, %d running)", v.label(e.Parent), c.Succeeded, c.Eligible, c.Failed, c.Running)
			}
			return []string{l}
		}
		return nil
	case executor.KindGate:
		if verb == "pending" {
			return []string{fmt.Sprintf("Gate %s is waiting for approval: rackform approve %s", e.ID, e.ID)}
		}
		if verb == "skipped" {
			return []string{fmt.Sprintf("Gate %s skipped", e.ID)}
		}
	case executor.KindWait:
		if verb == "started" {
			l := "Waiting: " + e.ID
			if e.Until != nil {
				l += fmt.Sprintf(" (%s)", human(e.Until.Sub(e.Time)))
				v.waiting = fmt.Sprintf("waiting %s until %s", e.ID, e.Until.UTC().Format("15:04:05 UTC"))
			} else {
				v.waiting = "waiting " + e.ID
			}
			return []string{l}
		}
	case executor.KindCluster:
		if verb == "pending" && e.Reason == executor.ReasonWindow {
			v.waiting = fmt.Sprintf("cluster %s waits for its maintenance window: %s", e.ID, e.Message)
			return []string{fmt.Sprintf("Cluster %s waits for its maintenance window: %s", e.ID, e.Message)}
		}
		if verb == "pending" && e.Reason == executor.ReasonAvailability {
			return []string{fmt.Sprintf("Cluster %s is pending: %s; the next cluster of its group goes on (rackform continue checks again)", e.ID, e.Message)}
		}
	}
	return nil
}

func (v *View) label(id string) string {
	if r := v.byID[id]; r != nil {
		return r.label
	}
	return id
}

// ending is the outcome: what happened and what to run next.
func (v *View) ending(e executor.Event) []string {
	o := e.Outcome
	if o == nil {
		return nil
	}
	var out []string
	switch o.Status {
	case executor.OutcomeCompleted:
		out = append(out, "Apply complete: "+o.Message)
	case executor.OutcomeCompletedWithFailures:
		what := "every server"
		if len(planview.Where(v.p, (*plan.Server).IsDevice)) > 0 {
			what = "every server and device"
		}
		out = append(out, "Apply complete, not "+what+" reached its target: "+o.Message)
	case executor.OutcomeFailed:
		out = append(out, "Apply failed: "+o.Message)
	case executor.OutcomePaused:
		out = append(out, fmt.Sprintf("Apply paused (%s): %s", o.Reason, o.Message))
	case executor.OutcomeStopped:
		out = append(out, "Apply stopped: "+o.Message)
	case executor.OutcomeInterrupted:
		out = append(out, "Apply interrupted: "+o.Message)
	default:
		ended := *o
		ended.Next = nil // the commands follow, rendered
		out = append(out, "Apply ended: "+ended.String())
	}
	out = append(out, StrandedLines(o.Stranded, v.opts.Resume)...)
	for _, n := range o.Next {
		if v.opts.Resume.Action(n).Kind == executor.NextApply {
			out = append(out, "To resume, run: "+v.opts.Resume.Command(n))
			continue
		}
		out = append(out, "To continue, run: "+v.opts.Resume.Command(n))
	}
	return out
}

func stepName(e executor.Event) string {
	s := e.StepKind
	if e.Component != "" {
		s = e.Component + " " + s
	}
	if strings.HasPrefix(e.Op, "remedy:") || strings.HasPrefix(e.Op, "safety:") {
		parts := strings.Split(e.Op, ":")
		s = parts[len(parts)-1]
	}
	if s == "" {
		s = e.Op
	}
	return s
}
