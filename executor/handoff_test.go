package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/providers"
)

// TestTaskURIsArrivingTogetherShareAnAppend: the BMC task URIs of a rack's
// updates, handed over together, are made durable in one journal append,
// not one each (on PostgreSQL every append of a run is one commit after
// the others': 20,000 single-record appends of task URIs were most of the
// transactions of a 20,000-server run); each update still waits for its
// own to be durable before it polls its task, and every URI is journaled.
func TestTaskURIsArrivingTogetherShareAnAppend(t *testing.T) {
	const n = 8
	h := newHarness(t)
	h.async = true
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: n, MaxUnavailable: n})
	hand := &handOffs{Provider: h.prov, n: n, durable: map[string]bool{}}
	hand.cond = sync.NewCond(&hand.mu)
	be := &countingAppends{Backend: h.backend, hand: hand}
	h.backend = be
	out := h.runWith(hand)
	wantOutcome(t, out, executor.OutcomeCompleted, "")
	be.mu.Lock()
	defer be.mu.Unlock()
	if be.tasks != 2*n { // an update and a reimage per server
		t.Fatalf("%d task URIs journaled, want %d", be.tasks, 2*n)
	}
	if be.appends >= be.tasks {
		t.Errorf("%d task URIs journaled in %d appends: one append each, none shared", be.tasks, be.appends)
	}
	hand.mu.Lock()
	defer hand.mu.Unlock()
	if hand.early > 0 {
		t.Errorf("%d updates went on before their task URI was durable", hand.early)
	}
}

// handOffs holds every update's task hand-off until all n updates have
// reached it, so that their URIs arrive together.
type handOffs struct {
	*executortest.Provider
	n       int
	mu      sync.Mutex
	cond    *sync.Cond
	arrived int             // updates at their hand-off
	entered int             // hand-offs begun
	durable map[string]bool // task URIs in a committed append
	early   int             // hand-offs answered before their URI was
}

func (p *handOffs) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	if req.Step.Kind != providers.StepUpdate {
		return p.Provider.Apply(ctx, req, fn)
	}
	hold := func(pr *providers.Progress) error {
		if pr.TaskURI == "" {
			return fn(pr)
		}
		p.mu.Lock()
		p.arrived++
		p.cond.Broadcast()
		for p.arrived < p.n {
			p.cond.Wait()
		}
		p.entered++
		p.cond.Broadcast()
		p.mu.Unlock()
		err := fn(pr)
		p.mu.Lock()
		if err == nil && !p.durable[pr.TaskURI] {
			p.early++
		}
		p.mu.Unlock()
		return err
	}
	return p.Provider.Apply(ctx, req, hold)
}

// waitEntered waits until every update has begun its hand-off (bounded,
// so that a plan that does not bring them together fails instead of
// hanging).
func (p *handOffs) waitEntered() bool {
	deadline := time.Now().Add(30 * time.Second)
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.entered < p.n {
		if time.Now().After(deadline) {
			return false
		}
		p.mu.Unlock()
		time.Sleep(time.Millisecond)
		p.mu.Lock()
	}
	return true
}

// countingAppends counts the appends that carry task URIs and the URIs;
// the first such append waits until every update has begun handing its
// task over (the others queue behind it meanwhile).
type countingAppends struct {
	executor.Backend
	hand           *handOffs
	mu             sync.Mutex
	appends, tasks int
	held           bool
}

func (b *countingAppends) Append(ctx context.Context, sha string, records ...[]byte) ([]int64, error) {
	k := 0
	for _, r := range records {
		if bytes.Contains(r, []byte(`"type":"task_uri"`)) {
			k++
		}
	}
	if k > 0 {
		b.mu.Lock()
		first := !b.held
		b.held = true
		b.mu.Unlock()
		if first && !b.hand.waitEntered() {
			return nil, context.DeadlineExceeded
		}
	}
	pos, err := b.Backend.Append(ctx, sha, records...)
	if err != nil || k == 0 {
		return pos, err
	}
	b.mu.Lock()
	b.appends++
	b.tasks += k
	b.mu.Unlock()
	b.hand.mu.Lock()
	for _, r := range records {
		var rec struct {
			Type    string `json:"type"`
			TaskURI string `json:"task_uri"`
		}
		if json.Unmarshal(r, &rec) == nil && rec.Type == "task_uri" {
			b.hand.durable[rec.TaskURI] = true
		}
	}
	b.hand.mu.Unlock()
	return pos, err
}
