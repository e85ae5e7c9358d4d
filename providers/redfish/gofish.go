package redfish

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
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

// maxBodyBytes bounds what is read of a raw body (task monitors, errors).
const maxBodyBytes = 1 << 20

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

	authMu sync.RWMutex
	token  string
	// useBasic makes authTransport send Basic credentials (sessions unsupported).
	useBasic bool
}

func newGofishBMC(endpoint string, creds providers.Credentials, next http.RoundTripper, limit int) *gofishBMC {
	b := &gofishBMC{endpoint: endpoint, creds: creds, limit: limit, systemURIs: map[string]string{}}
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
	if token == "" && !basic {
		return a.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	if basic {
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(a.b.creds.Username+":"+a.b.creds.Password)))
	} else {
		r.Header.Set("X-Auth-Token", token)
	}
	return a.next.RoundTrip(r)
}

func (b *gofishBMC) setAuth(token string, basic bool) {
	b.authMu.Lock()
	b.token, b.useBasic = token, basic
	b.authMu.Unlock()
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
		return nil, 0, fmt.Errorf("reading the service root: %w", err)
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

// login creates the session, falling back to Basic auth only when the BMC
// has no session service.
func (b *gofishBMC) login(api *gofish.APIClient) error {
	if b.creds.Username == "" {
		return errors.New("no credentials: set username and password in the provider block or for the server")
	}
	auth, err := api.Service.CreateSession(b.creds.Username, b.creds.Password)
	if err != nil && strings.Contains(err.Error(), "no target provided") {
		auth, err = schemas.CreateSession(api, standardSessionsURI, b.creds.Username, b.creds.Password)
	}
	switch {
	case err == nil && auth != nil && auth.Token != "":
		b.sessionURI = relPath(auth.Session)
		b.setAuth(auth.Token, false)
		return nil
	case err == nil, statusOf(err) == http.StatusNotFound, statusOf(err) == http.StatusMethodNotAllowed, statusOf(err) == http.StatusNotImplemented:
		b.sessionURI = ""
		b.setAuth("", true)
		return nil
	case statusOf(err) == http.StatusUnauthorized || statusOf(err) == http.StatusForbidden:
		return &credentialsError{user: b.creds.Username, err: err}
	default:
		return fmt.Errorf("creating a session: %w", err)
	}
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
	var err error
	if b.sessionURI != "" {
		err = schemas.DeleteSession(b.api.WithContext(ctx), b.sessionURI)
		if statusOf(err) == http.StatusNotFound {
			err = nil // already gone (timed out, or the BMC rebooted)
		}
		if err != nil {
			// Kept, so that the caller's second attempt deletes it again
			// rather than finding nothing to do.
			return err
		}
	}
	b.api, b.sessionURI = nil, ""
	b.setAuth("", false)
	b.client.CloseIdleConnections()
	return err
}

// rawSystem is the part of a ComputerSystem that gofish keeps private
// (action targets, allowable values, links); read from its RawData.
type rawSystem struct {
	Actions struct {
		Reset struct {
			Target     string   `json:"target"`
			ResetTypes []string `json:"ResetType@Redfish.AllowableValues"`
		} `json:"#ComputerSystem.Reset"`
	}
	Boot struct {
		Targets  []string `json:"BootSourceOverrideTarget@Redfish.AllowableValues"`
		Override string   `json:"BootSourceOverrideTarget"`
		Enabled  string   `json:"BootSourceOverrideEnabled"`
	}
	VirtualMedia odataLink
	Links        struct {
		ManagedBy []odataLink
	}
}

type odataLink struct {
	ID string `json:"@odata.id"`
}

func (b *gofishBMC) System(ctx context.Context, sel string) (*systemInfo, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	var sys *systemDoc
	err := b.do(ctx, func(c *gofish.APIClient) error {
		b.mu.Lock()
		uri := b.systemURIs[sel]
		b.mu.Unlock()
		if uri != "" {
			var s systemDoc
			err := getJSON(ctx, c, uri, &s)
			if err == nil || statusOf(err) != http.StatusNotFound {
				sys = &s
				return err
			}
		}
		systems, err := readMembers[systemDoc](ctx, c, serviceLink(c, "systems", "/redfish/v1/Systems"))
		if err != nil {
			return collErr(err)
		}
		if len(systems) == 0 {
			return errNoSystem
		}
		// The collection just read lists every system: SystemIDs need not
		// read it again.
		ids := make([]string, 0, len(systems))
		for _, s := range systems {
			if s.ODataID != "" {
				ids = append(ids, path.Base(strings.TrimSuffix(s.ODataID, "/")))
			}
		}
		b.mu.Lock()
		if b.systemIDs == nil {
			b.systemIDs = ids
		}
		b.mu.Unlock()
		sys, err = pickSystem(systems, sel)
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.systemURIs[sel] = sys.ODataID
		b.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return systemFrom(sys), nil
}

// errNoSystem is a service that lists no ComputerSystem.
var errNoSystem = errors.New("the BMC lists no computer system")

// pickSystem chooses the system sel names (its Id, or its UUID in any
// case), or the only one when sel is "". Anything else is unresolved.
func pickSystem(systems []systemDoc, sel string) (*systemDoc, error) {
	if sel == "" && len(systems) == 1 {
		return &systems[0], nil
	}
	if sel != "" {
		for i, s := range systems {
			if s.ID == sel || (s.UUID != "" && strings.EqualFold(s.UUID, sel)) {
				return &systems[i], nil
			}
		}
	}
	e := &systemUnresolvedError{want: sel}
	for _, s := range systems {
		e.systems = append(e.systems, providers.SystemRef{ID: s.ID, UUID: s.UUID, Name: s.Name})
	}
	return nil, e
}

func systemFrom(sys *systemDoc) *systemInfo {
	info := &systemInfo{
		URI:                 relPath(sys.ODataID),
		ID:                  sys.ID,
		Name:                sys.Name,
		UUID:                sys.UUID,
		SerialNumber:        strings.TrimSpace(sys.SerialNumber),
		Manufacturer:        strings.TrimSpace(sys.Manufacturer),
		Model:               strings.TrimSpace(sys.Model),
		BiosVersion:         strings.TrimSpace(sys.BiosVersion),
		PowerState:          sys.PowerState,
		Health:              sys.Status.HealthRollup,
		ResetTarget:         sys.Actions.Reset.Target,
		ResetTypes:          sys.Actions.Reset.ResetTypes,
		BootTargets:         sys.Boot.Targets,
		BootOverride:        sys.Boot.Override,
		BootOverrideEnabled: sys.Boot.Enabled,
		VirtualMedia:        sys.VirtualMedia.ID,
	}
	for _, m := range sys.Links.ManagedBy {
		if m.ID != "" {
			info.ManagedBy = append(info.ManagedBy, relPath(m.ID))
		}
	}
	if info.Health == "" {
		info.Health = sys.Status.Health
	}
	return info
}

func (b *gofishBMC) SystemIDs(ctx context.Context) ([]string, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	b.mu.Lock()
	ids := b.systemIDs
	b.mu.Unlock()
	if ids != nil {
		return ids, nil
	}
	err := b.do(ctx, func(c *gofish.APIClient) error {
		// Redfish fixes where the Systems collection is.
		uri := "/redfish/v1/Systems"
		var coll struct{ Members []odataLink }
		if err := getJSON(ctx, c, uri, &coll); err != nil {
			return err
		}
		ids = []string{}
		for _, m := range coll.Members {
			if m.ID != "" {
				ids = append(ids, path.Base(strings.TrimSuffix(m.ID, "/")))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.systemIDs = ids
	b.mu.Unlock()
	return ids, nil
}

func (b *gofishBMC) Manager(ctx context.Context, sys *systemInfo) (*managerInfo, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	var m *managerDoc
	err := b.do(ctx, func(c *gofish.APIClient) error {
		b.mu.Lock()
		uri := b.managerURI
		b.mu.Unlock()
		if uri == "" && sys != nil && len(sys.ManagedBy) > 0 {
			uri = sys.ManagedBy[0]
		}
		if uri != "" {
			var got managerDoc
			err := getJSON(ctx, c, uri, &got)
			if err == nil {
				m = &got
			} else if statusOf(err) != http.StatusNotFound {
				return err
			}
		}
		if m == nil {
			managers, err := readMembers[managerDoc](ctx, c, serviceLink(c, "managers", "/redfish/v1/Managers"))
			if err != nil {
				return collErr(err)
			}
			// The BMC itself, not an enclosure or a management controller of a part.
			for i, x := range managers {
				if m == nil || (x.ManagerType == string(schemas.BMCManagerType) && m.ManagerType != string(schemas.BMCManagerType)) {
					m = &managers[i]
				}
			}
		}
		if m == nil {
			return nil
		}
		b.mu.Lock()
		b.managerURI = relPath(m.ODataID)
		b.mu.Unlock()
		return nil
	})
	if err != nil || m == nil {
		return nil, err
	}
	return &managerInfo{URI: relPath(m.ODataID), ID: m.ID, Model: strings.TrimSpace(m.Model), FirmwareVersion: strings.TrimSpace(m.FirmwareVersion)}, nil
}

// rawUpdateService holds what gofish keeps private in UpdateService.
type rawUpdateService struct {
	Actions struct {
		SimpleUpdate struct {
			Target     string          `json:"target"`
			Protocols  []string        `json:"TransferProtocol@Redfish.AllowableValues"`
			ActionInfo string          `json:"@Redfish.ActionInfo"`
			Targets    json.RawMessage `json:"Targets@Redfish.AllowableValues"`
		} `json:"#UpdateService.SimpleUpdate"`
	}
	FirmwareInventory odataLink
	SoftwareInventory odataLink
}

// updateService reads the UpdateService document. Concurrent reads on one
// BMC (an observation reads it for the update plan and for the inventory
// links at the same moment) share one request.
func (b *gofishBMC) updateService(ctx context.Context, c *gofish.APIClient) (*updateServiceDoc, error) {
	b.mu.Lock()
	call := b.usCall
	if call == nil {
		call = &usRead{done: make(chan struct{})}
		b.usCall = call
		b.mu.Unlock()
		call.doc, call.err = b.readUpdateService(ctx, c)
		b.mu.Lock()
		b.usCall = nil
		b.mu.Unlock()
		close(call.done)
	} else {
		b.mu.Unlock()
		select {
		case <-call.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return call.doc, call.err
}

// usRead is one UpdateService read in flight.
type usRead struct {
	done chan struct{}
	doc  *updateServiceDoc
	err  error
}

func (b *gofishBMC) readUpdateService(ctx context.Context, c *gofish.APIClient) (*updateServiceDoc, error) {
	link := serviceLink(c, "updateService", "")
	if link == "" {
		return nil, errNoUpdateService
	}
	var us updateServiceDoc
	if err := getJSON(ctx, c, link, &us); err != nil {
		return nil, fmt.Errorf("reading UpdateService: %w", err)
	}
	if us.ODataID == "" {
		us.ODataID = link
	}
	return &us, nil
}

func (b *gofishBMC) UpdateService(ctx context.Context) (*updateInfo, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	var info *updateInfo
	err := b.do(ctx, func(c *gofish.APIClient) error {
		us, err := b.updateService(ctx, c)
		if err != nil {
			return err
		}
		su := us.Actions.SimpleUpdate
		info = &updateInfo{
			URI:                  us.ODataID,
			SimpleUpdateTarget:   su.Target,
			MultipartHTTPPushURI: us.MultipartHTTPPushURI,
			HTTPPushURI:          us.HTTPPushURI,
			TransferProtocols:    su.Protocols,
			SimpleUpdateTargets:  len(su.Targets) > 0,
			ActionInfo:           su.ActionInfo,
		}
		var allowTargets []string
		if json.Unmarshal(su.Targets, &allowTargets) == nil && len(allowTargets) > 0 {
			info.Params = append(info.Params, actionParam{Name: "Targets", AllowableValues: allowTargets})
		}
		if len(su.Protocols) > 0 {
			info.Params = append(info.Params, actionParam{Name: "TransferProtocol", AllowableValues: su.Protocols})
		}
		if ai := su.ActionInfo; ai != "" && info.SimpleUpdateTarget != "" {
			// An unreadable ActionInfo only means its parameters are unknown.
			var doc struct{ Parameters []actionParam }
			if err := getJSON(ctx, c, ai, &doc); err == nil {
				info.ActionInfoRead = true
				for _, p := range doc.Parameters {
					if p.Name == "Targets" {
						info.SimpleUpdateTargets = true
					}
					if p.Name == "TransferProtocol" && len(p.AllowableValues) > 0 {
						info.TransferProtocols = p.AllowableValues
					}
					info.setParam(p)
				}
			} else if statusOf(err) == http.StatusUnauthorized {
				return err
			}
		}
		return nil
	})
	return info, err
}

func (b *gofishBMC) Inventory(ctx context.Context) ([]invItem, error) {
	ctx = selfChecked(ctx) // read through getJSON only
	var out []invItem
	err := b.do(ctx, func(c *gofish.APIClient) error {
		out = out[:0]
		b.mu.Lock()
		links := b.inventories
		b.mu.Unlock()
		if links == nil {
			us, err := b.updateService(ctx, c)
			if err != nil {
				return err
			}
			links = []string{}
			for _, l := range []string{us.FirmwareInventory.ID, us.SoftwareInventory.ID} {
				if l != "" {
					links = append(links, l)
				}
			}
			b.mu.Lock()
			b.inventories = links
			b.mu.Unlock()
		}
		var missing error
		// Ids are unique within one collection, not across both: an iLO
		// numbers its FirmwareInventory and its SoftwareInventory (OS
		// packages) 1, 2, 3... A later collection's member whose Id an
		// earlier one already holds is named by its collection too
		// ("SoftwareInventory/1"), so id = "1" selects the firmware only.
		taken := map[string]bool{}
		var itemsTaken []string
		for _, l := range links {
			items, err := readMembers[invDoc](ctx, c, l)
			if err != nil && statusOf(collErr(err)) == http.StatusNotFound {
				// One inventory missing (FirmwareInventory on unlicensed
				// BMCs): the other still counts.
				missing = &inventoryError{uri: l, err: collErr(err)}
				continue
			}
			if err != nil {
				return &inventoryError{uri: l, err: collErr(err)}
			}
			for _, it := range items {
				// A member that omits Updateable is updateable: many real BMCs omit it.
				updateable := it.Updateable == nil || *it.Updateable
				item := invItem{Component: normalizeInventory(it.ID, it.Name, it.SoftwareID, it.Version, updateable), URI: relPath(it.ODataID)}
				if taken[item.ID] {
					item.ID = path.Base(strings.TrimSuffix(l, "/")) + "/" + item.ID
				}
				itemsTaken = append(itemsTaken, item.ID)
				for _, r := range it.RelatedItem {
					if r.ID != "" {
						item.Related = append(item.Related, relPath(r.ID))
					}
				}
				out = append(out, item)
			}
			for _, id := range itemsTaken {
				taken[id] = true
			}
			itemsTaken = itemsTaken[:0]
		}
		if len(out) == 0 && missing != nil {
			return missing
		}
		return nil
	})
	return out, err
}

func (b *gofishBMC) Post(ctx context.Context, uri string, body any) (*accepted, error) {
	var acc *accepted
	err := b.do(ctx, func(c *gofish.APIClient) error {
		resp, err := c.Post(relPath(uri), body)
		if err != nil {
			return err
		}
		acc = acceptedFrom(resp)
		return nil
	})
	return acc, err
}

func (b *gofishBMC) Patch(ctx context.Context, uri string, body any) error {
	return b.do(ctx, func(c *gofish.APIClient) error {
		resp, err := c.Patch(relPath(uri), body)
		if err != nil {
			return err
		}
		return schemas.CleanupHTTPResponse(resp)
	})
}

// noSeek passes a streamed body to gofish, whose raw request API asks for an
// io.ReadSeeker but only ever reads it. It is not replayable, so the
// transport never retries an upload.
type noSeek struct{ io.Reader }

func (noSeek) Seek(int64, int) (int64, error) { return 0, errors.New("upload body is a stream") }

func (b *gofishBMC) Upload(ctx context.Context, uri, contentType, filename string, body io.Reader, size int64) (*accepted, error) {
	c, _, err := b.conn(withoutAttemptTimeout(ctx))
	if err != nil {
		return nil, err
	}
	// No 401 retry here: the body is a one-shot stream.
	headers := map[string]string{"Content-Length": fmt.Sprint(size)}
	if filename != "" {
		headers["Content-Disposition"] = mime.FormatMediaType("attachment", map[string]string{"filename": filename})
	}
	resp, err := c.RunRawRequestWithHeaders(http.MethodPost, relPath(uri), noSeek{body}, contentType, headers)
	if err != nil {
		return nil, err
	}
	return acceptedFrom(resp), nil
}

func acceptedFrom(resp *http.Response) *accepted {
	defer schemas.DeferredCleanupHTTPResponse(resp)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	acc := &accepted{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: body}
	if resp.StatusCode == http.StatusAccepted {
		acc.TaskURI = relPath(resp.Header.Get("Location"))
	}
	if acc.TaskURI == "" {
		// Some BMCs answer 200/202 with a Task body and no Location.
		acc.TaskURI = taskURIFromBody(body)
	}
	return acc
}

func (b *gofishBMC) Get(ctx context.Context, uri string) (int, []byte, string, error) {
	var (
		status     int
		body       []byte
		retryAfter string
	)
	err := b.do(ctx, func(c *gofish.APIClient) error {
		resp, err := c.Get(relPath(uri))
		if err != nil {
			var re *schemas.Error
			if errors.As(err, &re) && re.HTTPReturnedStatusCode != http.StatusUnauthorized && re.HTTPReturnedStatusCode != 0 {
				status, body = re.HTTPReturnedStatusCode, nil
				return nil
			}
			return err
		}
		defer schemas.DeferredCleanupHTTPResponse(resp)
		status, retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		body, err = io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
		return err
	})
	return status, body, retryAfter, err
}

// maxListedTasks bounds how many tasks Tasks reads (the newest ones).
const maxListedTasks = 64

// listedTask is the part of a Task that Tasks reads, raw: JsonBody is a
// string by the schema, but some BMCs send the object itself.
type listedTask struct {
	ID         string `json:"@odata.id"`
	Name       string
	TaskState  string
	TaskStatus string
	StartTime  string
	Payload    struct {
		TargetURI string          `json:"TargetUri"`
		JSONBody  json.RawMessage `json:"JsonBody"`
	}
}

func (b *gofishBMC) Tasks(ctx context.Context) ([]taskInfo, error) {
	var out []taskInfo
	err := b.do(ctx, func(c *gofish.APIClient) error {
		out = out[:0]
		ts, err := c.Service.Tasks()
		if err != nil {
			if statusOf(err) == http.StatusNotFound {
				return nil
			}
			return fmt.Errorf("reading TaskService: %w", err)
		}
		if ts == nil {
			return nil
		}
		var raw struct{ Tasks odataLink }
		_ = json.Unmarshal(ts.RawData, &raw)
		if raw.Tasks.ID == "" {
			return nil
		}
		var coll struct {
			Members []json.RawMessage
		}
		if err := getJSON(ctx, c, raw.Tasks.ID, &coll); err != nil {
			return fmt.Errorf("reading %s: %w", raw.Tasks.ID, err)
		}
		members := coll.Members
		if len(members) > maxListedTasks {
			members = members[len(members)-maxListedTasks:]
		}
		for _, m := range members {
			var t listedTask
			if err := json.Unmarshal(m, &t); err != nil || t.ID == "" {
				continue
			}
			if t.TaskState == "" {
				// A link only: read the task (202 while it runs on some BMCs).
				uri := t.ID
				t = listedTask{}
				if err := getJSON(ctx, c, uri, &t); err != nil {
					if statusOf(err) == http.StatusNotFound {
						continue // deleted meanwhile
					}
					return fmt.Errorf("reading %s: %w", uri, err)
				}
				if t.ID == "" {
					t.ID = uri
				}
			}
			info := taskInfo{URI: relPath(t.ID), Name: t.Name, State: normalizeTaskState(t.TaskState, t.TaskStatus),
				TargetURI: t.Payload.TargetURI, JSONBody: jsonText(t.Payload.JSONBody)}
			if st, err := time.Parse(time.RFC3339, t.StartTime); err == nil {
				info.Start = st
			}
			out = append(out, info)
		}
		return nil
	})
	return out, err
}

// jsonText is a Payload.JsonBody as text: the string's content when it is
// a JSON string (the schema), the raw JSON otherwise.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}

// rawMedia holds what gofish keeps private in VirtualMedia.
type rawMedia struct {
	Actions struct {
		Insert struct {
			Target string `json:"target"`
		} `json:"#VirtualMedia.InsertMedia"`
		Eject struct {
			Target string `json:"target"`
		} `json:"#VirtualMedia.EjectMedia"`
	}
}

type rawManager struct {
	VirtualMedia odataLink
}

func (b *gofishBMC) VirtualMedia(ctx context.Context, sys *systemInfo) (*mediaInfo, error) {
	var found *mediaInfo
	err := b.do(ctx, func(c *gofish.APIClient) error {
		links := []string{}
		if sys.VirtualMedia != "" {
			links = append(links, sys.VirtualMedia)
		} else {
			// Older BMCs (iLO 5, AMI) hang virtual media off the manager.
			managers, err := c.Service.Managers()
			if err != nil {
				return collErr(err)
			}
			for _, m := range managers {
				var rm rawManager
				_ = json.Unmarshal(m.RawData, &rm)
				if rm.VirtualMedia.ID != "" {
					links = append(links, rm.VirtualMedia.ID)
				}
			}
		}
		for _, l := range links {
			media, err := schemas.GetCollectionObjects[schemas.VirtualMedia](c, l)
			if err != nil {
				return collErr(err)
			}
			// Prefer a slot that says it takes CDs; AMI lists no MediaTypes,
			// so a slot named like a CD drive is the next best.
			var pick *schemas.VirtualMedia
			for _, m := range media {
				if isOpticalMedia(m.MediaTypes) {
					pick = m
					break
				}
			}
			for _, m := range media {
				if pick == nil && len(m.MediaTypes) == 0 && (strings.Contains(strings.ToUpper(m.ID), "CD") || strings.Contains(strings.ToUpper(m.Name), "CD")) {
					pick = m
				}
			}
			if pick != nil {
				var rm rawMedia
				_ = json.Unmarshal(pick.RawData, &rm)
				found = &mediaInfo{URI: pick.ODataID, InsertTarget: rm.Actions.Insert.Target, EjectTarget: rm.Actions.Eject.Target,
					Inserted: pick.Inserted != nil && *pick.Inserted, Image: pick.Image}
				return nil
			}
		}
		return errors.New("the BMC offers no CD/DVD virtual media")
	})
	return found, err
}

func isOpticalMedia(types []schemas.VirtualMediaType) bool {
	for _, t := range types {
		if t == schemas.CDVirtualMediaType || t == schemas.DVDVirtualMediaType {
			return true
		}
	}
	return false
}

// statusOf is the HTTP status of a gofish error, or 0.
func statusOf(err error) int {
	var re *schemas.Error
	if errors.As(err, &re) {
		return re.HTTPReturnedStatusCode
	}
	return 0
}

// relPath turns an absolute URI a BMC returned (Location headers often are)
// into the path gofish expects; gofish prefixes the endpoint itself.
func relPath(uri string) string {
	if strings.HasPrefix(uri, "/") && !strings.HasPrefix(uri, "//") {
		return uri // already a path (most links): no parse
	}
	if u, err := url.Parse(uri); err == nil && u.IsAbs() {
		return u.RequestURI()
	}
	return uri
}

var _ bmc = (*gofishBMC)(nil)
