// Package history learns how long rollout steps take from the journals of
// earlier runs, so that plans estimate with measured durations instead of
// fixed defaults. The planner gets the result as plain data (Estimates
// satisfies planner.Estimator); it never reads a journal itself.
package history

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
)

// Defaults of Options.
const (
	// DefaultRuns is how many of the most recent runs are read.
	DefaultRuns = 20
	// DefaultMinSamples is how many measured steps a class needs before
	// its median is used; a class with fewer gives way to a coarser one.
	DefaultMinSamples = 3
)

// Options bound what Load reads and what it trusts.
type Options struct {
	// Runs is how many runs are read, the most recent first, across all
	// sources (0: DefaultRuns).
	Runs int
	// MinSamples is the fewest samples a class is used with
	// (0: DefaultMinSamples).
	MinSamples int
}

// Estimates are the step durations measured in earlier runs, by class
// (plan.EstimateKey), at every level: each measured step counts for its
// model's class, its vendor's and the kind's on any server.
type Estimates struct {
	runs       int
	skipped    []string
	minSamples int
	classes    map[plan.EstimateKey]*class
}

// class holds the samples of one estimate class.
type class struct {
	durations []time.Duration
	runs      int
	lastRun   int // the run that added the last sample, counting runs once
	learned   *plan.Learned
}

// Load reads the most recent runs of the sources (Options.Runs of them in
// all, newest first; a run two sources hold is read once) and measures
// every plan step they completed: from its step_started to its step_done
// record. Only a step that ran once and succeeded counts: a failed step,
// one started again (after a crash, an interrupt, a provider restart that
// ran it anew) or finished after the apply that started it was replaced
// (it was resumed), and a drain that ran out its timeout are left out.
// Waits, gates, pauses, remediation and safety steps are not plan steps
// and are never measured.
//
// A source that cannot list its runs is an error. A run that cannot be
// read (its plan missing or damaged, its journal unreadable) is left out
// and said in Skipped.
func Load(ctx context.Context, sources []Source, opts Options) (*Estimates, error) {
	if opts.Runs <= 0 {
		opts.Runs = DefaultRuns
	}
	if opts.MinSamples <= 0 {
		opts.MinSamples = DefaultMinSamples
	}
	type found struct {
		Run
		src Source
	}
	var all []found
	seen := map[string]bool{}
	for _, src := range sources {
		runs, err := src.Runs(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the runs in %s: %w", src, err)
		}
		for _, r := range runs {
			all = append(all, found{r, src})
		}
	}
	slices.SortStableFunc(all, func(a, b found) int { return state.RecentFirst(a.Run, b.Run) })
	e := &Estimates{minSamples: opts.MinSamples, classes: map[plan.EstimateKey]*class{}}
	for _, f := range all {
		if e.runs == opts.Runs {
			break
		}
		if seen[f.PlanSHA256] {
			continue
		}
		seen[f.PlanSHA256] = true
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		samples, err := measure(ctx, f.src, f.PlanSHA256)
		if err != nil {
			e.skipped = append(e.skipped, fmt.Sprintf("the run of plan %s in %s was not read: %v", plan.ShortSHA(f.PlanSHA256), f.src, err))
			continue
		}
		e.runs++
		for _, s := range samples {
			e.add(s.key, s.d)
		}
	}
	return e, nil
}

// add counts d for k and for each coarser class of k.
func (e *Estimates) add(k plan.EstimateKey, d time.Duration) {
	for {
		c := e.classes[k]
		if c == nil {
			c = &class{}
			e.classes[k] = c
		}
		c.durations = append(c.durations, d)
		if c.lastRun != e.runs {
			c.lastRun = e.runs
			c.runs++
		}
		next, ok := k.Coarser()
		if !ok {
			return
		}
		k = next
	}
}

// Runs is how many earlier runs the estimates were learned from.
func (e *Estimates) Runs() int {
	if e == nil {
		return 0
	}
	return e.runs
}

// Skipped says, one sentence each, which runs could not be read.
func (e *Estimates) Skipped() []string {
	if e == nil {
		return nil
	}
	return e.skipped
}

// Lookup returns the learned estimate for a step of class k: from k itself
// when it has enough samples, else from the first coarser class that has
// (model → vendor → any server). False when none has: the caller keeps
// its default.
func (e *Estimates) Lookup(k plan.EstimateKey) (plan.Learned, bool) {
	if e == nil {
		return plan.Learned{}, false
	}
	for {
		if c := e.classes[k]; c != nil && len(c.durations) >= e.minSamples {
			return *c.estimate(k), true
		}
		next, ok := k.Coarser()
		if !ok {
			return plan.Learned{}, false
		}
		k = next
	}
}

// Classes lists every class with enough samples to be used, by name.
func (e *Estimates) Classes() []plan.Learned {
	if e == nil {
		return nil
	}
	var out []plan.Learned
	for k, c := range e.classes {
		if len(c.durations) >= e.minSamples {
			out = append(out, *c.estimate(k))
		}
	}
	slices.SortFunc(out, func(a, b plan.Learned) int { return strings.Compare(a.Key.String(), b.Key.String()) })
	return out
}

