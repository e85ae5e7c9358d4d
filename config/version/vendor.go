package version

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The vendor scheme reads the version strings BMCs report. Informally:
//
//	VERSION = [FAMILY SEP] ["v"] CORE TAIL
//	        | CODE "-" CORE TAIL                        (Lenovo: "42S-2.83")
//	        | [FAMILY " "] "Date: " DATE " Ver " CORE TAIL  (Supermicro)
//	TAIL    = [LETTER] [.BUILDID] [-N] [-PRE] [-N-IDENT | -revN] {" " QUALIFIER}
//
//	FAMILY    a letter, then letters, digits, '.', '_' or '-', no spaces:
//	          "P79", "U30", "nc", "ex235a.bios", "HGX"; "C" in "C27"
//	SEP       ' ', '.', '-' or '_'; none when FAMILY is letters only ("C27")
//	CODE      a Lenovo build code, a digit, a digit or capital, a capital
//	          ("42S" of XCC TGBT42S): a build identity, not a family
//	CORE      integers separated by dots: "1.45", "5.10.50.00", "22.10"
//	LETTER    one letter right after CORE, ending the word: "1.44B"
//	BUILDID   6 to 40 lowercase hex digits, at least one of a-f: "1.45.455b66"
//	-N        a release number: the build of a release train ("HGX-22.10-1",
//	          "NAME-24.05-2") or a package release ("4.15.1-100")
//	-PRE      a pre-release, alpha, beta or rc (any case), then an optional
//	          number, optionally after a dot: "-rc34", "-rc.34", "-beta"
//	-N-IDENT  git describe: N commits after the tag, then the commit or
//	          build identity ("-0-gabcdef", "-21-prod-master.arm.….28331ff")
//	-revN     a revision: "-rev4"
//	QUALIFIER a release date ("10/29/2021", "May 11 2021", "2021-10-29"), a
//	          build number ("Build 27"), either in parentheses or not, or a
//	          hexadecimal build identity ("0x800016DC", Intel's NVM EETRACK)
//
// GPU-rack firmware adds a second reading (trains.go), tried only when this
// one reads nothing: fields separated by underscores ("35_2014_4652"), a
// constant suffix ("01.04.0026.0000_n04") and a release build letter
// ("GB200Nvl-25.08-B").
//
// The first reading that accounts for the whole string wins, trying the
// shortest family first, then the longest core, then a release number and a
// pre-release before a git-describe suffix, so each string has one reading
// ("HGX-22.10-1-rc34" is family HGX, 22.10, release 1, rc34; not the family
// "HGX-22.10" nor 34 commits after a tag). A family never starts with a digit,
// so a Lenovo build code that does ("42S-2.83") is never taken for one; a code
// that starts with a capital ("A6G-15.10") is read as a family, which keeps
// it from being ordered against another code: an error, not a guess.
//
// Comparison (compareVendor): the families must be equal, else the versions
// are undecidable (P79 and P80 are different platforms' ROMs, not older and
// newer); then CORE numerically (missing fields are 0); then the letter (none
// < A < B); then the release number, only when both versions carry one; then
// the pre-release (alpha < beta < rc < none, then its number, none before 0,
// as semver orders 1.0.0-rc < 1.0.0-rc.0 < 1.0.0); then the git-describe
// distance (none = 0: the tag itself); then the build number, the revision
// and the date, each only when both versions carry it (a release written "U30
// v2.52" is met by a BMC reporting "U30 v2.52 (10/29/2021)"); finally two
// different build identities of an otherwise equal version are undecidable
// (two builds of one tag from different commits, two Lenovo builds of one
// version).

// maxVendorLen bounds what the vendor parser reads (it tries each split).
const maxVendorLen = 256

var (
	// qualifierRe matches one qualifier at the start of a string.
	qualifierRe = regexp.MustCompile(`^(?:(\d{1,2}/\d{1,2}/\d{4})|([A-Z][a-z]{2} \d{1,2} \d{4})|(\d{4}-\d{2}-\d{2})|(?:[Bb]uild|BUILD) (\d+)|0[xX]([0-9A-Fa-f]{1,16}))`)
	revRe       = regexp.MustCompile(`^-(?:rev|Rev|REV)(\d+)`)
	describeRe  = regexp.MustCompile(`^-(\d+)-([A-Za-z][^ ]*)`)
	releaseRe   = regexp.MustCompile(`^-(\d+)`)
	preRe       = regexp.MustCompile(`^-(?i:(alpha|beta|rc))(?:\.?(\d+))?`)
	// lenovoCodeRe is a Lenovo build code before the version ("42S-2.83").
	lenovoCodeRe = regexp.MustCompile(`^\d[0-9A-Z][A-Z]$`)
	// datedRe is Supermicro's "BIOS Date: 08/04/2023 Ver 1.4".
	datedRe = regexp.MustCompile(`^(?:([A-Za-z][A-Za-z0-9._-]*) )?Date: (\d{1,2}/\d{1,2}/\d{4}) Ver ([0-9].*)$`)
)

