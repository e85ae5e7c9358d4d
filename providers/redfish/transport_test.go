package redfish

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/providers"
)

// fakeClock advances only when slept on, recording each sleep.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"5", 5 * time.Second, true},
		{" 0 ", 0, true},
		{"-3", 0, false},
		{"soon", 0, false},
		{"Sat, 21 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sat, 21 Nov 2026 11:59:00 GMT", 0, true}, // in the past: retry now
		{"99999999999999", 0, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := parseRetryAfter(c.in, now)
			if got != c.want || ok != c.ok {
				t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestBackoffBounds(t *testing.T) {
	p := retryPolicy{MaxAttempts: 10, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	nominal := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, nom := range nominal {
		nom *= time.Millisecond
		for _, rnd := range []func(int64) int64{func(int64) int64 { return 0 }, func(n int64) int64 { return n - 1 }} {
			d := p.backoff(i+1, rnd)
			if d < nom/2 || d > nom {
				t.Errorf("backoff(%d) = %v, want within [%v, %v]", i+1, d, nom/2, nom)
			}
		}
	}
}

// scripted answers each request with the next status (the last repeats).
type scripted struct {
	mu         sync.Mutex
	statuses   []int
	retryAfter string
	calls      int
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	st := s.statuses[min(s.calls, len(s.statuses)-1)]
	s.calls++
	s.mu.Unlock()
	if st == http.StatusServiceUnavailable && s.retryAfter != "" {
		w.Header().Set("Retry-After", s.retryAfter)
	}
	w.WriteHeader(st)
}

func TestTransportRetries(t *testing.T) {
	cases := []struct {
		name       string
		method     string
		statuses   []int
		retryAfter string
		wantStatus int
		wantCalls  int
		wantSleeps []time.Duration
	}{
		{"503 then OK honours Retry-After seconds", "GET", []int{503, 503, 200}, "3", 200, 3, []time.Duration{3 * time.Second, 3 * time.Second}},
		{"Retry-After beyond the cap waits the cap", "GET", []int{503, 200}, "120", 200, 2, []time.Duration{10 * time.Second}},
		{"always busy gives up after max attempts", "GET", []int{503}, "1", 503, 4, []time.Duration{time.Second, time.Second, time.Second}},
		{"POST retried on 503 (the BMC did not act)", "POST", []int{503, 202}, "2", 202, 2, []time.Duration{2 * time.Second}},
		{"POST not retried on 500 (the BMC may have acted)", "POST", []int{500, 202}, "", 500, 1, nil},
		{"GET retried on 500", "GET", []int{500, 200}, "", 200, 2, []time.Duration{-1}},
		{"404 is an answer, not a failure", "GET", []int{404, 200}, "", 404, 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := &scripted{statuses: c.statuses, retryAfter: c.retryAfter}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			clock := newFakeClock()
			tr := newTransport(http.DefaultTransport, retryPolicy{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 10 * time.Second}, 5*time.Second, 2, clock, hclog.NewNullLogger())
			req, _ := http.NewRequest(c.method, ts.URL+"/redfish/v1/x", strings.NewReader("{}"))
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.wantStatus || srv.calls != c.wantCalls {
				t.Errorf("status %d after %d calls; want %d after %d", resp.StatusCode, srv.calls, c.wantStatus, c.wantCalls)
			}
			if got := tr.requests(strings.TrimPrefix(ts.URL, "http://")); got != int64(c.wantCalls) {
				t.Errorf("counted %d requests, want %d", got, c.wantCalls)
			}
			sleeps := clock.slept()
			if len(c.wantSleeps) == 1 && c.wantSleeps[0] == -1 { // backoff with jitter: check the bounds
				if len(sleeps) != 1 || sleeps[0] < 500*time.Millisecond || sleeps[0] > time.Second {
					t.Errorf("sleeps %v, want one backoff in [0.5s, 1s]", sleeps)
				}
				return
			}
			if diff := cmp.Diff(c.wantSleeps, sleeps); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransportRetryAfterDate(t *testing.T) {
	srv := &scripted{statuses: []int{503, 200}, retryAfter: time.Now().Add(6 * time.Second).UTC().Format(http.TimeFormat)}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	clock := newFakeClock()
	tr := newTransport(http.DefaultTransport, retryPolicy{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Minute}, time.Second, 2, clock, hclog.NewNullLogger())
	resp, err := (&http.Client{Transport: tr}).Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s := clock.slept()
	if len(s) != 1 || s[0] < 4*time.Second || s[0] > 7*time.Second {
		t.Errorf("slept %v, want about 6s from the Retry-After date", s)
	}
}

func TestTransportConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	clock := newFakeClock()
	tr := newTransport(http.DefaultTransport, retryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 4 * time.Second}, time.Second, 2, clock, hclog.NewNullLogger())
	req, _ := http.NewRequest("POST", "http://"+addr+"/redfish/v1/SessionService/Sessions", strings.NewReader("{}"))
	_, err = (&http.Client{Transport: tr}).Do(req)
	if err == nil || !isDialError(err) {
		t.Fatalf("err = %v, want a dial error", err)
	}
	if n := tr.requests(addr); n != 3 {
		t.Errorf("%d attempts, want 3 (a refused POST is safe to repeat)", n)
	}
}

func TestTransportPerBMCLimit(t *testing.T) {
	var inFlight, peak atomic.Int64
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
	}))
	defer ts.Close()
	tr := newTransport(http.DefaultTransport, retryPolicy{MaxAttempts: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}, 10*time.Second, 3, realClock{}, hclog.NewNullLogger())
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := client.Get(ts.URL); err == nil {
				resp.Body.Close()
			}
		}()
	}
	// Let the first wave arrive, then release everyone.
	deadline := time.Now().Add(5 * time.Second)
	for inFlight.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p != 3 {
		t.Errorf("peak of %d requests in flight to one BMC, want the limit 3", p)
	}
}

