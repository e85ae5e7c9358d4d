package version

import "fmt"

// Target is what a component must report to be at its target: the target
// version and how a reported version is read against it (the scheme, and
// the expression of the pattern scheme). Matches is the one "at target"
// rule: the planner's diff, the executor's verification and the provider's
// checks all ask it, so they cannot disagree about a server.
type Target struct {
	Version string
	// Scheme reads the reported version; "" means the strings must be
	// equal (plans written before they recorded a scheme).
	Scheme Scheme
	// Pattern is the pattern scheme's regular expression, else "".
	Pattern string

	// want is Version already read with its format (TargetOf), so a
	// fleet's checks read it once.
	want *Version
}

// TargetOf is the target v: reported versions are read with v's format.
func TargetOf(v Version) Target {
	f := v.Format()
	return Target{Version: v.String(), Scheme: f.Scheme, Pattern: f.Pattern, want: &v}
}

// Matches reports whether reported is the target version: read with the
// target's scheme, it compares equal (a BMC may decorate a version, as in
// "U30 v2.54 (03/01/2023)" for "U30 v2.54"). Two versions that cannot be
// ordered (an opaque version that differs, another vendor family) are not
// equal. A reported version the scheme cannot read is an error, never a
// guess; so is an empty one: a member that reports no version is not at
// any target.
func (t Target) Matches(reported string) (bool, error) {
	if t.Scheme == "" {
		return reported == t.Version, nil
	}
	if reported == "" {
		return false, fmt.Errorf("no version reported")
	}
	want := t.want
	if want == nil {
		f, err := NewFormat(t.Scheme, t.Pattern)
		if err != nil {
			return false, err
		}
		w, err := f.Parse(t.Version)
		if err != nil {
			return false, fmt.Errorf("the target: %w", err)
		}
		want = &w
	}
	got, err := want.Format().Parse(reported)
	if err != nil {
		return false, err
	}
	return Equal(*want, got), nil
}

// String is the target for messages: its version, and its scheme when it
// has one ("U30 v2.54 (vendor)").
func (t Target) String() string {
	if t.Scheme == "" {
		return t.Version
	}
	return t.Version + " (" + string(t.Scheme) + ")"
}
