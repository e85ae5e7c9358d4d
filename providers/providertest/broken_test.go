package providertest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
)

// broken wraps Fake and breaks one rule of the contract, so that the suite
// can be shown to catch it.
type broken struct {
	*providertest.Fake
	how string
	n   atomic.Int64
}

func (b *broken) Describe(ctx context.Context) (*providers.Description, providers.Diagnostics) {
	d, diags := b.Fake.Describe(ctx)
	if b.how == "protocol" {
		d.ProtocolVersion = providers.ProtocolVersion + 1
	}
	return d, diags
}

func (b *broken) Configure(ctx context.Context, req *providers.ConfigureRequest) providers.Diagnostics {
	if b.how == "accepts_invalid" {
		return nil
	}
	diags := b.Fake.Configure(ctx, req)
	if b.how == "leaks_secret" && diags.HasErrors() {
		diags[0].Detail += " " + string(req.Config)
	}
	return diags
}

func (b *broken) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	return b.Fake.Observe(ctx, req, func(o *providers.Observation) error {
		switch {
		case b.how == "drops_unreachable" && !o.Reachable:
			return nil
		case b.how == "unstable_fingerprint":
			o.Fingerprint += fmt.Sprint(b.n.Add(1))
		case b.how == "no_fingerprint_change":
			o.Fingerprint = "constant"
		}
		return fn(o)
	})
}

func (b *broken) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	if b.how == "late_task_uri" {
		fn = func(*providers.Progress) error { return nil }
	}
	if b.how == "no_update" && req.Step.Kind == providers.StepUpdate {
		return &providers.ApplyResult{Message: "pretended"}, nil
	}
	return b.Fake.Apply(ctx, req, fn)
}

// TestBroken is run only as a child of TestSuiteCatchesBrokenProviders.
func TestBroken(t *testing.T) {
	how := os.Getenv("PROVIDERTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestSuiteCatchesBrokenProviders")
	}
	providertest.Run(t, providertest.FakeFixture(func(*testing.T) providers.Provider {
		return &broken{Fake: providertest.NewFake(providertest.FakeFleet()...), how: how}
	}))
}

// TestSuiteCatchesBrokenProviders runs the suite (in a child test process,
// since a failing suite fails its test) against providers that each break
// one rule, and checks that it fails with the right message.
func TestSuiteCatchesBrokenProviders(t *testing.T) {
	cases := []struct{ how, want string }{
		{"protocol", "protocol version = 2, want 1"},
		{"accepts_invalid", "Configure accepted an invalid config"},
		{"leaks_secret", "Configure diagnostics reveal a secret"},
		{"drops_unreachable", `Observe dropped unreachable server "r01-c03"`},
		{"unstable_fingerprint", "fingerprint changed between two observations"},
		{"no_fingerprint_change", "fingerprint unchanged after a version changed"},
		{"late_task_uri", "no progress reported it before the step completed"},
		{"no_update", `wait_ready on r01-c01: r01-c01: Not at target version`},
	}
	for _, c := range cases {
		t.Run(c.how, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBroken$", "-test.count=1")
			cmd.Env = append(os.Environ(), "PROVIDERTEST_BROKEN="+c.how)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a provider that is broken (%s):\n%s", c.how, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Errorf("the suite failed, but without %q:\n%s", c.want, out)
			}
		})
	}
}
