package redfish

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rackform/rackform/internal/testenv"
	"github.com/rackform/rackform/providers/mockup"
)

// mockupServer serves a public capture (../shared/redfish-mockups, found by
// internal/testenv; the repository holds none) unmodified through
// providers/mockup, with sessions and the test credentials.
type mockupServer struct {
	*mockup.Server
}

const testUser, testPassword = "operator", "s3cr3t-Pa55w0rd!"

// mockupOpt changes a mockup's options before it starts.
type mockupOpt func(*mockup.Options)

// basicOnly: no session service, Basic auth only.
func basicOnly(o *mockup.Options) { o.Sessions = false }

// intercept adds test behaviour (actions, faults) around the capture.
func intercept(fn func(w http.ResponseWriter, r *http.Request) bool) mockupOpt {
	return func(o *mockup.Options) {
		prev := o.Intercept
		o.Intercept = func(w http.ResponseWriter, r *http.Request) bool {
			return fn(w, r) || (prev != nil && prev(w, r))
		}
	}
}

// echoLogin makes session creation fail with the request body quoted in
// the error, as careless BMCs do: the password comes back.
func echoLogin(o *mockup.Options) {
	intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/Sessions") {
			return false
		}
		body, _ := io.ReadAll(r.Body)
		mockup.WriteError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "cannot parse "+strings.ReplaceAll(string(body), `"`, `'`))
		return true
	})(o)
}

func newMockupServer(t *testing.T, profile string, opts ...mockupOpt) *mockupServer {
	t.Helper()
	o := mockup.Options{Username: testUser, Password: testPassword, Sessions: true}
	for _, fn := range opts {
		fn(&o)
	}
	return &mockupServer{mockup.NewServer(t, testenv.Mockup(t, profile), o)}
}

func (m *mockupServer) openSessions() int { return m.OpenSessions() }
