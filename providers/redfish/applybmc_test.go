package redfish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/mockup"
)

// bmcActions adds a BMC's write side around an unmodified capture: it
// records every POST and answers it with answer; System documents can be
// given another BiosVersion, as after a BIOS update.
type bmcActions struct {
	t   *testing.T
	dir string

	mu     sync.Mutex
	posts  []post
	bios   string // when set, the System's BiosVersion
	answer func(w http.ResponseWriter, r *http.Request, p post)
}

type post struct {
	Path, ContentType string
	Body              []byte
}

func (a *bmcActions) opt() mockupOpt {
	return intercept(func(w http.ResponseWriter, r *http.Request) bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		switch {
		case r.Method == http.MethodPost && !strings.HasSuffix(r.URL.Path, "/Sessions"):
			body, _ := io.ReadAll(r.Body)
			p := post{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: body}
			a.posts = append(a.posts, p)
			if a.answer != nil {
				a.answer(w, r, p)
			} else {
				w.WriteHeader(http.StatusNoContent)
			}
			return true
		case r.Method == http.MethodGet && a.bios != "" && strings.HasPrefix(r.URL.Path, "/redfish/v1/Systems/") && strings.Count(r.URL.Path, "/") == 4:
			d := captureJSON(a.t, a.dir, r.URL.Path)
			d["BiosVersion"] = a.bios
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(d)
			return true
		}
		return false
	})
}

func (a *bmcActions) sent() []post {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]post(nil), a.posts...)
}

func (a *bmcActions) setBIOS(v string) {
	a.mu.Lock()
	a.bios = v
	a.mu.Unlock()
}

// planFor observes target with one intent and returns its plan.
func planFor(t *testing.T, p *Provider, target providers.Target, in providers.UpdateIntent) providers.UpdatePlan {
	t.Helper()
	target.Updates = []providers.UpdateIntent{in}
	o := observeAll(t, p, target)[0]
	if o.Outcome != providers.OutcomeObserved || len(o.Updates) != 1 {
		t.Fatalf("observe: %q %+v: %v", o.Outcome, o.Updates, o.Diagnostics.Err())
	}
	return o.Updates[0]
}

func stepFrom(plan providers.UpdatePlan, in providers.UpdateIntent) providers.Step {
	return providers.Step{Kind: providers.StepUpdate, Component: in.Component, Match: in.Match, ImageURI: in.ImageURI,
		Method: plan.Method, TransferProtocol: plan.TransferProtocol, Targets: plan.Targets, Timeout: 2 * time.Second}
}

func apply(t *testing.T, p *Provider, target providers.Target, step providers.Step) (*providers.ApplyResult, providers.Diagnostics) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return p.Apply(ctx, &providers.ApplyRequest{Target: target, Step: step}, nil)
}

var fast = map[string]any{"poll_interval": "5ms", "retry_base_delay": "1ms", "retry_max_delay": "5ms", "retry_max_attempts": 2, "timeout": "2s"}

func fastConfig(t *testing.T, m *mockupServer) *Provider {
	attrs := map[string]any{"ca_bundle": caPEM(m)}
	for k, v := range fast {
		attrs[k] = v
	}
	return configure(t, Options{}, attrs)
}

