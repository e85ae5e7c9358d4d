package command

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

func TestNextCommand(t *testing.T) {
	for _, tc := range []struct{ dir, plan, in, want string }{
		{".rackform", "plan.json", "rackform continue", "rackform continue"},
		{"st", "plan.json", "rackform continue", "rackform continue -state-dir st"},
		{"st", "", "rackform approve stage.a.gate.b", "rackform approve -state-dir st stage.a.gate.b"},
		{"st", "p.json", "rackform apply PLANFILE", "rackform apply -state-dir st p.json"},
		{".rackform", "-allow-unsigned p.json", "rackform apply PLANFILE", "rackform apply -allow-unsigned p.json"},
		{".rackform", "", "rackform apply PLANFILE", "rackform continue"},
		{"st", "", "rackform skip x", "rackform skip x"},
		{"st", "p.json", "resume the run: rackform apply PLANFILE", "resume the run: rackform apply -state-dir st p.json"},
		{".rackform", "", "resume the run: rackform apply PLANFILE", "resume the run: rackform continue"},
		{"st", "", "again: rackform plan -target a -out r.plan && rackform apply r.plan", "again: rackform plan -target a -out r.plan && rackform apply -state-dir st r.plan"},
	} {
		if got := nextCommand(tc.dir, tc.plan)(tc.in); got != tc.want {
			t.Errorf("nextCommand(%q, %q)(%q) = %q, want %q", tc.dir, tc.plan, tc.in, got, tc.want)
		}
	}
	// The option that vouched for the plan is given again to continue and
	// approve (apply's is in its plan path): the command printed works
	// outside a terminal.
	for _, tc := range []struct{ dir, plan, flag, in, want string }{
		{".rackform", "-expect-sha256 abc p.json", "-expect-sha256 abc", "rackform continue", "rackform continue -expect-sha256 abc"},
		{"st", "-expect-sha256 abc p.json", "-expect-sha256 abc", "rackform approve stage.a.gate.b", "rackform approve -state-dir st -expect-sha256 abc stage.a.gate.b"},
		{"st", "-expect-sha256 abc p.json", "-expect-sha256 abc", "rackform apply PLANFILE", "rackform apply -state-dir st -expect-sha256 abc p.json"},
		{"st", "", "-expect-sha256 abc", "rackform apply PLANFILE", "rackform continue -state-dir st -expect-sha256 abc"},
		{".rackform", "", "-allow-unsigned", "resume the run: rackform apply PLANFILE", "resume the run: rackform continue -allow-unsigned"},
		{"st", "", "-allow-unsigned", "rackform skip x", "rackform skip x"},
	} {
		if got := resumeCommand(tc.dir, tc.plan, tc.flag)(tc.in); got != tc.want {
			t.Errorf("resumeCommand(%q, %q, %q)(%q) = %q, want %q", tc.dir, tc.plan, tc.flag, tc.in, got, tc.want)
		}
	}
}
