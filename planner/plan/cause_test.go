package plan

import (
	"testing"

	"github.com/rackform/rackform/providers"
)

// TestCauseCounts: known causes first in report order, then one this
// rackform has no words for (a newer plugin's), under its own name.
func TestCauseCounts(t *testing.T) {
	by := map[string]int{
		"bmc_on_fire":                         1,
		providers.OutcomeCredentialsRefused:   2,
		providers.OutcomeUnreachable:          5,
		providers.OutcomeInventoryUnavailable: 0,
	}
	want := "5 unreachable, 2 credentials refused, 1 bmc on fire"
	if got := CauseCounts(by); got != want {
		t.Errorf("CauseCounts = %q, want %q", got, want)
	}
}
