package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const fwInv = "/redfish/v1/UpdateService/FirmwareInventory/"

// inventoryIDs lists the FirmwareInventory member Ids a BMC serves, sorted.
func inventoryIDs(t *testing.T, u string) []string {
	t.Helper()
	var ids []string
	for _, m := range get(t, u+"/redfish/v1/UpdateService/FirmwareInventory")["Members"].([]any) {
		id := str(m.(map[string]any)["@odata.id"])
		ids = append(ids, id[strings.LastIndex(id, "/")+1:])
	}
	sort.Strings(ids)
	return ids
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestIDRACMembersFollowTheirVersion: on the Dell profile an inventory Id
// carries its version (Installed-<ComponentID>-<Version>__<FQDD>); after an
// update the Installed member's Id changes with its version, the image it
// replaces becomes the Previous- member (the rollback, same SoftwareId and
// Name), the Current- twin follows, and the Manager's and the Bios
// resource's Links.ActiveSoftwareImage name the new Installed member.
// SimpleUpdate has no ActionInfo; a push to HttpPushUri (the
// FirmwareInventory collection) stages the image as an Available- member,
// which a SimpleUpdate naming it installs.
func TestIDRACMembersFollowTheirVersion(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "r750", Profile: ProfileIDRAC, PowerOn: true})
	u := f.BMCs()[0].URL
	const su = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
	us := get(t, u+"/redfish/v1/UpdateService")
	if at(us, "Actions", "#UpdateService.SimpleUpdate", "@Redfish.ActionInfo") != nil || us["HttpPushUri"] != "/redfish/v1/UpdateService/FirmwareInventory" || us["MultipartHttpPushUri"] != "/redfish/v1/UpdateService/MultipartUpload" {
		t.Errorf("UpdateService %v", us)
	}
	prev := get(t, u+fwInv+"Previous-159-1.2.4__BIOS.Setup.1-1")
	inst := get(t, u+fwInv+"Installed-159-1.8.2__BIOS.Setup.1-1")
	if prev["SoftwareId"] != inst["SoftwareId"] || prev["Name"] != inst["Name"] || prev["Updateable"] != true ||
		at(prev, "Oem", "Dell", "DellSoftwareInventory", "Status") != "AvailableForInstallation" || at(inst, "Oem", "Dell", "DellSoftwareInventory", "Status") != "Installed" {
		t.Errorf("Previous %v\nInstalled %v", prev, inst)
	}
	if got := str(at(get(t, u+"/redfish/v1/Systems/System.Embedded.1/Bios"), "Links", "ActiveSoftwareImage", "@odata.id")); got != fwInv+"Installed-159-1.8.2__BIOS.Setup.1-1" {
		t.Errorf("Bios ActiveSoftwareImage %q", got)
	}

	// BIOS 1.13.2 by SimpleUpdate, then a host reset.
	if r := call(t, "POST", u+su, map[string]any{"ImageURI": "http://127.0.0.1:9/images/bios-1.13.2.bin", "TransferProtocol": "HTTP"}, true); r.status != 202 {
		t.Fatalf("SimpleUpdate: %d %s", r.status, r.body)
	}
	clk.Advance(10 * time.Minute)
	call(t, "POST", u+"/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
	clk.Advance(3 * time.Minute)
	ids := inventoryIDs(t, u)
	for _, want := range []string{"Installed-159-1.13.2__BIOS.Setup.1-1", "Current-159-1.13.2__BIOS.Setup.1-1", "Previous-159-1.8.2__BIOS.Setup.1-1"} {
		if !has(ids, want) {
			t.Errorf("after the BIOS update: no %s in %v", want, ids)
		}
	}
	for _, gone := range []string{"Installed-159-1.8.2__BIOS.Setup.1-1", "Previous-159-1.2.4__BIOS.Setup.1-1"} {
		if has(ids, gone) || call(t, "GET", u+fwInv+gone, nil, true).status != 404 {
			t.Errorf("after the BIOS update: %s still served", gone)
		}
	}
	if got := str(at(get(t, u+"/redfish/v1/Systems/System.Embedded.1/Bios"), "Links", "ActiveSoftwareImage", "@odata.id")); got != fwInv+"Installed-159-1.13.2__BIOS.Setup.1-1" {
		t.Errorf("Bios ActiveSoftwareImage after the update %q", got)
	}

	// iDRAC: pushed (staged as Available-), installed by SimpleUpdate naming it.
	resp := plainPush(t, u+"/redfish/v1/UpdateService/FirmwareInventory", "bmc-7.10.30.00.exe", "image bytes")
	avail := resp.Header.Get("Location")
	if resp.StatusCode != 201 || avail != fwInv+"Available-25227-7.10.30.00__iDRAC.Embedded.1-1" {
		t.Fatalf("push: %d Location %q, want 201 and the Available- member", resp.StatusCode, avail)
	}
	if m := get(t, u+avail); m["Version"] != "7.10.30.00" || at(m, "Oem", "Dell", "DellSoftwareInventory", "Status") != "AvailableForInstallation" {
		t.Errorf("Available member %v", m)
	}
	if st := f.Stats("r750"); st.Updates != 1 {
		t.Errorf("a staged push counted as an update: %d", st.Updates)
	}
	if r := call(t, "POST", u+su, map[string]any{"ImageURI": avail}, true); r.status != 202 {
		t.Fatalf("SimpleUpdate of the staged image: %d %s", r.status, r.body)
	}
	clk.Advance(10*time.Minute + 3*time.Minute + time.Second)
	mgr := get(t, u+"/redfish/v1/Managers/iDRAC.Embedded.1")
	if mgr["FirmwareVersion"] != "7.10.30.00" || str(at(mgr, "Links", "ActiveSoftwareImage", "@odata.id")) != fwInv+"Installed-25227-7.10.30.00__iDRAC.Embedded.1-1" {
		t.Errorf("manager after the iDRAC update: %v %v", mgr["FirmwareVersion"], mgr["Links"])
	}
	var images []string
	for _, m := range at(mgr, "Links", "SoftwareImages").([]any) {
		images = append(images, str(m.(map[string]any)["@odata.id"]))
	}
	if diff := cmp.Diff([]string{fwInv + "Installed-25227-7.10.30.00__iDRAC.Embedded.1-1", fwInv + "Previous-25227-6.00.30.00__iDRAC.Embedded.1-1"}, images); diff != "" {
		t.Errorf("SoftwareImages (-want +got):\n%s", diff)
	}
	if ids := inventoryIDs(t, u); has(ids, "Available-25227-7.10.30.00__iDRAC.Embedded.1-1") {
		t.Errorf("the installed image is still Available: %v", ids)
	}
	if st := f.Stats("r750"); st.MemberFlashes["BIOS.Setup.1-1"] != 1 || st.MemberFlashes["iDRAC.Embedded.1-1"] != 1 {
		t.Errorf("member flashes %v", st.MemberFlashes)
	}
}

