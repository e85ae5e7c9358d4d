package version

import "fmt"

// The vendor scheme's second reading: forms of GPU-rack firmware (NVIDIA
// GB200/GB300 trays) that the first reading does not read. It is tried
// only when the first reads nothing, so no string the first reads is read
// differently:
//
//	UNDERSCORED = integers separated by underscores, at least two, in
//	              place of the dotted CORE: NVLink switch firmware
//	              "35_2014_4652" (35.2014.4652, older than "35_2014_4770")
//	_SUFFIX     = '_', a letter, then letters or digits, ending the
//	              version: the ERoT's "01.04.0026.0000_n04", whose "_n04"
//	              stays the same across releases. It is not a number: it
//	              must be equal on both sides, else the pair is undecidable
//	-LETTER     = a release build written as one capital letter where a
//	              release number -N stands: the HMC's release train
//	              "GB200Nvl-25.08-B", whose builds within a month run 1–9
//	              then A, B, …: 9 < A < E
//
// Comparison (compareVendor) adds to the first reading's: a core of
// underscore-separated fields compares only with another (a dotted
// "35.2014.4652" is undecidable against it); the suffixes must be equal
// (none counts as one, so "01.04.0031.0000" and "01.04.0026.0000_n04" are
// undecidable); a build letter orders after the builds 0 to 9, and a
// letter against a release number above 9 is undecidable (a train that
// numbers past 9 does not use letters, and one that does never reaches
// 10), never guessed.

// maxSuffix bounds a constant suffix.
const maxSuffix = 32

// constantSuffix reads t as a whole constant suffix ("_n04").
func constantSuffix(t string) (string, bool) {
	if len(t) < 2 || len(t) > maxSuffix || t[0] != '_' || !isLetter(t[1]) {
		return "", false
	}
	for i := 2; i < len(t); i++ {
		if !isLetter(t[i]) && !isDigit(t[i]) {
			return "", false
		}
	}
	return t, true
}

// firstLetterBuild is the release number a build letter A stands for:
// the builds 1 to 9 come before it.
const firstLetterBuild = 10

// releaseLetter reads a release build letter at the start of t ("-B",
// then the end, a space or a dash) into v, and returns what follows it.
func releaseLetter(v Version, t string) (Version, string, bool) {
	if len(t) < 2 || t[0] != '-' || t[1] < 'A' || t[1] > 'Z' {
		return v, t, false
	}
	if len(t) > 2 && t[2] != ' ' && t[2] != '-' {
		return v, t, false
	}
	v.release, v.hasRelease, v.letterRelease = firstLetterBuild+uint64(t[1]-'A'), true, true
	return v, t[2:], true
}

// releaseText is a release build as written: a number or a letter.
func releaseText(v Version) string {
	if v.letterRelease {
		return string(rune('A' + v.release - firstLetterBuild))
	}
	return fmt.Sprint(v.release)
}

// secondReadingUndecidable says why a and b, vendor versions of one
// family, cannot be ordered under the second reading's rules, or "".
func secondReadingUndecidable(a, b Version) string {
	switch {
	case a.under != b.under:
		return "one writes its fields separated by underscores and the other does not: they are different firmware's numbering, not older or newer"
	case a.suffix != b.suffix && (a.suffix == "" || b.suffix == ""):
		return fmt.Sprintf("one ends in the suffix %q and the other in none: a suffix that is not a number must be the same on both sides", a.suffix+b.suffix)
	case a.suffix != b.suffix:
		return fmt.Sprintf("their suffixes differ (%q, %q): a suffix that is not a number must be the same on both sides", a.suffix, b.suffix)
	}
	return ""
}

// releaseUndecidable says why the release builds of a and b cannot be
// ordered (a letter against a number above 9), or "".
func releaseUndecidable(a, b Version) string {
	if a.letterRelease == b.letterRelease {
		return ""
	}
	n := a
	if a.letterRelease {
		n = b
	}
	if n.release < firstLetterBuild {
		return ""
	}
	return fmt.Sprintf("the builds %s and %s are a letter and a number above 9: a release train that numbers its builds 1 to 9 then A, B, … never reaches %d, so they are not ordered", releaseText(a), releaseText(b), firstLetterBuild)
}
