// Package version parses and compares component and release versions by
// scheme (semver, dotted integers, hexadecimal fields, vendor strings, a
// user's pattern, or opaque), never as plain strings, and says so when two versions cannot be
// ordered instead of guessing.
package version

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
)

// Scheme names how a version string is read.
type Scheme string

const (
	// Semver is Semantic Versioning 2.0 ("4.6.1", "1.2.0-rc.1").
	Semver Scheme = "semver"
	// Dotted is one or more dot-separated non-negative integers ("2.19.1.7").
	Dotted Scheme = "dotted"
	// Hex is one or more dot-separated hexadecimal numbers ("96.00.61.00.01",
	// "94.02.4B.00.01", "0x0F"), declared for firmware whose fields are
	// hexadecimal. See hex.go.
	Hex Scheme = "hex"
	// Vendor reads what BMCs report: an optional family token that must
	// match ("P79", "nc", "ex235a.bios"), a dotted number that orders, and
	// the suffixes vendors append (a revision letter, a git-describe
	// distance, a build number, a release date). See vendor.go.
	Vendor Scheme = "vendor"
	// Pattern reads versions with the component's version_pattern, a
	// regular expression whose capture groups say what is compared.
	Pattern Scheme = "pattern"
	// Opaque compares for equality only: a version is at the target or
	// differs, never older or newer.
	Opaque Scheme = "opaque"
)

// Schemes lists the schemes in the order they are documented.
var Schemes = []Scheme{Semver, Dotted, Hex, Vendor, Pattern, Opaque}

// ParseScheme checks that s names a known scheme.
func ParseScheme(s string) (Scheme, error) {
	for _, sc := range Schemes {
		if string(sc) == s {
			return sc, nil
		}
	}
	names := make([]string, len(Schemes))
	for i, sc := range Schemes {
		names[i] = strconv.Quote(string(sc))
	}
	return "", fmt.Errorf("unknown version scheme %q: must be one of %s", s, strings.Join(names, ", "))
}

// Ordered reports whether versions of the scheme can be older or newer
// than each other; an opaque version can only be equal or different.
func (s Scheme) Ordered() bool { return s != Opaque }

// Version is a parsed version. The zero value is invalid.
type Version struct {
	scheme Scheme
	raw    string
	sv     *semver.Version
	// parts are the numeric fields: dotted, the vendor core, the pattern's
	// numeric groups in pattern order.
	parts []uint64
	// family must be equal for two vendor or pattern versions to be
	// comparable ("P79"; the pattern's family groups, joined).
	family string
	// letter is a vendor revision letter ("1.44B": 'B'), 0 when none.
	letter byte
	// distance is a vendor git-describe distance (commits after the tag).
	distance uint64
	// ident is a vendor build identity (a commit hash or build id): two
	// versions equal in everything else but with different idents are
	// different builds that cannot be ordered.
	ident string
	// build and rev are a vendor build number ("Build 27") and revision
	// ("-rev4"); release a vendor release number ("HGX-22.10-1": 1); date a
	// vendor release date. Each breaks ties only when both versions carry it.
	build, rev, release          uint64
	hasBuild, hasRev, hasRelease bool
	date                         time.Time
	// pre is a vendor pre-release ("-rc34"), which orders before the
	// release it precedes.
	pre preRelease
	// under, suffix and letterRelease are the vendor scheme's second
	// reading (trains.go): fields separated by underscores
	// ("35_2014_4652"), a constant suffix ("_n04") and a release build
	// written as a letter ("GB200Nvl-25.08-B").
	under         bool
	suffix        string
	letterRelease bool
	// pat is the compiled pattern of a pattern version.
	pat *pattern
}

// Parse reads s under scheme. The pattern scheme needs its expression:
// use NewFormat.
func Parse(s string, scheme Scheme) (Version, error) {
	if scheme == Pattern {
		return Version{}, fmt.Errorf("the %q scheme needs a version_pattern", Pattern)
	}
	f, err := NewFormat(scheme, "")
	if err != nil {
		return Version{}, err
	}
	return f.Parse(s)
}