// TestApplyFallbackBIOSUpdate: on a Basic-auth BMC without
// FirmwareInventory, the BIOS read from the System is updated by
// SimpleUpdate naming that System in Targets with the TransferProtocol the
// ActionInfo requires; the BMC's 204 (with or without a Location) is
// accepted without a task, and wait_ready proves the update by reading
// the version back from the System.
func TestApplyFallbackBIOSUpdate(t *testing.T) {
	for _, location := range []string{"", "/redfish/v1/TaskService/Tasks/7"} {
		t.Run("204 location "+location, func(t *testing.T) {
			a := &bmcActions{t: t, dir: "csm/Gigabyte"}
			a.answer = func(w http.ResponseWriter, r *http.Request, p post) {
				if location != "" {
					w.Header().Set("Location", location)
				}
				w.WriteHeader(http.StatusNoContent)
			}
			m := newMockupServer(t, "csm/Gigabyte", basicOnly, notFound("/redfish/v1/UpdateService/FirmwareInventory"), a.opt())
			p := fastConfig(t, m)
			target := providers.Target{Name: "s", Endpoint: m.URL}
			in := providers.UpdateIntent{Component: "bios", Match: providers.Match{ID: "BIOS"}, ImageURI: "http://images.example/bios-C28.bin"}
			plan := planFor(t, p, target, in)
			res, d := apply(t, p, target, stepFrom(plan, in))
			if d.HasErrors() {
				t.Fatalf("update: %v", d.Err())
			}
			if res.TaskURI != "" || !strings.Contains(res.Message, "204") || strings.Contains(res.Message, "updated") {
				t.Errorf("result %+v: want accepted without a task, no claim of success", res)
			}
			sent := a.sent()
			if len(sent) != 1 || sent[0].Path != "/redfish/v1/UpdateService/Actions/SimpleUpdate" {
				t.Fatalf("posts %+v", sent)
			}
			var body map[string]any
			_ = json.Unmarshal(sent[0].Body, &body)
			if body["ImageURI"] != in.ImageURI || body["TransferProtocol"] != "HTTP" || !equalJSON(body["Targets"], []any{"/redfish/v1/Systems/Self"}) {
				t.Errorf("SimpleUpdate body %s: want the image, TransferProtocol HTTP and Targets [the System]", sent[0].Body)
			}

			wait := providers.Step{Kind: providers.StepWaitReady, Timeout: 200 * time.Millisecond,
				Expect: []providers.Expectation{{Component: "bios", Match: providers.Match{ID: "BIOS"}, Target: version.Target{Version: "C28"}}}}
			if _, d := apply(t, p, target, wait); !d.HasErrors() || !strings.Contains(d.Err().Error(), "bios not at C28: BIOS at C27") {
				t.Errorf("wait_ready before the System reports C28: %v", d.Err())
			}
			a.setBIOS("C28")
			res, d = apply(t, p, target, wait)
			if d.HasErrors() {
				t.Fatalf("wait_ready after: %v", d.Err())
			}
			bios, _ := providers.Match{ID: "BIOS"}.Find(res.Observation.Components)
			if bios.Version != "C28" || bios.Source != providers.SourceSystem {
				t.Errorf("read back %+v, want C28 from the System", bios)
			}
		})
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestApplyUpdateResponses: a 202 whose task monitor then 404s is
// followed and reported as gone (verify by version), never as success; a
// 400 naming a parameter is an error naming the BMC and that parameter.
func TestApplyUpdateResponses(t *testing.T) {
	in := providers.UpdateIntent{Component: "bios", Match: providers.Match{ID: "BIOS"}, ImageURI: "https://images.example/bios.bin"}
	t.Run("202 and a monitor that 404s", func(t *testing.T) {
		a := &bmcActions{t: t, dir: "dmtf/public-rackmount1", answer: func(w http.ResponseWriter, r *http.Request, p post) {
			w.Header().Set("Location", "/redfish/v1/TaskService/TaskMonitors/42")
			w.WriteHeader(http.StatusAccepted)
		}}
		m := newMockupServer(t, "dmtf/public-rackmount1", a.opt())
		p := fastConfig(t, m)
		target := providers.Target{Name: "s", Endpoint: m.URL}
		res, d := apply(t, p, target, stepFrom(planFor(t, p, target, in), in))
		if d.HasErrors() {
			t.Fatalf("update: %v", d.Err())
		}
		if res.TaskURI != "/redfish/v1/TaskService/TaskMonitors/42" || !strings.Contains(res.Message, "gone") || !strings.Contains(res.Message, "verifies") {
			t.Errorf("result %+v: want the monitor followed and reported gone, to be verified by version", res)
		}
		if res.TaskState != providers.TaskGone {
			t.Errorf("result's TaskState %q, want %q: the executor reads the version back only when it knows the task vanished", res.TaskState, providers.TaskGone)
		}
	})
	for _, param := range []string{"Targets", "TransferProtocol", "ImageURI"} {
		t.Run("400 naming "+param, func(t *testing.T) {
			a := &bmcActions{t: t, dir: "csm/EX235a", answer: func(w http.ResponseWriter, r *http.Request, p post) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": "Base.1.8.GeneralError", "message": "See @Message.ExtendedInfo.",
					"@Message.ExtendedInfo": []any{map[string]any{"MessageId": "Base.1.8.PropertyValueNotInList",
						"Message": "The value supplied for the property " + param + " is not in the list of acceptable values.", "MessageArgs": []string{"x", param}}}}})
			}}
			m := newMockupServer(t, "csm/EX235a", a.opt())
			p := fastConfig(t, m)
			target := providers.Target{Name: "s", Endpoint: m.URL, System: "Node0"}
			in := providers.UpdateIntent{Component: "bios", Match: providers.Match{ID: "Node0.BIOS"}, ImageURI: "https://images.example/bios.bin"}
			_, d := apply(t, p, target, stepFrom(planFor(t, p, target, in), in))
			if !d.HasErrors() {
				t.Fatal("a refused update succeeded")
			}
			msg := d.Err().Error()
			for _, want := range []string{"BMC " + m.URL, "refused its " + param + " parameter", "not in the list of acceptable values"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
		})
	}
}

