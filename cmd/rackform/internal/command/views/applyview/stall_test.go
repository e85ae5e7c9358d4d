package applyview_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
)

// A task the executor found stalled is said in the progress view, with
// its percent and since when, and as a warning in the JSON stream.
func TestStalledTaskIsSaid(t *testing.T) {
	p := heartbeatPlan()
	clock := executortest.NewClock(executortest.Epoch)
	var out bytes.Buffer
	v := applyview.New(&out, p, sha, applyview.Options{Now: clock.Now, Refresh: -1})
	server := p.Servers[0].Address
	since := clock.Now()
	clock.Advance(10 * time.Minute)
	pct := 42
	stalled := executor.Event{Time: clock.Now(), Type: "step_stalled", Server: server, Op: "step:3", StepKind: "update", Component: "bios",
		TaskURI: "/redfish/v1/TaskService/Tasks/7", Percent: &pct, Since: &since,
		Message: "task /redfish/v1/TaskService/Tasks/7 has stayed at 42% since 2026-11-21T12:00:00Z (10m0s); still polling it"}
	v.Event(executor.Event{Time: since, Type: "apply_started"})
	v.Event(executor.Event{Time: since, Type: "step_started", Server: server, Op: "step:3", StepKind: "update", Component: "bios"})
	v.Event(stalled)
	want := server + ": bios update stalled: task /redfish/v1/TaskService/Tasks/7 has stayed at 42% since 2026-11-21T12:00:00Z (10m0s); still polling it"
	if !strings.Contains(out.String(), want) {
		t.Errorf("the view does not say the task stalled (%q):\n%s", want, out.String())
	}
	var js bytes.Buffer
	applyview.NewJSON(&js).Event(stalled)
	for _, w := range []string{`"@level":"warn"`, `"type":"apply_progress"`, `"type":"step_stalled"`, `"since":"2026-11-21T12:00:00Z"`, `"percent":42`} {
		if !strings.Contains(js.String(), w) {
			t.Errorf("JSON line lacks %s: %s", w, js.String())
		}
	}
	// cmd/rackform's TestSchemasMatchTheViewGoldens checks it against the
	// ui-events schema.
	golden(t, "stalled.golden.jsonl", js.Bytes())
}
