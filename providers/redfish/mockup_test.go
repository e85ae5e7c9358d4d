package redfish

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// mockupServer serves a captured vendor tree from testdata/mockups (each
// resource is <path>/index.json), with just enough behaviour around it for
// the provider: sessions with X-Auth-Token, authentication on everything
// but the service root, and $expand=. on collections when asked for.
type mockupServer struct {
	*httptest.Server
	dir      string
	user     string
	password string
	// noSessions makes session creation 405, as on BMCs without a session service.
	noSessions bool
	// echoLogin makes session creation fail with the request body echoed
	// in the error, as careless BMCs do: the password comes back.
	echoLogin bool

	requests atomic.Int64
	mu       sync.Mutex
	sessions map[string]bool
	paths    []string
}

const testUser, testPassword = "operator", "s3cr3t-Pa55w0rd!"

func newMockupServer(t *testing.T, profile string) *mockupServer {
	t.Helper()
	m := &mockupServer{dir: filepath.Join("testdata", "mockups", profile), user: testUser, password: testPassword, sessions: map[string]bool{}}
	if _, err := os.Stat(filepath.Join(m.dir, "index.json")); err != nil {
		t.Fatalf("mockup %s: %v", profile, err)
	}
	m.Server = httptest.NewTLSServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *mockupServer) load(p string) (map[string]any, bool) {
	p = strings.TrimSuffix(strings.TrimPrefix(p, "/redfish/v1"), "/")
	b, err := os.ReadFile(filepath.Join(m.dir, filepath.FromSlash(p), "index.json"))
	if err != nil {
		return nil, false
	}
	var v map[string]any
	if json.Unmarshal(b, &v) != nil {
		return nil, false
	}
	return v, true
}

func (m *mockupServer) openSessions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

func (m *mockupServer) serve(w http.ResponseWriter, r *http.Request) {
	m.requests.Add(1)
	m.mu.Lock()
	m.paths = append(m.paths, r.Method+" "+r.URL.RequestURI())
	m.mu.Unlock()
	p := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && p == "/redfish/v1/SessionService/Sessions":
		if m.noSessions {
			http.Error(w, `{"error":{"message":"not allowed"}}`, http.StatusMethodNotAllowed)
			return
		}
		if m.echoLogin {
			body, _ := io.ReadAll(r.Body)
			http.Error(w, `{"error":{"code":"Base.1.8.MalformedJSON","message":"cannot parse `+strings.ReplaceAll(string(body), `"`, `'`)+`"}}`, http.StatusBadRequest)
			return
		}
		var body struct{ UserName, Password string }
		if json.NewDecoder(r.Body).Decode(&body) != nil || body.UserName != m.user || body.Password != m.password {
			http.Error(w, `{"error":{"message":"bad credentials"}}`, http.StatusUnauthorized)
			return
		}
		m.mu.Lock()
		id := "s" + string(rune('a'+len(m.sessions)))
		m.sessions[id] = true
		m.mu.Unlock()
		w.Header().Set("X-Auth-Token", "token-"+id)
		w.Header().Set("Location", "/redfish/v1/SessionService/Sessions/"+id)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"@odata.id":"/redfish/v1/SessionService/Sessions/` + id + `","Id":"` + id + `"}`))
		return
	case p == "/redfish/v1" || p == "":
	default:
		if !m.authorized(r) {
			http.Error(w, `{"error":{"message":"unauthorized"}}`, http.StatusUnauthorized)
			return
		}
	}
	if r.Method == http.MethodDelete && strings.HasPrefix(p, "/redfish/v1/SessionService/Sessions/") {
		m.mu.Lock()
		delete(m.sessions, strings.TrimPrefix(p, "/redfish/v1/SessionService/Sessions/"))
		m.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, `{"error":{"message":"not supported by the mockup"}}`, http.StatusMethodNotAllowed)
		return
	}
	v, ok := m.load(p)
	if !ok {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if strings.HasPrefix(r.URL.Query().Get("$expand"), ".") {
		if members, ok := v["Members"].([]any); ok {
			for i, mem := range members {
				if ref, ok := mem.(map[string]any); ok {
					if full, ok := m.load(ref["@odata.id"].(string)); ok {
						members[i] = full
					}
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (m *mockupServer) authorized(r *http.Request) bool {
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.sessions[strings.TrimPrefix(tok, "token-")]
	}
	u, pw, ok := r.BasicAuth()
	return ok && u == m.user && pw == m.password
}
