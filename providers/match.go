package providers

import (
	"fmt"
	"path"
	"strings"

	"github.com/rackform/rackform/config/version"
)

// Selects reports whether m selects component c: by SoftwareID, else by
// inventory ID, else by a path.Match glob over Name, whatever c's state.
// The planner, the executor and providers all decide "which component is
// this" here, so they cannot disagree.
func (m Match) Selects(c Component) bool {
	switch {
	case m.SoftwareID != "":
		return c.SoftwareID == m.SoftwareID
	case m.ID != "":
		return c.ID == m.ID
	case m.NamePattern != "":
		ok, _ := path.Match(m.NamePattern, c.Name)
		return ok
	}
	return false
}

// Find returns the first component of cs that m selects, in any state.
func (m Match) Find(cs []Component) (Component, bool) {
	for _, c := range cs {
		if m.Selects(c) {
			return c, true
		}
	}
	return Component{}, false
}

// Members returns every component of cs that m selects, in cs's order and
// in any state.
func (m Match) Members(cs []Component) []Component {
	var out []Component
	for _, c := range cs {
		if m.Selects(c) {
			out = append(out, c)
		}
	}
	return out
}

// Active returns the active components of cs that m selects: what the
// rule means, in plan and apply alike.
func (m Match) Active(cs []Component) []Component {
	var out []Component
	for _, c := range cs {
		if c.IsActive() && m.Selects(c) {
			out = append(out, c)
		}
	}
	return out
}

// Target is the expectation's version as the one "at target" rule reads
// it (Match.AtTarget).
func (e Expectation) Target() version.Target {
	return version.Target{Version: e.Version, Scheme: version.Scheme(e.Scheme), Pattern: e.Pattern}
}

// Target is the step's version as the one "at target" rule reads it.
func (s Step) Target() version.Target {
	return version.Target{Version: s.Version, Scheme: version.Scheme(s.Scheme), Pattern: s.Pattern}
}

// AtTarget reports whether the component m selects in cs is at target t:
// every active member it selects reports t's version (t.Matches), and
// there are m.Count of them when Count is set. When not, why says what is
// missing in words ("HGX_FW_GPU_SXM_3 at 96.00.61.00.01", "7 members,
// the rule expects 8", "no active member (BMC-Backup is standby)"). A
// member whose version t's scheme cannot read is an error naming it.
func (m Match) AtTarget(t version.Target, cs []Component) (at bool, why string, err error) {
	active := m.Active(cs)
	if len(active) == 0 {
		why = "no active member reported"
		if others := m.Members(cs); len(others) > 0 {
			why += " (" + MembersText(others) + ")"
		}
		return false, why, nil
	}
	if m.Count > 0 && len(active) != m.Count {
		return false, fmt.Sprintf("%d active %s reported, the rule expects %d (%s)", len(active), plural(len(active), "member", "members"), m.Count, MembersText(active)), nil
	}
	var behind []string
	for _, c := range active {
		ok, merr := t.Matches(c.Version)
		if merr != nil {
			return false, "", fmt.Errorf("member %s reports %q, which cannot be compared with %s: %w", c.ID, c.Version, t.Version, merr)
		}
		if !ok {
			behind = append(behind, fmt.Sprintf("%s at %s", c.ID, orNone(c.Version)))
		}
	}
	if len(behind) > 0 {
		return false, strings.Join(behind, ", "), nil
	}
	return true, "", nil
}

// AtTargetOf is AtTarget over the members ids names (an update step's:
// those it was for), while each of them is still reported as active;
// otherwise, and when ids is empty, over every active member m selects (a
// Dell Id carries its version, so it changes with the update). m.Count
// is checked against every active member either way.
func (m Match) AtTargetOf(t version.Target, cs []Component, ids []string) (at bool, why string, err error) {
	if len(ids) == 0 {
		return m.AtTarget(t, cs)
	}
	active := m.Active(cs)
	if m.Count > 0 && len(active) != m.Count {
		return m.AtTarget(t, cs)
	}
	byID := make(map[string]Component, len(active))
	for _, c := range active {
		byID[c.ID] = c
	}
	named := make([]Component, 0, len(ids))
	for _, id := range ids {
		c, ok := byID[id]
		if !ok {
			return m.AtTarget(t, cs)
		}
		named = append(named, c)
	}
	sub := m
	sub.Count = 0
	return sub.AtTarget(t, named)
}

// MemberText names one member for people: its id, version and, when it
// is not active, its state ("Previous-159-1.2.4__BIOS.Setup.1-1 1.2.4
// previous").
func MemberText(c Component) string {
	s := c.ID + " " + orNone(c.Version)
	if !c.IsActive() {
		s += " " + c.State
	}
	return s
}

// MembersText names members for people, comma-separated.
func MembersText(cs []Component) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = MemberText(c)
	}
	return strings.Join(parts, ", ")
}

func orNone(v string) string {
	if v == "" {
		return "(no version)"
	}
	return v
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