// TestXCCPendingAndBackup: on the Lenovo profile versions read
// <build>-<version>; BMC-Primary and BMC-Backup (StandbySpare) share one
// SoftwareId and Name, and the Disabled placeholders BMC-Primary-Pending
// ("-*") and UEFI-Pending (null) show what the next activation installs.
// SimpleUpdate's ActionInfo allows only BMC-Backup as a Target (another is
// refused) and no OperationApplyTimeSupport is advertised.
func TestXCCPendingAndBackup(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "sr670", Profile: ProfileXCC, PowerOn: true})
	u := f.BMCs()[0].URL
	const su = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
	primary, backup := get(t, u+fwInv+"BMC-Primary"), get(t, u+fwInv+"BMC-Backup")
	if primary["SoftwareId"] != backup["SoftwareId"] || primary["Name"] != backup["Name"] || at(backup, "Status", "State") != "StandbySpare" || at(primary, "Status", "State") != "Enabled" {
		t.Errorf("primary %v\nbackup %v", primary, backup)
	}
	pend, uefiPend := get(t, u+fwInv+"BMC-Primary-Pending"), get(t, u+fwInv+"UEFI-Pending")
	if pend["Version"] != "-*" || pend["SoftwareId"] != "BMC-*-10" || at(pend, "Status", "State") != "Disabled" || uefiPend["Version"] != nil || uefiPend["SoftwareId"] != "" || pend["Name"] != primary["Name"] {
		t.Errorf("placeholders %v\n%v", pend, uefiPend)
	}
	us := get(t, u+"/redfish/v1/UpdateService")
	if at(us, "Actions", "#UpdateService.SimpleUpdate", "@Redfish.OperationApplyTimeSupport") != nil || us["HttpPushUri"] != "/fwupdate" || us["MultipartHttpPushUri"] != "/mfwupdate" {
		t.Errorf("UpdateService %v", us)
	}
	var targets any
	for _, p := range get(t, u+"/redfish/v1/UpdateService/SimpleUpdateActionInfo")["Parameters"].([]any) {
		if p.(map[string]any)["Name"] == "Targets" {
			targets = p.(map[string]any)["AllowableValues"]
		}
	}
	if !cmp.Equal(targets, []any{fwInv + "BMC-Backup"}) {
		t.Errorf("Targets allowed %v, want only BMC-Backup", targets)
	}
	if r := call(t, "POST", u+su, map[string]any{"ImageURI": "http://h/bios-32E-3.20.bin", "Targets": []string{fwInv + "UEFI"}}, true); r.status != 400 {
		t.Errorf("Targets UEFI: %d, want 400", r.status)
	}

	// UEFI: pending until the host resets.
	if r := call(t, "POST", u+su, map[string]any{"ImageURI": "http://h/bios-32E-3.20.bin"}, true); r.status != 202 {
		t.Fatalf("UEFI update: %d %s", r.status, r.body)
	}
	clk.Advance(10 * time.Minute)
	if v := get(t, u+fwInv+"UEFI-Pending")["Version"]; v != "32E-3.20" {
		t.Errorf("UEFI-Pending after the flash: %v", v)
	}
	if v := get(t, u+fwInv+"UEFI")["Version"]; v != "22J-1.51" {
		t.Errorf("UEFI before the reset: %v", v)
	}
	call(t, "POST", u+"/redfish/v1/Systems/1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
	clk.Advance(3 * time.Minute)
	if uefi, p := get(t, u+fwInv+"UEFI"), get(t, u+fwInv+"UEFI-Pending"); uefi["Version"] != "32E-3.20" || p["Version"] != nil {
		t.Errorf("after the reset: UEFI %v, pending %v", uefi["Version"], p["Version"])
	}
	if v := get(t, u+"/redfish/v1/Systems/1")["BiosVersion"]; v != "U8E132E" {
		t.Errorf("BiosVersion %v, want U8E132E", v)
	}

	// The backup bank by Target; the primary is untouched.
	if r := call(t, "POST", u+su, map[string]any{"ImageURI": "http://h/bmc-56D-5.10.bin", "Targets": []string{fwInv + "BMC-Backup"}}, true); r.status != 202 {
		t.Fatalf("backup update: %d %s", r.status, r.body)
	}
	clk.Advance(10 * time.Minute)
	if b, p := get(t, u+fwInv+"BMC-Backup")["Version"], get(t, u+fwInv+"BMC-Primary")["Version"]; b != "56D-5.10" || p != "42S-2.83" {
		t.Errorf("after the backup update: backup %v primary %v", b, p)
	}
	// The primary: pending until the XCC restarts.
	if r := call(t, "POST", u+su, map[string]any{"ImageURI": "http://h/bmc-56D-5.10.bin"}, true); r.status != 202 {
		t.Fatalf("primary update: %d %s", r.status, r.body)
	}
	clk.Advance(10*time.Minute + 3*time.Minute + time.Second)
	if p, pend := get(t, u+fwInv+"BMC-Primary")["Version"], get(t, u+fwInv+"BMC-Primary-Pending")["Version"]; p != "56D-5.10" || pend != "-*" {
		t.Errorf("after the XCC restart: primary %v pending %v", p, pend)
	}
	if v := get(t, u+"/redfish/v1/Managers/1")["FirmwareVersion"]; v != "TGBT56D 5.10" {
		t.Errorf("Manager.FirmwareVersion %v", v)
	}
}

