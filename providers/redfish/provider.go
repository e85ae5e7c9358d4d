// Package redfish is rackform's built-in provider: it observes and upgrades
// servers through their BMCs' Redfish service, using gofish behind the
// narrow bmc interface, with the habits real BMCs need (one session per BMC,
// a per-BMC request limit, retries honouring Retry-After, tolerant task
// monitors, TLS verification on by default).
//
// Observe names what it found (providers.Outcome*): unreachable (nothing
// answered: connect, TLS, timeout), unusable_answer (the BMC answered, but
// without what the plan needs: 404 or another error status after retries,
// a body that is not JSON, no ComputerSystem; outcome.go names the request
// and the status), credentials_refused (401/403 to the
// session request and to one read with Basic auth, or on a read after one
// fresh login), inventory_unavailable (no inventory and
// no fallback version), system_unresolved (several Systems and none or a
// wrong one named; Observation.Systems lists them), each with one line made
// of the Redfish error's messages, never its raw body, with passwords
// scrubbed.
//
// Every inventory member has a state (members.go): active, or a copy beside
// the running image (previous, pending, available, standby, absent), read
// from Status.State, the vendors' signs and the Manager's and Bios'
// Links.ActiveSoftwareImage. Only where FirmwareInventory has no active
// member for them, ComputerSystem.BiosVersion is component "BIOS" (source
// system) and Manager.FirmwareVersion component "BMC" (source manager);
// updates of them name that System or Manager in Targets, and wait_ready
// reads them back from the same place. A rule means every active member it
// selects: one update names them all where the BMC takes a list of
// Targets, and wait_ready checks each. On a BMC with
// several Systems, members linked to a System (RelatedItem) or prefixed with
// its Id ("Node0.BIOS") belong to it, other systems' members are not
// reported, and the rest are Shared. Targets sharing an endpoint and
// credentials share one session; one transport serves every BMC.
//
// Update plans are decided at Observe from UpdateService and SimpleUpdate's
// ActionInfo (see plan.go for the order of preference), with the apply time
// only where the BMC lists it, and applied exactly.
package redfish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/internal/version"
	"github.com/rackform/rackform/providers"
)

// Name is the provider's name in configs and plugin handshakes.
const Name = "redfish"

// Options are the constructor's dependencies; the zero value is usable.
type Options struct {
	// Logger receives the provider's logs (stderr only in the plugin); it
	// never receives credentials. Default: discard.
	Logger hclog.Logger
	// Clock replaces real time in tests (waits, backoff, deadlines).
	Clock Clock
	// Transport, when set, replaces the TLS-configured HTTP transport under
	// the provider's retry and limit layer (tests: fault injection, counting).
	Transport http.RoundTripper
	// CountRequests keeps each BMC's request count for RequestCount (tests
	// and benchmarks). Without it nothing is kept of a BMC once its
	// connections are closed, so the provider's memory does not grow with
	// the servers it has read.
	CountRequests bool
}

// Provider implements providers.Provider over Redfish.
type Provider struct {
	log   hclog.Logger
	clock Clock
	base  http.RoundTripper
	count bool // Options.CountRequests

	mu sync.Mutex
	// stop is cancelled by Stop: every Observe, Apply and Task call derives
	// from it, so Stop ends work in flight before deleting sessions.
	stop       context.Context
	stopCancel context.CancelFunc
	cfg        config
	tr         *transport
	owned      *http.Transport // the transport Configure built, closed on Stop
	bmcs       map[string]*bmcEntry
	// hostUse counts bmcs' entries by BMC host (host:port), so a logout
	// asks in constant time whether another session still uses the host's
	// connections.
	hostUse map[string]int
	// reaping says a reap goroutine runs for the current stop context;
	// idleLogouts are the logouts it could not do, reported by Stop.
	reaping     bool
	idleLogouts providers.Diagnostics
	// applying says an Apply or Task call was made: from then on an
	// observation (the executor's check before a server's first step)
	// keeps its session for the steps that follow, until reap or Stop.
	applying bool
}

