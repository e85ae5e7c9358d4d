package sim

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// powerAfter resets the system and reports the power state at each offset
// (simulated time since the reset).
func TestResetTransitions(t *testing.T) {
	type step struct {
		after time.Duration
		power string
	}
	for _, tc := range []struct {
		kind    string
		startOn bool
		steps   []step
	}{
		{"ForceOff", true, []step{{0, "Off"}}},
		{"GracefulShutdown", true, []step{{0, "PoweringOff"}, {29 * time.Second, "PoweringOff"}, {time.Second, "Off"}}},
		{"On", false, []step{{0, "PoweringOn"}, {119 * time.Second, "PoweringOn"}, {time.Second, "On"}}},
		{"ForceRestart", true, []step{{0, "PoweringOn"}, {2 * time.Minute, "On"}}},
		{"GracefulRestart", true, []step{{0, "PoweringOff"}, {30 * time.Second, "PoweringOn"}, {2 * time.Minute, "On"}}},
		{"PushPowerButton", false, []step{{0, "PoweringOn"}, {2 * time.Minute, "On"}}},
		{"Nmi", true, []step{{0, "On"}}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileOpenBMC, PowerOn: tc.startOn})
			u := f.BMCs()[0].URL
			r := call(t, "POST", u+"/redfish/v1/Systems/system/Actions/ComputerSystem.Reset", map[string]string{"ResetType": tc.kind}, true)
			if r.status != 204 {
				t.Fatalf("reset: %d %s", r.status, r.body)
			}
			var got, want []string
			for _, s := range tc.steps {
				clk.Advance(s.after)
				got = append(got, str(get(t, u+"/redfish/v1/Systems/system")["PowerState"]))
				want = append(want, s.power)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("power states (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("bad type", func(t *testing.T) {
		_, u := one(t, Options{}, ProfileDMTF)
		if r := call(t, "POST", u+"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "Explode"}, true); r.status != 400 {
			t.Errorf("status %d, want 400", r.status)
		}
	})
}

func TestTimeScales(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now, Speed: 60}, BMCSpec{Name: "s1", PowerOn: false})
	u := f.BMCs()[0].URL
	call(t, "POST", u+"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, true)
	clk.Advance(1999 * time.Millisecond) // 2 minutes / 60 = 2 s
	if p, _ := f.PowerState("s1"); p != "PoweringOn" {
		t.Fatalf("before 2s: %s", p)
	}
	clk.Advance(time.Millisecond)
	if p, _ := f.PowerState("s1"); p != "On" {
		t.Fatalf("at 2s: %s", p)
	}
}

// update runs SimpleUpdate and returns the reply.
func simpleUpdate(t *testing.T, u, target string, body map[string]any) reply {
	t.Helper()
	return call(t, "POST", u+target, body, true)
}

