package version

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Previous is a version just older than v in v's own format, for starting a
// simulated server behind its target: the last non-zero field of a dotted
// or semantic version lowered ("2.80" → "2.79", "4.6.0" → "4.5.0",
// "4.6.1" → "4.6.0", so a runtime never skips a minor), of a hexadecimal
// one likewise in hexadecimal ("94.02.4B" → "94.02.4A"); a vendor or pattern
// version keeps its text with the last number that makes it older lowered
// ("P79 v1.46" → "P79 v1.45", "nc.1.6.17-0-gabcdef" → "nc.1.6.16-0-gabcdef"),
// a release date's numbers like any other when lowerDates is set and only
// when nothing else will do otherwise ("U30 v2.52 (10/29/2021)" → "U30 v2.52
// (10/29/2020)" or "U30 v2.51 (10/29/2021)"); an opaque version, which has
// no older, gets "-previous" appended (it differs).
func Previous(v Version, lowerDates bool) string {
	raw := v.String()
	switch v.Scheme() {
	case Semver, Dotted:
		fields := []uint64{v.Major(), v.Minor(), v.Patch()}
		if v.Scheme() == Dotted {
			fields = nil
			for _, f := range strings.Split(raw, ".") {
				n, _ := strconv.ParseUint(f, 10, 64)
				fields = append(fields, n)
			}
		}
		for i := len(fields) - 1; i >= 0; i-- {
			if fields[i] > 0 {
				fields[i]--
				break
			}
		}
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = fmt.Sprint(f)
		}
		return strings.Join(parts, ".")
	case Hex:
		if p, ok := previousHex(raw); ok {
			return p
		}
		return raw + "-previous"
	case Opaque:
		return raw + "-previous"
	}
	passes := []bool{true, false} // skip dates first
	if lowerDates {
		passes = []bool{false}
	}
	for _, skipDates := range passes {
		for end := len(raw); end > 0; end-- {
			if !isDigit(raw[end-1]) {
				continue
			}
			start := end
			for start > 0 && isDigit(raw[start-1]) {
				start--
			}
			if skipDates && inDate(raw, start, end) {
				end = start + 1
				continue
			}
			// base 10: "08" is eight, where fmt.Sscan reads a leading 0
			// as octal
			n, err := strconv.ParseUint(raw[start:end], 10, 64)
			if err == nil && n > 0 {
				cand := raw[:start] + fmt.Sprintf("%0*d", end-start, n-1) + raw[end:]
				if o, err := v.Format().Parse(cand); err == nil {
					if c, err := Compare(o, v); err == nil && c < 0 {
						return cand
					}
				}
			}
			end = start + 1
		}
	}
	return raw + "-previous"
}

// monthRe matches a month abbreviation and a space just before a day.
var monthRe = regexp.MustCompile(`(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) $`)

// inDate reports whether raw[start:end] looks like part of a release date
// ("10/29/2021", "May 11 2021", "2021-10-29"): a four-digit year (1970 to
// 2099: "4770" of "35_2014_4770" and "0031" are build numbers), a number
// beside '/', or a day after a month's name.
func inDate(raw string, start, end int) bool {
	if end-start == 4 {
		y, _ := strconv.Atoi(raw[start:end])
		return y >= 1970 && y <= 2099
	}
	if (start > 0 && raw[start-1] == '/') || (end < len(raw) && raw[end] == '/') {
		return true
	}
	return monthRe.MatchString(raw[:start])
}
