package redfish

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rackform/rackform/internal/testenv"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/mockup"
)

// notFound answers 404 for the given paths (and what lies under them), as
// a BMC without those resources does.
func notFound(paths ...string) mockupOpt {
	return intercept(func(w http.ResponseWriter, r *http.Request) bool {
		for _, p := range paths {
			if r.URL.Path == p || strings.HasPrefix(r.URL.Path, p+"/") {
				mockup.WriteError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+r.URL.Path+" was not found.")
				return true
			}
		}
		return false
	})
}

// captureJSON reads one capture document.
func captureJSON(t *testing.T, dir, uri string) map[string]any {
	t.Helper()
	rel := strings.TrimPrefix(uri, "/redfish/v1")
	b, err := os.ReadFile(filepath.Join(testenv.Mockup(t, dir), filepath.FromSlash(rel), "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// serveJSON answers uri with doc (a map built by the test) while the
// capture serves everything else.
func serveJSON(docs map[string]func() any) mockupOpt {
	return intercept(func(w http.ResponseWriter, r *http.Request) bool {
		fn := docs[strings.TrimSuffix(r.URL.Path, "/")]
		if fn == nil || r.Method != http.MethodGet {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(fn())
		return true
	})
}

// singleLine checks a diagnostic is one readable line: no raw JSON body,
// no newline, no secret.
func singleLine(t *testing.T, o *providers.Observation, secrets ...string) string {
	t.Helper()
	if len(o.Diagnostics) != 1 {
		t.Fatalf("%d diagnostics, want one: %+v", len(o.Diagnostics), o.Diagnostics)
	}
	msg := o.Diagnostics[0].Summary + ": " + o.Diagnostics[0].Detail
	if strings.Contains(msg, "\n") || strings.Contains(msg, `{"`) || strings.Contains(msg, `\"`) || strings.Contains(msg, `"error"`) {
		t.Errorf("diagnostic is not one readable line: %q", msg)
	}
	assertNoSecret(t, msg, secrets...)
	t.Logf("%s → %s", o.EffectiveOutcome(), msg)
	return msg
}

// TestObserveOutcomes names what observing found for each cause, with one
// readable line built from the Redfish error's message.
func TestObserveOutcomes(t *testing.T) {
	const rack = "dmtf/public-rackmount1"
	wrong := &providers.Credentials{Username: testUser, Password: "wr0ng-password"}
	cases := []struct {
		name    string
		opts    []mockupOpt
		target  func(m *mockupServer) providers.Target
		attrs   func(m *mockupServer) map[string]any
		outcome string
		says    []string
	}{
		{name: "nothing listening", target: func(*mockupServer) providers.Target {
			return providers.Target{Name: "s", Endpoint: "https://127.0.0.1:1"}
		}, attrs: func(*mockupServer) map[string]any {
			return map[string]any{"timeout": "1s", "retry_max_attempts": 2, "retry_base_delay": "1ms", "retry_max_delay": "2ms"}
		}, outcome: providers.OutcomeUnreachable, says: []string{"Server unreachable", "connection refused"}},
		{name: "untrusted certificate", attrs: func(*mockupServer) map[string]any { return map[string]any{} },
			outcome: providers.OutcomeUnreachable, says: []string{"TLS certificate not trusted"}},
		{name: "no answer in time", opts: []mockupOpt{intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasPrefix(r.URL.Path, "/redfish/v1/Systems") {
				<-r.Context().Done() // hangs until the client gives up
				return true
			}
			return false
		})}, attrs: func(m *mockupServer) map[string]any {
			return map[string]any{"ca_bundle": caPEM(m), "timeout": "200ms", "retry_max_attempts": 1}
		}, outcome: providers.OutcomeUnreachable, says: []string{"Server unreachable", "timed out", "no answer within 200ms"}},
		// The connection dropped before any HTTP answer: nothing answered.
		{name: "reset before an answer", opts: []mockupOpt{intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasPrefix(r.URL.Path, "/redfish/v1/Systems") {
				panic(http.ErrAbortHandler) // the server drops the connection (or the stream) unanswered
			}
			return false
		})}, attrs: func(m *mockupServer) map[string]any {
			return map[string]any{"ca_bundle": caPEM(m), "retry_max_attempts": 1}
		}, outcome: providers.OutcomeUnreachable, says: []string{"Server unreachable", "/redfish/v1/Systems"}},
		{name: "wrong password at session login", target: func(m *mockupServer) providers.Target {
			return providers.Target{Name: "s", Endpoint: m.URL, Credentials: wrong}
		}, outcome: providers.OutcomeCredentialsRefused, says: []string{"BMC refused the credentials", `user "operator"`, "HTTP 401", "The user name or password is not valid."}},
		{name: "wrong password with Basic auth on reads", opts: []mockupOpt{basicOnly}, target: func(m *mockupServer) providers.Target {
			return providers.Target{Name: "s", Endpoint: m.URL, Credentials: wrong}
		}, outcome: providers.OutcomeCredentialsRefused, says: []string{"BMC refused the credentials", "HTTP 401", "There is no valid session"}},
		{name: "forbidden on reads", opts: []mockupOpt{intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasPrefix(r.URL.Path, "/redfish/v1/Systems") {
				mockup.WriteError(w, http.StatusForbidden, "Base.1.8.InsufficientPrivilege", "There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.")
				return true
			}
			return false
		})}, outcome: providers.OutcomeCredentialsRefused, says: []string{"HTTP 403", "insufficient privileges"}},
		// Answers and authenticates, but gives no versions anywhere: no
		// FirmwareInventory, no BiosVersion (OpenBMC's System has none),
		// no Manager.
		{name: "no inventory and no fallback", opts: []mockupOpt{notFound("/redfish/v1/UpdateService/FirmwareInventory", "/redfish/v1/Managers")},
			target:  func(m *mockupServer) providers.Target { return providers.Target{Name: "s", Endpoint: m.URL} },
			outcome: providers.OutcomeInventoryUnavailable, says: []string{"No firmware inventory", "HTTP 404", "was not found", "BiosVersion"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := rack
			if c.outcome == providers.OutcomeInventoryUnavailable {
				dir = "csm/OpenBMC-stock"
			}
			m := newMockupServer(t, dir, c.opts...)
			attrs := map[string]any{"ca_bundle": caPEM(m)}
			if c.attrs != nil {
				attrs = c.attrs(m)
			}
			target := providers.Target{Name: "s", Endpoint: m.URL}
			if c.target != nil {
				target = c.target(m)
			}
			p := configure(t, Options{}, attrs)
			o := observeAll(t, p, target)[0]
			if o.Outcome != c.outcome || o.Reachable {
				t.Fatalf("outcome %q (reachable %v), want %q: %v", o.Outcome, o.Reachable, c.outcome, o.Diagnostics.Err())
			}
			msg := singleLine(t, o, testPassword, "wr0ng-password")
			for _, s := range c.says {
				if !strings.Contains(msg, s) {
					t.Errorf("diagnostic %q does not say %q", msg, s)
				}
			}
		})
	}
}