// MustParse is Parse for constants in tests; it panics on error.
func MustParse(s string, scheme Scheme) Version {
	v, err := Parse(s, scheme)
	if err != nil {
		panic(err)
	}
	return v
}

// Format is how one component's versions are read: a scheme and, for the
// pattern scheme, its compiled expression. The zero Format is invalid.
type Format struct {
	Scheme  Scheme
	Pattern string
	pat     *pattern
}

// NewFormat checks scheme and compiles pattern, which the pattern scheme
// requires and every other scheme refuses.
func NewFormat(scheme Scheme, pat string) (Format, error) {
	if _, err := ParseScheme(string(scheme)); err != nil {
		return Format{}, err
	}
	f := Format{Scheme: scheme, Pattern: pat}
	switch {
	case scheme == Pattern && pat == "":
		return Format{}, fmt.Errorf("the %q scheme needs a version_pattern", Pattern)
	case scheme == Pattern:
		p, err := compilePattern(pat)
		if err != nil {
			return Format{}, err
		}
		f.pat = p
	case pat != "":
		return Format{}, fmt.Errorf("a version_pattern is read only by the %q scheme, not %q", Pattern, scheme)
	}
	return f, nil
}

// HasMinors reports whether versions of f have a minor version, which the
// minor-skip rule counts: semver and dotted do; a pattern does when it
// names groups "major" and "minor"; vendor and opaque versions do not.
func (f Format) HasMinors() bool {
	switch f.Scheme {
	case Semver, Dotted:
		return true
	case Pattern:
		return f.pat != nil && f.pat.major >= 0 && f.pat.minor >= 0
	}
	return false
}

// Parse reads s under f.
func (f Format) Parse(s string) (Version, error) {
	switch f.Scheme {
	case Semver:
		// StrictNewVersion: "4.6" or "v4.6.1" are not semver, and accepting
		// them silently would make two spellings of one version compare equal.
		sv, err := semver.StrictNewVersion(s)
		if err != nil {
			return Version{}, fmt.Errorf("%q is not a semantic version (MAJOR.MINOR.PATCH[-PRE][+BUILD]): %v", s, err)
		}
		return Version{scheme: Semver, raw: s, sv: sv}, nil
	case Dotted:
		parts, err := parseDotted(s)
		if err != nil {
			return Version{}, err
		}
		return Version{scheme: Dotted, raw: s, parts: parts}, nil
	case Hex:
		parts, err := parseHex(s)
		if err != nil {
			return Version{}, err
		}
		return Version{scheme: Hex, raw: s, parts: parts}, nil
	case Vendor:
		return parseVendor(s)
	case Pattern:
		if f.pat == nil {
			return Version{}, fmt.Errorf("the %q scheme needs a version_pattern", Pattern)
		}
		return f.pat.parse(s)
	case Opaque:
		if s == "" {
			return Version{}, fmt.Errorf("an empty string is not a version")
		}
		return Version{scheme: Opaque, raw: s}, nil
	}
	return Version{}, fmt.Errorf("unknown version scheme %q", f.Scheme)
}

func parseDotted(s string) ([]uint64, error) {
	if s == "" {
		return nil, fmt.Errorf("empty version is not a dotted version")
	}
	return parseFields(s, "a dotted version (integers separated by dots)", func(f string) (uint64, bool) {
		n, err := strconv.ParseUint(f, 10, 64)
		return n, err == nil && f != "" && f[0] != '+'
	})
}

// parseFields reads s's dot-separated fields with field, or says which
// field is not one of a version of the form named.
func parseFields(s, form string, field func(string) (uint64, bool)) ([]uint64, error) {
	fields := strings.Split(s, ".")
	parts := make([]uint64, len(fields))
	for i, f := range fields {
		n, ok := field(f)
		if !ok {
			return nil, fmt.Errorf("%q is not %s: field %d is %q", s, form, i+1, f)
		}
		parts[i] = n
	}
	return parts, nil
}

