package sim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// send sends one request with Basic auth and the given headers.
func send(t *testing.T, method, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(testUser, testPass)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	resp.Body.Close()
	return resp
}

// TestODataVersionIsChecked: a request for an OData version the service
// does not speak is refused with 412 Precondition Failed (DSP0266); 4.0
// and no header at all are served.
func TestODataVersionIsChecked(t *testing.T) {
	for _, p := range AllProfiles() {
		t.Run(p, func(t *testing.T) {
			_, u := one(t, Options{}, p)
			for v, want := range map[string]int{"4.1": 412, "3.0": 412, "4.0": 200, "": 200} {
				if got := send(t, "GET", u+"/redfish/v1/", map[string]string{"OData-Version": v}).StatusCode; got != want {
					t.Errorf("OData-Version %q: %d, want %d", v, got, want)
				}
			}
		})
	}
}

// TestAllowHeader: every GET and HEAD, and every 405, says in Allow which
// methods the URI takes (DSP0266 "Allow"); a method not listed is refused
// with 405.
func TestAllowHeader(t *testing.T) {
	_, u := one(t, Options{}, ProfileDMTF)
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/redfish/v1/", 200, "GET, HEAD"},
		{"HEAD", "/redfish/v1/", 200, "GET, HEAD"},
		{"DELETE", "/redfish/v1/", 405, "GET, HEAD"},
		{"PATCH", "/redfish/v1/", 405, "GET, HEAD"},
		{"POST", "/redfish/v1/", 405, "GET, HEAD"},
		{"FAKEMETHODFORTEST", "/redfish/v1/", 405, "GET, HEAD"},
		{"GET", "/redfish/v1/SessionService/Sessions", 200, "GET, HEAD, POST"},
		{"GET", "/redfish/v1/Systems/437XR1138R2", 200, "GET, HEAD, PATCH"},
		{"DELETE", "/redfish/v1/Systems/437XR1138R2", 405, "GET, HEAD, PATCH"},
		{"GET", "/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", 405, "POST"},
		{"GET", "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", 405, "POST"},
		{"GET", "/FWUpdate", 405, "POST"},
		{"GET", "/redfish/v1/UpdateService/FirmwareInventory/BIOS", 200, "GET, HEAD"},
		{"GET", "/redfish/v1/AccountService/Roles", 200, "GET, HEAD"},
		{"GET", "/redfish/v1/NoSuchThing", 404, ""},
	} {
		resp := send(t, tc.method, u+tc.path, nil)
		if resp.StatusCode != tc.status || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q, want %d Allow %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), tc.status, tc.allow)
		}
	}
}

// TestQueryParameters: DSP0266's query rules. An unknown parameter without
// $ is ignored; an unsupported $ parameter is 501 Not Implemented; only
// and excerpt take no value (400 when given one); only on a collection of
// one member answers that member, and on a resource that is no collection
// is 400.
func TestQueryParameters(t *testing.T) {
	for _, p := range AllProfiles() {
		t.Run(p, func(t *testing.T) {
			_, u := one(t, Options{}, p)
			for q, want := range map[string]int{
				"?rpvunknown":     200,
				"?$rpvunknown":    501,
				"?$select=Id":     501,
				"?$filter=Id":     501,
				"?$top=1":         501,
				"?excerpt=foo":    400,
				"?only=foo":       400,
				"?$expand=.":      200,
				"?excerpt":        200,
				"?$rpvunknown=1&": 501,
			} {
				if got := send(t, "GET", u+"/redfish/v1/"+q, nil).StatusCode; got != want {
					t.Errorf("GET /redfish/v1/%s: %d, want %d", q, got, want)
				}
			}
			want := "#ComputerSystem." // the one system
			if p == ProfileCrayEX {
				want = "#ComputerSystemCollection." // two: the collection
			}
			sys := call(t, "GET", u+"/redfish/v1/Systems?only", nil, true)
			if sys.status != 200 || !strings.HasPrefix(str(sys.json(t)["@odata.type"]), want) {
				t.Errorf("Systems?only: %d %s, want %s", sys.status, sys.body, want)
			}
			if r := call(t, "GET", u+"/redfish/v1/Managers?only", nil, true); r.status != 200 || !strings.HasPrefix(str(r.json(t)["@odata.type"]), "#Manager.") {
				t.Errorf("Managers?only: %d %s, want the one manager", r.status, r.body)
			}
			if r := call(t, "GET", u+"/redfish/v1/?only", nil, true); r.status != 400 {
				t.Errorf("service root ?only: %d, want 400 (not a collection)", r.status)
			}
		})
	}
}

