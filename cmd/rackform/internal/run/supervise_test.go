package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
)

// mortal is a provider that can die like a plugin process.
type mortal struct {
	providers.Provider
	id   int
	dead bool
	// dieInApply makes the next Apply die under the call.
	dieInApply bool
}

func (m *mortal) Exited() bool { return m.dead }

func (m *mortal) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	if m.dieInApply {
		m.dead = true
	}
	if m.dead {
		return nil, providers.Unavailable(req.Target.Name, "Apply on provider \"fake\" failed: EOF (Unavailable).")
	}
	return &providers.ApplyResult{Message: "ok"}, nil
}

func (m *mortal) Describe(ctx context.Context) (*providers.Description, providers.Diagnostics) {
	if m.dead {
		return nil, providers.Unavailable("", "dead")
	}
	return &providers.Description{Name: "fake"}, nil
}

type restarter struct {
	started []*mortal
	fail    int // starts that fail before one succeeds
	stopped int
	sleeps  []time.Duration
	notes   []string
	now     time.Time
}

func (r *restarter) supervisor(first *mortal) *Supervised {
	s := Supervise("fake", first, func() { r.stopped++ }, func(ctx context.Context) (providers.Provider, func(), error) {
		if r.fail > 0 {
			r.fail--
			return nil, nil, errors.New("exec: the plugin binary is gone")
		}
		m := &mortal{Provider: providertest.NewFake(), id: len(r.started) + 1}
		r.started = append(r.started, m)
		return m, func() { r.stopped++ }, nil
	}, func(s string) { r.notes = append(r.notes, s) })
	s.now = func() time.Time { return r.now }
	s.sleep = func(_ context.Context, d time.Duration) error {
		r.sleeps = append(r.sleeps, d)
		return nil
	}
	return s
}

func TestSupervisedRestartsADeadPlugin(t *testing.T) {
	ctx := context.Background()
	r := &restarter{now: time.Unix(0, 0), fail: 2}
	first := &mortal{Provider: providertest.NewFake()}
	s := r.supervisor(first)
	req := &providers.ApplyRequest{Target: providers.Target{Name: "lab/r1/c1"}, Step: providers.Step{Kind: providers.StepShutdown}}
	if _, d := s.Apply(ctx, req, nil); d.HasErrors() {
		t.Fatal(d.Err())
	}
	first.dieInApply = true
	// The call the plugin dies under is Unavailable, never retried here.
	if _, d := s.Apply(ctx, req, nil); !d.Unavailable() || d[0].Server != "lab/r1/c1" {
		t.Fatalf("Apply on a dead plugin: %v", d)
	}
	if len(r.started) != 0 {
		t.Fatal("restarted before the next call")
	}
	// The next call restarts it: two failed starts with backoff, then one
	// that works, configured by start.
	if _, d := s.Describe(ctx); d.HasErrors() {
		t.Fatalf("Describe after the restart: %v", d)
	}
	if len(r.started) != 1 || r.stopped != 1 {
		t.Errorf("started %d, stopped %d", len(r.started), r.stopped)
	}
	if diff := cmp.Diff([]time.Duration{500 * time.Millisecond, time.Second}, r.sleeps); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
	if _, d := s.Apply(ctx, req, nil); d.HasErrors() {
		t.Fatalf("Apply on the restarted plugin: %v", d)
	}
	if !strings.Contains(strings.Join(r.notes, "\n"), `Provider "fake": restarted (1 of at most 5 restarts within 10m0s).`) {
		t.Errorf("notes: %q", r.notes)
	}
	s.Close()
	if r.stopped != 2 {
		t.Errorf("Close did not end the restarted plugin (stopped %d)", r.stopped)
	}
}

