package sim

import (
	"bufio"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
)

// recorder remembers the status for stats and the request log.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

// Hijack lets the handler drop a connection like a rebooting BMC.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := r.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, fmt.Errorf("hijack not supported")
}

func (f *Fleet) serveHTTP(w http.ResponseWriter, r *http.Request) {
	addr, _ := r.Context().Value(connKey{}).(string)
	b := f.addrIndex[addr]
	if b == nil {
		http.NotFound(w, r)
		return
	}
	if f.opts.OnRequest != nil {
		f.opts.OnRequest(b.spec.Name, r)
	}
	rec := &recorder{ResponseWriter: w}
	now := f.opts.Now()
	b.mu.Lock()
	b.clock.advance(now)
	if b.down(now) {
		b.mu.Unlock()
		dropConn(w)
		return
	}
	b.reqNo++
	reqNo := b.reqNo
	b.stats.Requests++
	b.inflight++
	b.stats.MaxConcurrent = max(b.stats.MaxConcurrent, b.inflight)
	latency := f.opts.Latency
	// Once per request (the timeline advanced): the moment to bring the
	// health in line with the condition faults.
	b.power.syncConditions()
	if ft, ok := b.faults.take(FaultLatency, reqNo); ok {
		latency += ft.Latency
	}
	var reqFault *Fault
	for _, k := range []FaultKind{FaultTimeout, FaultBusy, FaultError, FaultMalformed} {
		if ft, ok := b.faults.take(k, reqNo); ok {
			reqFault = &ft
			b.stats.FaultsInjected++
			break
		}
	}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.inflight--
		if rec.status >= 400 {
			b.stats.Errors++
		}
		b.mu.Unlock()
		if f.opts.Log != nil {
			fmt.Fprintf(f.opts.Log, "%s %s %s %s %d\n", time.Now().UTC().Format(time.RFC3339Nano), b.spec.Name, r.Method, r.URL.Path, rec.status)
		}
	}()
	if latency > 0 && !f.sleep(r, latency) {
		return
	}
	if reqFault != nil {
		switch reqFault.Kind {
		case FaultTimeout:
			hold := reqFault.Latency
			if hold == 0 {
				hold = 2 * time.Minute
			}
			f.sleep(r, hold)
			dropConn(rec)
			return
		case FaultBusy:
			ra := reqFault.Latency
			if ra == 0 {
				ra = time.Second
			}
			rec.Header().Set("Retry-After", retryAfter(ra))
			writeError(rec, http.StatusServiceUnavailable, "Base.1.8.ServiceTemporarilyUnavailable", "The service is temporarily unavailable. Retry later.")
			return
		case FaultError:
			writeError(rec, http.StatusInternalServerError, "Base.1.8.InternalError", "The request failed due to an internal service error. The service is still operational.")
			return
		case FaultMalformed:
			rec.Header().Set("Content-Type", "application/json")
			rec.WriteHeader(http.StatusOK)
			fmt.Fprint(rec, `{"@odata.id": "/redfish/v1/", "Name": "Root Service", "Systems": {"@odata.id": `)
			return
		}
	}
	b.route(rec, r)
}

// sleep waits d unless the client goes away or the fleet closes; it reports
// whether the full time passed.
func (f *Fleet) sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-f.done:
	}
	return false
}

