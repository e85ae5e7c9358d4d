package applyview_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
)

// An update sent again because it did not take effect says why in the
// progress view: without it, the second "updating bios" looks like a
// repeat nobody asked for.
func TestRetriedUpdateSaysWhy(t *testing.T) {
	p := heartbeatPlan()
	clock := executortest.NewClock(executortest.Epoch)
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Now: clock.Now, Refresh: -1})
	server := p.Servers[0].Address
	why := "sending the update again: it did not take effect: bios reads 1.0, expected 2.0; its BMC task vanished before it finished (as when the BMC restarts during the flash)"
	v.Event(executor.Event{Time: clock.Now(), Type: "apply_started"})
	v.Event(executor.Event{Time: clock.Now(), Type: "step_started", Server: server, Op: "step:3", StepKind: "update", Component: "bios"})
	v.Event(executor.Event{Time: clock.Now(), Type: "step_started", Server: server, Op: "step:3", StepKind: "update", Component: "bios", Message: why})
	if want := server + ": updating bios: " + why; !strings.Contains(out.String(), want) {
		t.Errorf("the view does not say why the update runs again (%q):\n%s", want, out.String())
	}
}
