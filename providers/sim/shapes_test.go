package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBasicProfile: an older BMC with no FirmwareInventory and no
// SessionService. Versions are only in ComputerSystem.BiosVersion and
// Manager.FirmwareVersion; SimpleUpdate needs Targets naming the System
// (BIOS) or the Manager (BMC), answers 204 with a Location to a task that
// is already Completed and 404s later; BIOS changes after a host reset,
// BMC after the BMC's own restart.
func TestBasicProfile(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "old-1", Profile: ProfileBasic, PowerOn: true})
	u := f.BMCs()[0].URL
	const su = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"

	// The session service is there (the ServiceRoot schema requires
	// Links.Sessions) but disabled: a login is refused with 405.
	root := call(t, "GET", u+"/redfish/v1", nil, false).json(t)
	ss := get(t, u+str(at(root, "SessionService", "@odata.id")))
	if ss["ServiceEnabled"] != false || str(at(root, "Links", "Sessions", "@odata.id")) != "/redfish/v1/SessionService/Sessions" {
		t.Errorf("session service %v, root Links %v: want it linked and disabled", ss, root["Links"])
	}
	login := call(t, "POST", u+"/redfish/v1/SessionService/Sessions", map[string]string{"UserName": testUser, "Password": testPass}, false)
	if login.status != 405 || login.header.Get("Allow") != "GET, HEAD" || !strings.Contains(string(login.body), "Basic authentication") {
		t.Errorf("session login: %d Allow %q %s, want 405 saying to use Basic auth", login.status, login.header.Get("Allow"), login.body)
	}
	req, _ := http.NewRequest("GET", u+"/redfish/v1/Systems/1", nil)
	req.Header.Set("X-Auth-Token", "anything")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("X-Auth-Token without Basic: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	us := get(t, u+"/redfish/v1/UpdateService")
	if us["FirmwareInventory"] != nil || us["SoftwareInventory"] != nil {
		t.Errorf("UpdateService links an inventory: %v", us)
	}
	if s := call(t, "GET", u+"/redfish/v1/UpdateService/FirmwareInventory", nil, true).status; s != 404 {
		t.Errorf("FirmwareInventory: %d, want 404", s)
	}

	// BIOS: Targets = the System; 204 + Location to a Completed task.
	r := call(t, "POST", u+su, map[string]any{"ImageURI": "http://h/images/bios-3.5.bin", "Targets": []string{"/redfish/v1/Systems/1"}}, true)
	loc := r.header.Get("Location")
	if r.status != 204 || loc == "" || len(r.body) != 0 {
		t.Fatalf("SimpleUpdate: %d Location %q body %q, want 204 with a Location", r.status, loc, r.body)
	}
	if task := get(t, u+loc); task["TaskState"] != "Completed" {
		t.Errorf("task at once: %v, want Completed", task["TaskState"])
	}
	if v := get(t, u+"/redfish/v1/Systems/1")["BiosVersion"]; v != "3.4" {
		t.Errorf("BiosVersion before a host reset: %v", v)
	}
	clk.Advance(10 * time.Minute)
	if s := call(t, "GET", u+loc, nil, true).status; s != 404 {
		t.Errorf("task later: %d, want 404", s)
	}
	call(t, "POST", u+"/redfish/v1/Systems/1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
	clk.Advance(2 * time.Minute)
	if v := get(t, u+"/redfish/v1/Systems/1")["BiosVersion"]; v != "3.5" {
		t.Errorf("BiosVersion after the reset: %v, want 3.5", v)
	}

	// BMC: Targets = the Manager; the BMC restarts, then reports it.
	r = call(t, "POST", u+su, map[string]any{"ImageURI": "http://h/images/bmc-1.73.14.bin", "Targets": []string{"/redfish/v1/Managers/1"}}, true)
	if r.status != 204 {
		t.Fatalf("BMC update: %d %s", r.status, r.body)
	}
	clk.Advance(time.Second)
	noKeepAlive := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := noKeepAlive.Get(u + "/redfish/v1/"); err == nil {
		resp.Body.Close()
		t.Fatalf("BMC answered %d while restarting", resp.StatusCode)
	}
	clk.Advance(3 * time.Minute)
	if v := get(t, u+"/redfish/v1/Managers/1")["FirmwareVersion"]; v != "1.73.14" {
		t.Errorf("FirmwareVersion after the BMC restart: %v, want 1.73.14", v)
	}
	if st := f.Stats("old-1"); st.BMCResets != 1 || st.Flashes["BIOS"] != 1 || st.Flashes["BMC"] != 1 || st.PowerState != "On" {
		t.Errorf("stats %+v", st)
	}
}

// TestCrayEXMultiSystem: one BMC, 2 to 4 systems, each with its own UUID,
// serial, power and BIOS member (Node1.BIOS, RelatedItem its System);
// resetting one system never resets another; flashing the shared BMC
// member restarts the manager for all of them (their hosts keep running).
func TestCrayEXMultiSystem(t *testing.T) {
	if _, err := New(Options{}, []BMCSpec{{Name: "x", Addr: "127.0.0.1:0", Profile: ProfileCrayEX, Systems: make([]SystemSpec, 5)}}); err == nil {
		t.Error("5 systems accepted, want 2 to 4")
	}
	if _, err := New(Options{}, []BMCSpec{{Name: "x", Addr: "127.0.0.1:0", Profile: ProfileDMTF, Systems: make([]SystemSpec, 2)}}); err == nil {
		t.Error("2 systems on dmtf accepted")
	}
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "blade-1", Profile: ProfileCrayEX, PowerOn: true,
		Systems:  []SystemSpec{{ID: "Node0"}, {ID: "Node1"}, {ID: "Node2", UUID: "0b0e6d0a-1111-4222-8333-444455556666"}},
		Firmware: map[string]string{"BIOS": "ex235a.bios-1.3.5", "Node2.BIOS": "ex235a.bios-1.3.4"}})
	u := f.BMCs()[0].URL
	systems := get(t, u+"/redfish/v1/Systems")["Members"].([]any)
	if len(systems) != 3 {
		t.Fatalf("systems %v", systems)
	}
	uuids, serials := map[any]bool{}, map[any]bool{}
	for _, m := range systems {
		sys := get(t, u+str(m.(map[string]any)["@odata.id"]))
		uuids[sys["UUID"]], serials[sys["SerialNumber"]] = true, true
	}
	if len(uuids) != 3 || len(serials) != 3 || !uuids["0b0e6d0a-1111-4222-8333-444455556666"] {
		t.Errorf("UUIDs %v serials %v: want distinct, Node2's as given", uuids, serials)
	}
	bios := get(t, u+"/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS")
	if bios["Version"] != "ex235a.bios-1.3.5" || bios["SoftwareId"] != "BIOS" || str(at(bios["RelatedItem"].([]any)[0].(map[string]any), "@odata.id")) != "/redfish/v1/Systems/Node1" {
		t.Errorf("Node1.BIOS %v", bios)
	}
	if v := get(t, u+"/redfish/v1/Systems/Node2")["BiosVersion"]; v != "ex235a.bios-1.3.4" {
		t.Errorf("Node2 BiosVersion %v", v)
	}
	bmcItem := get(t, u+"/redfish/v1/UpdateService/FirmwareInventory/BMC")
	if str(at(bmcItem["RelatedItem"].([]any)[0].(map[string]any), "@odata.id")) != "/redfish/v1/Managers/BMC" {
		t.Errorf("BMC member %v", bmcItem)
	}

	// Flash Node1's BIOS, reset Node1 only.
	r := call(t, "POST", u+"/redfish/v1/UpdateService/Actions/SimpleUpdate", map[string]any{"ImageURI": "http://h/images/bios-ex235a.bios-1.3.7.bin", "TransferProtocol": "HTTPS",
		"Targets": []string{"/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS"}}, true)
	if r.status != 202 {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	clk.Advance(10 * time.Minute)
	call(t, "POST", u+"/redfish/v1/Systems/Node1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"}, true)
	if p, _ := f.SystemPowerState("blade-1", "Node1"); p != "Off" {
		t.Errorf("Node1 after ForceOff: %s", p)
	}
	for _, other := range []string{"Node0", "Node2"} {
		if p, _ := f.SystemPowerState("blade-1", other); p != "On" {
			t.Errorf("%s after Node1's ForceOff: %s, want On", other, p)
		}
	}
	call(t, "POST", u+"/redfish/v1/Systems/Node1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, true)
	clk.Advance(2 * time.Minute)
	v := f.Versions("blade-1")
	if v["Node1.BIOS"] != "ex235a.bios-1.3.7" || v["Node0.BIOS"] != "ex235a.bios-1.3.5" || v["Node2.BIOS"] != "ex235a.bios-1.3.4" {
		t.Errorf("versions after Node1's reset: %v", v)
	}
	if st := f.Stats("blade-1"); st.Systems["Node1"].Boots != 1 || st.Systems["Node0"].Boots != 0 || st.Flashes["Node1.BIOS"] != 1 {
		t.Errorf("stats %+v", st)
	}

	// The shared BMC firmware: the manager restarts; every host keeps running.
	r = call(t, "POST", u+"/redfish/v1/UpdateService/Actions/SimpleUpdate", map[string]any{"ImageURI": "http://h/images/bmc-nc.1.6.17-0-gabcdef.bin", "TransferProtocol": "HTTPS",
		"Targets": []string{"/redfish/v1/UpdateService/FirmwareInventory/BMC"}}, true)
	if r.status != 202 {
		t.Fatalf("BMC update: %d %s", r.status, r.body)
	}
	clk.Advance(10 * time.Minute)
	if st := f.Stats("blade-1"); st.BMCResets != 1 {
		t.Errorf("BMCResets %d", st.BMCResets)
	}
	clk.Advance(3 * time.Minute)
	if v := get(t, u+"/redfish/v1/UpdateService/FirmwareInventory/BMC")["Version"]; v != "nc.1.6.17-0-gabcdef" {
		t.Errorf("BMC after its restart: %v", v)
	}
	for _, id := range []string{"Node0", "Node1", "Node2"} {
		if p, _ := f.SystemPowerState("blade-1", id); p != "On" {
			t.Errorf("%s after the BMC restart: %s", id, p)
		}
	}
}

