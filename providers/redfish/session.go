package redfish

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rackform/rackform/providers"
)

// standardSessionsURI is where Redfish 1.6+ mandates the session
// collection; used when the service root does not link it.
const standardSessionsURI = "/redfish/v1/SessionService/Sessions"

// loginGrace is how long a login in flight may still finish after its
// caller was interrupted, so that its session can be deleted.
const loginGrace = 500 * time.Millisecond

// gofishBMC implements bmc on gofish. gofish does the Redfish work (service
// root, sessions, typed resources, collections with $expand and fallback);
// authentication headers are added by authTransport below gofish, so the
// session token can be replaced after a BMC reset without rebuilding
// everything, and the provider decides between sessions and Basic auth.
type gofishBMC struct {
	endpoint string
	creds    providers.Credentials
	client   *http.Client
	limit    int
	// want is the authentication asked for (providers.Target.Auth): ""
	// decides (a session, else Basic), the others are what plan found.
	want string

	mu  sync.Mutex // guards connecting and the fields below
	api *gofish.APIClient
	gen int // bumped on every (re)connect, so one 401 re-creates the session once
	// sessionURI is the session to delete on Close; "" with Basic auth.
	sessionURI string
	// systemURIs caches the System each selector (Target.System, "" for
	// the only one) resolved to; managerURI the Manager of the BMC.
	systemURIs map[string]string
	managerURI string
	systemIDs  []string
	// inventories are the FirmwareInventory and SoftwareInventory links.
	inventories []string
	// usCall is the UpdateService read in flight, shared by its callers.
	usCall *usRead

	// multiplexed says the BMC's last answer came over HTTP/2, where
	// requests made at once are answered at once (Serial).
	multiplexed atomic.Bool

	authMu sync.RWMutex
	token  string
	// useBasic makes authTransport send Basic credentials (sessions unsupported).
	useBasic bool
}

func newGofishBMC(endpoint string, creds providers.Credentials, want string, next http.RoundTripper, limit int) *gofishBMC {
	b := &gofishBMC{endpoint: endpoint, creds: creds, want: want, limit: limit, systemURIs: map[string]string{}}
	b.client = &http.Client{
		Transport: &authTransport{next: next, b: b},
		// A BMC redirecting elsewhere is not followed: credentials stay with the BMC.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return b
}

// authTransport adds the session token (or Basic credentials when the BMC
// has no session service) to each request.
type authTransport struct {
	next http.RoundTripper
	b    *gofishBMC
}

func (a *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	a.b.authMu.RLock()
	token, basic := a.b.token, a.b.useBasic
	a.b.authMu.RUnlock()
	r := req
	if token != "" || basic {
		r = a.withAuth(req, token, basic)
	}
	resp, err := a.next.RoundTrip(r)
	if err == nil {
		a.b.multiplexed.Store(resp.ProtoMajor >= 2)
	}
	return resp, err
}

// withAuth is req with the session token or Basic credentials added.
func (a *authTransport) withAuth(req *http.Request, token string, basic bool) *http.Request {
	// A shallow copy with its own Header, not req.Clone: nothing below
	// changes the URL, the body or the header values gofish set.
	r := req.WithContext(req.Context())
	r.Header = make(http.Header, len(req.Header)+1)
	maps.Copy(r.Header, req.Header)
	if basic {
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(a.b.creds.Username+":"+a.b.creds.Password)))
	} else {
		r.Header.Set("X-Auth-Token", token)
	}
	return r
}

func (b *gofishBMC) setAuth(token string, basic bool) {
	b.authMu.Lock()
	b.token, b.useBasic = token, basic
	b.authMu.Unlock()
}

func (b *gofishBMC) Serial() (serial, connected bool) {
	b.mu.Lock()
	connected = b.api != nil
	b.mu.Unlock()
	return connected && !b.multiplexed.Load(), connected
}

// conn returns the connected client, connecting (service root + session)
// on first use.
func (b *gofishBMC) conn(ctx context.Context) (*gofish.APIClient, int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.api != nil {
		return b.api.WithContext(ctx), b.gen, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	// A login once started is given loginGrace to finish after ctx ends: a
	// BMC may make the session though the caller stopped listening, and
	// only a session whose answer was read can be deleted. A BMC that does
	// not answer within the grace does not hold up an interrupted plan.
	// The service root is decoded by gofish: the transport checks it.
	uctx, ucancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), selfCheckedKey, false))
	defer ucancel()
	stopGrace := context.AfterFunc(ctx, func() { time.AfterFunc(loginGrace, ucancel) })
	defer stopGrace()
	api, err := gofish.ConnectContext(uctx, gofish.ClientConfig{
		Endpoint:              b.endpoint,
		HTTPClient:            b.client,
		ReuseConnections:      true,
		NoModifyTransport:     true,
		MaxConcurrentRequests: int64(b.limit),
	})
	if err != nil {
		return nil, 0, fmt.Errorf("reading the service root: %w", answered(http.MethodGet, "/redfish/v1/", err))
	}
	if err := b.login(api); err != nil {
		return nil, 0, err
	}
	if f := api.Service.ProtocolFeaturesSupported.ExpandQuery; f.NoLinks {
		// One request per collection instead of one per member.
		opts := []schemas.QueryOption{schemas.WithExpand(schemas.ExpandOptionPeriod), schemas.WithExpandFallback(true)}
		if f.Levels {
			opts = append(opts, schemas.WithExpandLevel(1))
		}
		api.Settings.DefaultQueryOptions = []schemas.QueryGroupOption{schemas.WithCollectionQueryOpts(opts...)}
	}
	b.api = api
	b.gen++
	return api.WithContext(ctx), b.gen, nil
}