// A GET answered 200 with a body that is not the JSON it claims is retried
// like a 5xx: one garbled reply does not make a BMC unreachable. A POST's
// is not (the BMC answered, so it may have acted).
func TestTransportRetriesMalformedJSON(t *testing.T) {
	for _, c := range []struct {
		name      string
		method    string
		bad       int // answers that are garbled before good ones
		wantCalls int
		wantValid bool
	}{
		{"once, then good", "GET", 1, 2, true},
		{"always: the last answer is passed on", "GET", 100, 4, false},
		{"POST not retried", "POST", 1, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int64
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				w.Header().Set("Content-Type", "application/json")
				if int(n) <= c.bad {
					_, _ = w.Write([]byte(`{"@odata.id": "/redfish/v1/", "Systems": {"@odata.id": `))
					return
				}
				_, _ = w.Write([]byte(`{"@odata.id": "/redfish/v1/"}`))
			}))
			defer ts.Close()
			tr := newTransport(http.DefaultTransport, retryPolicy{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 10 * time.Second}, 5*time.Second, 2, newFakeClock(), hclog.NewNullLogger())
			req, _ := http.NewRequest(c.method, ts.URL+"/redfish/v1/", nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if int(calls.Load()) != c.wantCalls || json.Valid(b) != c.wantValid {
				t.Errorf("%d calls, body %q; want %d calls, valid %v", calls.Load(), b, c.wantCalls, c.wantValid)
			}
		})
	}
}

// TestNothingKeptOfABMCOnceRead: once a server is observed and its session
// deleted, the provider keeps no state of its BMC (a fleet's plan would
// otherwise grow the plugin's memory with every server read), unless
// asked to count requests, when only the count stays.
func TestNothingKeptOfABMCOnceRead(t *testing.T) {
	for _, count := range []bool{false, true} {
		m := newMockupServer(t, "dmtf/public-rackmount1")
		p := configure(t, Options{CountRequests: count}, map[string]any{"ca_bundle": caPEM(m)})
		if o := observeAll(t, p, providers.Target{Name: "s1", Endpoint: m.URL})[0]; !o.Reachable {
			t.Fatalf("not observed: %v", o.Diagnostics.Err())
		}
		p.mu.Lock()
		tr := p.tr
		p.mu.Unlock()
		tr.mu.Lock()
		hosts := len(tr.hosts)
		tr.mu.Unlock()
		if hosts != 0 {
			t.Errorf("count %v: the transport keeps the state of %d BMCs after their servers were read, want none", count, hosts)
		}
		switch n := p.RequestCount(m.URL); {
		case count && n < 3:
			t.Errorf("counting: %d requests counted for an observation (service root, session, system ...)", n)
		case !count && n != -1:
			t.Errorf("not counting: RequestCount = %d, want -1", n)
		}
	}
}
