package plan

import (
	"fmt"
	"strings"
)

// A plan says what changes twice: each server's Changes (what reviewers
// read: bmc 7.08.12 → 7.10.30) and its Steps (what apply runs: update bmc
// to 7.10.30). The planner writes both from one decision; a file whose two
// disagree was edited, and reviewing one while applying the other is what
// a plan exists to prevent.

// maxDisagreements is how many disagreements an error names; the rest are
// counted.
const maxDisagreements = 5

// CheckSteps reports whether p's steps make exactly the version changes p
// lists, server by server: every update or reimage step of a server the
// plan does not skip flashes a change of that server to the version the
// change names, every change is flashed by a step (the server's own, or
// for a component its BMC shares, the step of the server named in
// FlashedBy), and nothing else is flashed. A change is flashed by one
// step, or by several updates only when each is for other members of
// those the change moves (a BMC that takes a few Targets per request): a
// second step of a component is otherwise one a reviewer never sees. The
// other steps keep plan's layout (misplaced), and a server is upgraded or
// skipped. The error names each server that disagrees and both values.
// show and apply refuse such a plan.
func CheckSteps(p *Plan) error {
	byAddr := make(map[string]*Server, len(p.Servers))
	for i := range p.Servers {
		byAddr[p.Servers[i].Address] = &p.Servers[i]
	}
	var found []string
	for i := range p.Servers {
		s := &p.Servers[i]
		// Apply runs the steps of every server the plan does not skip
		// (executor.Run), so each is checked, whatever its action says.
		switch s.Action {
		case ActionSkip:
			continue
		case ActionUpgrade:
		default:
			found = append(found, fmt.Sprintf("server %s has the action %q, which plan never writes: apply would run its steps", s.Address, s.Action))
		}
		found = append(found, disagreements(s, byAddr)...)
	}
	if len(found) == 0 {
		return nil
	}
	more := ""
	if len(found) > maxDisagreements {
		more = fmt.Sprintf("; and %d more", len(found)-maxDisagreements)
		found = found[:maxDisagreements]
	}
	return fmt.Errorf("the plan's steps do not make the changes it lists, so what a reviewer read is not what apply would run: %s%s. The file was edited after plan wrote it; run rackform plan again instead of editing a plan", strings.Join(found, "; "), more)
}

// flashSteps are s's update and reimage steps by component, in run order.
func flashSteps(s *Server) map[string][]Step {
	out := map[string][]Step{}
	for _, st := range s.Steps {
		if st.IsFlash() {
			out[st.Component] = append(out[st.Component], st)
		}
	}
	return out
}

func disagreements(s *Server, byAddr map[string]*Server) []string {
	var out []string
	own := flashSteps(s)
	listed := map[string]bool{}
	for _, c := range s.Changes {
		listed[c.Component] = true
		steps, whose, by := own, "its", ""
		if c.FlashedBy != "" {
			owner := byAddr[c.FlashedBy]
			if owner == nil {
				out = append(out, fmt.Sprintf("server %s lists %s as flashed by %s, which is not in the plan", s.Address, changeText(c), c.FlashedBy))
				continue
			}
			steps, whose, by = flashSteps(owner), c.FlashedBy+"'s", " (flashed by "+c.FlashedBy+")"
		}
		sts := steps[c.Component]
		if len(sts) == 0 {
			out = append(out, fmt.Sprintf("server %s lists %s%s, but none of %s steps flashes %s", s.Address, changeText(c), by, whose, c.Component))
			continue
		}
		wrong := false
		for _, st := range sts {
			if st.Target.Version == c.To {
				continue
			}
			wrong = true
			step := string(st.Kind) + " step"
			if len(sts) > 1 {
				step += fmt.Sprintf(" %d", st.Index)
			}
			out = append(out, fmt.Sprintf("server %s lists %s%s, but %s %s flashes %s %s", s.Address, changeText(c), by, whose, step, c.Component, st.Target.Version))
		}
		if !wrong && c.FlashedBy == "" && !memberBatches(c, sts) {
			out = append(out, fmt.Sprintf("server %s lists %s once, but steps %s flash %s; several steps flash one component only when each updates other members of those the change moves", s.Address, changeText(c), indexes(sts), c.Component))
		}
	}
	out = append(out, misplaced(s)...)
	for _, st := range s.Steps {
		if st.IsFlash() && !listed[st.Component] {
			out = append(out, fmt.Sprintf("server %s has a %s step flashing %s %s that none of its changes lists", s.Address, st.Kind, st.Component, st.Target.Version))
		}
	}
	return out
}

// stepRank is each step kind's place in a server's steps, as plan lays
// them out: a server goes down, is flashed, comes back, is verified and
// put back to work. Reviewers read the steps that flash nothing as the
// server's reboots, so one more of them, or one out of place, would be a
// step no view shows (a shutdown after the wait for readiness leaves the
// server off).
var stepRank = map[StepKind]int{
	StepDrain: 1, StepShutdown: 2, StepUpdate: 3, StepReimage: 4, StepReset: 4, StepWaitReady: 5, StepUncordon: 6,
}

// misplaced names what is out of place in s's steps: a step numbered other
// than its place, of a kind plan never writes, before a step of an
// earlier kind, or a second of its kind (but updates).
func misplaced(s *Server) []string {
	var out []string
	for i, st := range s.Steps {
		if st.Index != i+1 {
			out = append(out, fmt.Sprintf("server %s's step %d is numbered %d", s.Address, i+1, st.Index))
		}
		rank, ok := stepRank[st.Kind]
		if !ok {
			out = append(out, fmt.Sprintf("server %s has a step %d of kind %q, which plan never writes", s.Address, st.Index, st.Kind))
			continue
		}
		if s.IsDevice() && st.Kind != StepUpdate && st.Kind != StepWaitReady {
			out = append(out, fmt.Sprintf("device %s has a %s step %d, but a device has no host: plan writes only its updates and its wait_ready", s.Address, st.Kind, st.Index))
		}
		if i == 0 {
			continue
		}
		prev := s.Steps[i-1]
		if pr, ok := stepRank[prev.Kind]; ok && (pr > rank || pr == rank && st.Kind != StepUpdate) {
			out = append(out, fmt.Sprintf("server %s has a %s step %d after its %s step %d: plan lays out drain, shutdown, updates, reimage or reset, wait_ready, uncordon, each but the updates at most once", s.Address, st.Kind, st.Index, prev.Kind, prev.Index))
		}
	}
	return out
}

// memberBatches reports whether sts, the steps flashing c's component,
// are one step, or updates of which each names members, no member twice,
// and (when the plan records how many move) no more than move.
func memberBatches(c Change, sts []Step) bool {
	if len(sts) == 1 {
		return true
	}
	named := map[string]bool{}
	for _, st := range sts {
		if st.Kind != StepUpdate || len(st.Members) == 0 {
			return false
		}
		for _, m := range st.Members {
			if named[m] {
				return false
			}
			named[m] = true
		}
	}
	return c.Moving == 0 || len(named) <= c.Moving
}

// indexes names the steps' numbers: "3 and 4", "3, 4 and 5".
func indexes(sts []Step) string {
	n := make([]string, len(sts))
	for i, st := range sts {
		n[i] = fmt.Sprint(st.Index)
	}
	if len(n) == 1 {
		return n[0]
	}
	return strings.Join(n[:len(n)-1], ", ") + " and " + n[len(n)-1]
}

func changeText(c Change) string { return fmt.Sprintf("%s %s → %s", c.Component, c.From, c.To) }
