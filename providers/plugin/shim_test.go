package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
)

// funcProvider is a provider made of functions, so each test scripts exactly
// the behaviour it needs; a nil function returns nothing.
type funcProvider struct {
	describe  func(context.Context) (*providers.Description, providers.Diagnostics)
	configure func(context.Context, *providers.ConfigureRequest) providers.Diagnostics
	observe   func(context.Context, *providers.ObserveRequest, func(*providers.Observation) error) providers.Diagnostics
	apply     func(context.Context, *providers.ApplyRequest, func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics)
	task      func(context.Context, *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics)
	stop      func(context.Context) providers.Diagnostics
}

func (f *funcProvider) Describe(ctx context.Context) (*providers.Description, providers.Diagnostics) {
	if f.describe == nil {
		return nil, nil
	}
	return f.describe(ctx)
}

func (f *funcProvider) Configure(ctx context.Context, req *providers.ConfigureRequest) providers.Diagnostics {
	if f.configure == nil {
		return nil
	}
	return f.configure(ctx, req)
}

func (f *funcProvider) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	if f.observe == nil {
		return nil
	}
	return f.observe(ctx, req, fn)
}

func (f *funcProvider) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	if f.apply == nil {
		return nil, nil
	}
	return f.apply(ctx, req, fn)
}

func (f *funcProvider) Task(ctx context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	if f.task == nil {
		return nil, nil
	}
	return f.task(ctx, req)
}

func (f *funcProvider) Stop(ctx context.Context) providers.Diagnostics {
	if f.stop == nil {
		return nil
	}
	return f.stop(ctx)
}

// connect serves p in-process over go-plugin's gRPC test connection and
// returns the host's client of it.
func connect(t *testing.T, p providers.Provider) (*GRPCClient, *goplugin.GRPCServer) {
	t.Helper()
	return connectTB(t, p)
}

func connectTB(t testing.TB, p providers.Provider) (*GRPCClient, *goplugin.GRPCServer) {
	t.Helper()
	client, server := goplugin.TestPluginGRPCConn(t, false, goplugin.PluginSet{PluginName: &ProviderPlugin{Impl: p, Name: "test"}})
	// Close shuts the server down through go-plugin's controller; stopping
	// the server here as well would race inside go-plugin.
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(PluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*GRPCClient), server
}

func TestShimConformance(t *testing.T) {
	providertest.Run(t, providertest.FakeFixture(func(t *testing.T) providers.Provider {
		c, _ := connect(t, providertest.NewFake(providertest.FakeFleet()...))
		return c
	}))
}

var (
	warn = providers.Diagnostic{Severity: providers.Warning, Summary: "Slow BMC", Detail: "It took 9s.", Server: "r01-c01"}
	fail = providers.Diagnostic{Severity: providers.Error, Summary: "Boom", Detail: "It broke."}
)