// TestLinkHeaderNamesTheSchema: a GET answers a Link header with
// rel=describedby naming the JSON schema of its @odata.type, version
// included.
func TestLinkHeaderNamesTheSchema(t *testing.T) {
	for _, p := range AllProfiles() {
		t.Run(p, func(t *testing.T) {
			_, u := one(t, Options{}, p)
			for _, path := range []string{"/redfish/v1/", "/redfish/v1/Systems", "/redfish/v1/AccountService"} {
				r := call(t, "GET", u+path, nil, true)
				typ := strings.TrimPrefix(str(r.json(t)["@odata.type"]), "#")
				want := "<http://redfish.dmtf.org/schemas/v1/" + typ[:strings.LastIndex(typ, ".")] + ".json>; rel=describedby"
				if got := r.header.Get("Link"); got != want {
					t.Errorf("%s: Link %q, want %q", path, got, want)
				}
			}
		})
	}
}

// TestETag: a GET of a ManagerAccount (of every JSON resource) carries an
// ETag, which changes with the resource.
func TestETag(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileDMTF, PowerOn: true})
	u := f.BMCs()[0].URL
	if e := call(t, "GET", u+"/redfish/v1/AccountService/Accounts/1", nil, true).header.Get("ETag"); !strings.HasPrefix(e, `W/"`) {
		t.Errorf("account ETag %q", e)
	}
	before := call(t, "GET", u+"/redfish/v1/Systems/437XR1138R2", nil, true).header.Get("ETag")
	call(t, "POST", u+"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"}, true)
	if after := call(t, "GET", u+"/redfish/v1/Systems/437XR1138R2", nil, true).header.Get("ETag"); after == before || after == "" {
		t.Errorf("system ETag %q before a power off, %q after", before, after)
	}
}

// TestPostToMembersCreatesASession: posting to a collection's Members
// creates a member as posting to the collection does (DSP0266), without
// credentials other than the login's own.
func TestPostToMembersCreatesASession(t *testing.T) {
	f, u := one(t, Options{}, ProfileDMTF)
	r := call(t, "POST", u+"/redfish/v1/SessionService/Sessions/Members", map[string]string{"UserName": testUser, "Password": testPass}, false)
	if r.status != 201 || r.header.Get("X-Auth-Token") == "" {
		t.Fatalf("POST Sessions/Members: %d %s, want 201 with a token", r.status, r.body)
	}
	if st := f.Stats("s1"); st.SessionsCreated != 1 {
		t.Errorf("sessions created %d, want 1", st.SessionsCreated)
	}
}

// TestStandardRoles: the AccountService, linked from the service root,
// serves the three roles DSP0266 makes mandatory, predefined, and the
// fleet's user as an Administrator.
func TestStandardRoles(t *testing.T) {
	for _, p := range AllProfiles() {
		t.Run(p, func(t *testing.T) {
			_, u := one(t, Options{}, p)
			as := get(t, u+str(at(get(t, u+"/redfish/v1/"), "AccountService", "@odata.id")))
			var roles []string
			for _, m := range get(t, u+str(at(as, "Roles", "@odata.id")))["Members"].([]any) {
				role := get(t, u+str(m.(map[string]any)["@odata.id"]))
				if role["IsPredefined"] != true || role["RoleId"] != role["Id"] {
					t.Errorf("role %v", role)
				}
				roles = append(roles, str(role["RoleId"]))
			}
			if diff := cmp.Diff([]string{"Administrator", "Operator", "ReadOnly"}, roles); diff != "" {
				t.Errorf("roles (-want +got):\n%s", diff)
			}
			acct := get(t, u+str(get(t, u+str(at(as, "Accounts", "@odata.id")))["Members"].([]any)[0].(map[string]any)["@odata.id"]))
			if acct["UserName"] != testUser || acct["RoleId"] != "Administrator" {
				t.Errorf("account %v", acct)
			}
		})
	}
}

// TestODataServiceDocument: every profile serves the OData service
// document, open to all, listing the service root's resources.
func TestODataServiceDocument(t *testing.T) {
	for _, p := range AllProfiles() {
		t.Run(p, func(t *testing.T) {
			_, u := one(t, Options{}, p)
			r := call(t, "GET", u+"/redfish/v1/odata", nil, false)
			if r.status != 200 {
				t.Fatalf("GET odata without credentials: %d", r.status)
			}
			doc := r.json(t)
			urls := map[string]bool{}
			for _, v := range doc["value"].([]any) {
				urls[str(v.(map[string]any)["url"])] = true
			}
			if doc["@odata.context"] != "/redfish/v1/$metadata" || !urls["/redfish/v1/"] || !urls["/redfish/v1/Systems"] || !urls["/redfish/v1/UpdateService"] {
				t.Errorf("odata %v", doc)
			}
		})
	}
}