// dropConn closes the connection without a response, as a BMC that reboots
// or hangs up does.
func dropConn(w http.ResponseWriter) {
	if h, ok := w.(http.Hijacker); ok {
		if c, _, err := h.Hijack(); err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Base.1.8.InternalError", err.Error())
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("OData-Version", "4.0")
	h.Set("Cache-Control", "no-cache")
	if doc, ok := v.(map[string]any); ok {
		if link := describedBy(doc); link != "" {
			h.Set("Link", link)
		}
	}
	h.Set("ETag", etag(body))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError answers a Redfish error body.
func writeError(w http.ResponseWriter, status int, id, msg string) {
	writeParamError(w, status, id, msg, "")
}

// writeMissing answers that there is no resource at p.
func writeMissing(w http.ResponseWriter, status int, p string) {
	writeError(w, status, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
}

// writeParamError answers a Redfish error body whose message is about a
// parameter or property: its ExtendedInfo names it in RelatedProperties
// and MessageArgs (the value first, when given, as Base messages do).
func writeParamError(w http.ResponseWriter, status int, id, msg, param string, value ...string) {
	info := map[string]any{
		"@odata.type": "#Message.v1_1_1.Message",
		"MessageId":   id,
		"Message":     msg,
		"Severity":    "Critical",
		"Resolution":  "None.",
	}
	if param != "" {
		args := []any{}
		for _, v := range value {
			args = append(args, v)
		}
		info["MessageArgs"] = append(args, param)
		info["RelatedProperties"] = []any{"#/" + param}
		info["Resolution"] = "Correct the parameter " + param + " and resubmit the request."
	}
	body := map[string]any{"error": map[string]any{
		"code":                  id,
		"message":               msg,
		"@Message.ExtendedInfo": []any{info},
	}}
	raw, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// public reports whether a request needs no credentials: Redfish leaves the
// service root, the OData documents and session creation open.
func public(method, p string) bool {
	switch p {
	case "/redfish", "/redfish/v1", "/redfish/v1/odata", "/redfish/v1/$metadata":
		return method == http.MethodGet || method == http.MethodHead
	case "/redfish/v1/SessionService/Sessions", sessionsMe:
		// Posting to a collection's Members creates a member, as posting
		// to the collection does (DSP0266).
		return method == http.MethodPost // 404 where there is no SessionService
	}
	return false
}

// authorized checks X-Auth-Token or Basic credentials. b.mu is held.
func (b *bmc) authorized(r *http.Request, now time.Time) bool {
	if tok := r.Header.Get("X-Auth-Token"); tok != "" && !b.prof.noSessions {
		if s := b.sessions.byToken(tok); s != nil && now.Sub(s.lastUsed) < b.fleet.timings.SessionTimeout {
			s.lastUsed = now
			return true
		}
		return false
	}
	u, p, ok := r.BasicAuth()
	return ok && b.fleet.credentialsOK(u, p)
}

func (f *Fleet) credentialsOK(u, p string) bool {
	okU := subtle.ConstantTimeCompare([]byte(u), []byte(f.opts.Username)) == 1
	okP := subtle.ConstantTimeCompare([]byte(p), []byte(f.opts.Password)) == 1
	return okU && okP
}

func cleanPath(p string) string {
	p = strings.TrimSuffix(p, "/")
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	return p
}

func (b *bmc) route(w http.ResponseWriter, r *http.Request) {
	p := cleanPath(r.URL.Path)
	now := b.fleet.opts.Now()
	if !checkODataVersion(w, r) {
		return
	}
	if !public(r.Method, p) {
		b.mu.Lock()
		ok := b.authorized(r, now)
		b.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="Redfish"`)
			writeError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "There is no valid session established with the implementation.")
			return
		}
	}
	b.mu.Lock()
	b.clock.advance(now)
	methods, doc := b.allowed(p, now)
	b.mu.Unlock()
	if methods == nil {
		writeMissing(w, http.StatusNotFound, p)
		return
	}
	w.Header().Set("Allow", allowHeader(methods))
	if !methodAllowed(methods, r.Method) {
		if p == "/redfish/v1/SessionService/Sessions" && b.prof.noSessions {
			writeError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "This BMC's session service is disabled: use HTTP Basic authentication on every request.")
			return
		}
		writeError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "The method "+r.Method+" is not allowed on "+p+"; it allows "+allowHeader(methods)+".")
		return
	}
	if !checkQuery(w, r) {
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		b.get(w, r, p, now, doc)
	case http.MethodPost:
		b.post(w, r, p)
	case http.MethodPatch:
		b.patch(w, r, p)
	case http.MethodDelete:
		b.delete(w, r, p)
	}
}

// get answers a GET or HEAD of p at now; rendered is the document at p
// when route already rendered it (allowed), else nil.
func (b *bmc) get(w http.ResponseWriter, r *http.Request, p string, now time.Time, rendered map[string]any) {
	switch p {
	case "/redfish":
		writeJSON(w, http.StatusOK, map[string]string{"v1": "/redfish/v1/"})
		return
	case "/redfish/v1/$metadata":
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("OData-Version", "4.0")
		_, _ = w.Write(b.prof.metadata)
		return
	}
	b.mu.Lock()
	b.clock.advance(now)
	if status, doc, hdr, ok := b.tasks.monitor(p, now); ok {
		b.mu.Unlock()
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		if doc == nil {
			writeMissing(w, status, p)
			return
		}
		writeJSON(w, status, doc)
		return
	}
	doc, ok := rendered, rendered != nil
	if !ok {
		doc, ok = b.render(p, now)
	}
	status := http.StatusOK
	if ok && b.prof.name == ProfileDMTF && strings.HasPrefix(p, "/redfish/v1/TaskService/Tasks/") {
		// The DMTF profile's task is its own monitor (as on iDRAC): 202 while
		// it runs, which clients such as sushy rely on.
		if t := b.tasks.get(strings.TrimPrefix(p, "/redfish/v1/TaskService/Tasks/")); t != nil && t.state == "" {
			status = http.StatusAccepted
			w.Header().Set("Retry-After", retryAfter(t.end.Sub(now)))
		}
	}
	if ok && b.prof.expand && !b.fleet.opts.NoExpand && expandRequested(r) {
		doc = b.expandMembers(doc, now)
	}
	onlyOK := true
	if ok && r.URL.Query().Has("only") {
		doc, onlyOK = b.onlyMember(doc, now)
	}
	b.mu.Unlock()
	if !ok {
		writeMissing(w, http.StatusNotFound, p)
		return
	}
	if !onlyOK {
		writeParamError(w, http.StatusBadRequest, "Base.1.8.QueryNotSupportedOnResource", "The query parameter only applies to a collection; "+p+" is not one.", "only")
		return
	}
	writeJSON(w, status, doc)
}

// expandRequested accepts the $expand forms clients send for one level:
// ".", "*", "~", optionally with ($levels=1).
func expandRequested(r *http.Request) bool {
	v := r.URL.Query().Get("$expand")
	return v != "" && strings.ContainsRune(".*~", rune(v[0]))
}

func (b *bmc) expandMembers(doc map[string]any, now time.Time) map[string]any {
	members, ok := doc["Members"].([]any)
	if !ok {
		return doc
	}
	out := make([]any, 0, len(members))
	for _, m := range members {
		ref, _ := m.(map[string]any)
		id, _ := ref["@odata.id"].(string)
		if full, ok := b.render(cleanPath(id), now); ok {
			out = append(out, full)
		} else {
			out = append(out, m)
		}
	}
	return with(doc, out, "Members")
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON and could not be parsed by the receiving service.")
		return false
	}
	return true
}

// hostAt finds the host whose resource p is (or is under, with suffix).
func (b *bmc) hostAt(p, suffix string) *host {
	for _, h := range b.hosts {
		if p == h.path+suffix {
			return h
		}
	}
	return nil
}

// hostMedia finds the host whose virtual media is p (with suffix).
func (b *bmc) hostMedia(p, suffix string) *host {
	for _, h := range b.hosts {
		if h.vmediaPath != "" && p == h.vmediaPath+suffix {
			return h
		}
	}
	return nil
}

func (b *bmc) refused(method string) bool { return slices.Contains(b.spec.Refuse, method) }

// offlineUpdate reports whether p is an update the UpdateService takes
// (SimpleUpdate, a push) while update-offline holds.
func (b *bmc) offlineUpdate(p string) bool {
	pr := b.prof
	if p == "" || (p != pr.simpleUpdatePath && p != pr.pushPath && p != pr.multipartPath) {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.faults.updateOffline() != ""
}

func (b *bmc) post(w http.ResponseWriter, r *http.Request, p string) {
	pr := b.prof
	if h := b.hostAt(p, "/Actions/ComputerSystem.Reset"); h != nil {
		var req struct{ ResetType string }
		if !decodeBody(w, r, &req) {
			return
		}
		now := b.lock()
		err := b.power.reset(h, now, req.ResetType)
		b.mu.Unlock()
		if err != nil {
			writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueNotInList", err.Error(), "ResetType", req.ResetType)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if h := b.hostMedia(p, "/Actions/VirtualMedia.InsertMedia"); h != nil {
		var req struct {
			Image    string
			Inserted *bool
		}
		if !decodeBody(w, r, &req) {
			return
		}
		if req.Image == "" {
			writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing", "The action InsertMedia requires the parameter Image to be present in the request body.", "Image")
			return
		}
		b.insertMedia(w, h, &req.Image, req.Inserted)
		return
	}
	if h := b.hostMedia(p, "/Actions/VirtualMedia.EjectMedia"); h != nil {
		b.insertMedia(w, h, new(""), nil)
		return
	}
	switch {
	case (p == "/redfish/v1/SessionService/Sessions" || p == sessionsMe) && !pr.noSessions:
		b.createSession(w, r)
	case p == pr.managerPath+"/Actions/Manager.Reset":
		var req struct{ ResetType string }
		if !decodeBody(w, r, &req) {
			return
		}
		if req.ResetType != "" && !slices.Contains(managerResetTypes, req.ResetType) {
			writeParamError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueNotInList", fmt.Sprintf("ResetType %q is not one of %v", req.ResetType, managerResetTypes), "ResetType", req.ResetType)
			return
		}
		now := b.lock()
		// The BMC answers, then goes away: the reset starts a moment later.
		b.bmcReset(now.Add(10 * time.Millisecond))
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case b.offlineUpdate(p):
		writeError(w, http.StatusServiceUnavailable, "Base.1.8.ServiceDisabled", "The operation failed because the service at /redfish/v1/UpdateService is disabled and cannot accept requests.")
	case pr.simpleUpdatePath != "" && p == pr.simpleUpdatePath:
		if b.refused(MethodSimpleUpdate) {
			writeError(w, http.StatusBadRequest, "Base.1.8.ActionNotSupported", "The action SimpleUpdate is not supported by this service (it is disabled on this BMC); push the image instead.")
			return
		}
		b.simpleUpdate(w, r)
	case (pr.pushPath != "" && p == pr.pushPath) || (pr.multipartPath != "" && p == pr.multipartPath):
		b.push(w, r)
	default:
		b.mu.Lock()
		_, exists := b.render(p, b.fleet.opts.Now())
		b.mu.Unlock()
		if exists {
			writeError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "POST is not allowed on "+p+".")
			return
		}
		writeMissing(w, http.StatusNotFound, p)
	}
}

func (b *bmc) createSession(w http.ResponseWriter, r *http.Request) {
	var req struct{ UserName, Password string }
	if !decodeBody(w, r, &req) {
		return
	}
	if b.prof.basicOnLogin {
		if u, p, ok := r.BasicAuth(); !ok || !b.fleet.credentialsOK(u, p) {
			w.Header().Set("WWW-Authenticate", `Basic realm="Redfish"`)
			writeError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "This BMC wants HTTP Basic credentials on the session login as on every request; the credentials in the body alone are not enough.")
			return
		}
	}
	if !b.fleet.credentialsOK(req.UserName, req.Password) {
		writeError(w, http.StatusUnauthorized, "Base.1.8.ResourceAtUriUnauthorized", "While accessing the resource at /redfish/v1/SessionService/Sessions, the service received an authorization error.")
		return
	}
	b.mu.Lock()
	now := b.fleet.opts.Now()
	s := b.sessions.open(now)
	var doc map[string]any
	if s != nil {
		doc = b.sessions.doc(s)
	}
	b.mu.Unlock()
	if s == nil {
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusServiceUnavailable, "Base.1.8.SessionLimitExceeded", "The session establishment failed due to the number of simultaneous sessions exceeding the limit of the implementation.")
		return
	}
	w.Header().Set("X-Auth-Token", s.token)
	w.Header().Set("Location", "/redfish/v1/SessionService/Sessions/"+s.id)
	writeJSON(w, http.StatusCreated, doc)
}

func (b *bmc) patch(w http.ResponseWriter, r *http.Request, p string) {
	if h := b.hostAt(p, ""); h != nil {
		var req struct {
			Boot *struct {
				BootSourceOverrideTarget  *string
				BootSourceOverrideEnabled *string
				BootSourceOverrideMode    *string
			}
		}
		if !decodeBody(w, r, &req) {
			return
		}
		if req.Boot == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if t := req.Boot.BootSourceOverrideTarget; t != nil && !slices.Contains(bootTargets, *t) {
			writeParamError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", fmt.Sprintf("The value %q for the property BootSourceOverrideTarget is not in the list of acceptable values.", *t), "BootSourceOverrideTarget", *t)
			return
		}
		if e := req.Boot.BootSourceOverrideEnabled; e != nil && !slices.Contains(bootEnabled, *e) {
			writeParamError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", fmt.Sprintf("The value %q for the property BootSourceOverrideEnabled is not in the list of acceptable values.", *e), "BootSourceOverrideEnabled", *e)
			return
		}
		b.mu.Lock()
		if t := req.Boot.BootSourceOverrideTarget; t != nil {
			h.boot.target = *t
			if *t != "None" && req.Boot.BootSourceOverrideEnabled == nil && h.boot.enabled == "Disabled" {
				h.boot.enabled = "Once"
			}
		}
		if e := req.Boot.BootSourceOverrideEnabled; e != nil {
			h.boot.enabled = *e
		}
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if h := b.hostMedia(p, ""); h != nil {
		// iLO 4/5 style: PATCH Image (and Inserted) instead of InsertMedia.
		var req struct {
			Image    *string
			Inserted *bool
		}
		if decodeBody(w, r, &req) {
			b.insertMedia(w, h, req.Image, req.Inserted)
		}
		return
	}
	writeError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "PATCH is not allowed on "+p+".")
}

// insertMedia sets h's virtual media image (nil leaves it) and answers;
// Inserted false ejects it.
func (b *bmc) insertMedia(w http.ResponseWriter, h *host, image *string, inserted *bool) {
	b.mu.Lock()
	if image != nil {
		h.media.image = *image
	}
	if inserted != nil && !*inserted {
		h.media.image = ""
	}
	b.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (b *bmc) delete(w http.ResponseWriter, r *http.Request, p string) {
	id, ok := strings.CutPrefix(p, "/redfish/v1/SessionService/Sessions/")
	if !ok {
		writeError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "DELETE is not allowed on "+p+".")
		return
	}
	b.mu.Lock()
	found := b.sessions.remove(id)
	b.mu.Unlock()
	if !found {
		writeMissing(w, http.StatusNotFound, p)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

var (
	bootTargets = []string{"None", "Pxe", "Cd", "Usb", "Hdd", "BiosSetup", "Utilities", "Diags", "UefiShell", "UefiTarget", "SDCard", "UefiHttp", "RemoteDrive", "UefiBootNext", "Floppy"}
	bootEnabled = []string{"Disabled", "Once", "Continuous"}
)
