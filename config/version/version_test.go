package version

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		scheme  Scheme
		wantErr string
	}{
		{"4.6.1", Semver, ""},
		{"1.2.0-rc.1+build.5", Semver, ""},
		{"4.6", Semver, "not a semantic version"},
		{"v4.6.1", Semver, "not a semantic version"},
		{"2.19.1.7", Dotted, ""},
		{"7", Dotted, ""},
		{"1..2", Dotted, "field 2 is \"\""},
		{"1.2a", Dotted, "field 2 is \"2a\""},
		{"", Dotted, "empty version"},
		{"1.2.3", "vendor", "unknown version scheme"},
	}
	for _, tt := range tests {
		t.Run(string(tt.scheme)+"/"+tt.in, func(t *testing.T) {
			v, err := Parse(tt.in, tt.scheme)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if v.String() != tt.in {
					t.Errorf("String() = %q", v.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b   string
		scheme Scheme
		want   int
	}{
		{"4.10.0", "4.9.0", Semver, 1}, // a string comparison would say -1
		{"1.0.0-rc.1", "1.0.0", Semver, -1},
		{"1.0.0+a", "1.0.0+b", Semver, 0},
		{"2.19.1.7", "2.19.1.10", Dotted, -1},
		{"1.2", "1.2.0", Dotted, 0},
		{"10", "9", Dotted, 1},
	}
	for _, tt := range tests {
		t.Run(tt.a+"_"+tt.b, func(t *testing.T) {
			a, b := MustParse(tt.a, tt.scheme), MustParse(tt.b, tt.scheme)
			if got := Compare(a, b); got != tt.want {
				t.Errorf("Compare(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
			if got := Compare(b, a); got != -tt.want {
				t.Errorf("Compare(%s, %s) = %d, want %d", tt.b, tt.a, got, -tt.want)
			}
		})
	}
}

func TestSkippedMinors(t *testing.T) {
	sv := func(s string) Version { return MustParse(s, Semver) }
	tests := []struct {
		name     string
		from, to string
		known    []string
		want     []string
	}{
		{"next minor", "4.4.2", "4.5.0", nil, nil},
		{"patch skip allowed", "4.5.0", "4.5.9", nil, nil},
		{"skip one", "4.4.0", "4.6.1", nil, []string{"4.5"}},
		{"skip two", "4.4.0", "4.7.0", nil, []string{"4.5", "4.6"}},
		{"downgrade", "4.6.0", "4.4.0", nil, nil},
		{"major without catalog", "4.9.0", "5.1.0", nil, nil},
		{"catalog has the minor", "4.4.0", "4.6.1", []string{"4.4.0", "4.5.2", "4.6.1"}, []string{"4.5"}},
		{"catalog lacks the minor", "4.4.0", "4.6.1", []string{"4.4.0", "4.6.1"}, nil},
		{"catalog across major", "4.9.0", "5.1.0", []string{"4.9.0", "5.0.0", "5.0.3", "5.1.0"}, []string{"5.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var known []Version
			for _, k := range tt.known {
				known = append(known, sv(k))
			}
			got := SkippedMinors(sv(tt.from), sv(tt.to), known)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SkippedMinors(%s, %s) (-want +got):\n%s", tt.from, tt.to, diff)
			}
		})
	}
}

func TestEqualStrings(t *testing.T) {
	cases := []struct {
		scheme, want, got string
		eq, err           bool
	}{
		{"", "1.2", "1.2", true, false},
		{"", "1.2", "1.2.0", false, false},
		{"dotted", "1.2", "1.2.0", true, false},
		{"semver", "1.2.3", "1.2.4", false, false},
		{"dotted", "1.2", "P79 v1.45", false, true},
		{"nonsense", "1", "1", false, true},
	}
	for _, c := range cases {
		eq, err := EqualStrings(c.scheme, "", c.want, c.got)
		if eq != c.eq || (err != nil) != c.err {
			t.Errorf("EqualStrings(%q, %q, %q) = %v, %v; want %v, error %v", c.scheme, c.want, c.got, eq, err, c.eq, c.err)
		}
	}
}