// preKinds are the pre-release kinds in their order; a version without one
// (a release) orders after them all.
var preKinds = []string{"alpha", "beta", "rc"}

// preRelease is a vendor pre-release ("-rc34": kind 3, number 34); the zero
// value is none, a release.
type preRelease struct {
	kind   uint8 // index in preKinds + 1
	num    uint64
	hasNum bool
}

func (p preRelease) String() string {
	if p.kind == 0 {
		return ""
	}
	if !p.hasNum {
		return preKinds[p.kind-1]
	}
	return preKinds[p.kind-1] + strconv.FormatUint(p.num, 10)
}

func comparePre(a, b preRelease) int {
	rank := func(p preRelease) uint64 {
		if p.kind == 0 {
			return uint64(len(preKinds) + 1)
		}
		return uint64(p.kind)
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 || a.kind == 0 {
		return c
	}
	if a.hasNum != b.hasNum {
		if a.hasNum {
			return 1
		}
		return -1
	}
	return cmp.Compare(a.num, b.num)
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isSep(c byte) bool    { return c == ' ' || c == '.' || c == '-' || c == '_' }
func isHex(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'f' }

func parseVendor(s string) (Version, error) {
	bad := func(why string) (Version, error) {
		return Version{}, fmt.Errorf("%q is not a vendor version: %s", s, why)
	}
	switch {
	case s == "":
		return bad("it is empty")
	case len(s) > maxVendorLen:
		return bad(fmt.Sprintf("it is longer than %d characters", maxVendorLen))
	}
	if v, ok := parseDated(s); ok {
		return v, nil
	}
	// The second reading (trains.go) is tried only when the first reads
	// nothing, so it never changes how a string the first reads is read.
	for _, second := range []bool{false, true} {
		if v, ok := parseVendorReading(s, second); ok {
			return v, nil
		}
	}
	return bad("expected an optional family token (\"P79\", \"nc.\") or Lenovo build code (\"42S-\"), an optional \"v\", a dotted number, and only the suffixes the vendor scheme knows (a revision letter, a hex build id, a release number -N, a pre-release -rcN, -betaN or -alphaN, -N-gHASH, -revN, a date, \"Build N\", a 0x build id)")
}

// parseVendorReading tries each place a version core can start, the
// shortest family first; second allows the second reading's forms.
func parseVendorReading(s string, second bool) (Version, bool) {
	for i := 0; i < len(s); i++ {
		family, ok := familyBefore(s, i)
		code := ""
		if !ok && i > 0 && s[i-1] == '-' && lenovoCodeRe.MatchString(s[:i-1]) && isDigit(s[i]) {
			family, code, ok = "", s[:i-1], true
		}
		if !ok {
			continue
		}
		start := i
		if (s[i] == 'v' || s[i] == 'V') && i+1 < len(s) && isDigit(s[i+1]) {
			start = i + 1
		} else if !isDigit(s[i]) {
			continue
		}
		if v, ok := parseVendorFrom(s, start, second); ok {
			v.family = family
			if code != "" {
				v.ident = joinIdent(code, v.ident)
			}
			return v, true
		}
	}
	return Version{}, false
}

// parseDated reads Supermicro's "BIOS Date: 08/04/2023 Ver 1.4": the
// leading word is the family, the date is the release date and what
// follows "Ver" is read like any vendor version without a family.
func parseDated(s string) (Version, bool) {
	m := datedRe.FindStringSubmatch(s)
	if m == nil {
		return Version{}, false
	}
	if m[1] != "" && !validFamily(m[1]) {
		return Version{}, false
	}
	d, err := time.Parse("1/2/2006", m[2])
	if err != nil {
		return Version{}, false
	}
	v, ok := parseVendorFrom(m[3], 0, false)
	if !ok || !v.date.IsZero() {
		return Version{}, false
	}
	v.raw, v.family, v.date = s, m[1], d
	return v, true
}

// familyBefore returns the family when a version core can start at s[i].
func familyBefore(s string, i int) (string, bool) {
	if i == 0 {
		return "", true
	}
	if isSep(s[i-1]) {
		f := s[:i-1]
		return f, validFamily(f)
	}
	// "C27": a letters-only family joined to the number.
	if isDigit(s[i]) && isLetter(s[i-1]) {
		f := s[:i]
		for j := 0; j < len(f); j++ {
			if !isLetter(f[j]) {
				return "", false
			}
		}
		return f, true
	}
	return "", false
}

func validFamily(f string) bool {
	if f == "" || !isLetter(f[0]) || isSep(f[len(f)-1]) {
		return false
	}
	for j := 0; j < len(f); j++ {
		c := f[j]
		if !isLetter(c) && !isDigit(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// parseVendorFrom reads CORE and what follows from s[start:], trying the
// longest core first; second also tries a core of underscore-separated
// fields and the second reading's tails (trains.go).
func parseVendorFrom(s string, start int, second bool) (Version, bool) {
	if v, ok := parseCoreFrom(s, start, '.', second); ok {
		return v, true
	}
	if second {
		if v, ok := parseCoreFrom(s, start, '_', true); ok {
			v.under = true
			return v, true
		}
	}
	return Version{}, false
}

// parseCoreFrom reads a core of integers separated by sep, then what
// follows. A core of underscore-separated fields has at least two.
func parseCoreFrom(s string, start int, sep byte, second bool) (Version, bool) {
	var ends []int
	for j := start; ; {
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == j {
			break
		}
		ends = append(ends, k)
		if k+1 < len(s) && s[k] == sep && isDigit(s[k+1]) {
			j = k + 1
			continue
		}
		break
	}
	least := 1
	if sep != '.' {
		least = 2
	}
	for n := len(ends); n >= least; n-- {
		end := ends[n-1]
		parts, err := parseDotted(strings.ReplaceAll(s[start:end], string(sep), "."))
		if err != nil {
			return Version{}, false // a field overflows
		}
		if end < len(s) && isLetter(s[end]) && (end+1 == len(s) || !isLetter(s[end+1]) && !isDigit(s[end+1])) {
			if v, ok := parseVendorTail(s[end+1:], second); ok {
				v.raw, v.parts, v.letter = s, parts, upper(s[end])
				return v, true
			}
		}
		if v, ok := parseVendorTail(s[end:], second); ok {
			v.raw, v.parts = s, parts
			return v, true
		}
	}
	return Version{}, false
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// parseVendorTail reads what may follow the core (and letter); second
// also reads a constant suffix and a release build letter (trains.go).
func parseVendorTail(t string, second bool) (Version, bool) {
	v := Version{scheme: Vendor}
	if second {
		if suffix, ok := constantSuffix(t); ok {
			v.suffix = suffix
			return v, true
		}
	}
	if strings.HasPrefix(t, ".") {
		k, letters := 1, false
		for k < len(t) && isHex(t[k]) {
			letters = letters || !isDigit(t[k])
			k++
		}
		if k-1 < 6 || k-1 > 40 || !letters || k < len(t) && t[k] != '-' && t[k] != ' ' {
			return Version{}, false
		}
		v.ident, t = t[1:k], t[k:]
	}
	// A release number, then a pre-release, each kept only when what
	// follows reads too: "-0-gabcdef" is git describe, not release 0.
	if m := releaseRe.FindStringSubmatch(t); m != nil {
		if n, err := strconv.ParseUint(m[1], 10, 64); err == nil {
			w := v
			w.release, w.hasRelease = n, true
			if w, ok := parsePreAndRest(w, t[len(m[0]):]); ok {
				return w, true
			}
		}
	}
	if second {
		if w, rest, ok := releaseLetter(v, t); ok {
			if w, ok := parsePreAndRest(w, rest); ok {
				return w, true
			}
		}
	}
	return parsePreAndRest(v, t)
}

func parsePreAndRest(v Version, t string) (Version, bool) {
	if m := preRe.FindStringSubmatch(t); m != nil && (len(m[0]) == len(t) || t[len(m[0])] == ' ' || t[len(m[0])] == '-') {
		w := v
		w.pre.kind = uint8(slices.Index(preKinds, strings.ToLower(m[1])) + 1)
		if m[2] != "" {
			n, err := strconv.ParseUint(m[2], 10, 64)
			if err == nil {
				w.pre.num, w.pre.hasNum = n, true
			}
		}
		if w.pre.hasNum || m[2] == "" {
			if w, ok := parseVendorRest(w, t[len(m[0]):]); ok {
				return w, true
			}
		}
	}
	return parseVendorRest(v, t)
}

// parseVendorRest reads a git-describe suffix or a revision, then the
// qualifiers.
func parseVendorRest(v Version, t string) (Version, bool) {
	if m := describeRe.FindStringSubmatch(t); m != nil {
		n, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil {
			return Version{}, false
		}
		v.distance = n
		v.ident = joinIdent(v.ident, m[2])
		t = t[len(m[0]):]
	} else if m := revRe.FindStringSubmatch(t); m != nil {
		n, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil {
			return Version{}, false
		}
		v.rev, v.hasRev = n, true
		t = t[len(m[0]):]
	}
	for t != "" {
		if t[0] != ' ' || len(t) < 2 {
			return Version{}, false
		}
		t = t[1:]
		paren := t[0] == '('
		if paren {
			t = t[1:]
		}
		m := qualifierRe.FindStringSubmatch(t)
		if m == nil {
			return Version{}, false
		}
		t = t[len(m[0]):]
		if paren {
			if !strings.HasPrefix(t, ")") {
				return Version{}, false
			}
			t = t[1:]
		}
		if t != "" && t[0] != ' ' {
			return Version{}, false
		}
		switch {
		case m[5] != "":
			v.ident = joinIdent(v.ident, "0x"+strings.ToUpper(m[5]))
		case m[4] != "":
			n, err := strconv.ParseUint(m[4], 10, 64)
			if err != nil || v.hasBuild {
				return Version{}, false
			}
			v.build, v.hasBuild = n, true
		default:
			if !v.date.IsZero() {
				return Version{}, false
			}
			var d time.Time
			var err error
			switch {
			case m[1] != "":
				d, err = time.Parse("1/2/2006", m[1])
			case m[2] != "":
				d, err = time.Parse("Jan 2 2006", m[2])
			default:
				d, err = time.Parse("2006-01-02", m[3])
			}
			if err != nil {
				return Version{}, false
			}
			v.date = d
		}
	}
	return v, true
}

func joinIdent(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "-" + b
}

func compareVendor(a, b Version) (int, error) {
	undecidable := func(reason string, args ...any) (int, error) {
		return 0, &UndecidableError{A: a.raw, B: b.raw, Scheme: Vendor, Reason: fmt.Sprintf(reason, args...)}
	}
	if a.family != b.family {
		switch {
		case a.family == "" || b.family == "":
			fam := a.family + b.family
			return undecidable("one has the family %q and the other none; versions of different families are different products' firmware, not older or newer", fam)
		default:
			return undecidable("their families differ (%q, %q): versions of different families are different products' firmware (another platform's ROM), not older or newer", a.family, b.family)
		}
	}
	if why := secondReadingUndecidable(a, b); why != "" {
		return undecidable("%s", why)
	}
	if c := compareFields(a, b); c != 0 {
		return c, nil
	}
	if c := cmp.Compare(a.letter, b.letter); c != 0 {
		return c, nil
	}
	if a.hasRelease && b.hasRelease {
		if why := releaseUndecidable(a, b); why != "" {
			return undecidable("%s", why)
		}
		if c := cmp.Compare(a.release, b.release); c != 0 {
			return c, nil
		}
	}
	if c := comparePre(a.pre, b.pre); c != 0 {
		return c, nil
	}
	if c := cmp.Compare(a.distance, b.distance); c != 0 {
		return c, nil
	}
	if a.hasBuild && b.hasBuild {
		if c := cmp.Compare(a.build, b.build); c != 0 {
			return c, nil
		}
	}
	if a.hasRev && b.hasRev {
		if c := cmp.Compare(a.rev, b.rev); c != 0 {
			return c, nil
		}
	}
	if !a.date.IsZero() && !b.date.IsZero() {
		if c := a.date.Compare(b.date); c != 0 {
			return c, nil
		}
	}
	if a.ident != "" && b.ident != "" && a.ident != b.ident {
		return undecidable("they are the same version built from different commits or builds (%q, %q)", a.ident, b.ident)
	}
	return 0, nil
}
