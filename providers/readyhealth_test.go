package providers

import "testing"

// ReadyHealth: OK is ready; Warning and Critical only for a server upgraded
// although Critical; no health never (rule 50).
func TestReadyHealth(t *testing.T) {
	for _, tc := range []struct {
		health string
		accept bool
		want   string
	}{
		{"OK", false, ""},
		{"OK", true, ""},
		{"Warning", false, "health is Warning"},
		{"Warning", true, ""},
		{"Critical", false, "health is Critical"},
		{"Critical", true, ""},
		{"", false, "health is unknown"},
		{"", true, "health is unknown"},
		{"Degraded", true, "health is Degraded"},
	} {
		if got := ReadyHealth(tc.health, tc.accept); got != tc.want {
			t.Errorf("ReadyHealth(%q, %v) = %q, want %q", tc.health, tc.accept, got, tc.want)
		}
	}
}
