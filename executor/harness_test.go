package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

const sha = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// harness wires an executor with fakes.
type harness struct {
	t       *testing.T
	prov    *executortest.Provider
	clock   *executortest.Clock
	hooks   *executortest.Hooks
	backend executor.Backend
	plan    *plan.Plan
	async   bool
	holder  string
	// available is Options.Available (continue's availability check).
	available map[string]string

	mu     sync.Mutex
	events []executor.Event
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{t: t, prov: executortest.NewProvider(), clock: executortest.NewClock(executortest.Epoch),
		hooks: executortest.NewHooks(), backend: state.NewMemory(), holder: "tester@host"}
}

func (h *harness) options() executor.Options {
	return executor.Options{
		Plan: h.plan, PlanSHA256: sha,
		Providers: map[string]providers.Provider{"fake": h.prov},
		Backend:   h.backend, Clock: h.clock, Hooks: h.hooks, Holder: h.holder,
		Events: executor.SinkFunc(func(e executor.Event) {
			h.mu.Lock()
			h.events = append(h.events, e)
			h.mu.Unlock()
		}),
		Synchronous: !h.async,
		Available:   h.available,
	}
}

func (h *harness) exec() *executor.Executor {
	h.t.Helper()
	e, err := executor.New(h.options())
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

func (h *harness) run() executor.Outcome {
	h.t.Helper()
	out, err := h.exec().Run(context.Background(), context.Background())
	if err != nil {
		h.t.Fatalf("Run: %v", err)
	}
	return out
}

// runWith applies the plan once with the fake provider replaced by p (a
// wrapper around it).
func (h *harness) runWith(p providers.Provider) executor.Outcome {
	h.t.Helper()
	o := h.options()
	o.Providers = map[string]providers.Provider{"fake": p}
	e, err := executor.New(o)
	if err != nil {
		h.t.Fatal(err)
	}
	out, err := e.Run(context.Background(), context.Background())
	if err != nil {
		h.t.Fatalf("Run: %v", err)
	}
	return out
}

// journalOf is b's journal of the test plan, one record a line.
func journalOf(t *testing.T, b executor.Backend) []byte {
	t.Helper()
	entries, err := b.Read(context.Background(), sha, -1)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, e := range entries {
		out.Write(e.Data)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func (h *harness) status() *executor.Status {
	h.t.Helper()
	st, err := h.exec().Status(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// states flattens the status tree to id → "state(reason)".
func (h *harness) states() map[string]string {
	out := map[string]string{}
	var walk func(n *executor.Node)
	walk = func(n *executor.Node) {
		out[n.ID] = n.State.String()
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(h.status().Run)
	return out
}

// state of one node.
func (h *harness) state(id string) string {
	h.t.Helper()
	s, ok := h.states()[id]
	if !ok {
		h.t.Fatalf("no node %s", id)
	}
	return s
}

func (h *harness) node(id string) *executor.Node {
	var find func(n *executor.Node) *executor.Node
	find = func(n *executor.Node) *executor.Node {
		if n.ID == id {
			return n
		}
		for _, c := range n.Children {
			if f := find(c); f != nil {
				return f
			}
		}
		return nil
	}
	n := find(h.status().Run)
	if n == nil {
		h.t.Fatalf("no node %s", id)
	}
	return n
}

// eventTypes lists event types, optionally only those with a prefix.
func (h *harness) eventTypes(prefix string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		if strings.HasPrefix(e.Type, prefix) {
			s := e.Type
			if e.ID != "" {
				s += " " + e.ID
			} else if e.Server != "" {
				s += " " + e.Server
			}
			out = append(out, s)
		}
	}
	return out
}

// startOrder lists servers in the order they started.
func (h *harness) startOrder() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		if e.Type == "server_started" {
			out = append(out, e.ID)
		}
	}
	return out
}

func rackID(name string) string { return "cluster.c1.compute.rack." + name }

// jsonSink writes events as JSON lines, as the golden files hold them.
// The executor calls a Sink from one goroutine: it needs no lock.
func jsonSink(w io.Writer) executor.Sink {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return executor.SinkFunc(func(e executor.Event) { _ = enc.Encode(e) })
}
