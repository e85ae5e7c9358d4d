package version

import (
	"encoding/json"
	"fmt"
)

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

	// want is Version already read with its format (TargetOf,
	// ParseTarget), so a fleet's checks read it, and compile the pattern,
	// once.
	want *Version
}

// ParseTarget is the target recorded as value, scheme and pattern (a
// plan's step, an expectation, a provider's step): the scheme is checked,
// the pattern compiled and value read with them, once. A scheme or
// pattern that cannot be used, or a value the scheme cannot read, is an
// error: such a target could never be reached. An empty scheme is exact
// string equality (plans written before they recorded a scheme); an empty
// value is no target.
func ParseTarget(value string, scheme Scheme, pattern string) (Target, error) {
	t := Target{Version: value, Scheme: scheme, Pattern: pattern}
	if scheme == "" {
		if pattern != "" {
			return Target{}, fmt.Errorf("a version pattern without the %q scheme", Pattern)
		}
		return t, nil
	}
	f, err := NewFormat(scheme, pattern)
	if err != nil {
		return Target{}, err
	}
	if value == "" {
		return t, nil
	}
	w, err := f.Parse(value)
	if err != nil {
		return Target{}, fmt.Errorf("the target: %w", err)
	}
	t.want = &w
	return t, nil
}

// targetJSON is a target's JSON form, the fields a plan file has always
// written for it.
type targetJSON struct {
	Version string `json:"version"`
	Scheme  Scheme `json:"scheme,omitempty"`
	Pattern string `json:"pattern,omitempty"`
}

// Equal reports whether t and u are the same target: the same version,
// scheme and pattern (go-cmp uses it).
func (t Target) Equal(u Target) bool {
	return t.Version == u.Version && t.Scheme == u.Scheme && t.Pattern == u.Pattern
}

// MarshalJSON writes t as {"version", "scheme", "pattern"}.
func (t Target) MarshalJSON() ([]byte, error) {
	return json.Marshal(targetJSON{t.Version, t.Scheme, t.Pattern})
}

// UnmarshalJSON reads the form MarshalJSON writes, with ParseTarget.
func (t *Target) UnmarshalJSON(b []byte) error {
	var w targetJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	p, err := ParseTarget(w.Version, w.Scheme, w.Pattern)
	if err != nil {
		return err
	}
	*t = p
	return nil
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
	if !t.read() {
		// A target written as a literal (Target{Version: v}), or changed
		// since it was read: read it now.
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

// read reports whether t.want is t's version read with t's scheme and
// pattern, as ParseTarget and TargetOf leave it.
func (t Target) read() bool {
	if t.want == nil {
		return false
	}
	f := t.want.Format()
	return t.want.String() == t.Version && f.Scheme == t.Scheme && f.Pattern == t.Pattern
}

// String is the target for messages: its version, and its scheme when it
// has one ("U30 v2.54 (vendor)").
func (t Target) String() string {
	if t.Scheme == "" {
		return t.Version
	}
	return t.Version + " (" + string(t.Scheme) + ")"
}
