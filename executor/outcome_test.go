package executor

import (
	"testing"

	"github.com/rackform/rackform/providers"
)

// A server apply does not touch because its pre-flight observation failed
// is said for what its BMC answered: only nothing answering is
// "unreachable" (rule 46), and an outcome of a newer plugin is named, not
// taken for it.
func TestOutcomeTextNamesWhatTheBMCAnswered(t *testing.T) {
	for outcome, want := range map[string]string{
		providers.OutcomeUnreachable:        "the BMC is unreachable",
		providers.OutcomeUnusableAnswer:     "the BMC answered without what the plan needs",
		providers.OutcomeCredentialsRefused: "the BMC refused the credentials",
		"firmware_locked":                   "the BMC could not be observed (firmware locked)",
	} {
		if got := outcomeText(outcome); got != want {
			t.Errorf("outcomeText(%q) = %q, want %q", outcome, got, want)
		}
	}
}
