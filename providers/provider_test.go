package providers

import "testing"

// A control-plane member not observed is down for what its BMC answered:
// "unreachable" only when nothing answered (rule 46).
func TestNotHealthyNamesTheOutcome(t *testing.T) {
	for _, c := range []struct {
		o    *Observation
		want string
	}{
		{nil, "not observed"},
		{&Observation{Outcome: OutcomeUnreachable}, "unreachable"},
		{&Observation{}, "unreachable"}, // an older plugin's Reachable=false
		{&Observation{Outcome: OutcomeUnusableAnswer}, "unusable answer"},
		{&Observation{Outcome: OutcomeCredentialsRefused}, "credentials refused"},
		{&Observation{Outcome: OutcomeObserved, Reachable: true, Health: "Critical"}, "health Critical"},
		{&Observation{Outcome: OutcomeObserved, Reachable: true, Health: "OK", PowerState: PowerOn}, ""},
	} {
		if got := c.o.NotHealthy(); got != c.want {
			t.Errorf("%+v: NotHealthy() = %q, want %q", c.o, got, c.want)
		}
	}
}
