package redfish

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rackform/rackform/providers"
)

// Observe implements providers.Provider: at most Concurrency servers at once
// (each BMC additionally limited to per_bmc_limit requests in flight by the
// transport); fn is called from one goroutine at a time.
func (p *Provider) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	p.mu.Lock()
	conc, configured := p.cfg.Concurrency, p.tr != nil
	p.mu.Unlock()
	if !configured {
		return providers.Errorf("", "Provider not configured", "Configure must succeed before Observe.")
	}
	if req.Concurrency > 0 {
		conc = req.Concurrency
	}
	ctx, done := p.call(ctx)
	defer done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Servers sharing a BMC session (several systems behind one BMC, same
	// credentials) are one unit: one login, their reads, one logout.
	var groups [][]providers.Target
	index := map[string]int{}
	p.mu.Lock()
	for i, t := range req.Targets {
		key := p.keyOf(t)
		if g, ok := index[key]; ok && key != "" {
			groups[g] = append(groups[g], t)
			continue
		}
		index[key] = len(groups)
		// The request's own target, not a copy (a fleet is mostly units of
		// one); a second one appends to a copy (cap 1).
		groups = append(groups, req.Targets[i:i+1:i+1])
	}
	p.mu.Unlock()
	conc = min(conc, len(groups))

	var (
		fnMu  sync.Mutex
		fnErr error
		wg    sync.WaitGroup
	)
	emit := func(obs *providers.Observation) {
		fnMu.Lock()
		defer fnMu.Unlock()
		if fnErr == nil && ctx.Err() == nil {
			if err := fn(obs); err != nil {
				fnErr = err
				cancel()
			}
		}
	}
	jobs := make(chan []providers.Target)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range jobs {
				p.observeUnit(ctx, g, emit)
			}
		}()
	}
