package sim

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServiceRootIsOpenAndTheRestNeedsCredentials(t *testing.T) {
	for _, p := range Profiles() {
		t.Run(p, func(t *testing.T) {
			_, u := one(t, Options{}, p)
			for _, open := range []string{"/redfish", "/redfish/v1", "/redfish/v1/", "/redfish/v1/odata", "/redfish/v1/$metadata"} {
				if r := call(t, "GET", u+open, nil, false); r.status != 200 {
					t.Errorf("GET %s without credentials: %d, want 200", open, r.status)
				}
			}
			root := call(t, "GET", u+"/redfish/v1/", nil, false).json(t)
			for _, k := range []string{"Systems", "Managers", "Chassis", "UpdateService", "SessionService"} {
				if str(at(root, k, "@odata.id")) == "" {
					t.Errorf("service root has no %s link", k)
				}
			}
			if got := str(at(root, "Links", "Sessions", "@odata.id")); got != "/redfish/v1/SessionService/Sessions" {
				t.Errorf("Links.Sessions = %q", got)
			}
			r := call(t, "GET", u+"/redfish/v1/Systems", nil, false)
			if r.status != 401 {
				t.Fatalf("GET Systems without credentials: %d, want 401", r.status)
			}
			if r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if code := str(at(r.json(t), "error", "code")); !strings.Contains(code, "NoValidSession") {
				t.Errorf("401 error code %q", code)
			}
			req, _ := http.NewRequest("GET", u+"/redfish/v1/Systems", nil)
			req.SetBasicAuth(testUser, "wrong")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 {
				t.Errorf("wrong password: %d, want 401", resp.StatusCode)
			}
		})
	}
}