// TestObserveScrubsEchoedPassword: a BMC that echoes the login body, the
// password in it, gets it scrubbed from the one-line diagnostic.
func TestObserveScrubsEchoedPassword(t *testing.T) {
	m := newMockupServer(t, "csm/Gigabyte", echoLogin)
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
	msg := singleLine(t, o, testPassword)
	if o.Outcome != providers.OutcomeUnusableAnswer || !strings.Contains(msg, "cannot parse") || !strings.Contains(msg, "***") {
		t.Errorf("outcome %q, diagnostic %q: want the BMC's words with the password scrubbed", o.Outcome, msg)
	}
}

// TestObserveInventoryFallback: without FirmwareInventory, the BIOS
// version is read from ComputerSystem.BiosVersion (component BIOS, source
// system) and the BMC's from Manager.FirmwareVersion (component BMC,
// source manager); an update of either plans SimpleUpdate naming that
// System or Manager in Targets.
func TestObserveInventoryFallback(t *testing.T) {
	m := newMockupServer(t, "csm/Gigabyte", notFound("/redfish/v1/UpdateService/FirmwareInventory"))
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL, Updates: []providers.UpdateIntent{
		{Component: "bios", Match: providers.Match{ID: "BIOS"}, ImageURI: "http://images.example/bios.bin"},
		{Component: "bmc", Match: providers.Match{ID: "BMC"}, ImageURI: "http://images.example/bmc.bin"},
	}})[0]
	if o.Outcome != providers.OutcomeObserved {
		t.Fatalf("outcome %q: %v", o.Outcome, o.Diagnostics.Err())
	}
	want := []providers.Component{
		{ID: "BIOS", Name: "BIOS (Self)", Version: "C27", Updateable: true, Source: providers.SourceSystem, State: providers.StateActive, StateSign: "ComputerSystem.BiosVersion"},
		{ID: "BMC", Name: "BMC (Self)", Version: "12.84.13", Updateable: true, Source: providers.SourceManager, State: providers.StateActive, StateSign: "Manager.FirmwareVersion"},
	}
	if len(o.Components) != 2 || o.Components[0] != want[0] || o.Components[1] != want[1] {
		t.Errorf("components %+v, want %+v", o.Components, want)
	}
	wantPlans := []providers.UpdatePlan{
		{Component: "bios", Method: "simple_update", TransferProtocol: "HTTP", Targets: []string{"/redfish/v1/Systems/Self"}},
		{Component: "bmc", Method: "simple_update", TransferProtocol: "HTTP", Targets: []string{"/redfish/v1/Managers/Self"}},
	}
	for i, w := range wantPlans {
		if i >= len(o.Updates) || o.Updates[i].Method != w.Method || o.Updates[i].TransferProtocol != w.TransferProtocol ||
			strings.Join(o.Updates[i].Targets, ",") != strings.Join(w.Targets, ",") || o.Updates[i].Problem != "" {
			t.Errorf("plan %d: %+v, want %+v", i, o.Updates, w)
		}
	}
	if len(o.Diagnostics) != 1 || o.Diagnostics[0].Severity != providers.Warning || !strings.Contains(o.Diagnostics[0].Detail, "BiosVersion") {
		t.Errorf("want one warning saying where the versions were read: %+v", o.Diagnostics)
	}
}

