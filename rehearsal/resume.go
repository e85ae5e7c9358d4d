package rehearsal

import (
	"fmt"
	"slices"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/rehearsal/schedule"
)

// A rehearsal can take over a real run where its journal leaves it
// (Options.Journal, for `rackform status -format=html`): the journal's
// records seed the in-memory journal the executor resumes from, as a
// crashed apply's successor or `rackform continue` would; they are what
// the schedule shows as having happened; and what their finished steps
// did to each server (an update flashed or staged, a shutdown, a boot)
// is done to the simulated fleet, so the servers the executor meets are
// the ones the journal describes. A step the journal shows in flight is
// resumed by the executor as after a crash: its task is found gone, so it
// is verified, then sent again, and takes its whole estimate from the
// rehearsal's start (the remainder is longer than it will be by up to one
// step of each server in flight).

// journal is a run's records, decoded.
type journal struct {
	recs []*executor.Record
	// first and last are the first and last records' times.
	first, last time.Time
	// run is the run's last state.
	run executor.StateName
}

func decodeJournal(entries []executor.Entry) (*journal, error) {
	j := &journal{run: executor.NotStarted}
	for _, e := range entries {
		r, err := executor.DecodeRecord(e.Data)
		if err != nil {
			return nil, fmt.Errorf("rehearsal: the run's journal record at %d cannot be read: %w", e.Pos, err)
		}
		if j.first.IsZero() {
			j.first = r.Time
		}
		if r.Time.After(j.last) {
			j.last = r.Time
		}
		if r.Type == executor.RecordState && r.ID == "run" {
			j.run = r.State
		}
		j.recs = append(j.recs, r)
	}
	return j, nil
}

// replay feeds the journal's state changes to the recorder as the events
// the executor made of them, so the schedule starts with what happened.
// Threshold counts are not in the journal: a threshold met before the
// rehearsal took over has no mark.
func (r *recorder) replay(j *journal) {
	kinds := map[string]executor.Kind{"run": executor.KindRun}
	parents := map[string]string{}
	for _, t := range r.tree {
		kinds[t.id], parents[t.id] = executor.Kind(t.kind), t.parent
		if t.kind == schedule.KindScope {
			kinds[t.id+".pause"] = executor.KindPause
		}
	}
	for _, st := range r.p.Run.Stages {
		for _, g := range st.Gates {
			kinds[g.ID] = executor.KindGate
		}
	}
	for _, rec := range j.recs {
		if rec.Type != executor.RecordState {
			continue
		}
		k, ok := kinds[rec.ID]
		if !ok {
			continue
		}
		r.Event(executor.Event{V: executor.EventVersion, Time: rec.Time, Type: string(k) + "_" + string(rec.State), ID: rec.ID, Kind: k,
			Parent: parents[rec.ID], State: rec.State, Reason: rec.Reason, Message: rec.Message, Until: rec.Until})
	}
}

// replay does to the fleet what the journal's finished steps did to each
// server: an update flashed (or staged, as its apply time says), a
// shutdown or power off, a boot that applied what was staged.
func (f *Fleet) replay(j *journal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, rec := range j.recs {
		if rec.Type != executor.RecordStepDone {
			continue
		}
		s := f.servers[rec.Server]
		if s == nil {
			continue
		}
		kind, step := opStep(s.p, rec.Op)
		switch kind {
		case plan.StepShutdown, plan.StepKind(executor.OpPowerOff):
			s.power, s.readyAt = providers.PowerOff, time.Time{}
		case plan.StepUpdate:
			s.flash(step)
		case plan.StepReset, plan.StepPowerOn, plan.StepReimage:
			s.boots++
			s.bootBack(step, rec.Time)
		}
	}
}

// opStep is the kind and the provider step of a journal op ("step:3"), a
// power off ("power_off"), a remediation's reimage or reboot
// ("remedy:1:reimage"), or the power off and reset of a retry of staged
// updates ("restage:shutdown", "restage:reset": the host off, then booted
// On); "" for what changes nothing on the server.
func opStep(s *plan.Server, op string) (plan.StepKind, providers.Step) {
	find := func(match func(plan.Step) bool) (plan.StepKind, providers.Step) {
		if i := slices.IndexFunc(s.Steps, match); i >= 0 {
			return s.Steps[i].Kind, s.Steps[i].ProviderStep()
		}
		return "", providers.Step{}
	}
	jo := executor.ParseJournalOp(op)
	switch {
	case jo.Family == executor.OpPowerOff:
		return plan.StepKind(executor.OpPowerOff), providers.Step{}
	case jo.Family == executor.OpRestage && jo.Action == executor.ActionShutdown:
		return plan.StepShutdown, providers.Step{Kind: providers.StepShutdown}
	case jo.Family == executor.OpRestage && jo.Action == executor.ActionReset:
		return plan.StepReset, providers.Step{Kind: providers.StepReset, ResetType: "On"}
	case jo.Family == executor.OpRemedy && jo.Action == executor.ActionReboot:
		return plan.StepReset, providers.Step{}
	case jo.Family == executor.OpRemedy && jo.Action == executor.ActionReimage:
		return find(func(st plan.Step) bool { return st.Kind == plan.StepReimage })
	}
	n, ok := executor.PlanStepIndex(op)
	if !ok {
		return "", providers.Step{}
	}
	return find(func(st plan.Step) bool { return st.Index == n })
}
