package providers

import "path"

// Selects reports whether m selects component c: by SoftwareID, else by
// inventory ID, else by a path.Match glob over Name. The planner, the
// executor and providers all decide "which component is this" here, so
// they cannot disagree.
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

// Find returns the first component of cs that m selects.
func (m Match) Find(cs []Component) (Component, bool) {
	for _, c := range cs {
		if m.Selects(c) {
			return c, true
		}
	}
	return Component{}, false
}
