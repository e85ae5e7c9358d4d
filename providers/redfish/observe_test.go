package redfish

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/providers"
)

var update = flag.Bool("update", false, "rewrite golden files")

// configure returns a provider configured with extra attributes merged over
// the test credentials.
func configure(t *testing.T, opts Options, attrs map[string]any) *Provider {
	t.Helper()
	cfg := map[string]any{"username": testUser, "password": testPassword}
	for k, v := range attrs {
		cfg[k] = v
	}
	raw, _ := json.Marshal(cfg)
	p := New(opts)
	if d := p.Configure(context.Background(), &providers.ConfigureRequest{Config: raw}); d.HasErrors() {
		t.Fatalf("Configure: %v", d.Err())
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	return p
}

func caPEM(m *mockupServer) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: m.Certificate().Raw}))
}

func observeAll(t *testing.T, p *Provider, targets ...providers.Target) []*providers.Observation {
	t.Helper()
	var out []*providers.Observation
	d := p.Observe(context.Background(), &providers.ObserveRequest{Targets: targets}, func(o *providers.Observation) error {
		out = append(out, o)
		return nil
	})
	if d.HasErrors() {
		t.Fatalf("Observe: %v", d.Err())
	}
	return out
}

// TestObserveMockups reads each captured vendor tree and compares the
// normalised observation with a golden file (go test -run TestObserveMockups -update).
func TestObserveMockups(t *testing.T) {
	for _, profile := range []string{"dmtf/public-rackmount1", "csm/DL325", "csm/Gigabyte", "csm/OpenBMC-stock"} {
		t.Run(profile, func(t *testing.T) {
			m := newMockupServer(t, profile)
			p := configure(t, Options{CountRequests: true}, map[string]any{"ca_bundle": caPEM(m)})
			target := providers.Target{Name: "r01-c01", Endpoint: m.URL}
			obs := observeAll(t, p, target)
			if len(obs) != 1 {
				t.Fatalf("got %d observations, want 1", len(obs))
			}
			o := obs[0]
			if !o.Reachable {
				t.Fatalf("unreachable: %v", o.Diagnostics.Err())
			}
			got, _ := json.MarshalIndent(o, "", "  ")
			got = append(got, '\n')
			golden := filepath.Join("testdata", "observe", strings.ReplaceAll(profile, "/", "_")+".golden.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("observation differs from %s (-want +got):\n%s", golden, diff)
			}

			// Each observation is one unit: its session is deleted right
			// after its reads, and an identical observation costs no more
			// requests and fingerprints the same state equally.
			if n := m.openSessions(); n != 0 {
				t.Errorf("%d sessions open after an observe, want 0 (logged out at once)", n)
			}
			first := p.RequestCount(m.URL)
			again := observeAll(t, p, target)[0]
			if again.Fingerprint != o.Fingerprint {
				t.Errorf("fingerprint changed between identical observations: %s then %s", o.Fingerprint, again.Fingerprint)
			}
			if n := m.openSessions(); n != 0 {
				t.Errorf("%d sessions open after two observes, want 0", n)
			}
			if second := p.RequestCount(m.URL) - first; second > first {
				t.Errorf("second observe took %d requests, first %d", second, first)
			}
			if d := p.Stop(context.Background()); d.HasErrors() {
				t.Fatalf("Stop: %v", d.Err())
			}
			if n := m.openSessions(); n != 0 {
				t.Errorf("%d sessions open after Stop, want 0", n)
			}
		})
	}
}

// TestObserveExpand checks that $expand is asked for exactly where the
// service root says it is supported (DMTF: ExpandQuery.NoLinks; OpenBMC:
// no), and that an answer without expanded members is still read whole.
func TestObserveExpand(t *testing.T) {
	cases := []struct {
		profile    string
		wantExpand bool
	}{
		{"dmtf/public-rackmount1", true},
		{"csm/OpenBMC-stock", false},
	}
	for _, c := range cases {
		t.Run(c.profile, func(t *testing.T) {
			m := newMockupServer(t, c.profile)
			p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
			observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})
			paths := m.Log()
			expanded, members := false, 0
			for _, r := range paths {
				if strings.Contains(r, "FirmwareInventory?$expand=.($levels=1)") {
					expanded = true
				}
				if strings.HasPrefix(r, "GET /redfish/v1/UpdateService/FirmwareInventory/") {
					members++
				}
			}
			if expanded != c.wantExpand {
				t.Errorf("expanded = %v, want %v; requests: %v", expanded, c.wantExpand, paths)
			}
			// The captures hold no expanded collections, so the members
			// are read one by one either way (gofish's expand fallback).
			if members == 0 {
				t.Errorf("no member GETs: the unexpanded collection's members were not read")
			}
		})
	}
}

