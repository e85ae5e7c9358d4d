package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
)

// A run an error ends (here the journal, at every record in turn) returns
// with the error the servers it leaves out of service, in flight included,
// each with what brings it back, for the CLI to list with the error.
func TestRunCutShortListsStrandedServers(t *testing.T) {
	clean := newHarness(t)
	clean.plan = resumePlan(clean.prov)
	counter := &executortest.Crash{Backend: clean.backend, After: 1 << 30}
	clean.backend = counter
	clean.run()
	poweredOff := 0
	for k := 0; k < counter.Appended(); k++ {
		h := newHarness(t)
		h.plan = resumePlan(h.prov)
		h.backend = &executortest.Crash{Backend: h.backend, After: k}
		out, err := h.exec().Run(context.Background(), context.Background())
		if !errors.Is(err, executortest.ErrCrashed) {
			t.Fatalf("crash after %d records: Run returned %v", k, err)
		}
		for _, s := range out.Stranded {
			if s.Recover == "" || s.What() == "" {
				t.Errorf("crash after %d records: %+v says neither what nor how", k, s)
			}
			if s.PoweredOff {
				poweredOff++
				if !strings.Contains(s.Recover, executor.NextAction{Kind: executor.NextApply}.Ref()) {
					t.Errorf("crash after %d records: %s is powered off in flight, brought back by %q", k, s.Server, s.Recover)
				}
			}
		}
	}
	if poweredOff == 0 {
		t.Error("no run cut short by the journal listed a server it left powered off")
	}
}
