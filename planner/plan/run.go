package plan

import (
	"iter"
	"time"
)

// Run is the ordered tree apply walks: stages → groups → clusters → phases
// → scopes → servers. Every number (threshold, budget, concurrency, wait) is
// resolved here, so apply needs no configuration to decide anything.
type Run struct {
	Name string `json:"name"`
	// Scope is "full", "control_plane_only" or "firmware_only".
	Scope  string  `json:"scope"`
	Stages []Stage `json:"stages"`
}

// Clusters yields the run's clusters in run order: stage by stage, group
// by group.
func (r *Run) Clusters() iter.Seq[*Cluster] {
	return func(yield func(*Cluster) bool) {
		for si := range r.Stages {
			for gi := range r.Stages[si].Groups {
				g := &r.Stages[si].Groups[gi]
				for ci := range g.Clusters {
					if !yield(&g.Clusters[ci]) {
						return
					}
				}
			}
		}
	}
}

// Stage runs after the previous stage (rule 1).
type Stage struct {
	// ID is the stage's address, e.g. "stage.canary"; skip and approve use it.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Gates are approval gates before or after the stage (rule 18).
	Gates []Gate `json:"gates,omitempty"`
	// AfterWait runs after the stage together with its after-gates (rule 19).
	AfterWait Duration `json:"after_wait,omitempty"`
	// OnBreach is what a failed group or cluster does to the run: "fail"
	// (default for stages) or "pause".
	OnBreach string   `json:"on_breach"`
	Groups   []Group  `json:"groups"`
	Estimate Duration `json:"estimate"`

	// FailFast is set for the stages of a declared rollout (an update
	// run): a member cluster that fails or breaches fails its group, the
	// stage and the run, and nothing more starts (optional).
	FailFast bool `json:"fail_fast,omitempty"`
}

// Gate is an approval gate.
type Gate struct {
	// ID is the gate's address, e.g. "stage.canary.gate.qa"; `approve ID`.
	ID          string `json:"id"`
	Name        string `json:"name"`
	When        string `json:"when"` // "before" or "after"
	Description string `json:"description,omitempty"`
}

// Group runs in parallel with the other groups of its stage (rule 2).
type Group struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Clusters []Cluster `json:"clusters"`
	// Estimate is the sum of its clusters' estimates (they run in turn).
	Estimate Duration `json:"estimate"`
}

// Cluster runs after the previous cluster of its group, in the order given
// (maintenance-window priority already applied, rule 20).
type Cluster struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// WindowPriority is the rule-20 class at plan time: "open", "opening",
	// "none" or "closed".
	WindowPriority string `json:"window_priority"`
	// Windows are the maintenance window's open intervals from plan time to
	// NotAfter; empty when the cluster has no window. Apply starts the
	// cluster only inside one (work in flight is never interrupted).
	Windows  []Interval `json:"windows,omitempty"`
	Settings Settings   `json:"settings"`
	Phases   []Phase    `json:"phases"`
	Estimate Duration   `json:"estimate"`

	// Quorum is the control plane's quorum as planned, set only when it
	// needs a reviewer's eye: a member down, a spare taking over, or an
	// override (optional; see quorum.go).
	Quorum *Quorum `json:"quorum,omitempty"`

	// Release is which release the cluster is planned to and why, when a
	// channel or the catalog decided it; Release.Pending holds the cluster
	// until its release is available at its site (optional; catalog.go).
	Release *ReleaseChoice `json:"release,omitempty"`
}

// Interval is a half-open time interval [Start, End).
type Interval struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Contains reports whether t is inside the interval.
func (i Interval) Contains(t time.Time) bool { return !t.Before(i.Start) && t.Before(i.End) }

