package applyview_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/planner/plan"
)

// TestDevicesSaidAsDevices: apply's first lines, its ending and the
// status page's headline count devices as devices, apart from the
// servers.
func TestDevicesSaidAsDevices(t *testing.T) {
	p := &plan.Plan{Servers: []plan.Server{
		{Address: "c1/r1/a", Action: plan.ActionUpgrade, Cluster: "c1", Rack: "r1"},
		{Address: "c1/r1/tray", Kind: "switch_tray", Action: plan.ActionUpgrade, Cluster: "c1", Rack: "r1"},
		{Address: "c1/r1/shelf", Kind: "power_shelf", Action: plan.ActionUpgrade, Cluster: "c1", Rack: "r1"},
		{Address: "c1/r1/b", Kind: "switch_tray", Action: plan.ActionSkip, Reason: plan.ReasonUnreachable},
		{Address: "c1/r1/c", Action: plan.ActionSkip, Reason: plan.ReasonHeldBack},
		{Address: "c1/r1/d", Kind: "power_shelf", Action: plan.ActionSkip, Reason: plan.ReasonHeldBack},
	}}
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Refresh: -1})
	v.Event(executor.Event{Time: executortest.Epoch, Type: "apply_started"})
	v.Event(executor.Event{Time: executortest.Epoch, Type: "apply_ended", Outcome: &executor.Outcome{Status: executor.OutcomeCompletedWithFailures, Message: "1 server and 1 device upgraded, 1 failed, 0 skipped"}})
	v.Close()
	for _, want := range []string{
		"1 server and 2 devices to upgrade in 1 rack",
		"Not in this run: 1 device not observed when planned: c1/r1/b",
		"Not in this run: 1 server and 1 device held back when planned: c1/r1/c, c1/r1/d",
		"Apply complete, not every server and device reached its target: 1 server and 1 device upgraded",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	state := func(s *plan.Server) executor.State {
		if s.Address == "c1/r1/shelf" {
			return executor.State{Name: executor.Failed}
		}
		return executor.State{Name: executor.Completed}
	}
	if got, want := applyview.Headline(p, state, "not started"), "1 server and 1 device upgraded, 1 failed; 3 left alone by the plan"; got != want {
		t.Errorf("headline %q, want %q", got, want)
	}
	servers := &plan.Plan{Servers: p.Servers[:1]}
	if got, want := applyview.Headline(servers, state, "not started"), "1 server upgraded"; got != want {
		t.Errorf("headline without devices %q, want %q", got, want)
	}
}