// imageFiles serves image bytes on 127.0.0.1 and counts downloads.
func imageFiles(t *testing.T, content []byte) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", itoa(len(content)))
		_, _ = w.Write(content)
	}))
	t.Cleanup(s.Close)
	return s
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// TestApplyImageIntegrity: with Step.SHA256, a pushed image is verified
// before a byte reaches the BMC and a pulled one is fetched and verified
// before SimpleUpdate is sent; a mismatch is refused with the BMC
// untouched, a match goes through as planned (multipart with the planned
// Targets, raw http push, SimpleUpdate).
func TestApplyImageIntegrity(t *testing.T) {
	image := []byte(strings.Repeat("firmware-image-bytes ", 5000))
	file := filepath.Join(t.TempDir(), "bmc-2.16.bin")
	if err := os.WriteFile(file, image, 0o644); err != nil {
		t.Fatal(err)
	}
	files := imageFiles(t, image)
	cases := []struct {
		name, dir, imageURI, method string
		match                       providers.Match
	}{
		{"multipart push of a local file", "csm/OpenBMC-stock", file, providers.MethodMultipartPush, providers.Match{ID: "5d0869c4"}},
		{"multipart push of a downloaded image", "csm/OpenBMC-stock", files.URL + "/bmc-2.16.bin", providers.MethodMultipartPush, providers.Match{ID: "5d0869c4"}},
		{"http push", "csm/OpenBMC-stock", file, providers.MethodHTTPPush, providers.Match{ID: "5d0869c4"}},
		{"pull", "dmtf/public-rackmount1", strings.Replace(files.URL, "http:", "http:", 1) + "/bmc.bin", providers.MethodSimpleUpdate, providers.Match{ID: "BMC"}},
	}
	for _, c := range cases {
		for _, good := range []bool{false, true} {
			name := c.name + "/mismatch"
			if good {
				name = c.name + "/match"
			}
			t.Run(name, func(t *testing.T) {
				a := &bmcActions{t: t, dir: c.dir}
				m := newMockupServer(t, c.dir, a.opt())
				p := fastConfig(t, m)
				target := providers.Target{Name: "s", Endpoint: m.URL}
				in := providers.UpdateIntent{Component: "bmc", Match: c.match, ImageURI: c.imageURI, Method: c.method}
				plan := planFor(t, p, target, in)
				if plan.Method != c.method {
					t.Fatalf("plan %+v, want %s", plan, c.method)
				}
				step := stepFrom(plan, in)
				step.SHA256 = sum(image)
				if !good {
					step.SHA256 = sum([]byte("another image"))
				}
				_, d := apply(t, p, target, step)
				sent := a.sent()
				if !good {
					if !d.HasErrors() || !strings.Contains(d.Err().Error(), "SHA-256") || len(sent) != 0 {
						t.Fatalf("mismatch: %v, %d requests reached the BMC; want refused, BMC untouched", d.Err(), len(sent))
					}
					return
				}
				if d.HasErrors() || len(sent) != 1 {
					t.Fatalf("match: %v, %d posts", d.Err(), len(sent))
				}
				switch c.method {
				case providers.MethodMultipartPush:
					mt, params, _ := mime.ParseMediaType(sent[0].ContentType)
					if mt != "multipart/form-data" {
						t.Fatalf("content type %q", sent[0].ContentType)
					}
					r := multipart.NewReader(strings.NewReader(string(sent[0].Body)), params["boundary"])
					part, _ := r.NextPart()
					var up struct{ Targets []string }
					_ = json.NewDecoder(part).Decode(&up)
					if !equalJSON(up.Targets, plan.Targets) {
						t.Errorf("UpdateParameters Targets %v, want the planned %v", up.Targets, plan.Targets)
					}
					part, _ = r.NextPart()
					got, _ := io.ReadAll(part)
					if sum(got) != sum(image) {
						t.Error("the BMC got other bytes than the verified image")
					}
				case providers.MethodHTTPPush:
					if sent[0].ContentType != "application/octet-stream" || sum(sent[0].Body) != sum(image) {
						t.Errorf("http push sent %q, %d bytes", sent[0].ContentType, len(sent[0].Body))
					}
				case providers.MethodSimpleUpdate:
					if !strings.Contains(string(sent[0].Body), c.imageURI) {
						t.Errorf("SimpleUpdate body %s", sent[0].Body)
					}
				}
			})
		}
	}
}

