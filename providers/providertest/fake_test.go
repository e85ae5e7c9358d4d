package providertest_test

import (
	"strings"
	"testing"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
)

func TestFakeConformance(t *testing.T) {
	providertest.Run(t, providertest.FakeFixture(func(*testing.T) providers.Provider {
		return providertest.NewFake(providertest.FakeFleet()...)
	}))
}

// TestFakeUpdatesEveryActiveMember: the fake keeps the contract's member
// model: a rule's update reaches every active member it selects (the
// standby copy stays), its plan lists them with one Target each, and
// wait_ready fails while one of them is behind.
func TestFakeUpdatesEveryActiveMember(t *testing.T) {
	ep := "https://127.1.0.9:8443"
	gpu := func(id, state string) providers.Component {
		return providers.Component{ID: id, SoftwareID: "0x0020", Version: "96.00.61.00.01", Updateable: true, State: state}
	}
	f := providertest.NewFake(providertest.FakeServer{Endpoint: ep, MemberTargets: true, Components: []providers.Component{
		gpu("GPU_1", providers.StateActive), gpu("GPU_2", providers.StateActive), gpu("GPU_golden", providers.StateStandby),
	}})
	ctx := t.Context()
	if d := f.Configure(ctx, &providers.ConfigureRequest{Config: []byte(`{"username":"u"}`)}); d.HasErrors() {
		t.Fatal(d.Err())
	}
	m := providers.Match{SoftwareID: "0x0020"}
	var obs *providers.Observation
	f.Observe(ctx, &providers.ObserveRequest{Targets: []providers.Target{{Name: "s", Endpoint: ep,
		Updates: []providers.UpdateIntent{{Component: "gpu", Match: m, ImageURI: "http://127.0.0.1/gpu.bin"}}}}},
		func(o *providers.Observation) error { obs = o; return nil })
	up := obs.Updates[0]
	if strings.Join(up.Members, " ") != "GPU_1 GPU_2" || len(up.Targets) != 2 || up.Problem != "" {
		t.Fatalf("update plan %+v; want both active GPUs, one Target each", up)
	}
	target := providers.Target{Name: "s", Endpoint: ep}
	wait := providers.Step{Kind: providers.StepWaitReady, Expect: []providers.Expectation{{Component: "gpu", Match: m, Target: version.Target{Version: "96.00.89.00.01"}}}}
	update := providers.Step{Kind: providers.StepUpdate, Component: "gpu", Match: m, Target: version.Target{Version: "96.00.89.00.01"}, Targets: up.Targets[:1]}
	for i, st := range []providers.Step{update, {Kind: providers.StepReset}} {
		if _, d := f.Apply(ctx, &providers.ApplyRequest{Target: target, Step: st}, noProgress); d.HasErrors() {
			t.Fatalf("step %d: %v", i, d.Err())
		}
	}
	if _, d := f.Apply(ctx, &providers.ApplyRequest{Target: target, Step: wait}, noProgress); !d.HasErrors() || !strings.Contains(d.Err().Error(), "GPU_2 at 96.00.61.00.01") {
		t.Fatalf("wait_ready with GPU_2 behind: %v; want it named", d.Err())
	}
	update.Targets = nil
	for i, st := range []providers.Step{update, {Kind: providers.StepReset}, wait} {
		if _, d := f.Apply(ctx, &providers.ApplyRequest{Target: target, Step: st}, noProgress); d.HasErrors() {
			t.Fatalf("step %d: %v", i, d.Err())
		}
	}
	f.Observe(ctx, &providers.ObserveRequest{Targets: []providers.Target{target}}, func(o *providers.Observation) error { obs = o; return nil })
	if golden := obs.Components[2]; golden.Version != "96.00.61.00.01" {
		t.Errorf("the standby copy was flashed: %+v", golden)
	}
}

func noProgress(*providers.Progress) error { return nil }