func (c *class) estimate(k plan.EstimateKey) *plan.Learned {
	if c.learned == nil {
		s := slices.Clone(c.durations)
		slices.Sort(s)
		c.learned = &plan.Learned{
			Key: k, Samples: len(s), Runs: c.runs,
			Median: plan.Duration(percentile(s, 0.5)), P90: plan.Duration(percentile(s, 0.9)),
		}
	}
	return c.learned
}

// percentile is the nearest-rank q-th percentile of sorted samples,
// rounded to the millisecond (a plan file needs no more).
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)].Round(time.Millisecond)
}

// sample is one measured step.
type sample struct {
	key plan.EstimateKey
	d   time.Duration
}

// op is what the journal says of one server's op.
type op struct {
	starts   int
	start    time.Time
	done     time.Time
	failed   bool
	resumed  bool
	applyAt  int // the apply (count of run_started) that started it
	finished bool
}

// What the records measure has in its type, as apply writes them (compact
// JSON): only those records are decoded.
var (
	stepType       = []byte(`"type":"step_`)
	runStartedType = []byte(`"type":"` + executor.RecordRunStarted + `"`)
)

// record is what measure reads of a journal record (executor.Record).
type record struct {
	V      int       `json:"v"`
	Time   time.Time `json:"time"`
	Type   string    `json:"type"`
	Server string    `json:"server"`
	Op     string    `json:"op"`
}

// decodeRecord reads the fields of a journal record measure needs, with
// encoding/json/v2's engine and v1 semantics (as providers/redfish reads
// Redfish documents: twice as fast as encoding/json; journals of 20 runs
// of a large fleet are millions of records), refusing a version newer than
// the executor writes, as its own replay does.
func decodeRecord(b []byte) (*record, error) {
	var r record
	if err := jsonv1.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.V < 1 || r.V > executor.JournalVersion {
		return nil, fmt.Errorf("journal record version %d is not supported (this rackform reads up to %d)", r.V, executor.JournalVersion)
	}
	return &r, nil
}

// measure reads one run's plan and journal and returns its samples.
func measure(ctx context.Context, src Source, sha string) ([]sample, error) {
	file, err := src.LoadPlan(ctx, sha)
	if err != nil {
		return nil, err
	}
	if got := plan.SHA256(file); got != sha {
		return nil, fmt.Errorf("its plan file does not hash to its name (%s)", plan.ShortSHA(got))
	}
	p, err := plan.Decode(file)
	if err != nil {
		return nil, fmt.Errorf("its plan file: %w", err)
	}
	entries, err := src.Read(ctx, sha, -1)
	if err != nil {
		return nil, fmt.Errorf("its journal: %w", err)
	}
	type id struct{ server, op string }
	ops := map[id]*op{}
	var order []id
	applies := 0
	for i, en := range entries {
		if !bytes.Contains(en.Data, stepType) && !bytes.Contains(en.Data, runStartedType) {
			continue // a state, observation or task record: most of a journal
		}
		r, err := decodeRecord(en.Data)
		if err != nil {
			return nil, fmt.Errorf("its journal's record %d: %w", i+1, err)
		}
		switch r.Type {
		case executor.RecordRunStarted:
			applies++
			continue
		case executor.RecordStepStarted, executor.RecordStepDone, executor.RecordStepFailed:
		default:
			continue
		}
		if _, ok := executor.PlanStepIndex(r.Op); !ok {
			continue
		}
		k := id{r.Server, r.Op}
		o := ops[k]
		if o == nil {
			o = &op{}
			ops[k] = o
			order = append(order, k)
		}
		switch r.Type {
		case executor.RecordStepStarted:
			o.starts++
			if o.starts == 1 {
				o.start, o.applyAt = r.Time, applies
			}
		case executor.RecordStepDone:
			if !o.finished {
				o.finished, o.done = true, r.Time
				o.resumed = applies != o.applyAt
			}
		case executor.RecordStepFailed:
			o.failed = true
		}
	}
	servers := make(map[string]*plan.Server, len(p.Servers))
	for i := range p.Servers {
		servers[p.Servers[i].Address] = &p.Servers[i]
	}
	var out []sample
	for _, k := range order {
		o := ops[k]
		if o.starts != 1 || !o.finished || o.failed || o.resumed {
			continue
		}
		s := servers[k.server]
		if s == nil {
			continue
		}
		index, _ := executor.PlanStepIndex(k.op)
		i := slices.IndexFunc(s.Steps, func(st plan.Step) bool { return st.Index == index })
		if i < 0 {
			continue
		}
		st := &s.Steps[i]
		d := o.done.Sub(o.start)
		if d < 0 || st.Kind == plan.StepDrain && st.Timeout > 0 && d >= time.Duration(st.Timeout) {
			continue // a clock step back; a drain that ran out its time and proceeded
		}
		out = append(out, sample{plan.KeyOf(s.Identity, s.Steps, i), d})
	}
	return out, nil
}