// TestApplyPowerRefused: a refused GracefulShutdown or power-on is an
// error carrying the BMC's own words, never "powered off".
func TestApplyPowerRefused(t *testing.T) {
	a := &bmcActions{t: t, dir: "csm/Gigabyte", answer: func(w http.ResponseWriter, r *http.Request, p post) {
		mockup.WriteError(w, http.StatusBadRequest, "Base.1.8.ActionNotSupported", "The action ComputerSystem.Reset is not supported while the chassis is locked.")
	}}
	m := newMockupServer(t, "csm/Gigabyte", a.opt())
	p := fastConfig(t, m)
	res, d := apply(t, p, providers.Target{Name: "s", Endpoint: m.URL}, providers.Step{Kind: providers.StepShutdown, Timeout: time.Second})
	if !d.HasErrors() {
		t.Fatalf("refused shutdown succeeded: %+v", res)
	}
	msg := d.Err().Error()
	for _, want := range []string{"refused GracefulShutdown", "not shut down", "not supported while the chassis is locked"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
}

// TestWaitReadyVersionScheme: wait_ready compares in the component's
// scheme, so a BMC decorating the target version with a date is at target
// under the vendor scheme, and not under exact comparison.
func TestWaitReadyVersionScheme(t *testing.T) {
	a := &bmcActions{t: t, dir: "csm/Gigabyte", bios: "U30 v2.54 (03/01/2023)"}
	m := newMockupServer(t, "csm/Gigabyte", notFound("/redfish/v1/UpdateService/FirmwareInventory"), a.opt())
	p := fastConfig(t, m)
	target := providers.Target{Name: "s", Endpoint: m.URL}
	step := func(scheme string) providers.Step {
		return providers.Step{Kind: providers.StepWaitReady, Timeout: 100 * time.Millisecond,
			Expect: []providers.Expectation{{Component: "bios", Match: providers.Match{ID: "BIOS"}, Target: version.Target{Version: "U30 v2.54", Scheme: version.Scheme(scheme)}}}}
	}
	if _, d := apply(t, p, target, step("vendor")); d.HasErrors() {
		t.Errorf("vendor scheme: %v", d.Err())
	}
	if _, d := apply(t, p, target, step("")); !d.HasErrors() {
		t.Error("exact comparison took U30 v2.54 (03/01/2023) for U30 v2.54")
	}
}

// TestResetActsOnChosenSystem: on a BMC serving Node0 and Node1, a reset of
// the server that is Node1 goes to Node1's Reset action only.
func TestResetActsOnChosenSystem(t *testing.T) {
	a := &bmcActions{t: t, dir: "csm/EX235a"}
	m := newMockupServer(t, "csm/EX235a", twoNodes(t), a.opt())
	p := fastConfig(t, m)
	if _, d := apply(t, p, providers.Target{Name: "n1", Endpoint: m.URL, System: "Node1"},
		providers.Step{Kind: providers.StepReset, ResetType: "ForceRestart"}); d.HasErrors() {
		t.Fatalf("reset: %v", d.Err())
	}
	sent := a.sent()
	if len(sent) != 1 || !strings.Contains(sent[0].Path, "/Systems/Node1/") {
		t.Fatalf("posts %+v, want one reset of Node1", sent)
	}
	if _, d := apply(t, p, providers.Target{Name: "none", Endpoint: m.URL},
		providers.Step{Kind: providers.StepReset, ResetType: "ForceRestart"}); !d.HasErrors() || !strings.Contains(d.Err().Error(), "serves 2 systems") {
		t.Errorf("a reset naming no system on a two-system BMC: %v; want refused, listing the systems", d.Err())
	}
	if n := len(a.sent()); n != 1 {
		t.Errorf("%d resets sent, want only Node1's", n)
	}
}

// TestSessionForgottenOnBMCReboot: a BMC that forgets its sessions (as on
// reboot) answers 401 to the old token; the provider logs in again once
// and the server is observed, not refused. The session is one an apply
// holds (pinned), since an observation alone logs out at once.
func TestSessionForgottenOnBMCReboot(t *testing.T) {
	m := newMockupServer(t, "dmtf/public-rackmount1")
	p := fastConfig(t, m)
	target := providers.Target{Name: "s", Endpoint: m.URL}
	if _, _, err := p.bmcFor(target); err != nil {
		t.Fatal(err)
	}
	if o := observeAll(t, p, target)[0]; o.Outcome != providers.OutcomeObserved {
		t.Fatalf("first observe: %v", o.Diagnostics.Err())
	}
	m.ForgetSessions()
	if o := observeAll(t, p, target)[0]; o.Outcome != providers.OutcomeObserved {
		t.Fatalf("observe after the BMC forgot its sessions: %q %v", o.Outcome, o.Diagnostics.Err())
	}
	if n := m.OpenSessions(); n != 1 {
		t.Errorf("%d sessions open, want the one re-created", n)
	}
}

// TestIdleApplySessionLoggedOut: an apply's session is kept while its
// steps and task polls use it, and logged out once it sat idle (its
// server's steps are over), so an apply of a large fleet holds sessions
// only for the servers in progress; a logout that fails twice there is
// reported by Stop.
func TestIdleApplySessionLoggedOut(t *testing.T) {
	ctx := context.Background()
	var failDelete atomic.Bool
	var deletes atomic.Int32
	m := newMockupServer(t, "dmtf/public-rackmount1", intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodDelete && failDelete.Load() {
			deletes.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}
		return false
	}))
	p := fastConfig(t, m)
	target := providers.Target{Name: "s", Endpoint: m.URL}
	login := func() func() {
		b, _, done, err := p.use(target)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.System(ctx, ""); err != nil {
			t.Fatal(err)
		}
		return done
	}
	later := func() time.Time { return p.clock.Now().Add(pinnedIdle + time.Minute) }

	done := login()
	p.reapIdle(ctx, later())
	if n := m.OpenSessions(); n != 1 {
		t.Fatalf("%d sessions open while a step uses it, want 1 (kept)", n)
	}
	done()
	p.reapIdle(ctx, p.clock.Now())
	if n := m.OpenSessions(); n != 1 {
		t.Fatalf("%d sessions open right after a step, want 1 (kept for the next step)", n)
	}
	p.reapIdle(ctx, later())
	if n := m.OpenSessions(); n != 0 {
		t.Fatalf("%d sessions open after it sat idle, want 0 (logged out)", n)
	}

	login()()
	failDelete.Store(true)
	p.reapIdle(ctx, later())
	d := p.Stop(ctx)
	if len(d) == 0 || !strings.Contains(d[0].Summary, "Could not delete the BMC session") {
		t.Errorf("Stop after an idle logout failed twice: %v, want it reported", d)
	}
	if n := deletes.Load(); n < 2 {
		t.Errorf("the session's DELETE was sent %d times, want the logout tried twice", n)
	}
}

