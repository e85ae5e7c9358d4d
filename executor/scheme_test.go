package executor_test

import (
	"context"
	"sync"
	"testing"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/executortest"
	"github.com/rackform/rackform/providers"
)

// TestAlreadyAtTargetComparesByScheme: apply decides "already at target"
// with the step's scheme, so a BMC reporting "2.0" meets a dotted target
// written "2.0.0"; without a scheme the strings differ.
func TestAlreadyAtTargetComparesByScheme(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		want   string
	}{
		{"dotted", "skipped(already_at_target)"},
		// Not at target by string, and the reported versions differ from
		// the plan's observation: the server is refused as drifted.
		{"", "failed(drift)"},
	} {
		t.Run("scheme="+tc.scheme, func(t *testing.T) {
			h := newHarness(t)
			addr := rackServer("r01", 1)
			h.plan = executortest.Single(h.prov, map[string]Script{addr: {AtTarget: true}}, S{Name: "r01", Servers: 1})
			st := &h.plan.Servers[0].Steps[2]
			if st.Component != "bios" {
				t.Fatalf("step 3 is %s %s, the builder changed", st.Kind, st.Component)
			}
			st.Target.Version, st.Target.Scheme = "2.0.0", version.Scheme(tc.scheme)
			h.run()
			wantStates(t, h, map[string]string{addr: tc.want})
			if n := h.prov.Count(addr, ""); n != 0 {
				t.Errorf("%d provider calls, want none", n)
			}
		})
	}
}

// systemRecorder records the System of every target the executor sends.
type systemRecorder struct {
	*executortest.Provider
	mu      sync.Mutex
	systems map[string]bool
	// auths, when set, records every Target.Auth sent.
	auths map[string]bool
}

func (r *systemRecorder) record(t providers.Target) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.systems[t.System] = true
	if r.auths != nil {
		r.auths[t.Auth] = true
	}
}

func (r *systemRecorder) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	for _, t := range req.Targets {
		r.record(t)
	}
	return r.Provider.Observe(ctx, req, fn)
}

func (r *systemRecorder) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	r.record(req.Target)
	return r.Provider.Apply(ctx, req, fn)
}

// TestTargetsNameTheServersSystem: a server behind a multi-system BMC is
// reached with its system named in every call, as plan recorded it.
func TestTargetsNameTheServersSystem(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	h.plan.Servers[0].System = "Node1"
	rec := &systemRecorder{Provider: h.prov, systems: map[string]bool{}}
	wantOutcome(t, h.runWith(rec), executor.OutcomeCompleted, "")
	if len(rec.systems) != 1 || !rec.systems["Node1"] {
		t.Errorf("targets named systems %v, want only Node1", rec.systems)
	}
}

// TestTargetsCarryThePlannedAuth: a server whose BMC took Basic auth at
// plan is reached with Basic auth in every call, as plan recorded it.
func TestTargetsCarryThePlannedAuth(t *testing.T) {
	h := newHarness(t)
	h.plan = executortest.Single(h.prov, nil, S{Name: "r01", Servers: 1})
	h.plan.Servers[0].Auth = providers.AuthBasic
	rec := &systemRecorder{Provider: h.prov, systems: map[string]bool{}, auths: map[string]bool{}}
	opts := h.options()
	opts.Providers = map[string]providers.Provider{"fake": rec}
	e, err := executor.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Run(context.Background(), context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, out, executor.OutcomeCompleted, "")
	if len(rec.auths) != 1 || !rec.auths[providers.AuthBasic] {
		t.Errorf("targets carried auth %v, want only basic", rec.auths)
	}
}