func TestObserveBasicAuthFallback(t *testing.T) {
	m := newMockupServer(t, "csm/Gigabyte", basicOnly)
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
	if !o.Reachable {
		t.Fatalf("unreachable with Basic auth fallback: %v", o.Diagnostics.Err())
	}
}

// TestObserveInsecure: without a CA bundle the self-signed BMC is refused
// (TestObserveFailures), with an explicit insecure = true it is read.
func TestObserveInsecure(t *testing.T) {
	m := newMockupServer(t, "csm/DL325")
	p := configure(t, Options{}, map[string]any{"insecure": true})
	if o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]; !o.Reachable {
		t.Fatalf("insecure = true: %v", o.Diagnostics.Err())
	}
}

func TestObserveFailures(t *testing.T) {
	m := newMockupServer(t, "dmtf/public-rackmount1")
	cases := []struct {
		name   string
		attrs  map[string]any
		target providers.Target
		want   string
	}{
		{"untrusted certificate", nil, providers.Target{Name: "east/r01/c01", Endpoint: m.URL}, "TLS certificate not trusted"},
		{"wrong password", map[string]any{"ca_bundle": caPEM(m)},
			providers.Target{Name: "east/r01/c02", Endpoint: m.URL, Credentials: &providers.Credentials{Username: testUser, Password: "wr0ng-password"}},
			"refused the credentials"},
		{"nothing listening", map[string]any{"timeout": "1s", "retry_max_attempts": 2, "retry_base_delay": "1ms", "retry_max_delay": "2ms"},
			providers.Target{Name: "east/r01/c03", Endpoint: "https://127.0.0.1:1"}, "connection refused"},
		{"not a URL", nil, providers.Target{Name: "east/r01/c04", Endpoint: "bmc-without-scheme"}, "not an http(s) URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			p := configure(t, Options{Logger: testLogger(&logs)}, c.attrs)
			o := observeAll(t, p, c.target)[0]
			if o.Reachable {
				t.Fatal("reachable, want unreachable")
			}
			if len(o.Diagnostics) != 1 || o.Diagnostics[0].Server != c.target.Name {
				t.Fatalf("diagnostics %+v: want one naming %s", o.Diagnostics, c.target.Name)
			}
			if msg := o.Diagnostics[0].String(); !strings.Contains(msg, c.want) {
				t.Errorf("diagnostic %q does not say %q", msg, c.want)
			}
			assertNoSecret(t, o.Diagnostics.Err().Error()+logs.String(), testPassword, "wr0ng-password")
		})
	}
}

// TestPasswordEchoedByBMC: a BMC that quotes the login body in its error
// must not get the password into a diagnostic.
func TestPasswordEchoedByBMC(t *testing.T) {
	m := newMockupServer(t, "csm/Gigabyte", echoLogin)
	var logs bytes.Buffer
	p := configure(t, Options{Logger: testLogger(&logs)}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
	if o.Reachable || !strings.Contains(o.Diagnostics.Err().Error(), "cannot parse") {
		t.Fatalf("want the BMC's error, got %+v", o)
	}
	assertNoSecret(t, o.Diagnostics.Err().Error()+logs.String(), testPassword)
}

func assertNoSecret(t *testing.T, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("a password appears in diagnostics or logs:\n%s", text)
		}
	}
}

// TestWaitReadyFakeClock: wait_ready is bounded by Step.Timeout on the
// provider's clock, so a test clock makes a 30-minute wait instant. The
// DMTF mockup's health is Warning, so the server never becomes ready.
func TestWaitReadyFakeClock(t *testing.T) {
	m := newMockupServer(t, "dmtf/public-rackmount1")
	clock := newFakeClock()
	p := configure(t, Options{Clock: clock}, map[string]any{"ca_bundle": caPEM(m), "poll_interval": "1m"})
	start := time.Now()
	_, d := p.Apply(context.Background(), &providers.ApplyRequest{Target: providers.Target{Name: "r01-c01", Endpoint: m.URL},
		Step: providers.Step{Kind: providers.StepWaitReady, Timeout: 30 * time.Minute}}, nil)
	if !d.HasErrors() || !strings.Contains(d.Err().Error(), "not ready by") || !strings.Contains(d.Err().Error(), "health is Warning") {
		t.Fatalf("want a timeout naming the health, got %v", d.Err())
	}
	var waited time.Duration
	for _, s := range clock.slept() {
		waited += s
	}
	if waited != 30*time.Minute {
		t.Errorf("waited %v on the provider's clock, want the step timeout of 30m", waited)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v of real time", el)
	}
}
