package plan

import (
	"slices"
	"strings"
	"time"

	"github.com/rackform/rackform/providers"
)

// Learned estimates (format 1.5).
//
// A step's Estimate is the planner's fixed typical duration for its kind
// unless durations of earlier runs were learned for it from their journals
// (executor/history): then it is the median of those runs' durations and
// Step.Learned says of which class, from how many samples, with the 90th
// percentile beside it. Samples are classed by EstimateKey: the step's kind
// and component on servers of one manufacturer and model. A class with too
// few samples gives way to the same kind and component on that
// manufacturer's servers of any model, then on any server.

// The typical duration of a step by kind: its estimate when no duration
// of earlier runs was learned for it (the planner caps it by the step's
// timeout), and what a rehearsal gives an operation the plan has no step
// for (a remediation's reboot, a skipped server's power on). The numbers
// are there to compare plans and to size maintenance windows, not to
// promise a finish time.
const (
	TypicalDrain          = 5 * time.Minute
	TypicalShutdown       = 3 * time.Minute
	TypicalFirmwareUpdate = 10 * time.Minute
	TypicalRuntimeUpdate  = 20 * time.Minute
	TypicalReimage        = 30 * time.Minute
	TypicalReset          = 10 * time.Minute
	TypicalWaitReady      = 10 * time.Minute
	TypicalUncordon       = 1 * time.Minute
	// TypicalNoRebootRefresh is a wait_ready after updates that took no
	// reboot.
	TypicalNoRebootRefresh = 2 * time.Minute
)

// EstimateKey is a class of steps whose durations are learned together.
// A key with Model set is a model's class, with Manufacturer set (and no
// Model) a vendor's, with neither the kind's on any server. (Format 1.5.)
type EstimateKey struct {
	Kind StepKind `json:"kind"`
	// Component is the configuration's component an update or reimage
	// step moves; "" for other kinds.
	Component    string `json:"component,omitempty"`
	Manufacturer string `json:"manufacturer,omitempty"`
	Model        string `json:"model,omitempty"`
	// AfterBoot marks a wait_ready after a reset or reimage of the server:
	// waiting for a boot, not for the BMC to report what it flashed.
	AfterBoot bool `json:"after_boot,omitempty"`
}

// Estimate levels, from the most specific.
const (
	LevelModel  = "model"
	LevelVendor = "vendor"
	LevelKind   = "kind"
)

// KeyOf is the most specific class of steps[i] on a server identified as
// id (its manufacturer and model, as its BMC reported them at plan time).
func KeyOf(id providers.Identity, steps []Step, i int) EstimateKey {
	st := &steps[i]
	k := EstimateKey{Kind: st.Kind, Manufacturer: id.Manufacturer, Model: id.Model}
	switch st.Kind {
	case StepUpdate, StepReimage:
		k.Component = st.Component
	case StepWaitReady:
		for _, before := range steps[:i] {
			if before.Kind == StepReset || before.Kind == StepReimage {
				k.AfterBoot = true
			}
		}
	}
	return k
}

// Level says whose class k is: a model's, a vendor's or the kind's.
func (k EstimateKey) Level() string {
	switch {
	case k.Model != "":
		return LevelModel
	case k.Manufacturer != "":
		return LevelVendor
	}
	return LevelKind
}

// Coarser returns the class one level up (model → vendor → kind), or false
// at the kind's.
func (k EstimateKey) Coarser() (EstimateKey, bool) {
	switch {
	case k.Model != "":
		k.Model = ""
		return k, true
	case k.Manufacturer != "":
		k.Manufacturer = ""
		return k, true
	}
	return k, false
}

// String names the class for people: "update bios on Contoso R640",
// "wait_ready after a boot on Contoso (any model)", "shutdown (any server)".
func (k EstimateKey) String() string {
	var b strings.Builder
	b.WriteString(string(k.Kind))
	if k.Component != "" {
		b.WriteString(" " + k.Component)
	}
	if k.AfterBoot {
		b.WriteString(" after a boot")
	}
	switch k.Level() {
	case LevelModel:
		b.WriteString(" on " + strings.TrimSpace(k.Manufacturer+" "+k.Model))
	case LevelVendor:
		b.WriteString(" on " + k.Manufacturer + " (any model)")
	default:
		b.WriteString(" (any server)")
	}
	return b.String()
}

// Learned is a step duration learned from earlier runs: the median and
// 90th percentile of the successful steps of one class. (Format 1.5.)
type Learned struct {
	// Key is the class the samples are of, at the level they were found:
	// the step's own model, its vendor, or any server.
	Key EstimateKey `json:"key"`
	// Samples is how many steps were measured, Runs in how many runs.
	Samples int      `json:"samples"`
	Runs    int      `json:"runs"`
	Median  Duration `json:"median"`
	P90     Duration `json:"p90"`
}

// History says what a plan's estimates learned from earlier runs: how many
// runs' journals were read and every learned estimate its steps use.
// (Format 1.5.)
type History struct {
	// Runs is how many earlier runs were read (0: none was found).
	Runs int `json:"runs"`
	// Estimates are the learned estimates the plan's steps use, once
	// each, in the order of the steps that first use them.
	Estimates []Learned `json:"estimates,omitempty"`
}

// Learn gives each of a server's steps the estimate lookup learned for
// its class, where it has one: the median, capped by the step's timeout
// as the defaults are. id is who the server's BMC says it is. It returns
// the steps, a copy when any changed (a list may be shared with other
// servers: intern.go), and how many steps it gave a learned estimate.
// plan and rehearse both learn with it.
func Learn(id providers.Identity, steps []Step, lookup func(EstimateKey) (Learned, bool)) ([]Step, int) {
	n := 0
	for i := range steps {
		l, ok := lookup(KeyOf(id, steps, i))
		if !ok {
			continue
		}
		if n == 0 {
			steps = slices.Clone(steps)
		}
		st := &steps[i]
		d := time.Duration(l.Median)
		if t := time.Duration(st.Timeout); t > 0 && t < d {
			d = t
		}
		st.Estimate, st.Learned = Duration(d), &l
		n++
	}
	return steps, n
}
