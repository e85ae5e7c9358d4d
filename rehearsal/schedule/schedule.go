// Package schedule is a rehearsed rollout on the calendar, as pure data:
// when every stage, group, cluster, phase, rack or batch, server and wait
// ran (bars), where the run waited or decided (marks: gates, pauses,
// window waits, thresholds met or breached, with their numbers), and how
// each cluster fits its maintenance window. `rackform rehearse` renders it
// as text and as the final line of its -json stream; a timeline draws it.
// Nothing here runs anything: package rehearsal fills it in. Its durations
// and intervals are the plan's.
package schedule

import (
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// FormatVersion is the version of the schedule document. A minor version
// adds properties; a major one changes or removes them.
const FormatVersion = "1.0"

// Schedule is one rehearsal of a plan.
type Schedule struct {
	FormatVersion string `json:"format_version"`
	PlanSHA256    string `json:"plan_sha256"`
	// Start is where the rehearsal put the run on the calendar (-start);
	// End is when it ended: completed, failed, or stopped at a pause it
	// could not get past (a breached threshold, -stop-at-gates).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Total is End − Start.
	Total Duration `json:"total"`
	// PlanEstimate is the plan's own estimate (the sum of its stages, no
	// windows, pauses and gates at zero).
	PlanEstimate Duration `json:"plan_estimate"`
	// CriticalPath is the longest chain of steps, waits, windows and gates
	// the plan's rules force from Start, computed from the plan alone
	// (independently of the executor); CriticalPath ≤ Total, and with no
	// faults Total / CriticalPath is the executor's own overhead.
	CriticalPath Duration `json:"critical_path"`
	// NotAfter is when the plan expires: a cluster whose window opens
	// only later cannot start.
	NotAfter time.Time `json:"not_after"`
	// ApproveAfter is how long each gate and pause was held before the
	// rehearsal approved or continued it; StopAtGates: it stopped at the
	// first one instead.
	ApproveAfter Duration `json:"approve_after"`
	StopAtGates  bool     `json:"stop_at_gates"`
	// Scenario is the fault scenario's file name ("" for none) and Seed
	// the seed of its random faults.
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Outcome is how the rehearsal ended, as apply would (ExitCode is
	// apply's exit code for it).
	Outcome Outcome `json:"outcome"`

	Bars    []Bar           `json:"bars"`
	Marks   []Mark          `json:"marks"`
	Windows []ClusterWindow `json:"windows"`
}

// Outcome is how the rehearsed run ended.
type Outcome struct {
	// Status: completed, completed_with_failures, failed, paused, stopped.
	Status string `json:"status"`
	// Reason: threshold, approval, after_rack, quorum, window, blocked…
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Next: what apply would print to go on from here.
	Next []string `json:"next"`
	// ExitCode is apply's exit code for it (the CLI fills it in).
	ExitCode int `json:"exit_code"`
	// Servers by how they ended (completed runs).
	Upgraded int `json:"upgraded"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
}

// Bar kinds, the levels of the run tree that take time.
const (
	KindStage   = "stage"
	KindGroup   = "group"
	KindCluster = "cluster"
	KindPhase   = "phase"
	// KindScope is a rack, a batch, or the serial control plane (Scope
	// says which).
	KindScope  = "scope"
	KindServer = "server"
	// KindWait is a wait after a scope or a stage.
	KindWait = "wait"
)

// Bar is one node of the run tree that ran: from its start to its end.
type Bar struct {
	Kind string `json:"kind"`
	// ID is the run tree's ID ("stage.prod", "cluster.east",
	// "cluster.east.compute.rack.e01", "cluster.east.compute.rack.e01.wait");
	// a server's is its address ("east/e01/e01-s3").
	ID     string `json:"id"`
	Parent string `json:"parent"`
	// Name is what people call it: "e01", "control plane", "e01-s3".
	Name string `json:"name"`
	// Scope is a scope's kind: "rack", "batch" or "serial" ("" otherwise).
	Scope string    `json:"scope"`
	Start time.Time `json:"start"`
	// End is when it ended; Open is set, and End is the rehearsal's end,
	// when it had not ended then (paused, or running when it stopped).
	End  time.Time `json:"end"`
	Open bool      `json:"open"`
	// State, Reason and Message are its last state, as apply reports it:
	// completed, failed(step), paused(threshold)…
	State   string `json:"state"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Mark kinds.
const (
	// MarkGate: an approval gate, from when the run reached it to its
	// approval.
	MarkGate = "gate"
	// MarkPause: the run paused: after a rack (pause_after_rack), on a
	// breached threshold, or held for control-plane quorum (Reason), until
	// it was continued.
	MarkPause = "pause"
	// MarkWindow: a cluster waited for its maintenance window to open.
	MarkWindow = "window"
	// MarkThreshold: a scope's threshold was met (Result "met") or
	// breached ("paused" or "failed", as its on_breach says).
	MarkThreshold = "threshold"
)

// Threshold results.
const (
	ResultMet    = "met"
	ResultPaused = "paused"
	ResultFailed = "failed"
)

// Mark is a moment or a span where the run waited or decided.
type Mark struct {
	Kind string `json:"kind"`
	// ID is what it is about: a gate's ID, a scope's (pauses and
	// thresholds), a cluster's (windows).
	ID string `json:"id"`
	// At is when it was reached; Until when it was released (approved,
	// continued, the window opened); Open: it still held at the end.
	At    time.Time `json:"at"`
	Until time.Time `json:"until"`
	Open  bool      `json:"open"`
	// Held is Until − At.
	Held Duration `json:"held"`
	// Reason: for pauses after_rack, threshold or quorum; for windows
	// window; for gates approval.
	Reason string `json:"reason"`
	// Result is a threshold's: met, paused, failed.
	Result string `json:"result"`
	// Message says it in words, with the numbers apply prints.
	Message string `json:"message"`
	// Counts are a threshold's numbers at that moment.
	Counts *Counts `json:"counts"`
	// Holds lists what could not start while it held (a gate's next
	// stage, the clusters behind a window).
	Holds []string `json:"holds"`
}

// Counts are a scope's numbers, as apply reports them.
type Counts struct {
	// Eligible is N (servers not skipped); Required the successes needed;
	// Budget the failures tolerated.
	Servers   int `json:"servers"`
	Eligible  int `json:"eligible"`
	Required  int `json:"required"`
	Budget    int `json:"budget"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Skipped   int `json:"skipped"`
	Running   int `json:"running"`
}

// ClusterWindow is how a cluster's work fits its maintenance window
// (rule 20: a window gates only the start; work in flight is never cut).
type ClusterWindow struct {
	// Cluster is the cluster's ID, Name its name.
	Cluster string `json:"cluster"`
	Name    string `json:"name"`
	// Windows are the window's openings from plan time to not_after, as
	// the plan lists them; empty: the cluster has no window.
	Windows []Interval `json:"windows"`
	// Start and End are the cluster's work (zero when it never started).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Opening is the window opening the cluster started in (nil: it has
	// no window, or did not start).
	Opening *Interval `json:"opening"`
	// Fits: the cluster started in an opening and its work ended before
	// that opening closed (or it has no window).
	Fits bool `json:"fits"`
	// Overrun is how long its work ran past the opening's close.
	Overrun Duration `json:"overrun"`
	// Miss says why it does not fit, in words ("" when it fits).
	Miss string `json:"miss"`
}

// Interval is a half-open time interval [Start, End), as the plan writes
// a window's openings.
type Interval = plan.Interval

// Duration is a time.Duration written as Go duration text ("1h30m0s"), as
// the plan writes its durations; Human says it for people.
type Duration = plan.Duration
