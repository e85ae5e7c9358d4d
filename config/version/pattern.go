package version

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The pattern scheme reads versions with a user's regular expression (RE2
// syntax, matched against the whole string). Its capture groups say what
// is compared:
//
//   - a group named "family" or "family_…" captures a token that must be
//     equal for two versions to be comparable (a platform, a product line);
//     versions whose family groups differ are undecidable;
//   - every other capture group, named or not, captures a whole number;
//     they compare numerically in the order they appear in the pattern; a
//     group that did not take part in the match counts as 0;
//   - text outside capture groups (a date, a build label) is ignored;
//     group with (?:…) to leave something out of the comparison;
//   - groups named "major" and "minor" give the versions minors, so the
//     minor-skip rule applies to them.

// maxPatternLen bounds a version_pattern.
const maxPatternLen = 1024

type pattern struct {
	src string
	re  *regexp.Regexp
	// numeric and family are subexpression indexes, in pattern order.
	numeric, family []int
	// major and minor index into numeric; -1 when the pattern has none.
	major, minor int
}

func compilePattern(src string) (*pattern, error) {
	if len(src) > maxPatternLen {
		return nil, fmt.Errorf("the version_pattern is longer than %d characters", maxPatternLen)
	}
	re, err := regexp.Compile(`^(?:` + src + `)$`)
	if err != nil {
		return nil, fmt.Errorf("the version_pattern %q is not a regular expression: %v", src, err)
	}
	p := &pattern{src: src, re: re, major: -1, minor: -1}
	for i, name := range re.SubexpNames() {
		if i == 0 {
			continue
		}
		switch {
		case name == "family" || strings.HasPrefix(name, "family_"):
			p.family = append(p.family, i)
			continue
		case name == "major":
			p.major = len(p.numeric)
		case name == "minor":
			p.minor = len(p.numeric)
		}
		p.numeric = append(p.numeric, i)
	}
	if len(p.numeric) == 0 {
		return nil, fmt.Errorf("the version_pattern %q has no capture group to compare: capture each number that orders versions, as in \"v(\\\\d+)\\\\.(\\\\d+)\"", src)
	}
	return p, nil
}

func (p *pattern) parse(s string) (Version, error) {
	m := p.re.FindStringSubmatchIndex(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q does not match the version_pattern %q", s, p.src)
	}
	group := func(i int) (string, bool) {
		if m[2*i] < 0 {
			return "", false
		}
		return s[m[2*i]:m[2*i+1]], true
	}
	v := Version{scheme: Pattern, raw: s, pat: p}
	var fam []string
	for _, i := range p.family {
		g, _ := group(i)
		fam = append(fam, g)
	}
	v.family = strings.Join(fam, "\x00")
	names := p.re.SubexpNames()
	for _, i := range p.numeric {
		g, ok := group(i)
		if !ok {
			v.parts = append(v.parts, 0)
			continue
		}
		n, err := strconv.ParseUint(g, 10, 64)
		if err != nil {
			name := fmt.Sprintf("group %d", i)
			if names[i] != "" {
				name = fmt.Sprintf("group %q", names[i])
			}
			return Version{}, fmt.Errorf("in %q, %s of the version_pattern captured %q, which is not a whole number; name the group family to compare it for equality, or make it (?:…) to leave it out", s, name, g)
		}
		v.parts = append(v.parts, n)
	}
	return v, nil
}