// String returns the version as written.
func (v Version) String() string { return v.raw }

// Scheme returns the scheme v was parsed with.
func (v Version) Scheme() Scheme { return v.scheme }

// Format returns the format v was parsed with, to read other versions of
// the same component with.
func (v Version) Format() Format {
	f := Format{Scheme: v.scheme}
	if v.pat != nil {
		f.Pattern, f.pat = v.pat.src, v.pat
	}
	return f
}

// HasMinors reports whether v's format has minor versions (Format.HasMinors).
func (v Version) HasMinors() bool { return v.Format().HasMinors() }

// Family returns the family token that must match (vendor, pattern), or "".
func (v Version) Family() string { return strings.ReplaceAll(v.family, "\x00", " ") }

// Lineage is what two versions of v's scheme must share to be ordered at
// all, in words: the family (vendor, pattern), how the vendor scheme's
// second reading wrote the fields and the constant suffix ("GB200Nvl",
// "fields separated by underscores", "suffix _n04"); "" when v has none.
// Versions of different lineages are different firmware, never older or
// newer.
func (v Version) Lineage() string {
	var out []string
	if f := v.Family(); f != "" {
		out = append(out, f)
	}
	if v.under {
		out = append(out, "fields separated by underscores")
	}
	if v.suffix != "" {
		out = append(out, "suffix "+v.suffix)
	}
	return strings.Join(out, ", ")
}

// IsZero reports whether v is the zero (unparsed) Version.
func (v Version) IsZero() bool { return v.scheme == "" }

// Major, Minor and Patch return the first three numeric fields (0 when
// absent); for a pattern, the groups named major and minor when it has them.
func (v Version) Major() uint64 { return v.field(v.patIndex(0)) }

// Minor returns the second numeric field.
func (v Version) Minor() uint64 { return v.field(v.patIndex(1)) }

// Patch returns the third numeric field.
func (v Version) Patch() uint64 { return v.field(2) }

func (v Version) patIndex(i int) int {
	if v.pat != nil && v.pat.major >= 0 && v.pat.minor >= 0 {
		if i == 0 {
			return v.pat.major
		}
		return v.pat.minor
	}
	return i
}

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

// UndecidableError says why two versions cannot be ordered: an opaque
// version that differs, vendor versions of different families, two builds
// of one version with different commits. It is never a guess's excuse:
// the caller reports it.
type UndecidableError struct {
	A, B   string
	Scheme Scheme
	Reason string
}

func (e *UndecidableError) Error() string {
	return fmt.Sprintf("%q and %q cannot be ordered under the %q scheme: %s", e.A, e.B, e.Scheme, e.Reason)
}

// IsUndecidable reports whether err is (or wraps) an UndecidableError.
func IsUndecidable(err error) bool {
	var u *UndecidableError
	return errors.As(err, &u)
}

// Compare returns -1, 0 or +1, or an *UndecidableError when a and b cannot
// be ordered. Semver versions compare by semver precedence; dotted and hex
// by their fields, missing fields counting as 0 ("1.2" == "1.2.0"); a semver
// and a dotted version by their numeric fields (a hex version compares only
// with hex versions: "61" is not 0x61). Vendor and pattern versions
// compare only within one family and one pattern; opaque versions are only
// equal (0) or undecidable.
func Compare(a, b Version) (int, error) {
	undecidable := func(reason string, args ...any) (int, error) {
		return 0, &UndecidableError{A: a.raw, B: b.raw, Scheme: a.scheme, Reason: fmt.Sprintf(reason, args...)}
	}
	if a.IsZero() || b.IsZero() {
		return undecidable("a version was not parsed")
	}
	numeric := func(s Scheme) bool { return s == Semver || s == Dotted }
	if a.scheme != b.scheme {
		if numeric(a.scheme) && numeric(b.scheme) {
			return compareFields(a, b), nil
		}
		return undecidable("%q is read with the %q scheme and %q with %q", a.raw, a.scheme, b.raw, b.scheme)
	}
	switch a.scheme {
	case Semver:
		return a.sv.Compare(b.sv), nil
	case Dotted, Hex:
		return compareFields(a, b), nil
	case Opaque:
		if a.raw == b.raw {
			return 0, nil
		}
		return undecidable("opaque versions are only equal or different, never older or newer")
	case Pattern:
		if a.pat.src != b.pat.src {
			return undecidable("they were read with different version patterns")
		}
		if a.family != b.family {
			return undecidable("their family groups differ (%q, %q): versions of different families are not older or newer than each other", a.Family(), b.Family())
		}
		return compareFields(a, b), nil
	case Vendor:
		return compareVendor(a, b)
	}
	return undecidable("unknown scheme")
}

