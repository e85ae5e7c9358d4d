package planview

import (
	"slices"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
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
	var byAddr map[string]*plan.Server
	server := func(addr string) *plan.Server {
		if byAddr == nil {
			byAddr = make(map[string]*plan.Server, len(p.Servers))
			for i := range p.Servers {
				byAddr[p.Servers[i].Address] = &p.Servers[i]
			}
		}
		return byAddr[addr]
	}
	// Servers planned alike share their lists (plan.Interner), and so
	// their applied changes: each is worked out once.
	type lists struct {
		changes                  *plan.Change
		steps                    *plan.Step
		comps                    *providers.Component
		nChanges, nSteps, nComps int
		action                   plan.Action
	}
	done := map[lists][]plan.Change{}
	q := *p
	q.Servers = slices.Clone(p.Servers)
	for i := range q.Servers {
		s := &q.Servers[i]
		if len(s.Changes) == 0 && len(s.Steps) == 0 {
			continue
		}
		own := !slices.ContainsFunc(s.Changes, func(c plan.Change) bool { return c.FlashedBy != "" })
		k := lists{firstOf(s.Changes), firstOf(s.Steps), firstOf(s.Observed.Components), len(s.Changes), len(s.Steps), len(s.Observed.Components), s.Action}
		if out, ok := done[k]; ok && own {
			s.Changes = out
			continue
		}
		out := appliedChanges(s, server)
		if slices.Equal(out, s.Changes) {
			out = s.Changes
		}
		if own {
			done[k] = out
		}
		s.Changes = out
	}
	return &q
}

func firstOf[T any](list []T) *T {
	if len(list) == 0 {
		return nil
	}
	return &list[0]
}

// flashes are the steps of s that flash component, in order.
func flashes(s *plan.Server, component string) []plan.Step {
	var out []plan.Step
	for _, st := range s.Steps {
		if st.IsFlash() && st.Component == component {
			out = append(out, st)
		}
	}
	return out
}

func appliedChanges(s *plan.Server, server func(addr string) *plan.Server) []plan.Change {
	out := make([]plan.Change, 0, len(s.Changes))
	listed := map[string]bool{}
	for _, c := range s.Changes {
		listed[c.Component] = true
		by := s
		if c.FlashedBy != "" {
			by = server(c.FlashedBy)
		}
		var sts []plan.Step
		if by != nil {
			sts = flashes(by, c.Component)
		}
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
