package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testUser = "admin"
	testPass = "sim-test-password"
)

// clock is a settable clock: tests move simulated time instead of sleeping.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// start serves specs (addresses default to 127.0.0.1:0) and closes the
// fleet when the test ends.
func start(t testing.TB, opts Options, specs ...BMCSpec) *Fleet {
	t.Helper()
	if opts.Username == "" {
		opts.Username, opts.Password = testUser, testPass
	}
	for i := range specs {
		if specs[i].Addr == "" {
			specs[i].Addr = "127.0.0.1:0"
		}
	}
	f, err := New(opts, specs)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// one starts a single BMC named "s1" with profile p and returns its base URL.
func one(t testing.TB, opts Options, p string) (*Fleet, string) {
	t.Helper()
	f := start(t, opts, BMCSpec{Name: "s1", Profile: p, PowerOn: true})
	return f, f.BMCs()[0].URL
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.body)
	}
	return m
}

var client = &http.Client{Timeout: 10 * time.Second}

// call sends a request with Basic auth (unless auth is false) and a JSON body.
func call(t testing.TB, method, url string, body any, auth bool) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.SetBasicAuth(testUser, testPass)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, raw}
}

func get(t testing.TB, url string) map[string]any {
	t.Helper()
	r := call(t, "GET", url, nil, true)
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", url, r.status, r.body)
	}
	return r.json(t)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func hasPrefix(s, p string) bool { return strings.HasPrefix(s, p) }

// plainPush posts body to a BMC's HttpPushUri (url) as an image named name
// (X-Image-Name), with Basic auth, and returns the response (closed).
func plainPush(t testing.TB, url, name, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("X-Image-Name", name)
	req.SetBasicAuth(testUser, testPass)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("push %s to %s: %v", name, url, err)
	}
	resp.Body.Close()
	return resp
}