func TestSessionLifecycle(t *testing.T) {
	f, u := one(t, Options{}, ProfileDMTF)
	r := call(t, "POST", u+"/redfish/v1/SessionService/Sessions", map[string]string{"UserName": testUser, "Password": testPass}, false)
	if r.status != 201 {
		t.Fatalf("create session: %d %s", r.status, r.body)
	}
	tok, loc := r.header.Get("X-Auth-Token"), r.header.Get("Location")
	if tok == "" || !hasPrefix(loc, "/redfish/v1/SessionService/Sessions/") {
		t.Fatalf("token %q location %q", tok, loc)
	}
	if got := str(r.json(t)["@odata.id"]); got != loc {
		t.Errorf("session @odata.id %q, Location %q", got, loc)
	}
	withToken := func(method, p string) int {
		req, _ := http.NewRequest(method, u+p, nil)
		req.Header.Set("X-Auth-Token", tok)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := withToken("GET", "/redfish/v1/Systems"); s != 200 {
		t.Fatalf("GET with token: %d", s)
	}
	members := get(t, u+"/redfish/v1/SessionService/Sessions")["Members"].([]any)
	if len(members) != 1 {
		t.Errorf("sessions listed: %d, want 1", len(members))
	}
	if st := f.Stats("s1"); st.SessionsOpen != 1 || st.SessionsCreated != 1 {
		t.Errorf("stats after create: %+v", st)
	}
	if s := withToken("DELETE", loc); s != 204 {
		t.Fatalf("DELETE session: %d", s)
	}
	if s := withToken("GET", "/redfish/v1/Systems"); s != 401 {
		t.Errorf("GET with deleted token: %d, want 401", s)
	}
	if st := f.Stats("s1"); st.SessionsOpen != 0 || st.SessionsDeleted != 1 {
		t.Errorf("stats after delete: %+v", st)
	}
	bad := call(t, "POST", u+"/redfish/v1/SessionService/Sessions", map[string]string{"UserName": testUser, "Password": "nope"}, false)
	if bad.status != 401 {
		t.Errorf("session with wrong password: %d", bad.status)
	}
}

func TestSessionLimit(t *testing.T) {
	f, u := one(t, Options{SessionLimit: 2}, ProfileILO5)
	create := func() int {
		return call(t, "POST", u+"/redfish/v1/SessionService/Sessions", map[string]string{"UserName": testUser, "Password": testPass}, false).status
	}
	got := []int{create(), create(), create()}
	if diff := cmp.Diff([]int{201, 201, 503}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if err := f.SetFault("s1", Fault{Kind: FaultSessionLimit, Limit: 0}); err != nil {
		t.Fatal(err)
	}
	if s := create(); s != 503 {
		t.Errorf("with session-limit:0 fault: %d, want 503", s)
	}
	if st := f.Stats("s1"); st.SessionsRefused != 2 {
		t.Errorf("SessionsRefused = %d, want 2", st.SessionsRefused)
	}
}

func TestProfilesShapes(t *testing.T) {
	type shape struct {
		System, Manager, Chassis string
		Inventory                []string
		SimpleUpdate             string
		Push, Multipart          string
	}
	want := map[string]shape{
		ProfileDMTF: {"/redfish/v1/Systems/437XR1138R2", "/redfish/v1/Managers/BMC", "/redfish/v1/Chassis/1U",
			[]string{"AC-RoT0", "BIOS", "BMC", "CPLD", "NIC"}, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", "/FWUpdate", "/redfish/v1/UpdateService/upload"},
		ProfileILO5: {"/redfish/v1/Systems/1", "/redfish/v1/Managers/1", "/redfish/v1/Chassis/1",
			[]string{"1", "10", "12", "2", "4", "6", "9"}, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", "/cgi-bin/uploadFile", "/cgi-bin/uploadFile"},
		ProfileAMI: {"/redfish/v1/Systems/Self", "/redfish/v1/Managers/Self", "/redfish/v1/Chassis/Self",
			[]string{"BIOS", "BMC", "BPB_CPLD1", "MB_CPLD1", "NIC"}, "/redfish/v1/UpdateService/Actions/SimpleUpdate", "", ""},
		ProfileOpenBMC: {"/redfish/v1/Systems/system", "/redfish/v1/Managers/bmc", "/redfish/v1/Chassis/chassis",
			[]string{"5d0869c4", "a3f1d5b2", "bios_active", "cpld_active", "nic_active"}, "", "/redfish/v1/UpdateService/update", "/redfish/v1/UpdateService/update"},
	}
	for _, p := range Profiles() {
		t.Run(p, func(t *testing.T) {
			_, u := one(t, Options{}, p)
			first := func(coll string) string {
				return str(at(get(t, u+coll), "Members").([]any)[0].(map[string]any)["@odata.id"])
			}
			var got shape
			got.System, got.Manager, got.Chassis = first("/redfish/v1/Systems"), first("/redfish/v1/Managers"), first("/redfish/v1/Chassis")
			for _, m := range get(t, u+"/redfish/v1/UpdateService/FirmwareInventory")["Members"].([]any) {
				item := get(t, u+str(m.(map[string]any)["@odata.id"]))
				got.Inventory = append(got.Inventory, str(item["Id"]))
			}
			sort.Strings(got.Inventory)
			us := get(t, u+"/redfish/v1/UpdateService")
			got.SimpleUpdate = str(at(us, "Actions", "#UpdateService.SimpleUpdate", "target"))
			got.Push, got.Multipart = str(us["HttpPushUri"]), str(us["MultipartHttpPushUri"])
			if diff := cmp.Diff(want[p], got); diff != "" {
				t.Errorf("shape (-want +got):\n%s", diff)
			}
			sys := get(t, u+got.System)
			if sys["PowerState"] != "On" || at(sys, "Status", "Health") != "OK" {
				t.Errorf("system power %v health %v", sys["PowerState"], at(sys, "Status", "Health"))
			}
			if str(at(sys, "Actions", "#ComputerSystem.Reset", "target")) != got.System+"/Actions/ComputerSystem.Reset" {
				t.Errorf("reset target %v", at(sys, "Actions", "#ComputerSystem.Reset"))
			}
			if allowed, _ := at(sys, "Boot", "BootSourceOverrideTarget@Redfish.AllowableValues").([]any); len(allowed) == 0 {
				t.Error("no allowable boot targets")
			}
			info := get(t, u+str(at(sys, "Actions", "#ComputerSystem.Reset", "@Redfish.ActionInfo")))
			if params, _ := info["Parameters"].([]any); len(params) == 0 || at(params[0].(map[string]any), "Name") != "ResetType" {
				t.Errorf("ResetActionInfo %v", info)
			}
			mgr := get(t, u+got.Manager)
			get(t, u+str(at(mgr, "Actions", "#Manager.Reset", "@Redfish.ActionInfo")))
			if mgr["FirmwareVersion"] == "" {
				t.Error("manager without FirmwareVersion")
			}
			get(t, u+got.Chassis)
			get(t, u+"/redfish/v1/TaskService")
			get(t, u+"/redfish/v1/TaskService/Tasks")
			sw := get(t, u+"/redfish/v1/UpdateService/SoftwareInventory")
			rt := get(t, u+str(sw["Members"].([]any)[0].(map[string]any)["@odata.id"]))
			if rt["SoftwareId"] != "Runtime" || rt["Updateable"] != false {
				t.Errorf("runtime item %v", rt)
			}
		})
	}
}

func TestInventoryReportsVersionsAndSoftwareId(t *testing.T) {
	f := start(t, Options{}, BMCSpec{Name: "s1", Profile: ProfileILO5, Firmware: map[string]string{"BIOS": "2.70", "Runtime": "4.5.0"}})
	u := f.BMCs()[0].URL
	item := get(t, u+"/redfish/v1/UpdateService/FirmwareInventory/2")
	got := map[string]any{"Id": item["Id"], "Name": item["Name"], "Version": item["Version"], "SoftwareId": item["SoftwareId"], "Updateable": item["Updateable"], "Health": at(item, "Status", "Health")}
	want := map[string]any{"Id": "2", "Name": "System ROM", "Version": "2.70", "SoftwareId": "BIOS", "Updateable": true, "Health": "OK"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BIOS item (-want +got):\n%s", diff)
	}
	if v := f.Versions("s1"); v["Runtime"] != "4.5.0" || v["BIOS"] != "2.70" || v["BMC"] != "2.46 May 11 2021" {
		t.Errorf("Versions = %v", v)
	}
}

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		profile  string
		expanded bool
	}{{ProfileDMTF, true}, {ProfileILO5, true}, {ProfileAMI, true}, {ProfileOpenBMC, false}} {
		t.Run(tc.profile, func(t *testing.T) {
			_, u := one(t, Options{}, tc.profile)
			root := get(t, u+"/redfish/v1/")
			if lv, _ := at(root, "ProtocolFeaturesSupported", "ExpandQuery", "Levels").(bool); lv != tc.expanded {
				t.Errorf("ExpandQuery.Levels = %v, want %v", lv, tc.expanded)
			}
			coll := get(t, u+"/redfish/v1/UpdateService/FirmwareInventory?$expand=.($levels=1)")
			m := coll["Members"].([]any)[0].(map[string]any)
			_, hasVersion := m["Version"]
			if hasVersion != tc.expanded {
				t.Errorf("expanded member has Version: %v, want %v (%v)", hasVersion, tc.expanded, m)
			}
		})
	}
}

func TestBootOverridePatch(t *testing.T) {
	_, u := one(t, Options{}, ProfileAMI)
	sys := "/redfish/v1/Systems/Self"
	r := call(t, "PATCH", u+sys, map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}}, true)
	if r.status != 204 {
		t.Fatalf("PATCH: %d %s", r.status, r.body)
	}
	doc := get(t, u+sys)
	if at(doc, "Boot", "BootSourceOverrideTarget") != "Cd" || at(doc, "Boot", "BootSourceOverrideEnabled") != "Once" {
		t.Errorf("Boot = %v", doc["Boot"])
	}
	if r := call(t, "PATCH", u+sys, map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Moon"}}, true); r.status != 400 {
		t.Errorf("PATCH bad target: %d, want 400", r.status)
	}
}

