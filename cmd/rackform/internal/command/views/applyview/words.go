package applyview

import (
	"fmt"
	"strings"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/planview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
)

// Words for people: states and their reasons, counts, durations, and the
// servers left out of service, shared by the plain lines, the live view,
// the heartbeat and rackform status.

func stateText(s executor.State) string {
	t := string(s.Name)
	if s.Reason != "" {
		t += "(" + s.Reason + ")"
	}
	if s.Message != "" && s.Name != executor.Completed {
		t += " " + s.Message
	}
	return t
}

func countsText(c executor.Counts) string {
	return fmt.Sprintf("%d/%d done, %d failed, %d skipped", c.Succeeded, c.Eligible, c.Failed, c.Skipped)
}

// human formats a duration as the plan's estimates are, to the minute:
// "~1h20m", "~40m", "~0m".
func human(d time.Duration) string {
	return "~" + planview.Duration(plan.Duration(d.Round(time.Minute)))
}

// clock formats elapsed time as mm:ss or h:mm:ss.
func clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int(d.Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

// stateWords and reasonWords say states and their reasons for people.
var stateWords = map[executor.StateName]string{
	executor.NotStarted: "not started",
	executor.Running:    "running",
	executor.Completed:  "done",
	executor.Failed:     "failed",
	executor.Paused:     "paused",
	executor.Pending:    "waiting",
	executor.Skipped:    "skipped",
	executor.Stopped:    "stopped",
	executor.Stopping:   "stopping",
}

var reasonWords = map[string]string{
	executor.ReasonThreshold:           "threshold breached",
	executor.ReasonAfterRack:           "after the rack, until continue",
	executor.ReasonApproval:            "for approval",
	executor.ReasonWindow:              "for its maintenance window",
	executor.ReasonAvailability:        "for its release to reach its site",
	executor.ReasonUser:                "by the operator",
	executor.ReasonAtTarget:            "already at target",
	executor.ReasonEmpty:               "nothing left to upgrade",
	executor.ReasonDrift:               "changed since planned",
	executor.ReasonIdentity:            "a different machine than planned",
	executor.ReasonUnreachable:         "BMC unreachable",
	executor.ReasonStep:                "a step failed",
	executor.ReasonUnhealthy:           "did not come back healthy",
	executor.ReasonInterrupted:         "interrupted",
	executor.ReasonBlocked:             "blocked",
	executor.ReasonQuorum:              "held for control-plane quorum",
	executor.ReasonProviderUnavailable: "provider unavailable",
}

// HumanState is a state for people: "paused: threshold breached",
// "waiting: for approval", "done". The plain log lines keep the state
// tokens (scripts and log searches read them); the terminal view and the
// heartbeat use these words.
func HumanState(s executor.State) string {
	t, ok := stateWords[s.Name]
	if !ok {
		t = strings.ReplaceAll(string(s.Name), "_", " ")
	}
	if s.Reason != "" {
		r, ok := reasonWords[s.Reason]
		if !ok {
			r = strings.ReplaceAll(s.Reason, "_", " ")
		}
		t += ": " + r
	}
	return t
}

// StrandedLines lists the servers left out of service, each with what
// brings it back (with the options of r: Resume.Text).
func StrandedLines(st []executor.Stranded, r *Resume) []string {
	if len(st) == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("Left out of service (%d):", len(st))}
	for _, s := range st {
		state := executor.State{Name: s.State, Reason: s.Reason}
		rec := r.Text(s.Recover)
		out = append(out, fmt.Sprintf("  %s (%s): %s; to bring it back: %s", s.Server, stateText(state), s.What(), rec))
	}
	return out
}
