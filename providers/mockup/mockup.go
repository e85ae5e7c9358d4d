// Package mockup serves a captured Redfish service tree file for file, as
// DMTF's Redfish-Mockup-Server does: GET <path> answers <dir>/<path>/index.json
// byte for byte, with no simulator logic in between. $expand and other
// queries are ignored (a capture that holds expanded collections serves them
// expanded; one that does not, does not). Optional authentication: Basic
// auth and, when Sessions is set, session login by POST to the session
// collection. Everything else (POST, PATCH, DELETE) is refused with 405
// unless a test's Intercept handles it.
//
// Tests in other packages use NewServer; it listens on 127.0.0.1 over TLS.
package mockup

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// SessionsURI is where the session collection lives (Redfish 1.6+).
const SessionsURI = "/redfish/v1/SessionService/Sessions"

// Options are a server's behaviour around the capture.
type Options struct {
	// Username and Password, when Username is set, are required on every
	// path but the service root: as Basic auth, or (with Sessions) by a
	// session token from logging in.
	Username, Password string
	// Sessions accepts session login (POST SessionsURI) and logout (DELETE
	// of the session); without it those answer 405, as on BMCs without a
	// session service.
	Sessions bool
	// Intercept, when set, sees every request first (before
	// authentication: call Handler.Authorized where it matters) and
	// returns true when it answered it: tests add behaviour (an update
	// action, a fault) around the unmodified capture.
	Intercept func(w http.ResponseWriter, r *http.Request) bool
}

// Handler serves one capture directory.
type Handler struct {
	dir  string
	opts Options

	requests atomic.Int64
	mu       sync.Mutex
	sessions map[string]string // token → session id
	log      []string
}

// New returns a handler serving dir (the folder holding the service root's
// index.json, i.e. what /redfish/v1 is).
func New(dir string, opts Options) *Handler {
	return &Handler{dir: dir, opts: opts, sessions: map[string]string{}}
}

// Requests is how many requests the handler has seen.
func (h *Handler) Requests() int64 { return h.requests.Load() }

// Log is every request seen so far, as "METHOD /path?query".
func (h *Handler) Log() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

// OpenSessions is how many sessions are logged in.
func (h *Handler) OpenSessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// ForgetSessions drops every session, as a BMC does when it reboots.
func (h *Handler) ForgetSessions() {
	h.mu.Lock()
	h.sessions = map[string]string{}
	h.mu.Unlock()
}

// File is the capture file that answers GET uri ("" when there is none).
func (h *Handler) File(uri string) string {
	p := strings.TrimSuffix(path.Clean("/"+strings.SplitN(uri, "?", 2)[0]), "/")
	rel, ok := strings.CutPrefix(p, "/redfish/v1")
	if !ok || strings.Contains(rel, "..") {
		return ""
	}
	for _, name := range []string{"index.json", "index.xml"} {
		f := filepath.Join(h.dir, filepath.FromSlash(rel), name)
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			return f
		}
	}
	return ""
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	h.mu.Lock()
	h.log = append(h.log, r.Method+" "+r.URL.RequestURI())
	h.mu.Unlock()
	p := strings.TrimSuffix(r.URL.Path, "/")
	w.Header().Set("OData-Version", "4.0")
	if h.opts.Intercept != nil && h.opts.Intercept(w, r) {
		return
	}
	if r.Method == http.MethodPost && p == SessionsURI {
		if !h.opts.Sessions {
			WriteError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "This service has no sessions: use Basic authentication.")
			return
		}
		h.login(w, r)
		return
	}
	if p != "/redfish/v1" && p != "/redfish" && !h.Authorized(r) {
		WriteError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "There is no valid session established with the implementation.")
		return
	}
	if h.opts.Sessions && r.Method == http.MethodDelete && strings.HasPrefix(p, SessionsURI+"/") {
		id := strings.TrimPrefix(p, SessionsURI+"/")
		h.mu.Lock()
		found := false
		for tok, sid := range h.sessions {
			if sid == id {
				delete(h.sessions, tok)
				found = true
			}
		}
		h.mu.Unlock()
		if !found {
			writeMissing(w, p)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		WriteError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "The mockup serves a capture: only GET is supported.")
		return
	}
	f := h.File(p)
	if f == "" {
		writeMissing(w, p)
		return
	}
	b, err := os.ReadFile(f)
	if err != nil {
		WriteError(w, http.StatusInternalServerError, "Base.1.8.InternalError", "The capture file could not be read.")
		return
	}
	if strings.HasSuffix(f, ".xml") {
		w.Header().Set("Content-Type", "application/xml")
	} else {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	_, _ = w.Write(b)
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	var body struct{ UserName, Password string }
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		WriteError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	if h.opts.Username != "" && (body.UserName != h.opts.Username || body.Password != h.opts.Password) {
		WriteError(w, http.StatusUnauthorized, "Base.1.8.InsufficientPrivilege", "The user name or password is not valid.")
		return
	}
	var rb [12]byte
	_, _ = rand.Read(rb[:])
	tok := hex.EncodeToString(rb[:])
	h.mu.Lock()
	id := tok[:8]
	h.sessions[tok] = id
	h.mu.Unlock()
	uri := SessionsURI + "/" + id
	w.Header().Set("X-Auth-Token", tok)
	w.Header().Set("Location", uri)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	raw, _ := json.Marshal(map[string]any{"@odata.id": uri, "@odata.type": "#Session.v1_0_0.Session", "Id": id, "Name": "User Session", "UserName": body.UserName})
	_, _ = w.Write(raw)
}

// Authorized reports whether r carries valid credentials (always true
// when the handler has no Username).
func (h *Handler) Authorized(r *http.Request) bool {
	if h.opts.Username == "" {
		return true
	}
	if tok := r.Header.Get("X-Auth-Token"); tok != "" && h.opts.Sessions {
		h.mu.Lock()
		defer h.mu.Unlock()
		_, ok := h.sessions[tok]
		return ok
	}
	u, pw, ok := r.BasicAuth()
	return ok && u == h.opts.Username && pw == h.opts.Password
}

// Server is a Handler behind an httptest TLS server on 127.0.0.1.
type Server struct {
	*httptest.Server
	*Handler
}

// NewServer serves dir over TLS on 127.0.0.1 until the test ends.
func NewServer(t testing.TB, dir string, opts Options) *Server {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		t.Fatalf("mockup %s: no service root: %v", dir, err)
	}
	h := New(dir, opts)
	s := httptest.NewUnstartedServer(h)
	s.StartTLS()
	t.Cleanup(s.Close)
	return &Server{Server: s, Handler: h}
}
