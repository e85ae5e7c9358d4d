package mockup

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/internal/testenv"
)

// capture is DMTF's public-rackmount1 mockup, read where the shared
// captures are (../shared/redfish-mockups): the repository holds none.
func capture(t *testing.T) string { return testenv.Mockup(t, "dmtf/public-rackmount1") }

func get(t *testing.T, s *Server, path string, auth func(*http.Request)) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if auth != nil {
		auth(req)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp, buf.Bytes()
}

// TestServesCaptureByteForByte: the mockup answers each path with its
// index.json exactly as captured, ignores $expand (the capture has no
// expanded collection), and answers 404 for what the capture lacks.
func TestServesCaptureByteForByte(t *testing.T) {
	s := NewServer(t, capture(t), Options{})
	for _, p := range []string{"/redfish/v1", "/redfish/v1/", "/redfish/v1/Systems/437XR1138R2", "/redfish/v1/UpdateService/FirmwareInventory?$expand=.($levels=1)"} {
		resp, body := get(t, s, p, nil)
		want, err := os.ReadFile(s.File(p))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
			t.Errorf("GET %s: %d, body equal to the capture: %v", p, resp.StatusCode, bytes.Equal(body, want))
		}
	}
	if resp, _ := get(t, s, "/redfish/v1/NoSuchService", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a path the capture lacks answered %d, want 404", resp.StatusCode)
	}
	if resp, _ := get(t, s, "/redfish/v1/../../etc/passwd", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a path outside the capture answered %d, want 404", resp.StatusCode)
	}
	resp, err := s.Client().Post(s.URL+"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST answered %d: a capture is read-only, want 405", resp.StatusCode)
	}
	if !strings.HasPrefix(s.Listener.Addr().String(), "127.0.0.1:") {
		t.Errorf("listens on %s, want 127.0.0.1", s.Listener.Addr())
	}
}

// TestAuthentication: with a user set, everything but the service root
// needs Basic auth or a session token; sessions log in and out, and are
// forgotten as a rebooting BMC forgets them. Without Sessions, login is 405.
func TestAuthentication(t *testing.T) {
	s := NewServer(t, capture(t), Options{Username: "admin", Password: "pw", Sessions: true})
	sys := "/redfish/v1/Systems"
	if resp, _ := get(t, s, "/redfish/v1", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("service root without credentials: %d, want 200", resp.StatusCode)
	}
	if resp, body := get(t, s, sys, nil); resp.StatusCode != http.StatusUnauthorized || !json.Valid(body) {
		t.Errorf("no credentials: %d, want 401 with a Redfish error", resp.StatusCode)
	}
	if resp, _ := get(t, s, sys, func(r *http.Request) { r.SetBasicAuth("admin", "wrong") }); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", resp.StatusCode)
	}
	if resp, _ := get(t, s, sys, func(r *http.Request) { r.SetBasicAuth("admin", "pw") }); resp.StatusCode != http.StatusOK {
		t.Errorf("Basic auth: %d, want 200", resp.StatusCode)
	}
	resp, err := s.Client().Post(s.URL+SessionsURI, "application/json", strings.NewReader(`{"UserName":"admin","Password":"pw"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tok, loc := resp.Header.Get("X-Auth-Token"), resp.Header.Get("Location")
	if resp.StatusCode != http.StatusCreated || tok == "" || loc == "" {
		t.Fatalf("login: %d token %q location %q", resp.StatusCode, tok, loc)
	}
	withTok := func(r *http.Request) { r.Header.Set("X-Auth-Token", tok) }
	if resp, _ := get(t, s, sys, withTok); resp.StatusCode != http.StatusOK {
		t.Errorf("session token: %d, want 200", resp.StatusCode)
	}
	s.ForgetSessions()
	if resp, _ := get(t, s, sys, withTok); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("token after ForgetSessions: %d, want 401", resp.StatusCode)
	}
	if s.OpenSessions() != 0 {
		t.Errorf("%d sessions after ForgetSessions", s.OpenSessions())
	}

	basic := NewServer(t, capture(t), Options{Username: "admin", Password: "pw"})
	resp, err = basic.Client().Post(basic.URL+SessionsURI, "application/json", strings.NewReader(`{"UserName":"admin","Password":"pw"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("login without Sessions: %d, want 405 (Basic auth only)", resp.StatusCode)
	}
}

// TestInterceptAddsBehaviour: a test's Intercept answers what it handles
// and leaves the rest to the capture.
func TestInterceptAddsBehaviour(t *testing.T) {
	s := NewServer(t, capture(t), Options{Intercept: func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusNoContent)
			return true
		}
		return false
	}})
	resp, err := s.Client().Post(s.URL+"/redfish/v1/anything", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("intercepted POST: %d, want 204", resp.StatusCode)
	}
	if resp, _ := get(t, s, "/redfish/v1/Systems", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET after intercept: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(capture(t), "Systems", "index.json")); err != nil {
		t.Fatal(err)
	}
}
