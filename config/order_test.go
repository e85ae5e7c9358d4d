package config

import "testing"

func TestRackLess(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"rack2", "rack10", true},
		{"rack10", "rack2", false},
		{"rack2", "rack2", false},
		{"r1a", "r1b", true},
		{"r01", "r1", false}, // same value: fewer leading zeros first
		{"r1", "r01", true},
		{"a", "a1", true},
		{"b1", "a2", false},
	}
	for _, c := range cases {
		if got := RackLess(OrderNatural)(c.a, c.b); got != c.want {
			t.Errorf("natural: RackLess(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	// Alphanumeric is byte-wise: rack10 before rack2 (the Nexus default).
	if !RackLess(OrderAlphanumeric)("rack10", "rack2") || RackLess(OrderAlphanumeric)("rack2", "rack10") {
		t.Error("alphanumeric order must put rack10 before rack2")
	}
}
