package version

import "testing"

// TestTargetMatches: the one "at target" rule, with the target read once
// (TargetOf, as the planner does) and read from its recorded scheme and
// pattern (as apply does from a plan): both give the same answer.
func TestTargetMatches(t *testing.T) {
	const hpe = `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)(?: \(.*\))?`
	cases := []struct {
		scheme          Scheme
		pattern         string
		target, got     string
		at, undecidable bool
	}{
		{"", "", "1.2", "1.2", true, false},
		{"", "", "1.2", "1.2.0", false, false},
		{"", "", "1.2", "", false, false},
		{Dotted, "", "1.2", "1.2.0", true, false},
		{Dotted, "", "1.8.2", "1.8.2", true, false},
		{Dotted, "", "1.13.2", "1.8.2", false, false},
		{Dotted, "", "96.00.89.00.01", "96.00.61.00.01", false, false},
		{Dotted, "", "96.00.61.00.01", "96.0.61.0.1", true, false},
		{Semver, "", "1.2.3", "1.2.4", false, false},
		{Dotted, "", "1.2", "P79 v1.45", false, true},
		// a placeholder that reports no version is at no target
		{Dotted, "", "1.2", "", false, true},
		{Opaque, "", "x", "", false, true},
		{Vendor, "", "U30 v2.54", "U30 v2.54 (03/01/2023)", true, false},
		{Vendor, "", "nc.1.6.16", "nc.1.6.16-0-gabcdef", true, false},
		{Vendor, "", "P79 v1.45", "P80 v1.45", false, false},
		{Vendor, "", "P79 v1.45", "garbage!", false, true},
		{Pattern, hpe, "U30 v2.54", "U30 v2.54 (03/01/2023)", true, false},
		{Pattern, hpe, "U30 v2.54", "U30 v2.55", false, false},
		{Pattern, hpe, "U30 v2.54", "2.54", false, true},
		{Opaque, "", "build-7f3a", "build-7f3a", true, false},
		{Opaque, "", "build-7f3a", "build-7f3b", false, false},
	}
	for _, c := range cases {
		recorded := Target{Version: c.target, Scheme: c.scheme, Pattern: c.pattern}
		at, err := recorded.Matches(c.got)
		if at != c.at || (err != nil) != c.undecidable {
			t.Errorf("%v.Matches(%q) = %v, %v; want %v, error %v", recorded, c.got, at, err, c.at, c.undecidable)
		}
		if c.scheme == "" {
			continue
		}
		f, ferr := NewFormat(c.scheme, c.pattern)
		if ferr != nil {
			t.Fatal(ferr)
		}
		v, perr := f.Parse(c.target)
		if perr != nil {
			t.Fatal(perr)
		}
		read := TargetOf(v)
		if read.Version != c.target || read.Scheme != c.scheme || read.Pattern != c.pattern {
			t.Errorf("TargetOf(%q) = %+v", c.target, read)
		}
		at2, err2 := read.Matches(c.got)
		if at2 != at || (err2 != nil) != (err != nil) {
			t.Errorf("TargetOf(%q).Matches(%q) = %v, %v; recorded says %v, %v", c.target, c.got, at2, err2, at, err)
		}
	}
}

// TestTargetMatchesBadTarget: a recorded target its own scheme cannot
// read, or an unknown scheme, is an error, never "at target".
func TestTargetMatchesBadTarget(t *testing.T) {
	for _, tg := range []Target{
		{Version: "P79 v1.45", Scheme: Dotted},
		{Version: "1", Scheme: "nonsense"},
		{Version: "1", Scheme: Pattern},
	} {
		if at, err := tg.Matches(tg.Version); at || err == nil {
			t.Errorf("%+v.Matches(itself) = %v, %v; want an error", tg, at, err)
		}
	}
}
