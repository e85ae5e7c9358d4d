package planview

import (
	"slices"

	"github.com/rackform/rackform/planner/plan"
)

// A plan says what changes twice: each server's Changes and the Steps apply
// runs. Every view shows the version a change goes to as the step that
// flashes it says, so no view can show one version while apply flashes
// another (show and apply refuse a plan whose two disagree: plan.CheckSteps;
// this keeps every rendering honest even so).

// asApplied returns p with each server's changes going to the versions its
// steps flash: a change to the version of the update or reimage step for
// its component (the server's own, or for a component its BMC shares, the
// step of the server that flashes it), followed by a change from there for
// each other version a later step of the component flashes, and a step no
// change lists as a change of its own. p is not modified; what is
// unchanged is shared.
func asApplied(p *plan.Plan) *plan.Plan {
	flash := map[string]map[string][]plan.Step{}
	for i := range p.Servers {
		s := &p.Servers[i]
		for _, st := range s.Steps {
			if !st.IsFlash() {
				continue
			}
			if flash[s.Address] == nil {
				flash[s.Address] = map[string][]plan.Step{}
			}
			flash[s.Address][st.Component] = append(flash[s.Address][st.Component], st)
		}
	}
	q := *p
	q.Servers = slices.Clone(p.Servers)
	for i := range q.Servers {
		s := &q.Servers[i]
		if len(s.Changes) > 0 || len(flash[s.Address]) > 0 {
			s.Changes = appliedChanges(s, flash)
		}
	}
	return &q
}

func appliedChanges(s *plan.Server, flash map[string]map[string][]plan.Step) []plan.Change {
	out := make([]plan.Change, 0, len(s.Changes))
	listed := map[string]bool{}
	for _, c := range s.Changes {
		listed[c.Component] = true
		by := s.Address
		if c.FlashedBy != "" {
			by = c.FlashedBy
		}
		sts := flash[by][c.Component]
		if len(sts) == 0 {
			out = append(out, c)
			continue
		}
		c.To = sts[0].Target.Version
		out = append(out, c)
		for _, st := range sts[1:] {
			// Updates split by members flash one version; any other is a
			// change of its own, from what the step before left.
			if last := out[len(out)-1]; st.Target.Version != last.To {
				c.From, c.To = last.To, st.Target.Version
				out = append(out, c)
			}
		}
	}
	if s.Action != plan.ActionUpgrade {
		return out
	}
	for _, st := range s.Steps {
		if !st.IsFlash() || listed[st.Component] {
			continue
		}
		c := plan.Change{Component: st.Component, Kind: "firmware", From: "?", To: st.Target.Version}
		if st.Kind == plan.StepReimage {
			c.Kind = "runtime"
		}
		if st.Match != nil {
			if o, ok := st.Match.Find(s.Observed.Components); ok {
				c.From = o.Version
			}
		}
		out = append(out, c)
	}
	return out
}