// TestApplyObservationKeepsSession: once an apply is under way, the
// observation before a server's first step keeps its session and
// connection for the steps (one login and one TLS handshake per server),
// and the idle sweep logs it out afterwards.
func TestApplyObservationKeepsSession(t *testing.T) {
	ctx := context.Background()
	m := newMockupServer(t, "dmtf/public-rackmount1")
	other := newMockupServer(t, "dmtf/public-rackmount1")
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m) + caPEM(other)})
	observeAll(t, p, providers.Target{Name: "plan", Endpoint: other.URL})
	if n := other.OpenSessions(); n != 0 {
		t.Fatalf("%d sessions open after an observation outside an apply, want 0", n)
	}
	_, _, done, err := p.use(providers.Target{Name: "first", Endpoint: other.URL})
	if err != nil {
		t.Fatal(err)
	}
	done()
	target := providers.Target{Name: "s", Endpoint: m.URL}
	if o := observeAll(t, p, target)[0]; !o.Reachable {
		t.Fatalf("observe: %v", o.Diagnostics.Err())
	}
	if n := m.OpenSessions(); n != 1 {
		t.Fatalf("%d sessions open after an apply's observation, want 1 (kept for the steps)", n)
	}
	b, _, done, err := p.use(target)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.System(ctx, ""); err != nil {
		t.Fatal(err)
	}
	done()
	if n := m.OpenSessions(); n != 1 {
		t.Errorf("%d sessions open after the step, want the observation's one reused", n)
	}
	p.reapIdle(ctx, p.clock.Now().Add(pinnedIdle+time.Minute))
	if n := m.OpenSessions(); n != 0 {
		t.Errorf("%d sessions open after the idle sweep, want 0", n)
	}
}

