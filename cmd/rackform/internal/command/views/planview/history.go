package planview

import (
	"fmt"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/planner/plan"
)

// Estimate sources of a step in show -json.
const (
	EstimateLearned = "learned"
	EstimateDefault = "default"
)

// JSONHistory is what the plan's estimates learned from earlier runs'
// journals (plan format 1.5): how many runs were read and every learned
// estimate the steps use.
type JSONHistory struct {
	Runs      int           `json:"runs"`
	Estimates []JSONLearned `json:"estimates"`
}

// JSONLearned is one learned estimate: the class of steps it was learned
// for (at the level it was found: the model's, the vendor's or any
// server's), from how many samples in how many runs, its median (the
// steps' estimate) and 90th percentile.
type JSONLearned struct {
	Class        string `json:"class"`
	Level        string `json:"level"`
	Kind         string `json:"kind"`
	Component    string `json:"component"`
	Manufacturer string `json:"manufacturer"`
	Model        string `json:"model"`
	AfterBoot    bool   `json:"after_boot"`
	Samples      int    `json:"samples"`
	Runs         int    `json:"runs"`
	Median       string `json:"median"`
	P90          string `json:"p90"`
}

func learnedJSON(l *plan.Learned) *JSONLearned {
	if l == nil {
		return nil
	}
	k := l.Key
	return &JSONLearned{Class: k.String(), Level: k.Level(), Kind: string(k.Kind), Component: k.Component,
		Manufacturer: k.Manufacturer, Model: k.Model, AfterBoot: k.AfterBoot,
		Samples: l.Samples, Runs: l.Runs, Median: l.Median.String(), P90: l.P90.String()}
}

// historyJSON is the plan's history, or nil when plan read none (the
// history was off, or the plan is older than format 1.5).
func historyJSON(h *plan.History) *JSONHistory {
	if h == nil {
		return nil
	}
	out := &JSONHistory{Runs: h.Runs, Estimates: []JSONLearned{}}
	for i := range h.Estimates {
		out.Estimates = append(out.Estimates, *learnedJSON(&h.Estimates[i]))
	}
	return out
}

// estimateSource says where a step's estimate comes from.
func estimateSource(st *plan.Step) string {
	if st.Learned != nil {
		return EstimateLearned
	}
	return EstimateDefault
}

// HistoryLines say which estimates were learned from earlier runs: a
// heading, then a line per learned estimate; nothing when plan read no
// history.
func HistoryLines(p *plan.Plan) []string {
	h := p.History
	switch {
	case h == nil:
		return nil
	case h.Runs == 0:
		return []string{"estimates: no earlier run in the history; every step has its kind's default"}
	case len(h.Estimates) == 0:
		return []string{fmt.Sprintf("estimates: %s read, none with steps like these; every step has its kind's default", views.Plural(h.Runs, "earlier run"))}
	}
	out := []string{fmt.Sprintf("estimates learned from %s (other steps have their kind's default):", views.Plural(h.Runs, "earlier run"))}
	for _, l := range h.Estimates {
		out = append(out, fmt.Sprintf("  %s: median %s (p90 %s), %s in %s",
			l.Key, learnedDuration(l.Median), learnedDuration(l.P90), views.Plural(l.Samples, "sample"), views.Plural(l.Runs, "run")))
	}
	return out
}

// learnedDuration formats a learned duration for people like Duration,
// but under 10 s to the millisecond (steps on a fast simulator), which
// Duration would round to whole seconds or "0m".
func learnedDuration(d plan.Duration) string {
	if t := time.Duration(d); t < 10*time.Second {
		return t.Round(time.Millisecond).String()
	}
	return Duration(d)
}
