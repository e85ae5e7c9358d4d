package sim

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The protocol rules of the Redfish specification (DSP0266) that every
// simulated BMC follows whatever its profile: the OData-Version a client
// may ask for, the query parameters a service must refuse, the Allow
// header on every GET, HEAD and 405, and the Link header naming the
// schema of what a GET returns. DMTF's Redfish-Protocol-Validator checks
// each of them.

// supportedODataVersion is the only OData-Version a Redfish service speaks.
const supportedODataVersion = "4.0"

// checkODataVersion refuses a request for another OData version with 412
// Precondition Failed, as DSP0266 requires; a request without the header
// is served.
func checkODataVersion(w http.ResponseWriter, r *http.Request) bool {
	v := r.Header.Get("OData-Version")
	if v == "" || v == supportedODataVersion {
		return true
	}
	writeError(w, http.StatusPreconditionFailed, "Base.1.8.HeaderInvalid",
		"The request asks for OData-Version "+v+"; this service supports only "+supportedODataVersion+".")
	return false
}

// checkQuery refuses the query parameters DSP0266 says a service must
// refuse: a $ parameter it does not support (501 Not Implemented), and a
// value given to only or excerpt, which take none (400 Bad Request).
// Parameters without a $ that it does not know are ignored, as the
// specification asks. $expand is always accepted: a BMC that does not
// offer it ignores it, as many real BMCs do (NoExpand fleets, openbmc).
func checkQuery(w http.ResponseWriter, r *http.Request) bool {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.8.QueryParameterValueFormatError", "The query string of the request could not be read: "+err.Error())
		return false
	}
	for _, k := range sortedKeys(q) {
		switch {
		case k == "$expand":
		case k == "only" || k == "excerpt":
			if v := q.Get(k); v != "" {
				writeParamError(w, http.StatusBadRequest, "Base.1.8.QueryParameterValueFormatError",
					"The query parameter "+k+" takes no value, but the request gives it \""+v+"\".", k, v)
				return false
			}
		case strings.HasPrefix(k, "$"):
			writeParamError(w, http.StatusNotImplemented, "Base.1.8.QueryNotSupported",
				"The query parameter "+k+" is not supported by this service (it supports $expand, only).", k)
			return false
		}
	}
	return true
}

// onlyMember answers the only query on a collection: the member itself
// when the collection has exactly one, else the collection (DSP0266).
// ok is false when doc is no collection.
func (b *bmc) onlyMember(doc map[string]any, now time.Time) (map[string]any, bool) {
	members, isColl := doc["Members"].([]any)
	if !isColl {
		return nil, false
	}
	if len(members) != 1 {
		return doc, true
	}
	id, _ := members[0].(map[string]any)["@odata.id"].(string)
	if m, ok := b.render(cleanPath(id), now); ok {
		return m, true
	}
	return doc, true
}

// Methods, in the order the Allow header lists them.
var (
	readOnly   = []string{http.MethodGet, http.MethodHead}
	postOnly   = []string{http.MethodPost}
	patchable  = []string{http.MethodGet, http.MethodHead, http.MethodPatch}
	deletable  = []string{http.MethodGet, http.MethodHead, http.MethodDelete}
	creatable  = []string{http.MethodGet, http.MethodHead, http.MethodPost}
	sessionsMe = "/redfish/v1/SessionService/Sessions/Members"
)

// allowed lists the methods the resource or action at p answers, nil when
// there is nothing at p, and the document at p where it had to render it
// to know (get serves that one rather than render it again). b.mu is held.
func (b *bmc) allowed(p string, now time.Time) ([]string, map[string]any) {
	pr := b.prof
	switch p {
	case "/redfish", "/redfish/v1/odata", "/redfish/v1/$metadata":
		return readOnly, nil
	case "/redfish/v1/SessionService/Sessions":
		if pr.noSessions {
			return readOnly, nil // a disabled session service: Basic auth only
		}
		return creatable, nil
	case sessionsMe:
		if pr.noSessions {
			return nil, nil
		}
		return postOnly, nil
	case pr.managerPath + "/Actions/Manager.Reset":
		return postOnly, nil
	}
	if pr.simpleUpdatePath != "" && p == pr.simpleUpdatePath {
		return postOnly, nil
	}
	for _, h := range b.hosts {
		switch p {
		case h.path:
			return patchable, nil
		case h.path + "/Actions/ComputerSystem.Reset":
			return postOnly, nil
		}
		if h.vmediaPath == "" {
			continue
		}
		switch p {
		case h.vmediaPath:
			return patchable, nil
		case h.vmediaPath + "/Actions/VirtualMedia.InsertMedia", h.vmediaPath + "/Actions/VirtualMedia.EjectMedia":
			return postOnly, nil
		}
	}
	if strings.HasPrefix(p, "/redfish/v1/SessionService/Sessions/") && !pr.noSessions {
		if doc, ok := b.render(p, now); ok {
			return deletable, doc
		}
		return nil, nil
	}
	doc, exists := b.render(p, now)
	if !exists {
		if st, _, _, ok := b.tasks.monitor(p, now); ok && st != http.StatusNotFound {
			exists = true
		}
	}
	push := (pr.pushPath != "" && p == pr.pushPath) || (pr.multipartPath != "" && p == pr.multipartPath)
	switch {
	case push && exists:
		return creatable, doc
	case push:
		return postOnly, nil
	case exists:
		return readOnly, doc
	}
	return nil, nil
}

// allowHeader is the Allow header's value for methods.
func allowHeader(methods []string) string { return strings.Join(methods, ", ") }

// methodAllowed reports whether m is among methods (HEAD wherever GET is).
func methodAllowed(methods []string, m string) bool { return slices.Contains(methods, m) }

// describedBy is the Link header naming the JSON schema of doc's
// @odata.type ("#ServiceRoot.v1_5_0.ServiceRoot" →
// http://redfish.dmtf.org/schemas/v1/ServiceRoot.v1_5_0.json), "" when doc
// declares no type.
func describedBy(doc map[string]any) string {
	t, _ := doc["@odata.type"].(string)
	t = strings.TrimPrefix(t, "#")
	i := strings.LastIndex(t, ".")
	if i <= 0 {
		return ""
	}
	return "<http://redfish.dmtf.org/schemas/v1/" + t[:i] + ".json>; rel=describedby"
}

// etag is a weak entity tag of a response body: DSP0266 asks for an ETag
// on every GET of a ManagerAccount, and the simulator gives one to every
// JSON resource.
func etag(body []byte) string {
	h := fnv.New64a()
	h.Write(body)
	return fmt.Sprintf(`W/"%016x"`, h.Sum64())
}