// TestLastStepEndsSession: a step the executor marks as the server's last
// logs its session out as soon as it succeeds, rather than after pinnedIdle;
// a step that is not the last, or a last step that failed, keeps it.
func TestLastStepEndsSession(t *testing.T) {
	ctx := context.Background()
	m := newMockupServer(t, "dmtf/public-rackmount1")
	p := fastConfig(t, m)
	target := providers.Target{Name: "s", Endpoint: m.URL}
	on := providers.Step{Kind: providers.StepPowerOn, Timeout: 2 * time.Second}
	if _, d := p.Apply(ctx, &providers.ApplyRequest{Target: target, Step: on}, nil); d.HasErrors() {
		t.Fatalf("power_on: %v", d.Err())
	}
	if n := m.OpenSessions(); n != 1 {
		t.Fatalf("%d sessions open after a step that is not the last, want 1 (kept for the next step)", n)
	}
	// This mockup's System reports health Warning: wait_ready fails, and a
	// failed last step keeps the session for the retry or remediation.
	notReady := providers.Step{Kind: providers.StepWaitReady, Timeout: 20 * time.Millisecond}
	if _, d := p.Apply(ctx, &providers.ApplyRequest{Target: target, Step: notReady, Last: true}, nil); !d.HasErrors() {
		t.Fatal("wait_ready on a server reporting Warning succeeded")
	}
	if n := m.OpenSessions(); n != 1 {
		t.Fatalf("%d sessions open after a failed last step, want 1 (kept for what follows)", n)
	}
	if _, d := p.Apply(ctx, &providers.ApplyRequest{Target: target, Step: on, Last: true}, nil); d.HasErrors() {
		t.Fatalf("last power_on: %v", d.Err())
	}
	if n := m.OpenSessions(); n != 0 {
		t.Errorf("%d sessions open after the server's last step, want 0 (logged out at once)", n)
	}
	if _, d := p.Apply(ctx, &providers.ApplyRequest{Target: target, Step: on, Last: true}, nil); d.HasErrors() {
		t.Fatalf("a step after the last (a remediation) logs in again: %v", d.Err())
	}
	if d := p.Stop(ctx); len(d) != 0 {
		t.Errorf("Stop: %v, want no failed logouts", d)
	}
	if n := m.OpenSessions(); n != 0 {
		t.Errorf("%d sessions open after Stop", n)
	}
}
