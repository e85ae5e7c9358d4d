package words

import "testing"

func TestCapitalize(t *testing.T) {
	for in, want := range map[string]string{
		"":           "",
		"no rollout": "No rollout",
		"Already":    "Already",
		"3 servers":  "3 servers",
		"über":       "über",
	} {
		if got := Capitalize(in); got != want {
			t.Errorf("Capitalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "servers", 1: "server", 2: "servers"} {
		if got := Plural(n, "server", "servers"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}