// bmcEntry is one BMC session (endpoint and credentials) and who uses it:
// refs counts the observations in flight on it, pinned says an Apply or a
// task call used it (kept, for reuse across steps, until Stop).
type bmcEntry struct {
	b      bmc
	key    string // its key in bmcs (keyOf)
	host   string // the BMC's host:port
	refs   int
	pinned bool
	// busy counts the Apply and Task calls in flight on a pinned entry;
	// used is when the last ended. A pinned entry idle for pinnedIdle is
	// logged out (see reap): its server's steps are over.
	busy int
	used time.Time
}

var _ providers.Provider = (*Provider)(nil)

// New returns an unconfigured provider; Configure must run before Observe,
// Apply or Task.
func New(opts Options) *Provider {
	p := &Provider{log: opts.Logger, clock: opts.Clock, base: opts.Transport, count: opts.CountRequests, bmcs: map[string]*bmcEntry{}, hostUse: map[string]int{}}
	p.stop, p.stopCancel = context.WithCancel(context.Background())
	if p.log == nil {
		p.log = hclog.NewNullLogger()
	}
	if p.clock == nil {
		p.clock = realClock{}
	}
	return p
}

// Describe implements providers.Provider.
func (p *Provider) Describe(context.Context) (*providers.Description, providers.Diagnostics) {
	return &providers.Description{
		Name:            Name,
		Version:         version.Version,
		ProtocolVersion: providers.ProtocolVersion,
		Schema:          append([]providers.Attribute(nil), schema...),
		Capabilities:    []string{"simple_update", "multipart_push", "http_push", "power", "reset", "reimage", "wait_ready", "task"},
	}, nil
}