// login authenticates: with a session, or with Basic auth on every
// request when the BMC has no session service, or when it refuses the
// session (401/403) but one read with Basic credentials succeeds — a BMC
// that wants Basic credentials on the session request itself, as
// sushy-emulator with an auth file does (Ironic's sushy, redfishtool and
// sushycli fall back the same way). The credentials are refused only when
// both fail. A BMC that plan found taking Basic (b.want) gets Basic at
// once, no session request; one found taking a session gets no fallback.
func (b *gofishBMC) login(api *gofish.APIClient) error {
	if b.creds.Username == "" {
		return errors.New("no credentials: set username and password in the provider block or for the server")
	}
	b.sessionURI = ""
	if b.want == providers.AuthBasic {
		b.setAuth("", true)
		return nil
	}
	auth, err := api.Service.CreateSession(b.creds.Username, b.creds.Password)
	if err != nil && strings.Contains(err.Error(), "no target provided") {
		auth, err = schemas.CreateSession(api, standardSessionsURI, b.creds.Username, b.creds.Password)
	}
	switch st := statusOf(err); {
	case err == nil && auth != nil && auth.Token != "":
		b.sessionURI = relPath(auth.Session)
		b.setAuth(auth.Token, false)
		return nil
	case err == nil, st == http.StatusNotFound, st == http.StatusMethodNotAllowed, st == http.StatusNotImplemented:
		b.setAuth("", true)
		return nil
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		if b.want == providers.AuthSession {
			return &credentialsError{user: b.creds.Username, err: err, planned: true}
		}
		if berr := b.tryBasic(api); berr != nil {
			return &credentialsError{user: b.creds.Username, err: err, basic: berr}
		}
		return nil
	default:
		return answered(http.MethodPost, serviceLink(api, "sessions", standardSessionsURI), fmt.Errorf("creating a session: %w", err))
	}
}

// tryBasic reads the Systems collection with Basic credentials: if the BMC
// answers, it takes Basic auth and every request carries it from now on.
func (b *gofishBMC) tryBasic(api *gofish.APIClient) error {
	b.setAuth("", true)
	resp, err := api.Get(serviceLink(api, "systems", "/redfish/v1/Systems"))
	if err == nil {
		err = schemas.CleanupHTTPResponse(resp)
	}
	if err != nil {
		b.setAuth("", false)
	}
	return err
}

// Auth is how the BMC is authenticated now: providers.AuthSession or
// AuthBasic, "" before the first login.
func (b *gofishBMC) Auth() string {
	b.authMu.RLock()
	defer b.authMu.RUnlock()
	switch {
	case b.useBasic:
		return providers.AuthBasic
	case b.token != "":
		return providers.AuthSession
	}
	return ""
}

// do runs fn with a connected client. A 401 means the BMC forgot the session
// (a BMC reset does that): the session is re-created once and fn repeated.
func (b *gofishBMC) do(ctx context.Context, fn func(c *gofish.APIClient) error) error {
	for i := 0; ; i++ {
		c, gen, err := b.conn(ctx)
		if err != nil {
			return err
		}
		err = fn(c)
		if i == 0 && statusOf(err) == http.StatusUnauthorized {
			b.invalidate(gen)
			continue
		}
		return err
	}
}

func (b *gofishBMC) invalidate(gen int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen == gen && b.api != nil {
		b.api = nil
		b.setAuth("", false)
	}
}

func (b *gofishBMC) Close(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.api == nil {
		return nil
	}
	if b.sessionURI != "" {
		// A 404: already gone (timed out, or the BMC rebooted). Another
		// failure keeps the session, so that the caller's second attempt
		// deletes it again rather than finding nothing to do.
		if err := schemas.DeleteSession(b.api.WithContext(ctx), b.sessionURI); err != nil && statusOf(err) != http.StatusNotFound {
			return err
		}
	}
	b.api, b.sessionURI = nil, ""
	b.setAuth("", false)
	b.client.CloseIdleConnections()
	return nil
}