// TestHGXGPUs: the Supermicro HGX profile's 8 GPUs share one SoftwareId;
// SimpleUpdate's ActionInfo lists the Manager, the System and each member
// as Targets; one SimpleUpdate naming 8 GPUs flashes each exactly once
// (admin counters by member); a GPU made absent (BMCSpec.Absent) says so
// and cannot be a Target; an image for GPU without Targets flashes every
// GPU fitted; the System names the BIOS ("1.4") as the inventory does
// ("BIOS Date: 08/04/2023 Ver 1.4").
func TestHGXGPUs(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "hgx1", Profile: ProfileHGX, PowerOn: true}, BMCSpec{Name: "hgx2", Profile: ProfileHGX, PowerOn: true, Absent: []string{"HGX_FW_GPU_SXM_3"}})
	u1, u2 := f.BMCs()[0].URL, f.BMCs()[1].URL
	const su = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
	var gpus []string
	for i := 1; i <= 8; i++ {
		m := get(t, u1+fwInv+"HGX_FW_GPU_SXM_"+string(rune('0'+i)))
		if m["SoftwareId"] != "0x0020" || m["Version"] != "96.00.61.00.01" || m["Updateable"] != true {
			t.Errorf("GPU %d: %v", i, m)
		}
		gpus = append(gpus, fwInv+"HGX_FW_GPU_SXM_"+string(rune('0'+i)))
	}
	var allowed []any
	for _, p := range get(t, u1+"/redfish/v1/UpdateService/SimpleUpdateActionInfo")["Parameters"].([]any) {
		if p.(map[string]any)["Name"] == "Targets" {
			allowed, _ = p.(map[string]any)["AllowableValues"].([]any)
		}
	}
	for _, want := range append([]string{"/redfish/v1/Managers/1", "/redfish/v1/Systems/1", fwInv + "BIOS", fwInv + "HGX_FW_BMC_0"}, gpus...) {
		if !cmp.Equal(true, func() bool {
			for _, a := range allowed {
				if a == want {
					return true
				}
			}
			return false
		}()) {
			t.Errorf("Targets do not allow %s: %v", want, allowed)
		}
	}
	if v := get(t, u1+"/redfish/v1/Systems/1")["BiosVersion"]; v != "1.4" {
		t.Errorf("BiosVersion %v", v)
	}

	if r := call(t, "POST", u1+su, map[string]any{"ImageURI": "http://h/gpu-96.00.89.00.01.fwpkg", "Targets": gpus}, true); r.status != 202 {
		t.Fatalf("8-GPU update: %d %s", r.status, r.body)
	}
	clk.Advance(10 * time.Minute)
	call(t, "POST", u1+"/redfish/v1/Systems/1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
	clk.Advance(3 * time.Minute)
	st := f.Stats("hgx1")
	for i := 1; i <= 8; i++ {
		id := "HGX_FW_GPU_SXM_" + string(rune('0'+i))
		if st.MemberFlashes[id] != 1 {
			t.Errorf("%s flashed %d times, want 1 (%v)", id, st.MemberFlashes[id], st.MemberFlashes)
		}
		if v := get(t, u1+fwInv+id)["Version"]; v != "96.00.89.00.01" {
			t.Errorf("%s after the reset: %v", id, v)
		}
	}
	if st.Updates != 1 || st.Flashes[ComponentGPU] != 8 || st.MemberFlashes["GPU1"] != 0 {
		t.Errorf("updates %d, flashes %v: want one task flashing 8 GPUs and no host-side GPU", st.Updates, st.Flashes)
	}
	// The admin API reports the counters by member.
	rec := &bytes.Buffer{}
	srv := f.AdminHandler()
	w := &captureWriter{header: http.Header{}, body: rec}
	srv.ServeHTTP(w, mustRequest(t, "GET", "/stats/hgx1"))
	var adm struct {
		MemberFlashes map[string]int `json:"member_flashes"`
	}
	if err := json.Unmarshal(rec.Bytes(), &adm); err != nil || adm.MemberFlashes["HGX_FW_GPU_SXM_8"] != 1 {
		t.Errorf("admin /stats/hgx1 member_flashes: %v %v", adm.MemberFlashes, err)
	}

	// An absent GPU.
	if st := get(t, u2+fwInv+"HGX_FW_GPU_SXM_3"); at(st, "Status", "State") != "Absent" {
		t.Errorf("absent GPU %v", st["Status"])
	}
	if r := call(t, "POST", u2+su, map[string]any{"ImageURI": "http://h/gpu-96.00.89.00.01.fwpkg", "Targets": []string{fwInv + "HGX_FW_GPU_SXM_3"}}, true); r.status != 202 {
		t.Fatalf("update of an absent GPU: %d", r.status)
	}
	clk.Advance(10 * time.Minute)
	if st := f.Stats("hgx2"); st.TasksFailed != 1 || st.MemberFlashes["HGX_FW_GPU_SXM_3"] != 0 {
		t.Errorf("the absent GPU's task: failed %d, flashes %v", st.TasksFailed, st.MemberFlashes)
	}
	// Without Targets: every fitted GPU.
	if r := call(t, "POST", u2+su, map[string]any{"ImageURI": "http://h/gpu-96.00.89.00.01.fwpkg"}, true); r.status != 202 {
		t.Fatalf("GPU update without Targets: %d %s", r.status, r.body)
	}
	clk.Advance(10 * time.Minute)
	if st := f.Stats("hgx2"); st.Flashes[ComponentGPU] != 7 || st.MemberFlashes["HGX_FW_GPU_SXM_3"] != 0 {
		t.Errorf("GPU flashes %v by member %v, want 7 (GPU 3 absent)", st.Flashes, st.MemberFlashes)
	}
}

