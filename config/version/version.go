// Package version parses and compares component and release versions by
// scheme (semver or dotted integers), never as plain strings.
package version

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Scheme names how a version string is read.
type Scheme string

const (
	// Semver is Semantic Versioning 2.0 ("4.6.1", "1.2.0-rc.1").
	Semver Scheme = "semver"
	// Dotted is one or more dot-separated non-negative integers ("2.19.1.7").
	Dotted Scheme = "dotted"
)

// Schemes lists the schemes in the order they are documented.
var Schemes = []Scheme{Semver, Dotted}

// ParseScheme checks that s names a known scheme.
func ParseScheme(s string) (Scheme, error) {
	for _, sc := range Schemes {
		if string(sc) == s {
			return sc, nil
		}
	}
	return "", fmt.Errorf("unknown version scheme %q: must be %q or %q", s, Semver, Dotted)
}

// Version is a parsed version. The zero value is invalid.
type Version struct {
	scheme Scheme
	raw    string
	sv     *semver.Version
	parts  []uint64
}

// Parse reads s under scheme.
func Parse(s string, scheme Scheme) (Version, error) {
	switch scheme {
	case Semver:
		// StrictNewVersion: "4.6" or "v4.6.1" are not semver, and accepting
		// them silently would make two spellings of one version compare equal.
		sv, err := semver.StrictNewVersion(s)
		if err != nil {
			return Version{}, fmt.Errorf("%q is not a semantic version (MAJOR.MINOR.PATCH[-PRE][+BUILD]): %v", s, err)
		}
		return Version{scheme: scheme, raw: s, sv: sv}, nil
	case Dotted:
		if s == "" {
			return Version{}, fmt.Errorf("empty version is not a dotted version")
		}
		fields := strings.Split(s, ".")
		parts := make([]uint64, len(fields))
		for i, f := range fields {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil || f == "" || (len(f) > 1 && f[0] == '+') {
				return Version{}, fmt.Errorf("%q is not a dotted version (integers separated by dots): field %d is %q", s, i+1, f)
			}
			parts[i] = n
		}
		return Version{scheme: scheme, raw: s, parts: parts}, nil
	default:
		return Version{}, fmt.Errorf("unknown version scheme %q", scheme)
	}
}

// MustParse is Parse for constants in tests; it panics on error.
func MustParse(s string, scheme Scheme) Version {
	v, err := Parse(s, scheme)
	if err != nil {
		panic(err)
	}
	return v
}

// String returns the version as written.
func (v Version) String() string { return v.raw }

// Scheme returns the scheme v was parsed with.
func (v Version) Scheme() Scheme { return v.scheme }

// IsZero reports whether v is the zero (unparsed) Version.
func (v Version) IsZero() bool { return v.scheme == "" }

// Major, Minor and Patch return the first three numeric fields (0 when absent).
func (v Version) Major() uint64 { return v.field(0) }

// Minor returns the second numeric field.
func (v Version) Minor() uint64 { return v.field(1) }

// Patch returns the third numeric field.
func (v Version) Patch() uint64 { return v.field(2) }

func (v Version) field(i int) uint64 {
	if v.sv != nil {
		switch i {
		case 0:
			return v.sv.Major()
		case 1:
			return v.sv.Minor()
		case 2:
			return v.sv.Patch()
		}
		return 0
	}
	if i < len(v.parts) {
		return v.parts[i]
	}
	return 0
}

// MinorString is "MAJOR.MINOR", the unit of the minor-skip rule.
func (v Version) MinorString() string { return fmt.Sprintf("%d.%d", v.Major(), v.Minor()) }

// Compare returns -1, 0 or +1. Two semver versions compare by semver
// precedence; otherwise numeric fields compare one by one, missing fields
// counting as 0 ("1.2" == "1.2.0"), so mixed schemes still order sensibly.
func Compare(a, b Version) int {
	if a.sv != nil && b.sv != nil {
		return a.sv.Compare(b.sv)
	}
	n := max(a.fields(), b.fields())
	for i := 0; i < n; i++ {
		x, y := a.field(i), b.field(i)
		if x < y {
			return -1
		}
		if x > y {
			return 1
		}
	}
	return 0
}

func (v Version) fields() int {
	if v.sv != nil {
		return 3
	}
	return len(v.parts)
}

// Equal reports whether a and b compare equal.
func Equal(a, b Version) bool { return Compare(a, b) == 0 }

// SkippedMinors returns the minor versions ("4.5") an upgrade from → to
// jumps over, in ascending order; nil when it skips none or is not an
// upgrade. Patch releases never count. When known (the catalog) is
// non-empty, only minors that actually exist in it count as skipped, so a
// minor that was never released is not demanded; across a major version
// boundary only known minors can be named. Without known versions, every
// minor strictly between from and to within one major is skipped.
func SkippedMinors(from, to Version, known []Version) []string {
	if Compare(from, to) >= 0 {
		return nil
	}
	fromMinor := [2]uint64{from.Major(), from.Minor()}
	toMinor := [2]uint64{to.Major(), to.Minor()}
	between := func(m [2]uint64) bool {
		return less(fromMinor, m) && less(m, toMinor)
	}
	var out []string
	if len(known) > 0 {
		seen := map[[2]uint64]bool{}
		var ms [][2]uint64
		for _, k := range known {
			m := [2]uint64{k.Major(), k.Minor()}
			if between(m) && !seen[m] {
				seen[m] = true
				ms = append(ms, m)
			}
		}
		sortMinors(ms)
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%d.%d", m[0], m[1]))
		}
		return out
	}
	if from.Major() != to.Major() {
		return nil
	}
	for m := from.Minor() + 1; m < to.Minor(); m++ {
		out = append(out, fmt.Sprintf("%d.%d", from.Major(), m))
	}
	return out
}

func less(a, b [2]uint64) bool { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]) }

func sortMinors(ms [][2]uint64) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && less(ms[j], ms[j-1]); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// EqualStrings reports whether want and got are the same version under the
// named scheme (pattern is the regular expression of a pattern scheme, ""
// otherwise). It is the one comparison the executor and providers use for
// "is this component at its target" at apply, where the plan carries the
// scheme by name (providers.Expectation.Scheme). An empty scheme means the
// strings must be equal; a version that does not parse is an error, never
// a guess.
func EqualStrings(scheme, pattern, want, got string) (bool, error) {
	if scheme == "" {
		return want == got, nil
	}
	_ = pattern // read by the pattern scheme
	sc, err := ParseScheme(scheme)
	if err != nil {
		return false, err
	}
	a, err := Parse(want, sc)
	if err != nil {
		return false, err
	}
	b, err := Parse(got, sc)
	if err != nil {
		return false, err
	}
	return Equal(a, b), nil
}