// twoNodes serves the EX235a capture as a two-node card: Node1 is Node0's
// document under another Id and UUID, and the inventory gains a Node1.BIOS
// member (and an Id-less link to it), so attribution can be checked.
func twoNodes(t *testing.T) mockupOpt {
	const dir = "csm/EX235a"
	var mu sync.Mutex
	node := func(id, uuid string) func() any {
		return func() any {
			mu.Lock()
			defer mu.Unlock()
			d := captureJSON(t, dir, "/redfish/v1/Systems/Node0")
			raw, _ := json.Marshal(d)
			d = map[string]any{}
			_ = json.Unmarshal([]byte(strings.ReplaceAll(string(raw), "Node0", id)), &d)
			d["UUID"], d["SerialNumber"] = uuid, "SN-"+id
			return d
		}
	}
	return serveJSON(map[string]func() any{
		"/redfish/v1/Systems": func() any {
			d := captureJSON(t, dir, "/redfish/v1/Systems")
			d["Members"] = []any{map[string]any{"@odata.id": "/redfish/v1/Systems/Node0"}, map[string]any{"@odata.id": "/redfish/v1/Systems/Node1"}}
			d["Members@odata.count"] = 2
			return d
		},
		"/redfish/v1/Systems/Node0": node("Node0", "00000000-0000-0000-0000-0000000000a0"),
		"/redfish/v1/Systems/Node1": node("Node1", "00000000-0000-0000-0000-0000000000a1"),
		"/redfish/v1/UpdateService/FirmwareInventory": func() any {
			d := captureJSON(t, dir, "/redfish/v1/UpdateService/FirmwareInventory")
			d["Members"] = append(d["Members"].([]any), map[string]any{"@odata.id": "/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS"})
			return d
		},
		"/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS": func() any {
			d := captureJSON(t, dir, "/redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS")
			d["@odata.id"], d["Id"], d["Name"], d["Version"] = "/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS", "Node1.BIOS", "Node1.BIOS", "ex235a.bios-1.3.7"
			return d
		},
	})
}

