package executor_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
)

// FuzzJournalReplay feeds arbitrary journals to replay and to a resumed
// apply: they may be refused, never panic or hang.
func FuzzJournalReplay(f *testing.F) {
	if b, err := os.ReadFile("testdata/journal.golden.jsonl"); err == nil {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(`{"v":1,"type":"state","id":"run","state":"completed"}`))
	f.Add([]byte(`{"v":1,"type":"step_failed","server":"c1/r01/r01-s01","op":"remedy:1:wait_ready"}`))
	// A retry of staged updates (restage.go), whole and cut short.
	f.Add([]byte(`{"v":1,"type":"observed","server":"c1/r01/r01-s01"}
{"v":1,"type":"step_done","server":"c1/r01/r01-s01","op":"step:3"}
{"v":1,"type":"step_started","server":"c1/r01/r01-s01","op":"step:5","kind":"wait_ready"}
{"v":1,"type":"retry_staged","server":"c1/r01/r01-s01","op":"step:5","steps":[3],"message":"it did not take effect"}
{"v":1,"type":"step_done","server":"c1/r01/r01-s01","op":"restage:shutdown"}
{"v":1,"type":"step_started","server":"c1/r01/r01-s01","op":"step:3","kind":"update","retry":1}`))
	f.Add([]byte(`{"v":1,"type":"retry_staged","server":"c1/r01/r01-s01","op":"step:5","steps":[4]}`))
	f.Add([]byte(`{"v":1,"type":"retry_staged","server":"c1/r01/r01-s01","op":"restage:reset","steps":[3,3]}`))
	f.Fuzz(func(t *testing.T, journal []byte) {
		h := newHarness(t)
		h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 2, PauseAfter: true}, S{Name: "r02", Servers: 1})
		mem := h.backend.(*state.Memory)
		for _, line := range bytes.Split(journal, []byte("\n")) {
			if len(line) > 0 {
				mem.Append(context.Background(), sha, line)
			}
		}
		e, err := executor.New(h.options())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Status(context.Background()); err != nil {
			return
		}
		e.Run(context.Background(), context.Background())
	})
}