func TestSimpleUpdateTaskLifecycle(t *testing.T) {
	for _, tc := range []struct {
		profile, target string
		vanishes        bool
	}{
		{ProfileDMTF, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", false},
		{ProfileILO5, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", true},
		{ProfileAMI, "/redfish/v1/UpdateService/Actions/SimpleUpdate", false},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: tc.profile, PowerOn: true, Firmware: map[string]string{"NIC": "1.0"}})
			u := f.BMCs()[0].URL
			r := simpleUpdate(t, u, tc.target, map[string]any{"ImageURI": "http://127.0.0.1:9/images/nic-2.5.bin", "TransferProtocol": "HTTP"})
			if r.status != 202 {
				t.Fatalf("SimpleUpdate: %d %s", r.status, r.body)
			}
			mon := r.header.Get("Location")
			if mon == "" || r.header.Get("Retry-After") == "" {
				t.Fatalf("202 without Location/Retry-After: %v", r.header)
			}
			var states []string
			var lastPct float64
			for i := 0; i < 40; i++ {
				m := call(t, "GET", u+mon, nil, true)
				if m.status != 202 {
					if m.status != 200 && m.status != 404 {
						t.Fatalf("monitor answered %d", m.status)
					}
					break
				}
				doc := m.json(t)
				st := str(doc["TaskState"])
				if len(states) == 0 || states[len(states)-1] != st {
					states = append(states, st)
				}
				pct, _ := doc["PercentComplete"].(float64)
				if pct < lastPct {
					t.Errorf("PercentComplete went back from %v to %v", lastPct, pct)
				}
				lastPct = pct
				clk.Advance(20 * time.Second)
			}
			if diff := cmp.Diff([]string{"New", "Starting", "Running"}, states); diff != "" {
				t.Errorf("states seen through the monitor (-want +got):\n%s", diff)
			}
			final := call(t, "GET", u+mon, nil, true)
			wantStatus := 200
			if tc.vanishes {
				wantStatus = 404
			}
			if final.status != wantStatus {
				t.Errorf("finished monitor: %d, want %d", final.status, wantStatus)
			}
			tasks := get(t, u+"/redfish/v1/TaskService/Tasks")["Members"].([]any)
			task := get(t, u+str(tasks[0].(map[string]any)["@odata.id"]))
			if task["TaskState"] != "Completed" || task["PercentComplete"] != 100.0 {
				t.Errorf("task %v", task)
			}
			if v := f.Versions("s1")["NIC"]; v != "2.5" {
				t.Errorf("NIC version %q, want 2.5 (NIC activates at once)", v)
			}
			if st := f.Stats("s1"); st.Flashes["NIC"] != 1 || st.Updates != 1 || st.TasksCompleted != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// flash starts an update of image with applyTime and lets the flash finish.
func flash(t *testing.T, clk *clock, u, target, image, applyTime string, targets ...string) {
	t.Helper()
	body := map[string]any{"ImageURI": image, "TransferProtocol": "HTTP"}
	if applyTime != "" {
		body["@Redfish.OperationApplyTime"] = applyTime
	}
	if len(targets) > 0 {
		body["Targets"] = targets
	}
	if r := simpleUpdate(t, u, target, body); r.status != 202 {
		t.Fatalf("SimpleUpdate %s: %d %s", image, r.status, r.body)
	}
	clk.Advance(10 * time.Minute)
}

func TestActivation(t *testing.T) {
	const su = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
	const reset = "/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset"
	for _, tc := range []struct {
		name, image, applyTime string
		targets                []string
		comp                   string
		beforeReset            string // version after the flash, before any reset
		after                  string // version after a host reset
	}{
		{"BIOS needs a host reset", "http://h/images/bios-2.80.bin", "Immediate", nil, "BIOS", "1.0", "2.80"},
		{"NIC at once", "http://h/images/NIC-3.1.fwpkg", "", nil, "NIC", "3.1", "3.1"},
		{"NIC OnReset waits", "http://h/images/nic-3.1.bin", "OnReset", nil, "NIC", "1.0", "3.1"},
		{"target picks the component", "http://h/images/firmware-7.7.bin", "", []string{"/redfish/v1/UpdateService/FirmwareInventory/CPLD"}, "CPLD", "7.7", "7.7"},
		{"unknown image fails", "http://h/images/gpu-1.0.bin", "", nil, "NIC", "1.0", "1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", PowerOn: true, Firmware: map[string]string{"BIOS": "1.0", "NIC": "1.0", "CPLD": "1.0"}})
			u := f.BMCs()[0].URL
			flash(t, clk, u, su, tc.image, tc.applyTime, tc.targets...)
			if v := f.Versions("s1")[tc.comp]; v != tc.beforeReset {
				t.Errorf("%s after flash = %q, want %q", tc.comp, v, tc.beforeReset)
			}
			call(t, "POST", u+reset, map[string]string{"ResetType": "ForceRestart"}, true)
			clk.Advance(time.Minute)
			if v := f.Versions("s1")[tc.comp]; v != tc.beforeReset {
				t.Errorf("%s while booting = %q, want %q", tc.comp, v, tc.beforeReset)
			}
			clk.Advance(time.Minute)
			if v := f.Versions("s1")[tc.comp]; v != tc.after {
				t.Errorf("%s after reset = %q, want %q", tc.comp, v, tc.after)
			}
		})
	}
}