// Configure implements providers.Provider. Reconfiguring drops the sessions
// made under the previous configuration.
func (p *Provider) Configure(ctx context.Context, req *providers.ConfigureRequest) providers.Diagnostics {
	cfg, diags := parseConfig(req.Config)
	if diags.HasErrors() {
		return diags
	}
	base := p.base
	var owned *http.Transport
	if base == nil {
		// One pool per BMC, holding at most one connection: every request
		// to a BMC rides one warm TLS connection (HTTP/2 streams where the
		// BMC offers HTTP/2, one request at a time otherwise), so a server
		// costs one handshake, and its pool is closed after its logout.
		owned = &http.Transport{
			Proxy:                 nil, // BMC networks are direct; never send credentials through a proxy
			DialContext:           (&net.Dialer{Timeout: min(cfg.Timeout, 10*time.Second), KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:       cfg.tlsConfig(),
			TLSHandshakeTimeout:   min(cfg.Timeout, 10*time.Second),
			ForceAttemptHTTP2:     true,
			MaxConnsPerHost:       1,
			MaxIdleConnsPerHost:   1,
			IdleConnTimeout:       60 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
	}
	tr := newTransport(base, retryPolicy{MaxAttempts: cfg.MaxAttempts, BaseDelay: cfg.BaseDelay, MaxDelay: cfg.MaxDelay},
		cfg.Timeout, cfg.PerBMCLimit, p.clock, p.log)
	if p.count {
		tr.counts = map[string]int64{}
	}
	if owned != nil {
		// Redfish requests are a few hundred bytes and answers are read
		// in large reads: small buffers serve them as well as net/http's
		// 4 KiB ones, and at thousands of connections at once their
		// memory is a tenth of the plugin's. Uploads keep the defaults.
		small := owned.Clone()
		small.ReadBufferSize, small.WriteBufferSize = 2<<10, 1<<10
		tr.perHost = func(bulk bool) *http.Transport {
			if bulk {
				return owned.Clone()
			}
			return small.Clone()
		}
	}

	p.mu.Lock()
	old, oldOwned := p.bmcs, p.owned
	oldTr := p.tr
	p.cfg, p.tr, p.owned, p.bmcs, p.hostUse = cfg, tr, owned, map[string]*bmcEntry{}, map[string]int{}
	p.mu.Unlock()
	p.closeAll(ctx, old, oldOwned, oldTr)
	p.log.Debug("configured", "concurrency", cfg.Concurrency, "per_bmc_limit", cfg.PerBMCLimit, "insecure", cfg.Insecure)
	return diags
}

// Stop implements providers.Provider: it deletes every session this provider
// made. In-flight calls end through their own contexts.
func (p *Provider) Stop(ctx context.Context) providers.Diagnostics {
	p.mu.Lock()
	old, owned, tr := p.bmcs, p.owned, p.tr
	p.bmcs, p.hostUse, p.owned = map[string]*bmcEntry{}, map[string]int{}, nil
	p.stopCancel()
	// A stopped provider may be configured and used again.
	p.stop, p.stopCancel = context.WithCancel(context.Background())
	p.reaping, p.applying = false, false
	failed := p.idleLogouts
	p.idleLogouts = nil
	p.mu.Unlock()
	return append(failed, p.closeAll(ctx, old, owned, tr)...)
}

// errStopped is the cause of contexts ended by Stop.
var errStopped = errors.New("the provider was stopped")

// call derives a call's context from ctx that Stop also ends.
func (p *Provider) call(ctx context.Context) (context.Context, context.CancelFunc) {
	p.mu.Lock()
	stop := p.stop
	p.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(stop, func() { cancel(errStopped) })
	return ctx, func() { unhook(); cancel(nil) }
}

func (p *Provider) closeAll(ctx context.Context, bmcs map[string]*bmcEntry, owned *http.Transport, tr *transport) providers.Diagnostics {
	diags := p.logoutAll(ctx, tr, slices.Collect(maps.Values(bmcs)))
	if owned != nil {
		owned.CloseIdleConnections()
	}
	if tr != nil {
		tr.closeIdle("")
	}
	return diags
}

// logoutTimeout bounds one logout attempt; a logout runs even when the
// call that made the session was interrupted.
const logoutTimeout = 10 * time.Second

// logout deletes b's session, retrying once: a session left open on a BMC
// that allows a handful locks operators out.
func logout(ctx context.Context, b bmc) error {
	ctx = context.WithoutCancel(ctx)
	var err error
	for range 2 {
		actx, cancel := context.WithTimeout(ctx, logoutTimeout)
		err = b.Close(actx)
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

func (p *Provider) logoutFailed(endpoint string, err error) providers.Diagnostic {
	return providers.Diagnostic{Severity: providers.Warning, Summary: "Could not delete the BMC session",
		Detail: p.scrub("BMC " + endpoint + ": the session could not be deleted (tried twice), so it stays open until the BMC times it out: " + describe(err)),
		Server: endpoint}
}

// RequestCount reports how many HTTP requests (attempts included) went to
// the BMC at endpoint since Configure; benchmarks and tests use it. It is
// -1 unless Options.CountRequests was set.
func (p *Provider) RequestCount(endpoint string) int64 {
	if !p.count {
		return -1
	}
	p.mu.Lock()
	tr := p.tr
	p.mu.Unlock()
	if tr == nil {
		return 0
	}
	return tr.requests(hostOf(endpoint))
}

// bmcFor returns the connection to t's BMC under t's credentials, kept
// (pinned) so an Apply's steps and task polls reuse its session.
func (p *Provider) bmcFor(t providers.Target) (bmc, config, error) {
	b, cfg, done, err := p.use(t)
	if err == nil {
		done()
	}
	return b, cfg, err
}

// use is bmcFor for one Apply or Task call: the session stays while calls
// use it, and done marks it idle. A session idle for pinnedIdle (its
// server's steps are over) is logged out by reap, so an apply of a large
// fleet holds sessions and connections only for the servers in progress.
func (p *Provider) use(t providers.Target) (bmc, config, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, err := p.entryLocked(t)
	if err != nil {
		return nil, p.cfg, nil, err
	}
	e.pinned = true
	e.busy++
	p.applying = true
	if !p.reaping {
		p.reaping = true
		go p.reap(p.stop)
	}
	return e.b, p.cfg, func() {
		p.mu.Lock()
		e.busy--
		e.used = p.clock.Now()
		p.mu.Unlock()
	}, nil
}

// pinnedIdle is how long an apply's session may sit unused before it is
// logged out (at least three poll intervals: a step polling its task or
// its server keeps it in use).
const pinnedIdle = 30 * time.Second

// reap logs out idle pinned sessions until ctx (the provider's stop)
// ends. It looks in real time (a test's clock only moves when slept on),
// and measures idleness on the provider's clock.
func (p *Provider) reap(ctx context.Context) {
	for {
		p.mu.Lock()
		every := max(pinnedIdle, 3*p.cfg.PollInterval) / 4
		p.mu.Unlock()
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		p.reapIdle(ctx, p.clock.Now())
	}
}

// reapIdle logs out, at once, every pinned session no call has used since
// before now less the idle time; a logout that fails twice is kept for
// Stop to report.
func (p *Provider) reapIdle(ctx context.Context, now time.Time) {
	var gone []*bmcEntry
	p.mu.Lock()
	limit := max(pinnedIdle, 3*p.cfg.PollInterval)
	for _, e := range p.bmcs {
		if e.pinned && e.busy == 0 && e.refs == 0 && now.Sub(e.used) >= limit {
			p.dropLocked(e)
			gone = append(gone, e)
		}
	}
	tr := p.tr
	p.mu.Unlock()
	p.logoutDropped(ctx, tr, gone)
}

// endSession logs t's session out now, unless another call is using it:
// the caller said the step just done was the server's last in this run
// (ApplyRequest.Last), so its session and connection need not wait
// pinnedIdle for reap. A later call for the server logs in again.
func (p *Provider) endSession(ctx context.Context, t providers.Target) {
	p.mu.Lock()
	e := p.bmcs[p.keyOf(t)]
	if e == nil || e.busy > 0 || e.refs > 0 {
		p.mu.Unlock()
		return
	}
	p.dropLocked(e)
	tr := p.tr
	p.mu.Unlock()
	p.logoutDropped(ctx, tr, []*bmcEntry{e})
}

// logoutDropped logs out the sessions gone (logoutAll); a logout that
// fails twice is kept for Stop to report.
func (p *Provider) logoutDropped(ctx context.Context, tr *transport, gone []*bmcEntry) {
	failed := p.logoutAll(ctx, tr, gone)
	for _, d := range failed {
		p.log.Warn("could not delete a BMC session its server no longer uses", "bmc", d.Server, "error", d.Detail)
	}
	p.mu.Lock()
	p.idleLogouts = append(p.idleLogouts, failed...)
	p.mu.Unlock()
}

// logoutAll logs out the sessions gone, all at once so that none is cut
// short by the caller's deadline (logouts are small and each BMC has its
// own connection), and closes their hosts' connections; the logouts that
// failed twice are returned.
func (p *Provider) logoutAll(ctx context.Context, tr *transport, gone []*bmcEntry) providers.Diagnostics {
	var (
		mu     sync.Mutex
		failed providers.Diagnostics
		wg     sync.WaitGroup
	)
	for _, e := range gone {
		wg.Go(func() {
			err := logout(ctx, e.b)
			p.closeHostIfUnused(tr, e.host)
			if err != nil {
				mu.Lock()
				failed = append(failed, p.logoutFailed(endpointOf(e.key), err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return failed
}

// closeHostIfUnused closes host's connections unless another session to
// it is still in use.
func (p *Provider) closeHostIfUnused(tr *transport, host string) {
	p.mu.Lock()
	used := p.hostUse[host] > 0
	p.mu.Unlock()
	if !used && tr != nil {
		tr.closeIdle(host)
	}
}

// dropLocked removes e from bmcs (p.mu held).
func (p *Provider) dropLocked(e *bmcEntry) {
	delete(p.bmcs, e.key)
	if p.hostUse[e.host]--; p.hostUse[e.host] <= 0 {
		delete(p.hostUse, e.host)
	}
}

// acquire returns the connection to t's BMC for one observation; release
// logs out right away on the same connection unless another observation
// is using the session or an Apply pinned it. A logout that failed twice
// is returned as a diagnostic.
func (p *Provider) acquire(t providers.Target) (bmc, func(context.Context) *providers.Diagnostic, error) {
	p.mu.Lock()
	e, err := p.entryLocked(t)
	if err != nil {
		p.mu.Unlock()
		return nil, nil, err
	}
	e.refs++
	if p.applying {
		// An apply observes a server right before its steps: they reuse
		// this session and connection (reap logs it out once idle).
		e.pinned = true
	}
	tr := p.tr
	p.mu.Unlock()
	release := func(ctx context.Context) *providers.Diagnostic {
		p.mu.Lock()
		e.refs--
		e.used = p.clock.Now()
		last := e.refs == 0 && !e.pinned && p.bmcs[e.key] == e
		if last {
			p.dropLocked(e)
		}
		p.mu.Unlock()
		if !last {
			return nil
		}
		err := logout(ctx, e.b)
		p.closeHostIfUnused(tr, e.host)
		if err != nil {
			d := p.logoutFailed(endpointOf(e.key), err)
			d.Server = t.Name
			return &d
		}
		return nil
	}
	return e.b, release, nil
}

func hostOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return u.Host
}

// keyOf is t's session key (p.mu held); "" when the endpoint is bad.
func (p *Provider) keyOf(t providers.Target) string {
	_, _, key, _ := p.sessionOf(t)
	return key
}

// sessionOf is t's BMC endpoint, credentials and session key (p.mu held):
// endpoint, user and the password's hash.
func (p *Provider) sessionOf(t providers.Target) (endpoint string, creds providers.Credentials, key string, err error) {
	endpoint, err = cleanEndpoint(t.Endpoint)
	if err != nil {
		return "", creds, "", err
	}
	creds = providers.Credentials{Username: p.cfg.Username, Password: p.cfg.Password}
	if t.Credentials != nil {
		creds = *t.Credentials
	}
	pw := sha256.Sum256([]byte(creds.Password))
	return endpoint, creds, endpoint + "\x00" + creds.Username + "\x00" + hex.EncodeToString(pw[:]), nil
}

// entryLocked finds or makes t's entry (p.mu held).
func (p *Provider) entryLocked(t providers.Target) (*bmcEntry, error) {
	if p.tr == nil {
		return nil, fmt.Errorf("the provider is not configured")
	}
	endpoint, creds, key, err := p.sessionOf(t)
	if err != nil {
		return nil, err
	}
	// One session and connection per BMC endpoint and credentials: targets
	// sharing both (several systems behind one BMC) share them; other
	// credentials for the same BMC never ride on a session they did not
	// open. The password is keyed by its hash, never kept in clear here.
	e := p.bmcs[key]
	if e == nil {
		e = &bmcEntry{b: newGofishBMC(endpoint, creds, t.Auth, p.tr, p.cfg.PerBMCLimit), key: key, host: hostOf(endpoint)}
		p.bmcs[key] = e
		p.hostUse[e.host]++
	}
	return e, nil
}

// cleanEndpoint checks a BMC URL and strips any user info, which must never
// travel into requests' error messages.
func cleanEndpoint(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("the BMC endpoint is not an http(s) URL")
	}
	u.User = nil
	u.Path, u.RawQuery, u.Fragment = strings.TrimSuffix(u.Path, "/"), "", ""
	if u.Path == "/redfish/v1" {
		u.Path = ""
	}
	return u.String(), nil
}

func endpointOf(key string) string {
	e, _, _ := strings.Cut(key, "\x00")
	return e
}

// scrub removes the configured password from a message. Errors are built
// not to carry credentials; this is the belt to those braces, since a BMC
// may echo a request body in an error.
func (p *Provider) scrub(s string) string {
	p.mu.Lock()
	pw := p.cfg.Password
	p.mu.Unlock()
	if len(pw) >= 3 {
		s = strings.ReplaceAll(s, pw, "***")
	}
	return s
}