// TestObserveSeveralSystems: on a BMC serving Node0 and Node1, a server
// naming neither is unresolved with the BMC's systems listed; one naming
// Node1 (by Id or UUID) sees Node1's BIOS, not Node0's, the BMC's own
// members as shared, and its own identity; both share one session.
func TestObserveSeveralSystems(t *testing.T) {
	m := newMockupServer(t, "csm/EX235a", twoNodes(t))
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	obs := observeAll(t, p,
		providers.Target{Name: "none", Endpoint: m.URL},
		providers.Target{Name: "wrong", Endpoint: m.URL, System: "Node7"},
		providers.Target{Name: "n1", Endpoint: m.URL, System: "Node1"},
		providers.Target{Name: "n0", Endpoint: m.URL, System: "00000000-0000-0000-0000-0000000000A0"},
	)
	by := map[string]*providers.Observation{}
	for _, o := range obs {
		by[o.Server] = o
	}
	for _, name := range []string{"none", "wrong"} {
		o := by[name]
		if o.Outcome != providers.OutcomeSystemUnresolved || len(o.Systems) != 2 || o.Systems[1].ID != "Node1" || o.Systems[1].UUID == "" || o.Systems[1].Name == "" {
			t.Errorf("%s: outcome %q systems %+v, want system_unresolved listing Node0 and Node1", name, o.Outcome, o.Systems)
		}
		msg := singleLine(t, o)
		if !strings.Contains(msg, "Node0") || !strings.Contains(msg, "Node1") {
			t.Errorf("%s: %q does not list the systems", name, msg)
		}
	}
	n1 := by["n1"]
	if n1.Outcome != providers.OutcomeObserved || n1.System != "Node1" || n1.Identity.SerialNumber != "SN-Node1" {
		t.Fatalf("n1: outcome %q system %q identity %+v: %v", n1.Outcome, n1.System, n1.Identity, n1.Diagnostics.Err())
	}
	comps := map[string]providers.Component{}
	for _, c := range n1.Components {
		comps[c.ID] = c
	}
	if _, ok := comps["Node0.BIOS"]; ok {
		t.Error("Node1 reports Node0's BIOS")
	}
	if c, ok := comps["Node1.BIOS"]; !ok || c.Shared || c.Version != "ex235a.bios-1.3.7" {
		t.Errorf("Node1.BIOS %+v, want Node1's own", c)
	}
	if c := comps["BMC"]; !c.Shared {
		t.Errorf("BMC %+v, want shared by both nodes", c)
	}
	if n0 := by["n0"]; n0.System != "Node0" || n0.Identity.UUID != "00000000-0000-0000-0000-0000000000a0" {
		t.Errorf("n0 by UUID in other case: system %q identity %+v", n0.System, n0.Identity)
	}
	if n := m.OpenSessions(); n != 0 {
		t.Errorf("%d sessions open after observing four servers on one BMC, want 0 (their one shared session deleted)", n)
	}
	logins := 0
	for _, l := range m.Log() {
		if strings.HasPrefix(l, "POST ") && strings.Contains(l, "/Sessions") {
			logins++
		}
	}
	if n := logins; n != 1 {
		t.Errorf("%d sessions created for four servers on one BMC, want 1 shared", n)
	}
}

// TestObserveFallbackBesideSoftwareInventory: an iLO without its
// FirmwareInventory still lists SoftwareInventory; those members are kept
// and the BIOS and BMC versions come from the System and Manager.
func TestObserveFallbackBesideSoftwareInventory(t *testing.T) {
	m := newMockupServer(t, "csm/DL325", notFound("/redfish/v1/UpdateService/FirmwareInventory"))
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
	if o.Outcome != providers.OutcomeObserved {
		t.Fatalf("outcome %q: %v", o.Outcome, o.Diagnostics.Err())
	}
	bios, okB := providers.Match{ID: "BIOS"}.Find(o.Components)
	bmc, okM := providers.Match{ID: "BMC"}.Find(o.Components)
	if !okB || bios.Source != providers.SourceSystem || bios.Version != "A43 v2.52 (10/29/2021)" {
		t.Errorf("BIOS %+v, want the System's BiosVersion", bios)
	}
	if !okM || bmc.Source != providers.SourceManager || bmc.Version != "iLO 5 v2.46" {
		t.Errorf("BMC %+v, want the Manager's FirmwareVersion", bmc)
	}
	if len(o.Components) < 30 {
		t.Errorf("%d components: the SoftwareInventory members were lost", len(o.Components))
	}
}