feed:
	for _, g := range groups {
		select {
		case jobs <- g:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if fnErr != nil {
		return providers.Errorf("", "Observe stopped", "The caller refused a result: "+fnErr.Error())
	}
	if err := ctx.Err(); err != nil {
		return providers.Errorf("", "Observe interrupted", err.Error())
	}
	return nil
}

// observeUnit observes the servers of one BMC session as one unit: log in,
// read them all, log out right away on the same warm connection, even when
// ctx ends; a logout that failed twice is reported with the last server.
func (p *Provider) observeUnit(ctx context.Context, ts []providers.Target, emit func(*providers.Observation)) {
	b, release, err := p.acquire(ts[0])
	if err != nil {
		for _, t := range ts {
			obs := &providers.Observation{Server: t.Name, Outcome: providers.OutcomeUnreachable}
			obs.Diagnostics = p.fail(t, providers.WordingOf(providers.OutcomeUnreachable).Summary, err)
			emit(obs)
		}
		return
	}
	var last *providers.Observation
	for _, t := range ts {
		if last != nil {
			emit(last)
		}
		last = p.observeOne(ctx, b, t)
	}
	if d := release(ctx); d != nil {
		last.Diagnostics = append(last.Diagnostics, *d)
	}
	emit(last)
}

// observeOne reads one server through b. A failure is named for what it is
// (the Outcome* constants) with one readable diagnostic.
func (p *Provider) observeOne(ctx context.Context, b bmc, t providers.Target) *providers.Observation {
	obs := &providers.Observation{Server: t.Name}
	failed := func(outcome string, err error) *providers.Observation {
		obs.Outcome, obs.Reachable = outcome, false
		var se *systemUnresolvedError
		if errors.As(err, &se) {
			obs.Systems = se.systems
		}
		if outcome == providers.OutcomeUnusableAnswer {
			err = &unusableError{err}
		}
		obs.Diagnostics = p.fail(t, providers.WordingOf(outcome).Summary, err)
		return obs
	}
	// The UpdateService is read beside the state: they do not depend on
	// each other, and a BMC speaking HTTP/2 answers both at once. On a BMC
	// not connected yet it is read first: the inventory's links come from
	// it (one read serves both), so the inventory could not be read
	// sooner anyway, and its read connects, after which the state's reads
	// know whether they can overlap.
	var (
		us   *updateInfo
		uerr error
	)
	usRead := func() {}
	if len(t.Updates) > 0 {
		serial, connected := b.Serial()
		usRead = beside(serial || !connected, func() { us, uerr = b.UpdateService(ctx) })
	}
	st, err := p.readState(ctx, b, t)
	usRead()
	if err != nil {
		return failed(outcomeOf(err), err)
	}
	if len(st.items) == 0 {
		why := "the BMC reports no firmware versions"
		if st.invErr != nil {
			why = "the BMC has no readable firmware inventory (" + describe(st.invErr) + ")"
		}
		return failed(providers.OutcomeInventoryUnavailable, errors.New(why+", and neither the System's BiosVersion nor the Manager's FirmwareVersion"))
	}
	*obs = observed(t.Name, b.Auth(), st.sys, st.components())
	if st.invErr != nil {
		obs.Diagnostics = append(obs.Diagnostics, providers.Diagnostic{Severity: providers.Warning, Server: t.Name,
			Summary: "Versions read from the System and Manager",
			Detail:  p.scrubFor(t, "The BMC's firmware inventory could not be read ("+describe(st.invErr)+"); BIOS and BMC versions come from ComputerSystem.BiosVersion and Manager.FirmwareVersion.")})
	}
	if len(t.Updates) > 0 {
		if uerr != nil && outcomeOf(uerr) == providers.OutcomeCredentialsRefused {
			return failed(providers.OutcomeCredentialsRefused, uerr)
		}
		for _, in := range t.Updates {
			obs.Updates = append(obs.Updates, planUpdate(in, st, us, uerr))
		}
	}
	return obs
}

// observed is the observation of server, read through a BMC authenticated
// by auth: sys and its components.
func observed(server, auth string, sys *systemInfo, comps []providers.Component) providers.Observation {
	return providers.Observation{Server: server, Reachable: true, Outcome: providers.OutcomeObserved, System: sys.ID,
		PowerState: sys.PowerState, Health: sys.Health, Components: comps, Fingerprint: fingerprint(sys.PowerState, sys.Health, comps), Auth: auth,
		Identity: providers.Identity{UUID: sys.UUID, SerialNumber: sys.SerialNumber, Manufacturer: sys.Manufacturer, Model: sys.Model}}
}

// state is what one read of a server found: the chosen system and the
// inventory members attributed to it.
type state struct {
	sys    *systemInfo
	items  []invItem
	multi  bool  // the BMC serves several systems
	invErr error // the inventory could not be read (fallback versions only)
}

// components are the state's components, in inventory order, fallbacks last.
func (st *state) components() []providers.Component {
	out := make([]providers.Component, len(st.items))
	for i, it := range st.items {
		out[i] = it.Component
	}
	return out
}

// readState reads the chosen system (for a device, what Device makes of
// its Manager and Chassis), the inventory and, where the inventory lacks
// them, the fallback versions. Observe and wait_ready both read through
// it, so a version is verified where it was planned.
func (p *Provider) readState(ctx context.Context, b bmc, t providers.Target) (*state, error) {
	// The inventory does not depend on the system: both are read at once
	// unless the BMC answers one request at a time (beside).
	var (
		items  []invItem
		invErr error
		sys    *systemInfo
		m      *managerInfo
		err    error
	)
	serial, _ := b.Serial()
	invRead := beside(serial, func() { items, invErr = b.Inventory(ctx) })
	if t.Device != "" {
		sys, m, err = b.Device(ctx)
	} else {
		sys, err = b.System(ctx, t.System)
	}
	invRead()
	if err != nil {
		return nil, err
	}
	st := &state{sys: sys, items: items}
	if st.invErr, err = inventoryFallback(invErr); err != nil {
		return nil, err
	}
	if t.Device != "" {
		// Every member is the device's own: there is no other system to
		// attribute a member to.
		st.addManager(m)
		return st, nil
	}
	// Every system the BMC serves, from the Systems collection's member
	// links (one request); just sys's when it serves one.
	ids, err := b.SystemIDs(ctx)
	if err != nil || len(ids) == 0 {
		ids = []string{sys.ID}
	}
	st.items, st.multi = attribute(items, sys, ids)
	if err := p.readImages(ctx, b, st); err != nil {
		return nil, err
	}
	return st, nil
}

// beside starts fn, a read the caller's next ones do not depend on, and
// returns what waits for it: right away when the BMC is known to answer
// one request at a time (serial: connected over HTTP/1.x, on its one
// connection), where reads made together would only queue, and a
// goroutine each is memory and collector work at thousands of servers
// observed at once; otherwise in a goroutine of its own, so that they
// overlap (HTTP/2), or each connects in turn as before (not connected
// yet, or a connection that failed).
func beside(serial bool, fn func()) (wait func()) {
	if serial {
		fn()
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	return func() { <-done }
}

// inventoryFallback sorts an inventory read's error: none; one the
// versions of the System and Manager stand in for (no FirmwareInventory,
// as on older or unlicensed BMCs), returned as fallback; or one that
// fails the read.
func inventoryFallback(err error) (fallback, fatal error) {
	var ie *inventoryError
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &ie) && statusOf(err) == http.StatusNotFound, statusOf(err) == http.StatusNotFound, errors.Is(err, errNoUpdateService):
		return err, nil
	}
	return nil, err
}

