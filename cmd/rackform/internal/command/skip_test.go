package command

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
)

// The advice after a refused skip of a server follows the refusal's type
// (something already failed), never the wording of the error.
func TestFailedSkipHint(t *testing.T) {
	p := executortest.Single(executortest.NewProvider(), nil, executortest.Scope{Name: "r01", Servers: 1})
	sc := p.Run.Stages[0].Groups[0].Clusters[0].Phases[0].Scopes[0]
	addr := sc.Servers[0]
	for _, tc := range []struct {
		name string
		addr string
		err  error
		want bool
	}{
		{"refused, failed", addr, &executor.RefusedError{Op: "skip", Target: addr, Reason: "for a reason worded in any way", Already: executor.Failed}, true},
		{"refused, failed, wrapped", addr, fmt.Errorf("recording: %w", &executor.RefusedError{Op: "skip", Target: addr, Reason: "x", Already: executor.Failed}), true},
		{"refused, completed", addr, &executor.RefusedError{Op: "skip", Target: addr, Reason: "it is already failed", Already: executor.Completed}, false},
		{"refused for another reason", addr, &executor.RefusedError{Op: "skip", Target: addr, Reason: "the run is already failed"}, false},
		{"not a refusal", addr, errors.New("skip refused: it is already failed"), false},
		{"not a server", sc.ID, &executor.RefusedError{Op: "skip", Target: sc.ID, Reason: "x", Already: executor.Failed}, false},
	} {
		got := failedSkipHint(p, tc.addr, tc.err)
		if tc.want != (got != "") {
			t.Errorf("%s: hint %q", tc.name, got)
		}
		if tc.want && !strings.HasSuffix(got, "skip the scope: rackform skip "+sc.ID) {
			t.Errorf("%s: the hint does not name the scope %s: %q", tc.name, sc.ID, got)
		}
	}
}