// TestObserveBMCWithoutSystem: the Slingshot switch blade's controller,
// served unmodified, answers every request and lists a Manager, a Chassis
// and a FirmwareInventory, but no Systems collection. It answered, so it
// is not unreachable: the outcome says it has no ComputerSystem, with the
// request and the status (rule 46).
func TestObserveBMCWithoutSystem(t *testing.T) {
	m := newMockupServer(t, "csm/Slingshot_Switch_Blade")
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
	if o.Outcome != providers.OutcomeUnusableAnswer || o.Reachable {
		t.Fatalf("outcome %q (reachable %v), want %q: %v", o.Outcome, o.Reachable, providers.OutcomeUnusableAnswer, o.Diagnostics.Err())
	}
	msg := singleLine(t, o)
	for _, want := range []string{"BMC answered without what the plan needs", "the BMC answered, but has no ComputerSystem: GET /redfish/v1/Systems returned 404 Not Found"} {
		if !strings.Contains(msg, want) {
			t.Errorf("diagnostic %q does not say %q", msg, want)
		}
	}
	if strings.Contains(strings.ToLower(msg), "unreachable") {
		t.Errorf("diagnostic %q calls a BMC that answered unreachable", msg)
	}
}

// TestObserveAnsweredIsNotUnreachable: every HTTP answer other than
// 401/403 that is not what the plan needs (an error status after retries,
// a body that is not JSON, an empty Systems collection) is
// unusable_answer naming the request and its status; only what no HTTP
// answer came back for is unreachable (TestObserveOutcomes holds those).
func TestObserveAnsweredIsNotUnreachable(t *testing.T) {
	fail := func(path string, status int) mockupOpt {
		return intercept(func(w http.ResponseWriter, r *http.Request) bool {
			if strings.TrimSuffix(r.URL.Path, "/") != path {
				return false
			}
			if status == http.StatusNotFound {
				mockup.WriteError(w, status, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+r.URL.Path+" was not found.")
			} else {
				mockup.WriteError(w, status, "Base.1.8.InternalError", "The request failed due to an internal service error.")
			}
			return true
		})
	}
	garbled := intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.TrimSuffix(r.URL.Path, "/") != "/redfish/v1/Systems" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Members": [`))
		return true
	})
	empty := serveJSON(map[string]func() any{"/redfish/v1/Systems": func() any {
		return map[string]any{"@odata.id": "/redfish/v1/Systems", "Members": []any{}, "Members@odata.count": 0}
	}})
	cases := []struct {
		name string
		opt  mockupOpt
		says string
	}{
		{"server error on the Systems collection", fail("/redfish/v1/Systems", http.StatusInternalServerError),
			"the BMC answered, but did not give its ComputerSystem: GET /redfish/v1/Systems returned 500 Internal Server Error (Base.1.8.InternalError: The request failed"},
		{"server error on the inventory", fail("/redfish/v1/UpdateService/FirmwareInventory", http.StatusBadGateway),
			"the BMC answered, but did not give its firmware inventory: GET /redfish/v1/UpdateService/FirmwareInventory returned 502 Bad Gateway"},
		{"no service root", fail("/redfish/v1", http.StatusNotFound),
			"the BMC answered, but has no Redfish service root: GET /redfish/v1/ returned 404 Not Found"},
		{"session refused with 400", echoLogin,
			"the BMC answered, but did not create a session: POST /redfish/v1/SessionService/Sessions returned 400 Bad Request"},
		{"garbled Systems collection", garbled,
			"the BMC answered, but did not give its ComputerSystem: GET /redfish/v1/Systems returned a body that is not JSON"},
		{"a system member gone", fail("/redfish/v1/Systems/437XR1138R2", http.StatusGone),
			"the BMC answered, but has no ComputerSystem: GET /redfish/v1/Systems/437XR1138R2 returned 410 Gone"},
		{"empty Systems collection", empty,
			"the BMC answered, but has no ComputerSystem: GET /redfish/v1/Systems lists no members"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMockupServer(t, "dmtf/public-rackmount1", c.opt)
			p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m), "retry_max_attempts": 2, "retry_base_delay": "1ms", "retry_max_delay": "2ms"})
			o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
			if o.Outcome != providers.OutcomeUnusableAnswer || o.Reachable {
				t.Fatalf("outcome %q (reachable %v), want %q: %v", o.Outcome, o.Reachable, providers.OutcomeUnusableAnswer, o.Diagnostics.Err())
			}
			if msg := singleLine(t, o, testPassword); !strings.Contains(msg, c.says) {
				t.Errorf("diagnostic %q does not say %q", msg, c.says)
			}
		})
	}
}