func TestSupervisedGivesUp(t *testing.T) {
	ctx := context.Background()
	t.Run("cannot start", func(t *testing.T) {
		r := &restarter{now: time.Unix(0, 0), fail: 100}
		first := &mortal{Provider: providertest.NewFake(), dead: true}
		s := r.supervisor(first)
		_, d := s.Describe(ctx)
		if !d.Unavailable() || !strings.Contains(d[0].Detail, `the plugin of provider "fake" exited and could not be restarted (3 attempts): exec: the plugin binary is gone`) {
			t.Fatalf("Describe: %v", d)
		}
		// For good: no more attempts.
		r.fail = 0
		if _, d := s.Describe(ctx); !d.Unavailable() || len(r.started) != 0 {
			t.Fatalf("second Describe: %v, %d started", d, len(r.started))
		}
	})
	t.Run("dies too often", func(t *testing.T) {
		r := &restarter{now: time.Unix(0, 0)}
		first := &mortal{Provider: providertest.NewFake(), dead: true}
		s := r.supervisor(first)
		for i := 0; i < 5; i++ {
			if _, d := s.Describe(ctx); d.HasErrors() {
				t.Fatalf("restart %d: %v", i+1, d)
			}
			r.started[len(r.started)-1].dead = true
			r.now = r.now.Add(time.Minute)
		}
		_, d := s.Describe(ctx)
		if !d.Unavailable() || !strings.Contains(d[0].Detail, "died 6 times within 10m0s; it is not restarted again") {
			t.Fatalf("sixth death: %v", d)
		}
	})
	t.Run("restarts spread out are fine", func(t *testing.T) {
		r := &restarter{now: time.Unix(0, 0)}
		first := &mortal{Provider: providertest.NewFake(), dead: true}
		s := r.supervisor(first)
		for i := 0; i < 12; i++ {
			if _, d := s.Describe(ctx); d.HasErrors() {
				t.Fatalf("restart %d: %v", i+1, d)
			}
			r.started[len(r.started)-1].dead = true
			r.now = r.now.Add(3 * time.Minute)
		}
	})
}

// A plugin is run only from the binary the plan pinned: at the start of
// the run (CheckPinned) and when it is restarted (PinnedRestart), where a
// refused one is stopped.
func TestPluginsRunFromThePinnedBinary(t *testing.T) {
	pin := strings.Repeat("a", 64)
	other := strings.Repeat("b", 64)
	r := &Run{Plan: &plan.Plan{Providers: []plan.Provider{{Name: "fake", Source: "rackform-provider-fake", SHA256: pin}}}}
	if err := r.CheckPinned(plan.Provider{Name: "fake", SHA256: pin}); err != nil {
		t.Errorf("the pinned binary: %v", err)
	}
	err := r.CheckPinned(plan.Provider{Name: "fake", SHA256: other})
	if err == nil || err.Error() != `provider "fake": the started plugin hashes to bbbbbbbbbbbb, but the plan was made with aaaaaaaaaaaa` {
		t.Errorf("another binary: %v", err)
	}
	if err := r.CheckPinned(plan.Provider{Name: "unpinned", SHA256: other}); err != nil {
		t.Errorf("a provider the plan does not pin: %v", err)
	}

	stopped := 0
	hashes := pin
	restart := PinnedRestart(func(context.Context) (providers.Provider, plan.Provider, func(), error) {
		return providertest.NewFake(), plan.Provider{Name: "fake", Source: "rackform-provider-fake", SHA256: hashes}, func() { stopped++ }, nil
	}, pin)
	if p, stop, err := restart(context.Background()); err != nil || p == nil || stop == nil {
		t.Fatalf("restart from the pinned binary: %v", err)
	}
	hashes = other
	_, _, err = restart(context.Background())
	if err == nil || err.Error() != "the plugin binary (rackform-provider-fake) now hashes to bbbbbbbbbbbb, not aaaaaaaaaaaa as when the plan was made" {
		t.Errorf("restart from another binary: %v", err)
	}
	if stopped != 1 {
		t.Errorf("the refused plugin was stopped %d times, want 1", stopped)
	}
	failing := PinnedRestart(func(context.Context) (providers.Provider, plan.Provider, func(), error) {
		return nil, plan.Provider{}, nil, errors.New("exec: gone")
	}, pin)
	if _, _, err := failing(context.Background()); err == nil || err.Error() != "exec: gone" {
		t.Errorf("a start that fails: %v", err)
	}
}