// compareFields compares numeric fields one by one, missing ones as 0.
func compareFields(a, b Version) int {
	n := max(a.fields(), b.fields())
	for i := 0; i < n; i++ {
		if c := cmp.Compare(a.field(i), b.field(i)); c != 0 {
			return c
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

// Equal reports whether a and b are the same version: they compare as 0.
// Versions that cannot be ordered are not equal.
func Equal(a, b Version) bool {
	c, err := Compare(a, b)
	return err == nil && c == 0
}

// SkippedMinors returns the minor versions ("4.5") an upgrade from → to
// jumps over, in ascending order; nil when it skips none, is not an
// upgrade, or the versions have no minors (HasMinors). Patch releases
// never count. When known (the catalog) is non-empty, only minors that
// actually exist in it count as skipped, so a minor that was never
// released is not demanded; across a major version boundary only known
// minors can be named. Without known versions, every minor strictly
// between from and to within one major is skipped.
func SkippedMinors(from, to Version, known []Version) []string {
	if !from.HasMinors() || !to.HasMinors() {
		return nil
	}
	if c, err := Compare(from, to); err != nil || c >= 0 {
		return nil
	}
	fromMinor := [2]uint64{from.Major(), from.Minor()}
	toMinor := [2]uint64{to.Major(), to.Minor()}
	between := func(m [2]uint64) bool {
		return slices.Compare(fromMinor[:], m[:]) < 0 && slices.Compare(m[:], toMinor[:]) < 0
	}
	var out []string
	if len(known) > 0 {
		seen := map[[2]uint64]bool{}
		var ms [][2]uint64
		for _, k := range known {
			if !k.HasMinors() {
				continue
			}
			if _, err := Compare(k, to); err != nil {
				continue
			}
			m := [2]uint64{k.Major(), k.Minor()}
			if between(m) && !seen[m] {
				seen[m] = true
				ms = append(ms, m)
			}
		}
		slices.SortFunc(ms, func(a, b [2]uint64) int { return slices.Compare(a[:], b[:]) })
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

// Deciding returns the first built-in scheme, in the order semver, dotted,
// vendor, hex, that reads every one of versions and orders each against the
// first; "" when none does (then a version_pattern or the opaque scheme is
// the way). It is what an error message suggests declaring. Hex is
// suggested only for versions with a dot or a 0x: it reads any word of
// the letters a to f and digits ("4301A56", "cafe"), which is rarely a
// hexadecimal number.
func Deciding(versions ...string) Scheme {
	for _, sc := range []Scheme{Semver, Dotted, Vendor, Hex} {
		if sc == Hex && !allHexLike(versions) {
			continue
		}
		var first Version
		ok := true
		for i, s := range versions {
			v, err := Parse(s, sc)
			if err != nil {
				ok = false
				break
			}
			if i == 0 {
				first = v
				continue
			}
			if _, err := Compare(first, v); err != nil {
				ok = false
				break
			}
		}
		if ok && len(versions) > 0 {
			return sc
		}
	}
	return ""
}

// allHexLike reports whether each of versions has a dot or starts with 0x,
// the shapes for which Deciding suggests the hex scheme.
func allHexLike(versions []string) bool {
	for _, s := range versions {
		if !strings.Contains(s, ".") && !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
			return false
		}
	}
	return true
}
