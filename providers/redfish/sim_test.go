package redfish

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/sim"
)

// simSpeed makes simulated minutes real milliseconds: a 10-minute flash
// takes 10 ms, a 3-minute BMC reset 3 ms.
const simSpeed = 60000

// fastAttrs keeps every provider wait short against the time-scaled sim.
var fastAttrs = map[string]any{
	"poll_interval":      "5ms",
	"retry_base_delay":   "2ms",
	"retry_max_delay":    "20ms",
	"retry_max_attempts": 4,
	"timeout":            "2s",
}

type simEnv struct {
	fleet   *sim.Fleet
	targets map[string]providers.Target
	p       *Provider
	logs    *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the provider's concurrent logging.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startSim serves one BMC per spec over TLS and configures a provider that
// trusts the fleet's CA. attrs override fastAttrs.
func startSim(t *testing.T, opts sim.Options, specs []sim.BMCSpec, attrs map[string]any, popts Options) *simEnv {
	t.Helper()
	if opts.Speed == 0 {
		opts.Speed = simSpeed
	}
	opts.Username, opts.Password, opts.TLS = testUser, testPassword, true
	for i := range specs {
		if specs[i].Addr == "" {
			specs[i].Addr = "127.0.0.1:0"
		}
	}
	f, err := sim.New(opts, specs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := f.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); f.Close() })
	env := &simEnv{fleet: f, targets: map[string]providers.Target{}, logs: &syncBuffer{}}
	for _, b := range f.BMCs() {
		env.targets[b.Name] = providers.Target{Name: "east-1/r01/" + b.Name, Endpoint: b.URL}
	}
	all := map[string]any{"ca_bundle": string(f.CACertPEM())}
	for k, v := range fastAttrs {
		all[k] = v
	}
	for k, v := range attrs {
		all[k] = v
	}
	if popts.Logger == nil {
		popts.Logger = testLogger(env.logs)
	}
	env.p = configure(t, popts, all)
	return env
}

// apply runs one step and returns the result, its diagnostics and the
// progress reports.
func (e *simEnv) apply(t *testing.T, name string, step providers.Step) (*providers.ApplyResult, providers.Diagnostics, []providers.Progress) {
	t.Helper()
	var prog []providers.Progress
	res, d := e.p.Apply(context.Background(), &providers.ApplyRequest{Target: e.targets[name], Step: step}, func(p *providers.Progress) error {
		prog = append(prog, *p)
		return nil
	})
	return res, d, prog
}

func (e *simEnv) mustApply(t *testing.T, name string, step providers.Step) *providers.ApplyResult {
	t.Helper()
	res, d, _ := e.apply(t, name, step)
	if d.HasErrors() {
		t.Fatalf("%s on %s: %v", step.Kind, name, d.Err())
	}
	return res
}

func (e *simEnv) observe(t *testing.T, name string) *providers.Observation {
	t.Helper()
	return observeAll(t, e.p, e.targets[name])[0]
}

// imageServer serves any path as a small image with a Content-Length, on
// loopback, for pushes that download their image.
func imageServer(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, filepath.Base(r.URL.Path), time.Time{}, bytes.NewReader(bytes.Repeat([]byte("firmware"), 4096)))
	}))
	t.Cleanup(ts.Close)
	return ts
}

func component(o *providers.Observation, softwareID string) string {
	if o == nil {
		return ""
	}
	for _, c := range o.Components {
		if c.SoftwareID == softwareID {
			return c.Version
		}
	}
	return ""
}

func expect(key, v string) providers.Expectation {
	return providers.Expectation{Component: key, Match: providers.Match{SoftwareID: key}, Target: version.Target{Version: v}}
}