func TestNewRejectsBadSpecs(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec BMCSpec
		want string
	}{
		{"not loopback", BMCSpec{Name: "a", Addr: "10.0.0.1:443"}, "not loopback"},
		{"profile", BMCSpec{Name: "a", Addr: "127.0.0.1:0", Profile: "toaster"}, "unknown profile"},
		{"component", BMCSpec{Name: "a", Addr: "127.0.0.1:0", Firmware: map[string]string{"Toaster": "1"}}, "unknown component"},
		{"absent member", BMCSpec{Name: "a", Addr: "127.0.0.1:0", Absent: []string{"GPU9"}}, "no such inventory member"},
		{"health", BMCSpec{Name: "a", Addr: "127.0.0.1:0", Health: "Meh"}, "health"},
		{"no name", BMCSpec{Addr: "127.0.0.1:0"}, "empty name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Options{}, []BMCSpec{tc.spec})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := New(Options{}, []BMCSpec{{Name: "a", Addr: "127.0.0.1:9"}, {Name: "b", Addr: "127.0.0.1:9"}}); err == nil || !strings.Contains(err.Error(), "already used by a") {
		t.Errorf("duplicate address: %v", err)
	}
}

func TestStartNamesTheAddressThatFailed(t *testing.T) {
	f1 := start(t, Options{}, BMCSpec{Name: "first"})
	busy := strings.TrimPrefix(f1.BMCs()[0].URL, "http://")
	f2, err := New(Options{}, []BMCSpec{{Name: "ok", Addr: "127.0.0.1:0"}, {Name: "clash", Addr: busy}})
	if err != nil {
		t.Fatal(err)
	}
	err = f2.Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "clash") || !strings.Contains(err.Error(), busy) {
		t.Fatalf("Start error %v, want it to name clash and %s", err, busy)
	}
}