// Settings are a cluster's per-server execution settings from its strategy.
type Settings struct {
	DrainTimeout    Duration `json:"drain_timeout"`
	ShutdownTimeout Duration `json:"shutdown_timeout"`
	VerifyTimeout   Duration `json:"verify_timeout"`
	// DrainHook and UncordonHook are argv lists run with the server's name,
	// node name and rack in the environment; empty means no hook.
	DrainHook    []string `json:"drain_hook,omitempty"`
	UncordonHook []string `json:"uncordon_hook,omitempty"`
	HookTimeout  Duration `json:"hook_timeout,omitempty"`
	// Remediation is what a server that does not come back gets (rule 30),
	// by role: e.g. {"control_plane": ["reboot"], "management": ["reboot",
	// "reimage"], "compute": ["reimage"]}.
	Remediation map[string][]string `json:"remediation,omitempty"`

	// Triggers are the remediation triggers' durations (optional; see
	// remediation.go). Without them wait_ready waits its timeout.
	Triggers *RemediationTriggers `json:"remediation_triggers,omitempty"`
}

// Scopes yields the cluster's scopes in run order, each with its phase.
func (c *Cluster) Scopes() iter.Seq2[*Phase, *Scope] {
	return func(yield func(*Phase, *Scope) bool) {
		for pi := range c.Phases {
			ph := &c.Phases[pi]
			for si := range ph.Scopes {
				if !yield(ph, &ph.Scopes[si]) {
					return
				}
			}
		}
	}
}

// PhaseKind names a cluster phase (rule 3).
type PhaseKind string

const (
	PhaseControlPlane PhaseKind = "control_plane"
	PhaseManagement   PhaseKind = "management"
	PhaseCompute      PhaseKind = "compute"
	// PhaseStage is a stage of a strategy that declares its own stages
	// instead of the three default phases.
	PhaseStage PhaseKind = "stage"
	// PhaseDevices holds a cluster's devices (Server.Kind), rack by rack,
	// before or after its servers' phases as the strategy places them.
	// (Format 1.6.)
	PhaseDevices PhaseKind = "devices"
)

// Phase is one of the cluster's phases, run in order.
type Phase struct {
	ID   string    `json:"id"`
	Kind PhaseKind `json:"kind"`
	// Name is the strategy stage's name for PhaseStage, else the kind.
	Name   string  `json:"name,omitempty"`
	Scopes []Scope `json:"scopes"`
	// Estimate is the sum of its scopes' estimates, waits included.
	Estimate Duration `json:"estimate"`
}

// Scope is a rack, a batch or the serial control plane: the unit that has
// a threshold. Scopes of a phase run one after another.
type Scope struct {
	// ID is the scope's address, e.g. "cluster.east-1.compute.rack.r01".
	ID   string `json:"id"`
	Kind string `json:"kind"` // "rack", "batch" or "serial"
	Name string `json:"name"`
	// Rack is set for rack scopes.
	Rack string `json:"rack,omitempty"`
	// Servers are server addresses in start order; skipped servers are
	// listed too (they leave N, rule 9).
	Servers []string `json:"servers"`

	Threshold Threshold `json:"threshold"`
	// Eligible is N: the servers not skipped at plan time.
	Eligible int `json:"eligible"`
	// Required successes: ceil(v·N/100) for percent, v for count (rule 9).
	Required int `json:"required"`
	// Budget is how many failures the scope tolerates (rule 10).
	Budget int `json:"budget"`
	// MaxUnavailable is how many servers run at once (rule 7; 1 = serial).
	MaxUnavailable int    `json:"max_unavailable"`
	OnBreach       string `json:"on_breach"` // "pause" or "fail"
	// WaitAfter is the wait after the scope is terminal (rule 16).
	WaitAfter Duration `json:"wait_after,omitempty"`
	// PauseAfter pauses the run after the scope until `continue` (rule 17).
	PauseAfter bool     `json:"pause_after,omitempty"`
	Estimate   Duration `json:"estimate"`
}

// Threshold as written in the strategy.
type Threshold struct {
	Type  string `json:"type"` // "count" or "percent"
	Value int    `json:"value"`
}