// TestDistinctIdentities: every simulated BMC and system has its own UUID
// and serial number, derived from the BMC's name (reruns are stable), and
// the profile's Manufacturer and Model.
func TestDistinctIdentities(t *testing.T) {
	var specs []BMCSpec
	for i := 0; i < 24; i++ {
		p := AllProfiles()[i%len(AllProfiles())]
		specs = append(specs, BMCSpec{Name: "srv-" + string(rune('a'+i)), Addr: "127.0.0.1:0", Profile: p})
	}
	f1, err := New(Options{}, specs)
	if err != nil {
		t.Fatal(err)
	}
	f2, _ := New(Options{}, specs)
	uuids, serials := map[string]string{}, map[string]string{}
	for _, s := range specs {
		ids, again := f1.Identities(s.Name), f2.Identities(s.Name)
		for i, id := range ids {
			if id != again[i] {
				t.Errorf("%s: identity %v, then %v on a rerun", s.Name, id, again[i])
			}
			if o, dup := uuids[id.UUID]; dup {
				t.Errorf("UUID %s of %s/%s also %s's", id.UUID, s.Name, id.System, o)
			}
			if o, dup := serials[id.SerialNumber]; dup {
				t.Errorf("serial %s of %s/%s also %s's", id.SerialNumber, s.Name, id.System, o)
			}
			uuids[id.UUID], serials[id.SerialNumber] = s.Name, s.Name
			if id.Manufacturer == "" || id.Model == "" {
				t.Errorf("%s: no manufacturer/model: %v", s.Name, id)
			}
		}
	}
	if len(uuids) < len(specs) {
		t.Errorf("%d UUIDs for %d BMCs", len(uuids), len(specs))
	}
}