func TestBMCFlashRestartsTheBMC(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileAMI, PowerOn: true})
	u := f.BMCs()[0].URL
	flash(t, clk, u, "/redfish/v1/UpdateService/Actions/SimpleUpdate", "http://h/bmc-13.0.bin", "")
	// The BMC went down when the flash finished: connections are dropped.
	noKeepAlive := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := noKeepAlive.Get(u + "/redfish/v1/"); err == nil {
		resp.Body.Close()
		t.Fatalf("BMC answered %d while resetting", resp.StatusCode)
	}
	clk.Advance(3 * time.Minute)
	if got := str(get(t, u+"/redfish/v1/Managers/Self")["FirmwareVersion"]); got != "13.0" {
		t.Errorf("FirmwareVersion after the BMC restart %q, want 13.0", got)
	}
	if st := f.Stats("s1"); st.BMCResets != 1 {
		t.Errorf("BMCResets = %d", st.BMCResets)
	}
}

func TestManagerResetMakesBMCUnreachable(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileILO5})
	u := f.BMCs()[0].URL
	r := call(t, "POST", u+"/redfish/v1/SessionService/Sessions", map[string]string{"UserName": testUser, "Password": testPass}, false)
	if r := call(t, "POST", u+"/redfish/v1/Managers/1/Actions/Manager.Reset", map[string]string{"ResetType": "GracefulRestart"}, true); r.status != 204 {
		t.Fatalf("Manager.Reset: %d", r.status)
	}
	clk.Advance(time.Second)
	noKeepAlive := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := noKeepAlive.Get(u + "/redfish/v1/"); err == nil {
		resp.Body.Close()
		t.Fatal("BMC answered while resetting")
	}
	clk.Advance(3 * time.Minute)
	req, _ := http.NewRequest("GET", u+"/redfish/v1/Systems", nil)
	req.Header.Set("X-Auth-Token", r.header.Get("X-Auth-Token"))
	resp, err := noKeepAlive.Do(req)
	if err != nil {
		t.Fatalf("BMC still down after 3 minutes: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("old session after a BMC reset: %d, want 401 (sessions are lost)", resp.StatusCode)
	}
}

func TestMultipartPushStreams(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileOpenBMC, PowerOn: true})
	u := f.BMCs()[0].URL
	const size = 64 << 20 // larger than anything the sim would buffer
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, _ := mw.CreateFormField("UpdateParameters")
		fmt.Fprint(part, `{"Targets":["/redfish/v1/UpdateService/FirmwareInventory/bios_active"],"@Redfish.OperationApplyTime":"OnReset"}`)
		file, _ := mw.CreateFormFile("UpdateFile", "image-3.0.bin")
		chunk := make([]byte, 1<<20)
		for i := 0; i < size/len(chunk); i++ {
			if _, err := file.Write(chunk); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	req, _ := http.NewRequest("POST", u+"/redfish/v1/UpdateService/update", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth(testUser, testPass)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	runtime.ReadMemStats(&after)
	// Client and server share this process: both together must allocate
	// far less than the image, or something buffered it.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/4 {
		t.Errorf("the upload allocated %d bytes for a %d-byte image: the body was buffered", alloc, size)
	}
	if resp.StatusCode != 202 || !strings.HasSuffix(resp.Header.Get("Location"), "/Monitor") {
		t.Fatalf("push: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if st := f.Stats("s1"); st.PushBytes != size {
		t.Errorf("PushBytes = %d, want %d", st.PushBytes, size)
	}
	clk.Advance(10 * time.Minute)
	call(t, "POST", u+"/redfish/v1/Systems/system/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
	clk.Advance(2 * time.Minute)
	if v := f.Versions("s1")["BIOS"]; v != "3.0" {
		t.Errorf("BIOS = %q, want 3.0", v)
	}
}

func TestPlainHttpPush(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileDMTF, PowerOn: true})
	u := f.BMCs()[0].URL
	if resp := plainPush(t, u+"/FWUpdate", "cpld-2.0.bin", strings.Repeat("x", 1000)); resp.StatusCode != 202 {
		t.Fatalf("push: %d", resp.StatusCode)
	}
	clk.Advance(10 * time.Minute)
	if v := f.Versions("s1")["CPLD"]; v != "2.0" {
		t.Errorf("CPLD = %q", v)
	}
}

