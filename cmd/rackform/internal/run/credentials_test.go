package run

import (
	"context"
	"testing"

	"github.com/rackform/rackform/providers"
)

// fakeProv records the targets it is given.
type fakeProv struct {
	providers.Provider
	got []providers.Target
}

func (f *fakeProv) Apply(_ context.Context, req *providers.ApplyRequest, _ func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	f.got = append(f.got, req.Target)
	return &providers.ApplyResult{}, nil
}

func (f *fakeProv) Task(_ context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	f.got = append(f.got, req.Target)
	return &providers.TaskStatus{}, nil
}

func (f *fakeProv) Observe(_ context.Context, req *providers.ObserveRequest, _ func(*providers.Observation) error) providers.Diagnostics {
	f.got = append(f.got, req.Targets...)
	return nil
}

// TestCredentialed: the executor knows servers by plan address and BMC
// only; the wrapper adds each server's credentials from the configuration.
func TestCredentialed(t *testing.T) {
	f := &fakeProv{}
	creds := &providers.Credentials{Username: "u", Password: "p"}
	c := &credentialed{Provider: f, targets: map[string]providers.Target{"c/r/s1": {Name: "c/r/s1", Credentials: creds}}}
	ctx := context.Background()
	c.Apply(ctx, &providers.ApplyRequest{Target: providers.Target{Name: "c/r/s1", Endpoint: "http://x"}}, nil)
	c.Task(ctx, &providers.TaskRequest{Target: providers.Target{Name: "c/r/s1"}})
	c.Observe(ctx, &providers.ObserveRequest{Targets: []providers.Target{{Name: "c/r/s1"}, {Name: "c/r/other"}}}, nil)
	if len(f.got) != 4 {
		t.Fatalf("%d calls", len(f.got))
	}
	for i, tg := range f.got[:3] {
		if tg.Credentials != creds {
			t.Errorf("call %d: credentials not added: %+v", i, tg)
		}
	}
	if f.got[0].Endpoint != "http://x" {
		t.Errorf("endpoint changed: %q", f.got[0].Endpoint)
	}
	if f.got[3].Credentials != nil {
		t.Errorf("a server without its own credentials got some")
	}
}
