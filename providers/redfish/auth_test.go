package redfish

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/mockup"
)

// sessionWantsBasic makes the BMC refuse a session request that does not
// carry Basic credentials itself (401), while every read takes Basic auth:
// sushy-emulator with an auth file behaves so.
func sessionWantsBasic(o *mockup.Options) {
	intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || strings.TrimSuffix(r.URL.Path, "/") != mockup.SessionsURI {
			return false
		}
		if _, _, ok := r.BasicAuth(); ok {
			return false // the capture's own login answers
		}
		mockup.WriteError(w, http.StatusUnauthorized, "Base.1.8.InsufficientPrivilege", "Basic credentials are required.")
		return true
	})(o)
}

// count returns how many requests of the log start with prefix
// ("POST /redfish/v1/SessionService/Sessions").
func count(log []string, prefix string) int {
	n := 0
	for _, l := range log {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// TestSessionRefusedThenBasic: a BMC that refuses the session request but
// takes Basic auth is observed with Basic auth (one session request, one
// Basic read decides), says so in the observation, and is left with no
// session and no logout request, which there is nothing to delete for.
func TestSessionRefusedThenBasic(t *testing.T) {
	m := newMockupServer(t, "dmtf/public-rackmount1", sessionWantsBasic)
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
	if o.Outcome != providers.OutcomeObserved {
		t.Fatalf("outcome %q: %v; a BMC taking Basic auth is observed", o.Outcome, o.Diagnostics.Err())
	}
	if o.Auth != providers.AuthBasic {
		t.Errorf("auth %q, want basic", o.Auth)
	}
	log := m.Log()
	if n := count(log, "POST "+mockup.SessionsURI); n != 1 {
		t.Errorf("%d session requests, want 1: %q", n, log)
	}
	if n := count(log, "DELETE "); n != 0 || m.openSessions() != 0 {
		t.Errorf("%d logouts and %d sessions open with Basic auth, want none: %q", n, m.openSessions(), log)
	}
	if d := p.Stop(t.Context()); len(d) != 0 {
		t.Errorf("Stop: %v; nothing to log out", d)
	}
}

// TestSessionAndBasicRefused: credentials refused for the session and for
// Basic auth are "credentials refused", the detail says both, and the
// password appears nowhere.
func TestSessionAndBasicRefused(t *testing.T) {
	m := newMockupServer(t, "dmtf/public-rackmount1", sessionWantsBasic)
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	wrong := "Wr0ng-pa55word!"
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL, Credentials: &providers.Credentials{Username: testUser, Password: wrong}})[0]
	if o.Outcome != providers.OutcomeCredentialsRefused {
		t.Fatalf("outcome %q, want credentials_refused: %v", o.Outcome, o.Diagnostics.Err())
	}
	detail := o.Diagnostics.Err().Error()
	for _, want := range []string{"creating a session: the BMC refused the credentials of user", "HTTP 401", "with Basic authentication too"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail %q does not say %q", detail, want)
		}
	}
	if strings.Contains(detail, wrong) || strings.Contains(detail, testPassword) {
		t.Errorf("a password in %q", detail)
	}
}

// TestPlannedAuthIsUsed: apply authenticates as plan found: a BMC planned
// with Basic auth gets no session request at all, one planned with a
// session gets no Basic fallback (its refusal is a refusal).
func TestPlannedAuthIsUsed(t *testing.T) {
	m := newMockupServer(t, "dmtf/public-rackmount1", sessionWantsBasic)
	p := fastConfig(t, m)
	// The capture's server is on: power_on reads it and does nothing else.
	on := providers.Step{Kind: providers.StepPowerOn}
	basic := providers.Target{Name: "s", Endpoint: m.URL, Auth: providers.AuthBasic}
	if _, d := apply(t, p, basic, on); d.HasErrors() {
		t.Fatalf("power_on with Basic auth: %v", d.Err())
	}
	if o := observeAll(t, p, basic)[0]; o.Auth != providers.AuthBasic || o.Outcome != providers.OutcomeObserved {
		t.Errorf("observed %q with auth %q, want observed with Basic", o.Outcome, o.Auth)
	}
	if n := count(m.Log(), "POST "+mockup.SessionsURI); n != 0 {
		t.Errorf("%d session requests for a BMC planned with Basic auth, want 0", n)
	}

	m2 := newMockupServer(t, "dmtf/public-rackmount1", sessionWantsBasic)
	p2 := fastConfig(t, m2)
	_, d := apply(t, p2, providers.Target{Name: "s", Endpoint: m2.URL, Auth: providers.AuthSession}, on)
	if !d.HasErrors() || !strings.Contains(d.Err().Error(), "plan found this BMC taking sessions") {
		t.Fatalf("a BMC planned with a session that refuses it: %v; want the refusal, saying Basic was not tried", d.Err())
	}
	if n := count(m2.Log(), "GET /redfish/v1/Systems"); n != 0 {
		t.Errorf("Basic auth was tried (%d reads) on a BMC planned with a session", n)
	}
}
