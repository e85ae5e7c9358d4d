package rehearsal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/internal/vclock"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// Holder is who the rehearsal's runs and control records name.
const Holder = "rehearsal"

// PollInterval is the executor's poll interval in a rehearsal: apply's
// (the CLI passes 1s), so every decision that reads it (the remediation
// watch's slices) is the one apply makes.
const PollInterval = time.Second

// maxRuns bounds how often the rehearsal answers a pause or gate and runs
// again: every answer lets the run progress, so a plan needs as many as it
// has gates, pauses after racks and quorum holds.
const maxRuns = 100000

// Options say what to rehearse and how.
type Options struct {
	// Plan and PlanSHA256 are the plan, as apply takes it.
	Plan       *plan.Plan
	PlanSHA256 string
	// Faults are a scenario's, resolved against the plan (nil: none).
	Faults *Faults
	// Seed draws the scenario's random faults.
	Seed uint64
	// Start is when the run starts on the calendar: maintenance windows
	// are evaluated against it.
	Start time.Time
	// ApproveAfter is how long each approval gate and pause waits (in
	// rehearsed time) before the rehearsal approves or continues it, as
	// `rackform approve` and `rackform continue` do.
	ApproveAfter time.Duration
	// StopAtGates ends the rehearsal at the first gate or pause instead.
	StopAtGates bool
	// Command renders an action the schedule's messages name (a pause's
	// continue, a gate's approval, the servers to skip) and the outcome's
	// next actions as the caller's command line; nil: the action's text
	// (NextAction.String).
	Command func(executor.NextAction) string
	// Events receives the executor's events (virtual timestamps), besides
	// the schedule's recorder; nil: none.
	Events executor.Sink
	Logger *slog.Logger
	// Journal, when set, is a run of the plan as its state backend holds
	// it (every record, in order): the rehearsal takes that run over
	// where it is, at Start (never before the journal's last record), and
	// the schedule begins with what the journal records (resume.go).
	Journal []executor.Entry
	// Backend is the in-memory journal the rehearsal's runs write (nil: a
	// new one): what it leaves there is a run's journal as apply's would
	// be, with rehearsed times (a caller may read it, or take it over
	// later as Journal).
	Backend *state.Memory
}

// Result is a rehearsal's outcome and schedule.
type Result struct {
	// Outcome is the last run's: what apply would have ended with there.
	Outcome  executor.Outcome
	Schedule *schedule.Schedule
	// From is where the rehearsal took over a run's journal
	// (Options.Journal): the schedule before it is what happened, after
	// it what the rehearsal expects; zero when it rehearsed from the start.
	From time.Time
}