func TestReimageThroughVirtualMedia(t *testing.T) {
	for _, tc := range []struct{ profile, system, media string }{
		{ProfileDMTF, "/redfish/v1/Systems/437XR1138R2", "/redfish/v1/Systems/437XR1138R2/VirtualMedia/CD1"},
		{ProfileILO5, "/redfish/v1/Systems/1", "/redfish/v1/Managers/1/VirtualMedia/2"},
		{ProfileAMI, "/redfish/v1/Systems/Self", "/redfish/v1/Managers/Self/VirtualMedia/CD1"},
		{ProfileOpenBMC, "/redfish/v1/Systems/system", "/redfish/v1/Managers/bmc/VirtualMedia/1"},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: tc.profile, PowerOn: true, Firmware: map[string]string{"Runtime": "4.5.0"}})
			u := f.BMCs()[0].URL
			if r := call(t, "POST", u+tc.media+"/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": "http://127.0.0.1:9/images/runtime-4.6.1.iso", "Inserted": true}, true); r.status != 204 {
				t.Fatalf("InsertMedia: %d %s", r.status, r.body)
			}
			m := get(t, u+tc.media)
			if m["Inserted"] != true || m["Image"] != "http://127.0.0.1:9/images/runtime-4.6.1.iso" {
				t.Errorf("media %v", m)
			}
			call(t, "PATCH", u+tc.system, map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}}, true)
			call(t, "POST", u+tc.system+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
			clk.Advance(2 * time.Minute)
			if v := f.Versions("s1")["Runtime"]; v != "4.5.0" {
				t.Errorf("Runtime during install = %q", v)
			}
			clk.Advance(5 * time.Minute)
			if v := f.Versions("s1")["Runtime"]; v != "4.6.1" {
				t.Errorf("Runtime after install = %q, want 4.6.1", v)
			}
			sys := get(t, u+tc.system)
			if at(sys, "Boot", "BootSourceOverrideEnabled") != "Disabled" || sys["PowerState"] != "On" {
				t.Errorf("after reimage: Boot %v PowerState %v", sys["Boot"], sys["PowerState"])
			}
			call(t, "POST", u+tc.media+"/Actions/VirtualMedia.EjectMedia", map[string]any{}, true)
			if m := get(t, u+tc.media); m["Inserted"] != false {
				t.Errorf("after eject: %v", m["Inserted"])
			}
			if st := f.Stats("s1"); st.Reimages != 1 {
				t.Errorf("Reimages = %d", st.Reimages)
			}
		})
	}
}

func TestParseImage(t *testing.T) {
	for _, tc := range []struct {
		in, comp, version string
		ok                bool
	}{
		{"http://127.0.0.1:9/images/bios-2.80.bin", "BIOS", "2.80", true},
		{"https://h/x/BMC-1.2.3-rc1.signed.bin", "BMC", "1.2.3-rc1", true},
		{"runtime-4.6.1.iso", "Runtime", "4.6.1", true},
		{"C:\\fw\\nic-08.50.78.fwpkg", "NIC", "08.50.78", true},
		{"http://h/images/firmware-7.7.bin", "", "7.7", true},
		{"http://h/images/firmware.bin", "", "", false},
		{"http://h/images/bios-2.80.bin?token=1", "BIOS", "2.80", true},
		// Vendor version strings, as the profiles report them.
		{"http://h/images/bios-P79%20v1.46.bin", "BIOS", "P79 v1.46", true},
		{"http://h/images/bmc-nc.1.6.17-0-gabcdef.bin", "BMC", "nc.1.6.17-0-gabcdef", true},
		{"http://h/images/bios-ex235a.bios-1.3.7.bin", "BIOS", "ex235a.bios-1.3.7", true},
		{"http://h/images/bios.bin?version=A43%20v2.60%20(01%2F01%2F2023)", "BIOS", "A43 v2.60 (01/01/2023)", true},
	} {
		comp, v, ok := parseImage(tc.in)
		if comp != tc.comp || v != tc.version || ok != tc.ok {
			t.Errorf("parseImage(%q) = %q %q %v, want %q %q %v", tc.in, comp, v, ok, tc.comp, tc.version, tc.ok)
		}
	}
}

func TestTimingsOverride(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now, Timings: Timings{Boot: 10 * time.Second}}, BMCSpec{Name: "s1"})
	u := f.BMCs()[0].URL
	call(t, "POST", u+"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, true)
	clk.Advance(10 * time.Second)
	if p, _ := f.PowerState("s1"); p != "On" {
		t.Errorf("after the 10 s boot: %s", p)
	}
}