// attribute keeps the members of sys and the BMC's shared ones: a member
// whose RelatedItem links to a System, or whose Id is prefixed with a
// system's Id ("Node0.BIOS"), belongs to that system; members of another
// system are dropped; the rest are shared when the BMC serves several.
func attribute(items []invItem, sys *systemInfo, ids []string) ([]invItem, bool) {
	multi := len(ids) > 1
	self := path.Base(sys.URI)
	isSelf := func(id string) bool { return id == self || id == sys.ID }
	known := func(id string) bool { return isSelf(id) || slices.Contains(ids, id) }
	prefixes := append([]string{sys.ID}, ids...)
	out := items[:0] // filtered in place: items are the caller's to give
	for _, it := range items {
		owner := ""
		for _, r := range it.Related {
			if rest, ok := strings.CutPrefix(r, "/redfish/v1/Systems/"); ok {
				if id, _, _ := strings.Cut(rest, "/"); known(id) {
					owner = id
					break
				}
			}
		}
		if owner == "" {
			for _, id := range prefixes {
				if rest, ok := strings.CutPrefix(it.ID, id); ok && rest != "" && (rest[0] == '.' || rest[0] == '_') {
					owner = id
				}
			}
		}
		switch {
		case owner != "" && isSelf(owner):
		case owner != "":
			continue // another system's
		case multi:
			it.Shared = true
		}
		out = append(out, it)
	}
	return out, multi
}

// errNoUpdateService is a service root without an UpdateService.
var errNoUpdateService = errors.New("the BMC has no UpdateService")

// readImages asks the Manager and the Bios resource which image runs
// where the members' own signs leave two candidates (members.go), and
// reports ComputerSystem.BiosVersion as component BIOS and
// Manager.FirmwareVersion as component BMC only where the inventory has no
// active member for that firmware. The Manager is read when the inventory
// names no BMC member (Id "BMC") or for its links; otherwise it is not
// read at all (one request less per server).
func (p *Provider) readImages(ctx context.Context, b bmc, st *state) error {
	if st.sys.Bios != "" && ambiguous(st.items, relatedTo(st.sys.Bios)) {
		links, err := b.Bios(ctx, st.sys)
		switch {
		case err == nil:
			applyImageLinks(st.items, links)
		case outcomeOf(err) == providers.OutcomeCredentialsRefused:
			return err
		}
		// An unreadable Bios resource only means its links are unknown.
	}
	if st.sys.BiosVersion != "" && !slices.ContainsFunc(st.items, func(it invItem) bool { return isBIOSMember(it, st.sys) }) {
		st.items = append(st.items, invItem{URI: st.sys.URI, Component: providers.Component{
			ID: "BIOS", Name: "BIOS (" + st.sys.ID + ")", Version: st.sys.BiosVersion, Updateable: true, Source: providers.SourceSystem,
			State: providers.StateActive, StateSign: "ComputerSystem.BiosVersion"}})
	}
	if hasActiveID(st.items, "BMC") && !ambiguous(st.items, relatedToManager) {
		// The inventory names the BMC's firmware and nothing is left to
		// decide: the Manager is not read.
		return nil
	}
	m, err := b.Manager(ctx, st.sys)
	if err != nil {
		if outcomeOf(err) == providers.OutcomeCredentialsRefused {
			return err
		}
		return nil // no manager: the inventory may suffice
	}
	if m == nil {
		return nil
	}
	st.addManager(m)
	return nil
}