// TestObserveUpdateServiceOffline: an UpdateService that says it takes no
// update (Status.State UnavailableOffline, as a GPU tray's does, or
// ServiceEnabled false) gets no update plan: every intent's Problem names
// the service and its state (rule 47). The capture's own, Enabled, is
// planned.
func TestObserveUpdateServiceOffline(t *testing.T) {
	const dir = "dmtf/public-rackmount1"
	intent := []providers.UpdateIntent{{Component: "bios", Match: providers.Match{ID: "BIOS"}, ImageURI: "https://images.example/bios.bin"}}
	cases := []struct {
		name string
		edit func(d map[string]any)
		says string
	}{
		{"enabled, as captured", func(map[string]any) {}, ""},
		{"UnavailableOffline", func(d map[string]any) { d["Status"].(map[string]any)["State"] = "UnavailableOffline" },
			"the BMC's UpdateService (/redfish/v1/UpdateService) is not enabled (Status.State UnavailableOffline), so it takes no image in this run"},
		{"StandbyOffline", func(d map[string]any) { d["Status"].(map[string]any)["State"] = "StandbyOffline" },
			"is not enabled (Status.State StandbyOffline)"},
		{"ServiceEnabled false", func(d map[string]any) {
			d["ServiceEnabled"] = false
			d["Status"].(map[string]any)["State"] = "Disabled"
		}, "the BMC's UpdateService (/redfish/v1/UpdateService) is disabled (ServiceEnabled is false, Status.State Disabled), so it takes no image in this run"},
		{"Degraded still serves", func(d map[string]any) { d["Status"].(map[string]any)["State"] = "Degraded" }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMockupServer(t, dir, serveJSON(map[string]func() any{"/redfish/v1/UpdateService": func() any {
				d := captureJSON(t, dir, "/redfish/v1/UpdateService")
				c.edit(d)
				return d
			}}))
			p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
			o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL, Updates: intent})[0]
			if o.Outcome != providers.OutcomeObserved || len(o.Updates) != 1 {
				t.Fatalf("outcome %q, %d update plans: %v", o.Outcome, len(o.Updates), o.Diagnostics.Err())
			}
			up := o.Updates[0]
			switch {
			case c.says == "" && (up.Problem != "" || up.Method == ""):
				t.Errorf("plan %+v, want a method and no problem", up)
			case c.says != "" && (!strings.Contains(up.Problem, c.says) || up.Method != ""):
				t.Errorf("plan %+v, want no method and a problem saying %q", up, c.says)
			}
		})
	}
}

// TestLacksNamesWhatTheBMCDoesNotGive: the words for what a BMC that
// answered does not give, by request and status.
func TestLacksNamesWhatTheBMCDoesNotGive(t *testing.T) {
	for _, c := range []struct {
		method, uri string
		status      int
		want        string
	}{
		{http.MethodGet, "/redfish/v1/Systems", http.StatusNotFound, "has no ComputerSystem"},
		{http.MethodGet, "/redfish/v1/Managers/1", http.StatusServiceUnavailable, "did not give its Manager"},
		{http.MethodGet, "/redfish/v1/UpdateService", http.StatusMethodNotAllowed, "has no UpdateService"},
		{http.MethodGet, "/redfish/v1/TaskService", http.StatusNotImplemented, "does not serve a resource the plan reads"},
		{http.MethodGet, "/redfish/v1/TaskService", http.StatusInternalServerError, "did not give a resource the plan reads"},
		{http.MethodPost, "/redfish/v1/SessionService/Sessions", http.StatusBadRequest, "did not create a session"},
	} {
		if got := lacks(&requestError{method: c.method, uri: c.uri, err: errors.New("x")}, c.status); got != c.want {
			t.Errorf("%s %s %d: %q, want %q", c.method, c.uri, c.status, got, c.want)
		}
	}
}