// TestSushyWantsBasicOnLogin: a BMC like sushy-tools' emulator refuses a
// session login whose credentials are only in its body (401), takes one
// with Basic credentials, and Basic auth on every resource.
func TestSushyWantsBasicOnLogin(t *testing.T) {
	_, u := one(t, Options{}, ProfileSushy)
	creds := map[string]string{"UserName": testUser, "Password": testPass}
	if r := call(t, "POST", u+"/redfish/v1/SessionService/Sessions", creds, false); r.status != 401 || !strings.Contains(string(r.body), "Basic") {
		t.Errorf("login without Basic: %d %s, want 401 saying Basic", r.status, r.body)
	}
	if r := call(t, "POST", u+"/redfish/v1/SessionService/Sessions", creds, true); r.status != 201 || r.header.Get("X-Auth-Token") == "" {
		t.Errorf("login with Basic: %d %s", r.status, r.body)
	}
	for _, p := range []string{"/redfish/v1/Systems", "/redfish/v1/UpdateService/FirmwareInventory", "/redfish/v1/Managers"} {
		if r := call(t, "GET", u+p, nil, true); r.status != 200 {
			t.Errorf("GET %s with Basic: %d", p, r.status)
		}
	}
}

type captureWriter struct {
	header http.Header
	body   *bytes.Buffer
	status int
}

func (w *captureWriter) Header() http.Header         { return w.header }
func (w *captureWriter) Write(p []byte) (int, error) { return w.body.Write(p) }
func (w *captureWriter) WriteHeader(s int)           { w.status = s }

func mustRequest(t *testing.T, method, path string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