// TestShimRoundTrip sends every RPC through the shims and checks that what
// the provider receives is what the host sent, and what the host receives is
// what the provider returned, diagnostics included.
func TestShimRoundTrip(t *testing.T) {
	creds := &providers.Credentials{Username: "root", Password: "pw"}
	target := providers.Target{Name: "r01-c01", Endpoint: "https://127.1.0.1:8443", Credentials: creds}
	desc := &providers.Description{
		Name: "test", Version: "1.2.3", ProtocolVersion: 1,
		Schema:       []providers.Attribute{{Name: "username", Type: "string", Required: true, Sensitive: true, Description: "User."}},
		Capabilities: []string{"power"},
	}
	obs := []*providers.Observation{
		{Server: "r01-c01", Reachable: true, PowerState: providers.PowerOn, Health: "OK", Fingerprint: "abc",
			Components:  []providers.Component{{ID: "BIOS", Name: "System ROM", SoftwareID: "bios", Version: "2.0", Updateable: true}},
			Diagnostics: providers.Diagnostics{warn}},
		{Server: "r01-c02", Diagnostics: providers.Diagnostics{fail}},
	}
	step := providers.Step{
		Kind: providers.StepWaitReady, Component: "bios", Match: providers.Match{NamePattern: "System*"}, Target: version.Target{Version: "2.1"},
		ImageURI: "http://127.0.0.1/x.bin", ApplyTime: "OnReset", Method: "push", ResetType: "ForceRestart", Timeout: 90 * time.Second,
		ResumeSince: time.Date(2026, 11, 21, 22, 0, 0, 5, time.UTC),
		Expect:      []providers.Expectation{{Component: "bios", Match: providers.Match{SoftwareID: "bios"}, Target: version.Target{Version: "2.1"}}},
	}
	progress := []*providers.Progress{{Message: "queued", Percent: -1, TaskURI: "/t/1"}, {Message: "done", Percent: 100, TaskURI: "/t/1"}}
	result := &providers.ApplyResult{TaskURI: "/t/1", Message: "ok", Observation: obs[0]}
	status := &providers.TaskStatus{URI: "/t/1", State: providers.TaskRunning, Percent: 40, Messages: []string{"flashing"}}
	config := json.RawMessage(`{"username":"admin","password":"x"}`)

	var gotConfig json.RawMessage
	var gotObserve *providers.ObserveRequest
	var gotApply *providers.ApplyRequest
	var gotTask *providers.TaskRequest
	var stopped bool
	p := &funcProvider{
		describe: func(context.Context) (*providers.Description, providers.Diagnostics) {
			return desc, providers.Diagnostics{warn}
		},
		configure: func(_ context.Context, r *providers.ConfigureRequest) providers.Diagnostics {
			gotConfig = r.Config
			return providers.Diagnostics{warn, fail}
		},
		observe: func(_ context.Context, r *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
			gotObserve = r
			for _, o := range obs {
				if err := fn(o); err != nil {
					return providers.Errorf("", "stopped", err.Error())
				}
			}
			return providers.Diagnostics{warn}
		},
		apply: func(_ context.Context, r *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
			gotApply = r
			for _, p := range progress {
				if err := fn(p); err != nil {
					return nil, providers.Errorf("", "stopped", err.Error())
				}
			}
			return result, providers.Diagnostics{warn}
		},
		task: func(_ context.Context, r *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
			gotTask = r
			return status, providers.Diagnostics{fail}
		},
		stop: func(context.Context) providers.Diagnostics {
			stopped = true
			return providers.Diagnostics{warn}
		},
	}
	c, _ := connect(t, p)
	ctx := t.Context()

	t.Run("Describe", func(t *testing.T) {
		d, diags := c.Describe(ctx)
		if diff := cmp.Diff(desc, d); diff != "" {
			t.Errorf("description (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(providers.Diagnostics{warn}, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
	t.Run("Configure", func(t *testing.T) {
		diags := c.Configure(ctx, &providers.ConfigureRequest{Config: config})
		if diff := cmp.Diff(string(config), string(gotConfig)); diff != "" {
			t.Errorf("config (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(providers.Diagnostics{warn, fail}, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
	t.Run("Observe", func(t *testing.T) {
		req := &providers.ObserveRequest{Targets: []providers.Target{target, {Name: "r01-c02", Endpoint: "https://127.1.0.2"}}, Concurrency: 7}
		var got []*providers.Observation
		diags := c.Observe(ctx, req, func(o *providers.Observation) error {
			got = append(got, o)
			return nil
		})
		if diff := cmp.Diff(req, gotObserve); diff != "" {
			t.Errorf("request (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(obs, got); diff != "" {
			t.Errorf("observations (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(providers.Diagnostics{warn}, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
	t.Run("Apply", func(t *testing.T) {
		req := &providers.ApplyRequest{Target: target, Step: step}
		var got []*providers.Progress
		res, diags := c.Apply(ctx, req, func(p *providers.Progress) error {
			got = append(got, p)
			return nil
		})
		if diff := cmp.Diff(req, gotApply); diff != "" {
			t.Errorf("request (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(progress, got); diff != "" {
			t.Errorf("progress (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(result, res); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(providers.Diagnostics{warn}, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
	t.Run("Task", func(t *testing.T) {
		req := &providers.TaskRequest{Target: target, TaskURI: "/t/1"}
		st, diags := c.Task(ctx, req)
		if diff := cmp.Diff(req, gotTask); diff != "" {
			t.Errorf("request (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(status, st); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(providers.Diagnostics{fail}, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
	t.Run("Stop", func(t *testing.T) {
		diags := c.Stop(ctx)
		if !stopped {
			t.Error("Stop did not reach the provider")
		}
		if diff := cmp.Diff(providers.Diagnostics{warn}, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
}

// TestShimNilResults checks that "no result" stays nil across the wire
// rather than becoming an empty value that looks like success.
func TestShimNilResults(t *testing.T) {
	c, _ := connect(t, &funcProvider{})
	ctx := t.Context()
	if d, _ := c.Describe(ctx); d != nil {
		t.Errorf("Describe = %+v, want nil", d)
	}
	if r, _ := c.Apply(ctx, &providers.ApplyRequest{}, func(*providers.Progress) error { return nil }); r != nil {
		t.Errorf("Apply = %+v, want nil", r)
	}
	if s, _ := c.Task(ctx, &providers.TaskRequest{}); s != nil {
		t.Errorf("Task = %+v, want nil", s)
	}
}

// TestObserveStreamsAsResultsArrive makes the provider produce each
// observation only after the host has received the previous one. A shim
// that collected the fleet before sending would deadlock here.
func TestObserveStreamsAsResultsArrive(t *testing.T) {
	const n = 50
	received := make(chan struct{})
	p := &funcProvider{observe: func(ctx context.Context, r *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
		for i, tg := range r.Targets {
			if i > 0 {
				select {
				case <-received:
				case <-ctx.Done():
					return providers.Errorf("", "cancelled", "")
				}
			}
			if err := fn(&providers.Observation{Server: tg.Name, Reachable: true}); err != nil {
				return providers.Errorf("", "stopped", err.Error())
			}
		}
		return nil
	}}
	c, _ := connect(t, p)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var targets []providers.Target
	for i := range n {
		targets = append(targets, providers.Target{Name: fmt.Sprint("s", i)})
	}
	got := 0
	diags := c.Observe(ctx, &providers.ObserveRequest{Targets: targets}, func(o *providers.Observation) error {
		got++
		if got < n {
			received <- struct{}{}
		}
		return nil
	})
	if diags.HasErrors() || got != n {
		t.Fatalf("got %d of %d observations, diagnostics %v", got, n, diags.Err())
	}
}

// TestObserveBackpressure stalls the host after the first observation: the
// provider must be held back by flow control instead of pushing the whole
// fleet into buffers. The assertion needs a short wait for the provider to
// run ahead; it cannot fail spuriously, only miss a regression on a
// starved machine.
func TestObserveBackpressure(t *testing.T) {
	const n = 5000
	var produced atomic.Int64
	comps := make([]providers.Component, 20)
	for i := range comps {
		comps[i] = providers.Component{ID: fmt.Sprint("c", i), Name: strings.Repeat("n", 40), Version: "1.2.3.4"}
	}
	p := &funcProvider{observe: func(_ context.Context, r *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
		for _, tg := range r.Targets {
			if err := fn(&providers.Observation{Server: tg.Name, Components: comps}); err != nil {
				return providers.Errorf("", "stopped", err.Error())
			}
			produced.Add(1)
		}
		return nil
	}}
	c, _ := connect(t, p)
	var targets []providers.Target
	for i := range n {
		targets = append(targets, providers.Target{Name: fmt.Sprint("s", i)})
	}
	release := make(chan struct{})
	done := make(chan int)
	go func() {
		got := 0
		c.Observe(t.Context(), &providers.ObserveRequest{Targets: targets}, func(*providers.Observation) error {
			if got == 0 {
				<-release
			}
			got++
			return nil
		})
		done <- got
	}()
	time.Sleep(300 * time.Millisecond)
	if ahead := produced.Load(); ahead >= n {
		t.Errorf("provider produced all %d observations while the host read none: the stream is not flow-controlled", ahead)
	} else {
		t.Logf("provider ran %d of %d observations ahead of a stalled host", ahead, n)
	}
	close(release)
	if got := <-done; got != n {
		t.Errorf("host received %d observations, want %d", got, n)
	}
}

// TestCancelMidStream cancels the host's context after the first message;
// the provider must see its context end, and the host must return promptly.
func TestCancelMidStream(t *testing.T) {
	sawCancel := make(chan struct{})
	p := &funcProvider{
		observe: func(ctx context.Context, r *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
			_ = fn(&providers.Observation{Server: r.Targets[0].Name})
			<-ctx.Done()
			close(sawCancel)
			return providers.Errorf("", "Observe cancelled", ctx.Err().Error())
		},
		apply: func(ctx context.Context, r *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
			_ = fn(&providers.Progress{Message: "started", TaskURI: "/t/9"})
			<-ctx.Done()
			close(sawCancel)
			return nil, providers.Errorf(r.Target.Name, "Step cancelled", ctx.Err().Error())
		},
	}
	targets := []providers.Target{{Name: "a"}, {Name: "b"}}
	cases := map[string]func(ctx context.Context, c *GRPCClient, cancel func()) providers.Diagnostics{
		"observe": func(ctx context.Context, c *GRPCClient, cancel func()) providers.Diagnostics {
			return c.Observe(ctx, &providers.ObserveRequest{Targets: targets}, func(*providers.Observation) error {
				cancel()
				return nil
			})
		},
		"apply": func(ctx context.Context, c *GRPCClient, cancel func()) providers.Diagnostics {
			_, diags := c.Apply(ctx, &providers.ApplyRequest{Target: targets[0]}, func(*providers.Progress) error {
				cancel()
				return nil
			})
			return diags
		},
	}
	for name, call := range cases {
		t.Run(name, func(t *testing.T) {
			sawCancel = make(chan struct{})
			c, _ := connect(t, p)
			ctx, cancel := context.WithCancel(t.Context())
			diags := call(ctx, c, cancel)
			if len(diags) == 0 || diags[0].Summary != "Cancelled" {
				t.Errorf("diagnostics = %v, want Cancelled", diags)
			}
			select {
			case <-sawCancel:
			case <-time.After(10 * time.Second):
				t.Fatal("the provider's context was not cancelled")
			}
		})
	}
}

// TestCallbackError stops a stream from the host side through fn's error.
func TestCallbackError(t *testing.T) {
	// The provider sends one observation, then waits for its context: the
	// host's callback error must end the stream and cancel it.
	providerDone := make(chan providers.Diagnostics, 1)
	p := &funcProvider{observe: func(ctx context.Context, r *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
		_ = fn(&providers.Observation{Server: r.Targets[0].Name})
		select {
		case <-ctx.Done():
			providerDone <- nil
		case <-time.After(10 * time.Second):
			providerDone <- providers.Errorf("", "context not cancelled", "")
		}
		return nil
	}}
	c, _ := connect(t, p)
	var targets []providers.Target
	for i := range 3 {
		targets = append(targets, providers.Target{Name: fmt.Sprint("s", i)})
	}
	calls := 0
	diags := c.Observe(t.Context(), &providers.ObserveRequest{Targets: targets}, func(*providers.Observation) error {
		calls++
		return errors.New("journal full")
	})
	want := providers.Errorf("", "Observe stopped", `Observe on provider "test" stopped: journal full.`)
	if diff := cmp.Diff(want, diags); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if calls != 1 {
		t.Errorf("fn called %d times after returning an error, want 1", calls)
	}
	if d := <-providerDone; d != nil {
		t.Errorf("provider: %v; want its context cancelled once the host stopped reading", d.Err())
	}
}

// TestProviderPanics checks that a panic in any call becomes an error
// diagnostic naming the server where there is one, and that the plugin
// still serves the next call.
func TestProviderPanics(t *testing.T) {
	p := &funcProvider{
		describe: func(context.Context) (*providers.Description, providers.Diagnostics) { panic("describe bug") },
		configure: func(context.Context, *providers.ConfigureRequest) providers.Diagnostics {
			panic("configure bug")
		},
		observe: func(_ context.Context, r *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
			_ = fn(&providers.Observation{Server: r.Targets[0].Name, Reachable: true})
			panic("observe bug")
		},
		apply: func(context.Context, *providers.ApplyRequest, func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
			panic(errors.New("apply bug"))
		},
		task: func(context.Context, *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
			panic("task bug")
		},
		stop: func(context.Context) providers.Diagnostics { panic("stop bug") },
	}
	c, _ := connect(t, p)
	ctx := t.Context()
	target := providers.Target{Name: "r01-c01"}
	panicked := func(call, server, value string) providers.Diagnostics {
		return providers.Diagnostics{{Severity: providers.Error, Summary: "Provider panicked", Server: server,
			Detail: fmt.Sprintf("The provider panicked in %s: %s. This is a bug in the provider; its log has the stack.", call, value)}}
	}
	var observed []string
	cases := []struct {
		name string
		call func() providers.Diagnostics
		want providers.Diagnostics
	}{
		{"Describe", func() providers.Diagnostics { _, d := c.Describe(ctx); return d }, panicked("Describe", "", "describe bug")},
		{"Configure", func() providers.Diagnostics { return c.Configure(ctx, &providers.ConfigureRequest{}) }, panicked("Configure", "", "configure bug")},
		{"Observe", func() providers.Diagnostics {
			return c.Observe(ctx, &providers.ObserveRequest{Targets: []providers.Target{target}}, func(o *providers.Observation) error {
				observed = append(observed, o.Server)
				return nil
			})
		}, panicked("Observe", "", "observe bug")},
		{"Apply", func() providers.Diagnostics {
			_, d := c.Apply(ctx, &providers.ApplyRequest{Target: target}, func(*providers.Progress) error { return nil })
			return d
		}, panicked("Apply", "r01-c01", "apply bug")},
		{"Task", func() providers.Diagnostics { _, d := c.Task(ctx, &providers.TaskRequest{Target: target}); return d }, panicked("Task", "r01-c01", "task bug")},
		{"Stop", func() providers.Diagnostics { return c.Stop(ctx) }, panicked("Stop", "", "stop bug")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.call()); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]string{"r01-c01"}, observed); diff != "" {
		t.Errorf("observations before the panic (-want +got):\n%s", diff)
	}
}

// TestTransportFailure breaks the connection in the middle of an Observe:
// the host gets an error naming the provider, and every target not yet
// observed is still reported, unreachable, by name.
func TestTransportFailure(t *testing.T) {
	var once sync.Once
	stopped := make(chan struct{})
	p := &funcProvider{observe: func(ctx context.Context, r *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
		_ = fn(&providers.Observation{Server: r.Targets[0].Name, Reachable: true})
		<-ctx.Done()
		return nil
	}}
	c, server := connect(t, p)
	targets := []providers.Target{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	var got []*providers.Observation
	diags := c.Observe(t.Context(), &providers.ObserveRequest{Targets: targets}, func(o *providers.Observation) error {
		got = append(got, o)
		once.Do(func() {
			go func() {
				server.Stop()
				close(stopped)
			}()
		})
		return nil
	})
	// The connection broke (gRPC Unavailable): the provider, not the
	// servers, failed.
	if !diags.Unavailable() || !strings.Contains(diags[0].Detail, `Observe on provider "test" failed`) {
		t.Errorf("diagnostics = %v, want provider test unavailable", diags)
	}
	notObserved := func(name string) *providers.Observation {
		return &providers.Observation{Server: name, Diagnostics: providers.Unavailable(name, `Provider "test" failed before it reported this server.`)}
	}
	want := []*providers.Observation{{Server: "a", Reachable: true}, notObserved("b"), notObserved("c")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}

	<-stopped
	// Once the plugin is gone, unary calls name the provider and the server.
	_, diags = c.Task(t.Context(), &providers.TaskRequest{Target: providers.Target{Name: "r01-c01"}, TaskURI: "/t/1"})
	if !diags.Unavailable() || diags[0].Server != "r01-c01" || !strings.Contains(diags[0].Detail, `Task on provider "test" failed`) {
		t.Errorf("Task after the plugin stopped: diagnostics %v, want a failure naming provider test and server r01-c01", diags)
	}
}

// TestObserveConcurrentCallbacks has the provider call back from many
// goroutines at once, as a provider may: the server shim must serialise
// the sends (a gRPC stream allows one sender; -race checks it) and lose none.
func TestObserveConcurrentCallbacks(t *testing.T) {
	const workers, each = 8, 200
	p := &funcProvider{observe: func(_ context.Context, r *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					_ = fn(&providers.Observation{Server: r.Targets[w*each+i].Name, Reachable: true})
				}
			}()
		}
		wg.Wait()
		return nil
	}}
	c, _ := connect(t, p)
	var targets []providers.Target
	for i := range workers * each {
		targets = append(targets, providers.Target{Name: fmt.Sprint("s", i)})
	}
	seen := map[string]bool{}
	diags := c.Observe(t.Context(), &providers.ObserveRequest{Targets: targets}, func(o *providers.Observation) error {
		seen[o.Server] = true
		return nil
	})
	if diags.HasErrors() || len(seen) != len(targets) {
		t.Errorf("got %d distinct observations of %d, diagnostics %v", len(seen), len(targets), diags.Err())
	}
}