// Run rehearses the plan: it runs the plan's own executor (executor.Run,
// unchanged) on a virtual clock, against a simulated copy of the fleet
// (NewFleet) and an in-memory journal. A pause or gate ends the executor's
// run as it ends apply's (outcome paused); the rehearsal then writes the
// record `rackform continue` or `rackform approve` would write, after
// ApproveAfter, and runs again on the same clock and journal. It stops at
// what a person must decide: a breached threshold (continue leaves it
// paused until servers are skipped or fixed), a quorum hold that continue
// does not lift, a cluster no window lets start, a release not at its site.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Plan == nil {
		return nil, errors.New("rehearsal: no plan")
	}
	if o.Start.IsZero() {
		return nil, errors.New("rehearsal: no start time")
	}
	var past *journal
	if len(o.Journal) > 0 {
		var err error
		if past, err = decodeJournal(o.Journal); err != nil {
			return nil, err
		}
		if past.last.After(o.Start) {
			o.Start = past.last
		}
	}
	clock := vclock.New(o.Start)
	fleet := NewFleet(o.Plan, o.Faults, clock, o.Seed)
	if o.Command == nil {
		o.Command = executor.NextAction.String
	}
	rec := newRecorder(o.Plan, o.Command)
	backend := o.Backend
	if backend == nil {
		backend = state.NewMemory()
	}
	if past != nil {
		rec.replay(past)
		fleet.replay(past)
		data := make([][]byte, len(o.Journal))
		for i, e := range o.Journal {
			data[i] = e.Data
		}
		if _, err := backend.Append(ctx, o.PlanSHA256, data...); err != nil {
			return nil, err
		}
	}
	var sink executor.Sink = rec
	if o.Events != nil {
		sink = executor.SinkFunc(func(e executor.Event) {
			rec.Event(e)
			o.Events.Event(e)
		})
	}
	provs := map[string]providers.Provider{}
	for _, s := range o.Plan.Servers {
		provs[s.Provider] = fleet
	}
	opts := executor.Options{
		Plan: o.Plan, PlanSHA256: o.PlanSHA256, Providers: provs, Backend: backend, Clock: clock,
		Hooks: fleet.Hooks(), Events: sink, Logger: o.Logger, Holder: Holder, PollInterval: PollInterval,
		AllowExpired: true,
		// A rehearsal's lock is its own: nobody else holds it.
		HolderGone: func(executor.LockInfo) bool { return true },
	}
	var out executor.Outcome
	quorumTried := false
	// A run the journal ends has nothing left to rehearse; one it shows
	// stopped is continued, as the operator who looks at its remainder
	// would.
	over := past != nil && past.run.Terminal()
	stopped := past != nil && past.run == executor.Stopped
	if over {
		out = executor.Outcome{Status: executor.OutcomeCompleted, Message: "the run is over"}
		if past.run == executor.Failed {
			out.Status = executor.OutcomeFailed
		}
	}
	for runs := 1; !over; runs++ {
		if runs > maxRuns {
			return nil, fmt.Errorf("rehearsal: the run paused %d times; giving up (a pause that every continue brings back?)", maxRuns)
		}
		e, err := executor.New(opts)
		if err != nil {
			return nil, err
		}
		if stopped {
			stopped = false
			if err := e.Continue(ctx); err != nil {
				return nil, fmt.Errorf("rehearsal: continuing the stopped run: %w", err)
			}
		}
		before := rec.steps
		out, err = e.Run(ctx, ctx)
		if err != nil {
			return nil, err
		}
		if out.Status != executor.OutcomePaused || o.StopAtGates || ctx.Err() != nil {
			break
		}
		var answer func() error
		switch out.Reason {
		case executor.ReasonApproval:
			answer = func() error {
				for _, n := range out.Next {
					if n.Kind != executor.NextApprove {
						continue
					}
					if err := e.Approve(ctx, n.Gate); err != nil {
						return err
					}
				}
				return nil
			}
		case executor.ReasonAfterRack:
			answer = func() error { return e.Continue(ctx) }
		case executor.ReasonQuorum:
			if quorumTried && rec.steps == before {
				break // continue did not lift it: a person must
			}
			quorumTried = true
			answer = func() error { return e.Continue(ctx) }
		}
		if answer == nil {
			break
		}
		clock.AdvanceTo(clock.Now().Add(o.ApproveAfter))
		if err := answer(); err != nil {
			return nil, fmt.Errorf("rehearsal: answering the pause: %w", err)
		}
	}
	begin := o.Start
	if past != nil {
		begin = past.first
	}
	end := rec.last
	if end.Before(o.Start) && !over {
		end = o.Start
	}
	s := rec.schedule(end)
	s.PlanSHA256, s.Start, s.Total = o.PlanSHA256, begin, schedule.Duration(end.Sub(begin))
	s.PlanEstimate = schedule.Duration(planEstimate(o.Plan))
	// A plan some cluster of which can never start has no critical path;
	// a run taken over from its journal has none either (its past is
	// not the plan's rules from one start).
	if past == nil {
		if cp, blocked := CriticalPath(o.Plan, o.Start, o.ApproveAfter); !blocked && cp.After(o.Start) {
			s.CriticalPath = schedule.Duration(cp.Sub(o.Start))
		}
	}
	s.ApproveAfter, s.StopAtGates, s.Seed = schedule.Duration(o.ApproveAfter), o.StopAtGates, o.Seed
	if o.Faults != nil {
		s.Scenario = o.Faults.Name
	}
	s.Outcome = outcomeOf(out, o.Command)
	res := &Result{Outcome: out, Schedule: s}
	if past != nil {
		res.From = o.Start
	}
	return res, nil
}

// planEstimate is the plan's own estimate: its summary's, else the sum of
// its stages'.
func planEstimate(p *plan.Plan) time.Duration {
	if p.Summary.Estimate > 0 {
		return time.Duration(p.Summary.Estimate)
	}
	var d time.Duration
	for _, st := range p.Run.Stages {
		d += time.Duration(st.Estimate)
	}
	return d
}

func outcomeOf(o executor.Outcome, command func(executor.NextAction) string) schedule.Outcome {
	s := schedule.Outcome{Status: string(o.Status), Reason: o.Reason, Message: executor.RenderText(o.Message, command), Next: make([]string, len(o.Next))}
	for i, a := range o.Next {
		s.Next[i] = command(a)
	}
	if o.Servers != nil {
		s.Upgraded, s.Failed, s.Skipped = o.Servers.Upgraded, o.Servers.Failed, o.Servers.Skipped
	}
	return s
}
