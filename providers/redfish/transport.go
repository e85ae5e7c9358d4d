package redfish

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Clock is the provider's view of time, replaceable in tests so waits,
// backoff and deadlines run without sleeping.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, returning ctx.Err() then.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryPolicy bounds how the transport retries one request.
type retryPolicy struct {
	MaxAttempts int
	BaseDelay   time.Duration
	MaxDelay    time.Duration
}

// backoff is the wait before attempt n+1 (n ≥ 1): exponential with "equal
// jitter", so many clients hitting one busy BMC spread out but each still
// waits at least half the nominal delay.
func (p retryPolicy) backoff(n int, rnd func(int64) int64) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	half := int64(d / 2)
	if half <= 0 {
		return d
	}
	return time.Duration(half + rnd(half+1))
}

// parseRetryAfter reads a Retry-After header: delta seconds or an HTTP date.
// ok is false when the header is absent or unreadable.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 || n > 1<<31 {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		d = 0
	}
	return d, true
}

// hostState is the per-BMC part of the transport.
type hostState struct {
	sem      chan struct{}
	requests atomic.Int64
	// rt is the BMC's own connection pool (nil: the shared base); bulk
	// carries image uploads, so a minutes-long upload never holds the one
	// connection other requests to the BMC (task polls) wait for.
	rt, bulk *http.Transport
}

// transport sits under every gofish request. It is where the real-BMC rules
// that apply to any request live: a per-BMC limit on requests in flight, a
// per-attempt timeout, retries with backoff on 503/busy, connection errors
// and malformed JSON answers honouring Retry-After, and a request count per
// BMC.
type transport struct {
	base    http.RoundTripper
	policy  retryPolicy
	timeout time.Duration
	limit   int
	clock   Clock
	log     hclog.Logger

	// perHost, when set, makes each BMC's connection pool (bulk: the
	// uploads' one); otherwise every BMC shares base (a transport injected
	// by tests).
	perHost func(bulk bool) *http.Transport

	mu    sync.Mutex
	hosts map[string]*hostState
	// counts, when set, keeps the request count of a BMC whose state
	// closeIdle dropped (Options.CountRequests: tests and benchmarks).
	counts map[string]int64
	rnd    func(int64) int64
}

func newTransport(base http.RoundTripper, policy retryPolicy, timeout time.Duration, limit int, clock Clock, log hclog.Logger) *transport {
	return &transport{
		base: base, policy: policy, timeout: timeout, limit: max(limit, 1), clock: clock, log: log,
		hosts: map[string]*hostState{},
		rnd:   rand.Int64N,
	}
}

func (t *transport) host(h string) *hostState {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.hosts[h]
	if s == nil {
		s = &hostState{sem: make(chan struct{}, t.limit)}
		t.hosts[h] = s
	}
	return s
}

// closeIdle closes the idle connections of host's pool ("": every pool),
// and drops the pool so its memory goes. A host's state goes too when no
// request to it is in flight (its count to counts, when kept): a plan of
// 100,000 servers otherwise held 25 MB of it to the end, and the plugin's
// collector marks all of it on every cycle, under a fixed memory limit.
func (t *transport) closeIdle(host string) {
	t.mu.Lock()
	var pools []*http.Transport
	drop := func(s *hostState) {
		for _, rt := range []*http.Transport{s.rt, s.bulk} {
			if rt != nil {
				pools = append(pools, rt)
			}
		}
		s.rt, s.bulk = nil, nil
	}
	if host == "" {
		for _, s := range t.hosts {
			drop(s)
		}
	} else if s := t.hosts[host]; s != nil {
		drop(s)
		if len(s.sem) == 0 {
			delete(t.hosts, host)
			if t.counts != nil {
				t.counts[host] += s.requests.Load()
			}
		}
	}
	t.mu.Unlock()
	for _, rt := range pools {
		rt.CloseIdleConnections()
	}
}

// pool is h's connection pool (bulk: the uploads' one), made again if
// closeIdle dropped it.
func (t *transport) pool(h *hostState, bulk bool) *http.Transport {
	if t.perHost == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	pool := &h.rt
	if bulk {
		pool = &h.bulk
	}
	if *pool == nil {
		*pool = t.perHost(bulk)
	}
	return *pool
}

// requests is how many HTTP requests went to host (host:port) so far:
// those of its current state, and those counts kept of the ones dropped.
func (t *transport) requests(host string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.counts[host]
	if s := t.hosts[host]; s != nil {
		n += s.requests.Load()
	}
	return n
}

type ctxKey int

const noAttemptTimeoutKey ctxKey = 1