// TestStepsEveryProfile runs every step kind on every simulated hardware
// profile: firmware by SimpleUpdate (push where the BMC has no SimpleUpdate),
// firmware by push from a local file, shutdown, power on, reimage, reset and
// wait_ready for the new versions.
func TestStepsEveryProfile(t *testing.T) {
	images := imageServer(t)
	dir := t.TempDir()
	nicImage := filepath.Join(dir, "nic-22.1.bin")
	if err := os.WriteFile(nicImage, bytes.Repeat([]byte{0xA5}, 100_000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, profile := range sim.Profiles() {
		t.Run(profile, func(t *testing.T) {
			t.Parallel()
			env := startSim(t, sim.Options{}, []sim.BMCSpec{{Name: "c01", Profile: profile, PowerOn: true,
				Firmware: map[string]string{"BIOS": "1.10", "NIC": "21.0", "Runtime": "4.5.0"}}}, nil, Options{})
			before := env.observe(t, "c01")
			if !before.Reachable || component(before, "BIOS") != "1.10" {
				t.Fatalf("initial observation: %+v", before)
			}

			// Firmware from a URL: SimpleUpdate where offered, else push.
			res, d, prog := env.apply(t, "c01", providers.Step{Kind: providers.StepUpdate, Component: "BIOS",
				ImageURI: images.URL + "/images/bios-2.80.bin", ApplyTime: "OnReset"})
			if d.HasErrors() {
				t.Fatalf("update BIOS: %v", d.Err())
			}
			if i := firstTaskReport(prog); res.TaskURI == "" || i < 0 || prog[i].TaskURI != res.TaskURI || prog[i].Message != "task started" {
				t.Errorf("the task monitor must be reported before the task is polled; got result %+v, progress %+v", res, prog)
			}
			if profile == sim.ProfileAMI {
				// AMI offers no push URI: the provider says so.
				_, d, _ := env.apply(t, "c01", providers.Step{Kind: providers.StepUpdate, Component: "NIC", ImageURI: nicImage, Method: MethodPush})
				if !d.HasErrors() || !strings.Contains(d.Err().Error(), "neither MultipartHttpPushUri nor HttpPushUri") {
					t.Errorf("push on AMI: %v", d.Err())
				}
				env.mustApply(t, "c01", providers.Step{Kind: providers.StepUpdate, Component: "NIC", ImageURI: images.URL + "/nic-22.1.bin"})
			} else {
				// Firmware pushed from a local file (streamed, multipart where offered).
				env.mustApply(t, "c01", providers.Step{Kind: providers.StepUpdate, Component: "NIC", ImageURI: nicImage, Method: MethodPush, ApplyTime: "Immediate"})
				if st := env.fleet.Stats("c01"); st.PushBytes < 100_000 {
					t.Errorf("the BMC received %d image bytes, want the whole 100000-byte image", st.PushBytes)
				}
			}

			env.mustApply(t, "c01", providers.Step{Kind: providers.StepShutdown, Timeout: 2 * time.Second})
			if p, _ := env.fleet.PowerState("c01"); p != providers.PowerOff {
				t.Fatalf("power after shutdown = %s", p)
			}
			env.mustApply(t, "c01", providers.Step{Kind: providers.StepPowerOn, Timeout: 2 * time.Second})
			env.mustApply(t, "c01", providers.Step{Kind: providers.StepReimage, ImageURI: images.URL + "/iso/runtime-4.6.1.iso"})
			ready := env.mustApply(t, "c01", providers.Step{Kind: providers.StepWaitReady, Timeout: 5 * time.Second,
				Expect: []providers.Expectation{expect("BIOS", "2.80"), expect("NIC", "22.1"), expect("Runtime", "4.6.1")}})
			if ready.Observation == nil || component(ready.Observation, "Runtime") != "4.6.1" {
				t.Errorf("wait_ready observation: %+v", ready.Observation)
			}
			resets := env.fleet.Stats("c01").Resets
			env.mustApply(t, "c01", providers.Step{Kind: providers.StepReset})
			if got := env.fleet.Stats("c01").Resets; got != resets+1 {
				t.Errorf("resets %d → %d, want one more", resets, got)
			}
			env.mustApply(t, "c01", providers.Step{Kind: providers.StepWaitReady, Timeout: 5 * time.Second,
				Expect: []providers.Expectation{expect("BIOS", "2.80")}})
			if after := env.observe(t, "c01"); after.Fingerprint == before.Fingerprint {
				t.Error("fingerprint unchanged after upgrading")
			}
			if d := env.p.Stop(context.Background()); d.HasErrors() {
				t.Fatal(d.Err())
			}
			if st := env.fleet.Stats("c01"); st.SessionsOpen != 0 || st.SessionsCreated != 2 {
				t.Errorf("sessions: %d created, %d open after Stop; want 2 (the first observation's, deleted at once, and one the apply steps reuse) and none open", st.SessionsCreated, st.SessionsOpen)
			}
			assertNoSecret(t, env.logs.String(), testPassword)
		})
	}
}

func TestTaskPolling(t *testing.T) {
	images := imageServer(t)
	cases := []struct {
		profile  string
		wantLast string
	}{
		// iLO deletes finished task monitors: the last poll says Gone.
		{sim.ProfileILO5, providers.TaskGone},
		// DMTF keeps them, answering 200 with the finished Task.
		{sim.ProfileDMTF, providers.TaskCompleted},
	}
	for _, c := range cases {
		t.Run(c.profile, func(t *testing.T) {
			env := startSim(t, sim.Options{Speed: 600}, []sim.BMCSpec{{Name: "c01", Profile: c.profile, PowerOn: true}}, nil, Options{})
			res := env.mustApply(t, "c01", providers.Step{Kind: providers.StepUpdate, ImageURI: images.URL + "/cpld-3.0.bin"})
			st, d := env.p.Task(context.Background(), &providers.TaskRequest{Target: env.targets["c01"], TaskURI: res.TaskURI})
			if d.HasErrors() {
				t.Fatal(d.Err())
			}
			if st.State != c.wantLast {
				t.Errorf("task state after completion = %s, want %s", st.State, c.wantLast)
			}
		})
	}
	t.Run("New before Starting", func(t *testing.T) {
		// A slow flash, polled at once: iLO's task is New first.
		env := startSim(t, sim.Options{Speed: 1}, []sim.BMCSpec{{Name: "c01", Profile: sim.ProfileILO5, PowerOn: true}}, nil, Options{})
		us, err := mustBMC(t, env).UpdateService(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b := mustBMC(t, env)
		acc, err := b.Post(context.Background(), us.SimpleUpdateTarget, map[string]any{"ImageURI": images.URL + "/bios-9.9.bin"})
		if err != nil || acc.TaskURI == "" {
			t.Fatalf("SimpleUpdate: %+v, %v", acc, err)
		}
		st, d := env.p.Task(context.Background(), &providers.TaskRequest{Target: env.targets["c01"], TaskURI: acc.TaskURI})
		if d.HasErrors() {
			t.Fatal(d.Err())
		}
		if st.State != providers.TaskNew || st.Terminal() {
			t.Errorf("first poll: %+v, want New and not terminal", st)
		}
	})
}

// firstTaskReport is the index of the first progress report naming a task.
func firstTaskReport(prog []providers.Progress) int {
	for i, p := range prog {
		if p.TaskURI != "" {
			return i
		}
	}
	return -1
}

func mustBMC(t *testing.T, env *simEnv) bmc {
	t.Helper()
	b, _, err := env.p.bmcFor(env.targets["c01"])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// faultCase is one row of the fault matrix: a fault on the BMC, what the
// provider does, and what must come out.
type faultCase struct {
	name   string
	fault  sim.Fault
	opts   sim.Options
	attrs  map[string]any
	popts  func() Options
	run    func(t *testing.T, env *simEnv) (providers.Diagnostics, string)
	wantOK bool
	// want is a phrase the error diagnostic must contain.
	want string
	// within bounds the test's wall time.
	within time.Duration
	check  func(t *testing.T, env *simEnv)
}

func observeRun(t *testing.T, env *simEnv) (providers.Diagnostics, string) {
	o := env.observe(t, "c01")
	if o.Reachable != !o.Diagnostics.HasErrors() {
		t.Errorf("Reachable=%v with diagnostics %v", o.Reachable, o.Diagnostics)
	}
	b, _ := json.Marshal(o)
	return o.Diagnostics, string(b)
}

func applyRun(step providers.Step) func(t *testing.T, env *simEnv) (providers.Diagnostics, string) {
	return func(t *testing.T, env *simEnv) (providers.Diagnostics, string) {
		res, d, prog := env.apply(t, "c01", step)
		b, _ := json.Marshal([]any{res, prog})
		return d, string(b)
	}
}

// TestFaultMatrix has one case per simulator fault, asserting the provider's
// behaviour: retried and succeeded, or a clear diagnostic naming the server,
// in bounded time; and never the password in diagnostics, progress or logs.
func TestFaultMatrix(t *testing.T) {
	imageURL := "http://127.0.0.1:9/images/bios-2.80.bin" // the sim never downloads
	busyClock := newFakeClock()
	cases := []faultCase{
		{name: "latency", fault: sim.Fault{Kind: sim.FaultLatency, Latency: 30 * time.Millisecond}, wantOK: true, within: 3 * time.Second,
			run: func(t *testing.T, env *simEnv) (providers.Diagnostics, string) {
				start := time.Now()
				d, out := observeRun(t, env)
				// The per-BMC limit lets requests overlap at most 2 deep.
				n := env.p.RequestCount(env.targets["c01"].Endpoint)
				if n <= 0 {
					t.Errorf("%d requests counted", n)
				}
				if el, min := time.Since(start), time.Duration(n)*30*time.Millisecond/2; el < min {
					t.Errorf("observe took %v for %d requests: the latency was not applied", el, n)
				}
				return d, out
			}},
		{name: "timeout, transient: retried", fault: sim.Fault{Kind: sim.FaultTimeout, Latency: time.Minute, Count: 1},
			attrs: map[string]any{"timeout": "150ms"}, run: observeRun, wantOK: true, within: 3 * time.Second},
		{name: "timeout, persistent: unreachable", fault: sim.Fault{Kind: sim.FaultTimeout, Latency: time.Minute},
			attrs: map[string]any{"timeout": "100ms", "retry_max_attempts": 2}, run: observeRun, want: "timed out", within: 3 * time.Second},
		{name: "5xx, transient: retried", fault: sim.Fault{Kind: sim.FaultError, Count: 2}, run: observeRun, wantOK: true, within: 3 * time.Second},
		// A BMC failing every request answered: not unreachable (rule 46).
		{name: "5xx, persistent: answered", fault: sim.Fault{Kind: sim.FaultError}, run: observeRun,
			want: "BMC answered without what the plan needs: BMC https://127.0.0.1", within: 3 * time.Second},
		{name: "503 busy honours Retry-After", fault: sim.Fault{Kind: sim.FaultBusy, Latency: 2 * time.Second, Count: 2},
			attrs: map[string]any{"retry_max_delay": "10s"}, popts: func() Options { return Options{Clock: busyClock} },
			run: observeRun, wantOK: true, within: 3 * time.Second,
			check: func(t *testing.T, env *simEnv) {
				s := busyClock.slept()
				if len(s) != 2 || s[0] != 2*time.Second || s[1] != 2*time.Second {
					t.Errorf("waits %v, want the BMC's Retry-After of 2s twice", s)
				}
			}},
		{name: "session limit", fault: sim.Fault{Kind: sim.FaultSessionLimit, Limit: 0}, run: observeRun, want: "the BMC answered, but did not create a session: POST /redfish/v1/SessionService/Sessions returned 503 Service Unavailable", within: 3 * time.Second,
			check: func(t *testing.T, env *simEnv) {
				if st := env.fleet.Stats("c01"); st.SessionsRefused == 0 || st.SessionsOpen != 0 {
					t.Errorf("stats %+v: want refused sessions and none open", st)
				}
			}},
		// Offline since plan: the image is not sent (rule 47).
		{name: "update service offline at apply", fault: sim.Fault{Kind: sim.FaultUpdateOffline},
			run:  applyRun(providers.Step{Kind: providers.StepUpdate, Component: "BIOS", ImageURI: imageURL}),
			want: "the BMC's UpdateService (/redfish/v1/UpdateService) is not enabled (Status.State UnavailableOffline): the image was not sent", within: 3 * time.Second},
		{name: "task fails", fault: sim.Fault{Kind: sim.FaultTaskFail},
			run: applyRun(providers.Step{Kind: providers.StepUpdate, Component: "BIOS", ImageURI: imageURL}), want: "task ended Exception", within: 3 * time.Second},
		{name: "task hangs: bounded by the step timeout", fault: sim.Fault{Kind: sim.FaultTaskHang},
			run:  applyRun(providers.Step{Kind: providers.StepUpdate, Component: "BIOS", ImageURI: imageURL, Timeout: 300 * time.Millisecond}),
			want: "did not finish by", within: 3 * time.Second},
		{name: "server never comes back", fault: sim.Fault{Kind: sim.FaultNoReturn},
			run: func(t *testing.T, env *simEnv) (providers.Diagnostics, string) {
				env.mustApply(t, "c01", providers.Step{Kind: providers.StepReset, ResetType: "ForceRestart"})
				return applyRun(providers.Step{Kind: providers.StepWaitReady, Timeout: 300 * time.Millisecond})(t, env)
			},
			want: "not ready by", within: 3 * time.Second},
		{name: "malformed JSON", fault: sim.Fault{Kind: sim.FaultMalformed}, run: observeRun, want: "malformed JSON", within: 3 * time.Second},
		// One garbled reply is retried like a 5xx: the server is observed.
		{name: "malformed JSON once", fault: sim.Fault{Kind: sim.FaultMalformed, Count: 1}, run: observeRun, wantOK: true, within: 3 * time.Second},
		{name: "graceful shutdown ignored: forced off", fault: sim.Fault{Kind: sim.FaultIgnoreGraceful},
			run: applyRun(providers.Step{Kind: providers.StepShutdown, Timeout: 100 * time.Millisecond}), wantOK: true, within: 3 * time.Second,
			check: func(t *testing.T, env *simEnv) {
				if p, _ := env.fleet.PowerState("c01"); p != providers.PowerOff {
					t.Errorf("power %s after shutdown, want Off", p)
				}
			}},
		{name: "BMC reset taking long", opts: sim.Options{Speed: 600},
			// A BMC flash restarts the BMC: 3 simulated minutes at speed 600
			// is 300 ms of connection refused, then every session is gone.
			run: func(t *testing.T, env *simEnv) (providers.Diagnostics, string) {
				env.mustApply(t, "c01", providers.Step{Kind: providers.StepUpdate, Component: "BMC", ImageURI: "http://127.0.0.1:9/bmc-9.1.bin"})
				return applyRun(providers.Step{Kind: providers.StepWaitReady, Timeout: 10 * time.Second,
					Expect: []providers.Expectation{expect("BMC", "9.1")}})(t, env)
			},
			wantOK: true, within: 8 * time.Second,
			check: func(t *testing.T, env *simEnv) {
				st := env.fleet.Stats("c01")
				if st.BMCResets == 0 {
					t.Error("the BMC never reset")
				}
				if st.SessionsCreated < 2 {
					t.Errorf("%d sessions created: the session lost in the BMC reset was not re-created", st.SessionsCreated)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			popts := Options{}
			if c.popts != nil {
				popts = c.popts()
			}
			popts.CountRequests = true
			env := startSim(t, c.opts, []sim.BMCSpec{{Name: "c01", Profile: sim.ProfileILO5, PowerOn: true}}, c.attrs, popts)
			if c.fault.Kind != "" {
				if err := env.fleet.SetFault("c01", c.fault); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			d, out := c.run(t, env)
			if el := time.Since(start); el > c.within {
				t.Errorf("took %v, want within %v", el, c.within)
			}
			if d.HasErrors() {
				t.Logf("diagnostic: %v", d.Err())
			}
			if c.wantOK {
				if d.HasErrors() {
					t.Errorf("want success, got %v", d.Err())
				}
			} else {
				if !d.HasErrors() {
					t.Fatalf("want an error diagnostic containing %q, got none", c.want)
				}
				for _, x := range d {
					if x.Severity == providers.Error && x.Server != env.targets["c01"].Name {
						t.Errorf("diagnostic %q does not name the server", x)
					}
				}
				if !strings.Contains(d.Err().Error(), c.want) {
					t.Errorf("diagnostic %q does not say %q", d.Err(), c.want)
				}
			}
			if c.check != nil {
				c.check(t, env)
			}
			env.p.Stop(context.Background())
			assertNoSecret(t, out+env.logs.String(), testPassword)
		})
	}
}

// TestStopEndsWorkInFlight: Stop interrupts a step waiting on a hung task
// and still deletes the session.
func TestStopEndsWorkInFlight(t *testing.T) {
	env := startSim(t, sim.Options{}, []sim.BMCSpec{{Name: "c01", Profile: sim.ProfileDMTF, PowerOn: true}}, nil, Options{})
	if err := env.fleet.SetFault("c01", sim.Fault{Kind: sim.FaultTaskHang}); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	type out struct {
		d providers.Diagnostics
	}
	done := make(chan out)
	go func() {
		_, d := env.p.Apply(context.Background(), &providers.ApplyRequest{Target: env.targets["c01"],
			Step: providers.Step{Kind: providers.StepUpdate, ImageURI: "http://127.0.0.1:9/bios-3.0.bin", Timeout: time.Hour}},
			func(p *providers.Progress) error {
				if p.TaskURI != "" {
					select {
					case <-started:
					default:
						close(started)
					}
				}
				return nil
			})
		done <- out{d}
	}()
	<-started
	if d := env.p.Stop(context.Background()); d.HasErrors() {
		t.Fatal(d.Err())
	}
	select {
	case o := <-done:
		if !o.d.HasErrors() || !strings.Contains(o.d.Err().Error(), "interrupted") {
			t.Errorf("Apply after Stop: %v", o.d.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Apply still running 5s after Stop")
	}
	if st := env.fleet.Stats("c01"); st.SessionsOpen != 0 {
		t.Errorf("%d sessions open after Stop", st.SessionsOpen)
	}
}