// addManager takes what the Manager m says of the inventory: which image
// runs where its links name it, and its FirmwareVersion standing in for a
// BMC member the inventory lacks.
func (st *state) addManager(m *managerInfo) {
	applyImageLinks(st.items, m.Images)
	if m.FirmwareVersion != "" && !hasBMCMember(st.items, m) {
		st.items = append(st.items, invItem{URI: m.URI, Component: providers.Component{
			ID: "BMC", Name: "BMC (" + m.ID + ")", Version: m.FirmwareVersion, Updateable: true, Source: providers.SourceManager, Shared: st.multi,
			State: providers.StateActive, StateSign: "Manager.FirmwareVersion"}})
	}
}

// hasActiveID reports whether an active inventory member has id (in any
// case).
func hasActiveID(items []invItem, id string) bool {
	for _, it := range items {
		if it.IsActive() && strings.EqualFold(it.ID, id) {
			return true
		}
	}
	return false
}

// hasBMCMember reports whether the inventory already has the BMC's
// firmware as an active member under the vendor's own id: the one the
// Manager names as its ActiveSoftwareImage, one with id "BMC", one
// reporting the Manager's FirmwareVersion, one whose RelatedItem is the
// Manager, or one named like its model ("iLO 5").
func hasBMCMember(items []invItem, m *managerInfo) bool {
	for _, it := range items {
		if !it.IsActive() {
			continue
		}
		if (m.Images.Active != "" && it.URI == m.Images.Active) || strings.EqualFold(it.ID, "BMC") || it.Version == m.FirmwareVersion ||
			slices.Contains(it.Related, m.URI) || (m.Model != "" && strings.EqualFold(it.Name, m.Model)) {
			return true
		}
	}
	return false
}

func (p *Provider) scrubFor(t providers.Target, s string) string {
	s = p.scrub(s)
	if t.Credentials != nil && len(t.Credentials.Password) >= 3 {
		s = strings.ReplaceAll(s, t.Credentials.Password, "***")
	}
	return s
}

// fail turns err into an error diagnostic about t: the server's name, the
// BMC endpoint and the cause, with any password scrubbed.
func (p *Provider) fail(t providers.Target, summary string, err error) providers.Diagnostics {
	detail := describe(err)
	if e, cerr := cleanEndpoint(t.Endpoint); cerr == nil {
		detail = "BMC " + e + ": " + detail
	}
	return providers.Errorf(t.Name, summary, p.scrubFor(t, detail))
}

// describe says what went wrong in words an operator can act on.
func describe(err error) string {
	var (
		ate  *attemptTimeoutError
		uerr x509.UnknownAuthorityError
		herr x509.HostnameError
		cerr *tls.CertificateVerificationError
		serr *json.SyntaxError
		terr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &ate):
		return "timed out: " + ate.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out: " + err.Error()
	case errors.As(err, &uerr), errors.As(err, &cerr):
		return "TLS certificate not trusted (set ca_bundle to the CA that signs BMC certificates, or insecure = true): " + err.Error()
	case errors.As(err, &herr):
		return "TLS certificate does not match the BMC address: " + err.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		// Said once: the net error's own "connect: connection refused"
		// would repeat it at the end.
		return "connection refused: " + strings.TrimSuffix(err.Error(), ": connect: connection refused")
	case errors.As(err, &serr), errors.As(err, &terr):
		return "malformed JSON from the BMC: " + err.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON from the BMC (the document ends early): " + err.Error()
	}
	var re *schemas.Error
	if errors.As(err, &re) && re.HTTPReturnedStatusCode != 0 {
		// gofish's text is the whole error body; say status, id and message.
		short := fmt.Sprintf("HTTP %d", re.HTTPReturnedStatusCode)
		if re.Code != "" {
			short += " " + re.Code
		}
		if m := redfishMessage(re); m != "" {
			short += ": " + m
		}
		for _, x := range re.ExtendedInfos {
			if x.MessageID != "" && x.MessageID != re.Code {
				short += " (" + x.MessageID + ")"
				break
			}
		}
		msg := err.Error()
		if i := strings.Index(msg, re.Error()); i >= 0 {
			return msg[:i] + short
		}
		// Our own error types already word the Redfish error.
		return truncate(oneLine(msg), 600)
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return "timed out: " + err.Error()
	}
	return truncate(err.Error(), 600)
}