// withoutAttemptTimeout marks requests (image uploads) that may take longer
// than one request timeout; the step's own context bounds them instead.
func withoutAttemptTimeout(ctx context.Context) context.Context {
	return context.WithValue(ctx, noAttemptTimeoutKey, true)
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	h := t.host(req.URL.Host)
	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			r = req.Clone(ctx)
			if req.Body != nil && req.Body != http.NoBody {
				b, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = b
			}
		}
		select {
		case h.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		h.requests.Add(1)
		actx, cancel := ctx, context.CancelFunc(func() {})
		if t.timeout > 0 && ctx.Value(noAttemptTimeoutKey) == nil {
			actx, cancel = context.WithTimeout(ctx, t.timeout)
		}
		base := t.base
		if rt := t.pool(h, ctx.Value(noAttemptTimeoutKey) != nil); rt != nil {
			base = rt
		}
		resp, err := base.RoundTrip(r.WithContext(actx))
		<-h.sem

		retry, why := t.shouldRetry(req, resp, err)
		if !retry && err == nil && !isSelfChecked(ctx) && malformedJSON(req, resp) {
			retry, why = true, "malformed JSON"
		}
		if !retry || attempt >= t.policy.MaxAttempts || ctx.Err() != nil {
			if err != nil {
				cancel()
				if ctx.Err() == nil && actx.Err() == context.DeadlineExceeded {
					return nil, &attemptTimeoutError{after: t.timeout, attempts: attempt}
				}
				return nil, err
			}
			resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		}
		wait := t.policy.backoff(attempt, t.rnd)
		if resp != nil {
			if ra, ok := parseRetryAfter(resp.Header.Get("Retry-After"), t.clock.Now()); ok {
				wait = min(ra, t.policy.MaxDelay)
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		cancel()
		t.log.Debug("retrying BMC request", "host", req.URL.Host, "method", req.Method, "path", req.URL.Path, "attempt", attempt, "why", why, "wait", wait)
		if err := t.clock.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// shouldRetry decides whether a failed attempt may be repeated. A POST is
// repeated only when the BMC provably did not act on it (it refused the
// connection, or answered 503/429): starting a firmware update twice is
// worse than reporting an error.
func (t *transport) shouldRetry(req *http.Request, resp *http.Response, err error) (bool, string) {
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	if !replayable {
		return false, ""
	}
	idempotent := req.Method != http.MethodPost
	if err != nil {
		if req.Context().Err() != nil {
			return false, ""
		}
		if isCertError(err) {
			// A certificate does not become trusted by asking again.
			return false, ""
		}
		if isDialError(err) {
			return true, "connection refused"
		}
		return idempotent, "connection error"
	}
	switch resp.StatusCode {
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		return true, resp.Status
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return idempotent, resp.Status
	}
	return false, ""
}

// maxJSONCheck bounds the body malformedJSON reads: Redfish documents are
// far smaller; a larger body is passed on unchecked.
const maxJSONCheck = 4 << 20

// malformedJSON reports whether resp, a success answer to a GET, says it is
// JSON but is not (a BMC that cut its answer short or garbled it): such an
// answer is retried like a 5xx before the caller sees it, so one bad reply
// does not make a server "unreachable". The body is read and put back. A
// POST is never retried for it: the BMC answered, so it may have acted.
func malformedJSON(req *http.Request, resp *http.Response) bool {
	if req.Method != http.MethodGet || resp.StatusCode < 200 || resp.StatusCode > 299 ||
		!strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "json") {
		return false
	}
	body := resp.Body
	b, err := io.ReadAll(io.LimitReader(body, maxJSONCheck+1))
	if len(b) > maxJSONCheck {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), body), body}
		return false
	}
	body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	// A body cut off by the connection is as bad as a garbled one.
	return err != nil || (len(bytes.TrimSpace(b)) > 0 && !json.Valid(b))
}

func isCertError(err error) bool {
	var (
		ua x509.UnknownAuthorityError
		he x509.HostnameError
		ci x509.CertificateInvalidError
		cv *tls.CertificateVerificationError
	)
	return errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci) || errors.As(err, &cv)
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// attemptTimeoutError replaces the context error of a timed-out attempt,
// which would otherwise read like a cancellation by the caller.
type attemptTimeoutError struct {
	after    time.Duration
	attempts int
}

func (e *attemptTimeoutError) Error() string {
	return "no answer within " + e.after.String() + " (" + strconv.Itoa(e.attempts) + " attempts)"
}

func (e *attemptTimeoutError) Timeout() bool { return true }

// cancelBody releases the attempt's timeout context once gofish has read
// the response.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
