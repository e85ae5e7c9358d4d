package sim

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// versionsSeen reads what a client sees of the BIOS and BMC versions: the
// FirmwareInventory members whose SoftwareId is BIOS/BMC (the first
// system's BIOS on crayex), else ComputerSystem.BiosVersion and
// Manager.FirmwareVersion.
func versionsSeen(t *testing.T, u string) (inventory map[string]any, biosVersion, managerVersion any) {
	t.Helper()
	inventory = map[string]any{}
	if r := call(t, "GET", u+"/redfish/v1/UpdateService/FirmwareInventory", nil, true); r.status == 200 {
		for _, m := range r.json(t)["Members"].([]any) {
			item := get(t, u+str(m.(map[string]any)["@odata.id"]))
			inventory[str(item["Id"])] = item["Version"]
		}
	}
	sys := get(t, u+str(get(t, u+"/redfish/v1/Systems")["Members"].([]any)[0].(map[string]any)["@odata.id"]))
	mgr := get(t, u+str(get(t, u+"/redfish/v1/Managers")["Members"].([]any)[0].(map[string]any)["@odata.id"]))
	return inventory, sys["BiosVersion"], mgr["FirmwareVersion"]
}

// TestProfilesReportTheCapturesVersionStrings: by default each profile
// reports the version strings of the real BMC it is copied from, in the
// places that BMC reports them (iLO's Manager says "iLO 5 v2.46" where its
// inventory says "2.46 May 11 2021"; the Cray nC Manager has no
// FirmwareVersion).
func TestProfilesReportTheCapturesVersionStrings(t *testing.T) {
	type want struct {
		inventory      map[string]any // by member Id, only those listed
		bios, manager  any
		nonUpdateable  []string // member Ids with Updateable false
		omitUpdateable []string // member Ids without Updateable
	}
	wants := map[string]want{
		ProfileDMTF: {map[string]any{"BIOS": "P79 v1.45", "BMC": "1.45.455b66-rev4", "AC-RoT0": "1.11"}, "P79 v1.45", "1.45.455b66-rev4", []string{"AC-RoT0"}, nil},
		ProfileILO5: {map[string]any{"1": "2.46 May 11 2021", "2": "A43 v2.52 (10/29/2021)", "6": "A43 v2.40 (02/23/2021)", "4": "0x0D", "10": "08.50.78"},
			"A43 v2.52 (10/29/2021)", "iLO 5 v2.46", []string{"12", "6"}, []string{"9"}},
		ProfileAMI:     {map[string]any{"BIOS": "C27", "BMC": "12.84.13", "MB_CPLD1": "ff"}, "C27", "12.84.13", []string{"BPB_CPLD1"}, nil},
		ProfileOpenBMC: {map[string]any{"5d0869c4": "2.15.0-dev-686-g100c36de90"}, nil, "2.15.0-dev-686-g100c36de90", []string{"a3f1d5b2"}, nil},
		ProfileBasic:   {map[string]any{}, "3.4", "1.71.11", nil, nil},
		ProfileCrayEX: {map[string]any{"BMC": "nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff", "Node0.BIOS": "ex235a.bios-1.3.6", "Node1.BIOS": "ex235a.bios-1.3.6", "FPGA0": "4.05"},
			"ex235a.bios-1.3.6", nil, []string{"Bootloader", "FPGA0"}, nil},
		// Dell: the version is in the Id; the rollback images are listed.
		ProfileIDRAC: {map[string]any{"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1": "6.00.30.00", "Previous-25227-4.40.29.00__iDRAC.Embedded.1-1": "4.40.29.00",
			"Installed-159-1.8.2__BIOS.Setup.1-1": "1.8.2", "Current-159-1.8.2__BIOS.Setup.1-1": "1.8.2", "Previous-159-1.2.4__BIOS.Setup.1-1": "1.2.4"},
			"1.8.2", "6.00.30.00", nil, nil},
		// Lenovo: <build>-<version>, and the placeholders of what is pending.
		ProfileXCC: {map[string]any{"BMC-Primary": "42S-2.83", "BMC-Backup": "42S-2.83", "BMC-Primary-Pending": "-*", "UEFI": "22J-1.51", "UEFI-Pending": nil},
			"U8E122J", "TGBT42S 2.83", nil, nil},
		ProfileHGX: {map[string]any{"BIOS": "BIOS Date: 08/04/2023 Ver 1.4", "Golden_BIOS": "BIOS Date: 05/04/2023 Ver 1.3", "BMC": "11.01.01", "Backup_BMC": "Not Present",
			"HGX_FW_GPU_SXM_1": "96.00.61.00.01", "HGX_FW_GPU_SXM_8": "96.00.61.00.01", "HGX_FW_BMC_0": "HGX-22.10-1-rc34"},
			"1.4", "11.01.01", []string{"GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7", "GPU8"}, nil},
		ProfileSushy: {map[string]any{"BIOS": "1.0.0", "BMC": "1.0.0"}, "1.0.0", "1.0.0", nil, nil},
	}
	for _, p := range AllProfiles() {
		t.Run(p, func(t *testing.T) {
			w := wants[p]
			_, u := one(t, Options{}, p)
			inv, bios, mgr := versionsSeen(t, u)
			got := map[string]any{}
			for id := range w.inventory {
				got[id] = inv[id]
			}
			if diff := cmp.Diff(w.inventory, got); diff != "" {
				t.Errorf("inventory versions (-want +got):\n%s", diff)
			}
			if bios != w.bios || mgr != w.manager {
				t.Errorf("BiosVersion %v, Manager.FirmwareVersion %v; want %v, %v", bios, mgr, w.bios, w.manager)
			}
			var nonUpd, omit []string
			if p != ProfileBasic {
				for _, m := range get(t, u+"/redfish/v1/UpdateService/FirmwareInventory")["Members"].([]any) {
					item := get(t, u+str(m.(map[string]any)["@odata.id"]))
					switch v, ok := item["Updateable"]; {
					case !ok:
						omit = append(omit, str(item["Id"]))
					case v == false:
						nonUpd = append(nonUpd, str(item["Id"]))
					}
				}
			}
			sort.Strings(nonUpd)
			if diff := cmp.Diff(w.nonUpdateable, nonUpd); diff != "" {
				t.Errorf("members with Updateable false (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(w.omitUpdateable, omit); diff != "" {
				t.Errorf("members without Updateable (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfiguredVendorVersions: BMCSpec.Firmware and update images take
// the vendors' own strings, and a flash reports the image's string as is.
func TestConfiguredVendorVersions(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileILO5, PowerOn: true,
		Firmware: map[string]string{"BIOS": "A43 v2.40 (02/23/2021)", "BMC": "2.14 (Build 8)"}})
	u := f.BMCs()[0].URL
	if v := f.Versions("s1"); v["BIOS"] != "A43 v2.40 (02/23/2021)" || v["BMC"] != "2.14 (Build 8)" {
		t.Fatalf("versions %v", v)
	}
	if fw := get(t, u+"/redfish/v1/Managers/1")["FirmwareVersion"]; fw != "iLO 5 v2.14" {
		t.Errorf("Manager.FirmwareVersion %v", fw)
	}
	flash(t, clk, u, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", "http://h/images/bios.bin?version=A43%20v2.52%20(10%2F29%2F2021)", "")
	call(t, "POST", u+"/redfish/v1/Systems/1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
	clk.Advance(3 * time.Minute)
	if v := get(t, u+"/redfish/v1/UpdateService/FirmwareInventory/2")["Version"]; v != "A43 v2.52 (10/29/2021)" {
		t.Errorf("BIOS after the flash and a reset: %v", v)
	}
	if v := get(t, u+"/redfish/v1/Systems/1")["BiosVersion"]; v != "A43 v2.52 (10/29/2021)" {
		t.Errorf("BiosVersion after the flash and a reset: %v", v)
	}
}

// extendedInfo returns the first @Message.ExtendedInfo of an error reply.
func extendedInfo(t *testing.T, r reply) map[string]any {
	t.Helper()
	infos, _ := at(r.json(t), "error", "@Message.ExtendedInfo").([]any)
	if len(infos) == 0 {
		t.Fatalf("error without @Message.ExtendedInfo: %s", r.body)
	}
	return infos[0].(map[string]any)
}

// TestSimpleUpdateObeysItsActionInfo: the SimpleUpdateActionInfo lists
// ImageURI required, TransferProtocol with its allowable values (required
// where the capture says so) and Targets restricted to the updateable
// members, and the action enforces exactly that: a missing required
// parameter, a value not allowed or a Target not allowed is a 400 whose
// ExtendedInfo names the parameter.
func TestSimpleUpdateObeysItsActionInfo(t *testing.T) {
	type req struct {
		name   string
		body   map[string]any
		status int
		param  string // named in RelatedProperties, for a 400
	}
	const img = "http://127.0.0.1:9/images/bios-9.9.bin"
	fw := "/redfish/v1/UpdateService/FirmwareInventory/"
	for _, tc := range []struct {
		spec             BMCSpec
		action           string
		transferRequired bool
		transferAllowed  []any
		targetsRequired  bool
		targetsAllowed   []any // nil: Targets not listed
		reqs             []req
	}{
		{BMCSpec{Profile: ProfileDMTF}, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate",
			false, []any{"FTP", "SFTP", "HTTP", "HTTPS", "SCP", "TFTP"}, false, []any{fw + "BMC", fw + "BIOS", fw + "NIC", fw + "CPLD"},
			[]req{
				{"no ImageURI", map[string]any{"TransferProtocol": "HTTP"}, 400, "ImageURI"},
				{"protocol not allowed", map[string]any{"ImageURI": img, "TransferProtocol": "NFS"}, 400, "TransferProtocol"},
				{"non-updateable target", map[string]any{"ImageURI": img, "Targets": []string{fw + "AC-RoT0"}}, 400, "Targets"},
				{"unknown target", map[string]any{"ImageURI": img, "Targets": []string{fw + "GPU"}}, 400, "Targets"},
				{"no protocol", map[string]any{"ImageURI": img}, 202, ""},
				{"allowed target", map[string]any{"ImageURI": img, "TransferProtocol": "HTTPS", "Targets": []string{fw + "BIOS"}}, 202, ""},
			}},
		{BMCSpec{Profile: ProfileAMI, StrictTransferProtocol: true}, "/redfish/v1/UpdateService/Actions/SimpleUpdate",
			true, []any{"HTTP", "FTP"}, false, nil,
			[]req{
				{"no protocol", map[string]any{"ImageURI": img}, 400, "TransferProtocol"},
				{"HTTPS not allowed", map[string]any{"ImageURI": img, "TransferProtocol": "HTTPS"}, 400, "TransferProtocol"},
				{"HTTP", map[string]any{"ImageURI": img, "TransferProtocol": "HTTP"}, 202, ""},
			}},
		{BMCSpec{Profile: ProfileCrayEX}, "/redfish/v1/UpdateService/Actions/SimpleUpdate",
			true, []any{"HTTP", "HTTPS"}, false, []any{fw + "BMC", fw + "Node0.BIOS", fw + "Node1.BIOS"},
			[]req{
				{"no protocol", map[string]any{"ImageURI": img, "Targets": []string{fw + "Node0.BIOS"}}, 400, "TransferProtocol"},
				{"non-updateable FPGA", map[string]any{"ImageURI": img, "TransferProtocol": "HTTPS", "Targets": []string{fw + "FPGA0"}}, 400, "Targets"},
				{"BIOS of which node", map[string]any{"ImageURI": img, "TransferProtocol": "HTTPS"}, 400, "Targets"},
				{"Node1's BIOS", map[string]any{"ImageURI": img, "TransferProtocol": "HTTPS", "Targets": []string{fw + "Node1.BIOS"}}, 202, ""},
			}},
		{BMCSpec{Profile: ProfileBasic}, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate",
			false, []any{"HTTP", "HTTPS"}, true, []any{"/redfish/v1/Systems/1", "/redfish/v1/Managers/1"},
			[]req{
				{"no Targets", map[string]any{"ImageURI": img}, 400, "Targets"},
				{"an inventory target", map[string]any{"ImageURI": img, "Targets": []string{fw + "BIOS"}}, 400, "Targets"},
				{"the System", map[string]any{"ImageURI": img, "Targets": []string{"/redfish/v1/Systems/1"}}, 204, ""},
			}},
	} {
		t.Run(tc.spec.Profile, func(t *testing.T) {
			spec := tc.spec
			spec.Name, spec.PowerOn = "s1", true
			f := start(t, Options{}, spec)
			u := f.BMCs()[0].URL
			us := get(t, u+"/redfish/v1/UpdateService")
			if got := str(at(us, "Actions", "#UpdateService.SimpleUpdate", "target")); got != tc.action {
				t.Fatalf("SimpleUpdate target %q, want %q", got, tc.action)
			}
			info := get(t, u+str(at(us, "Actions", "#UpdateService.SimpleUpdate", "@Redfish.ActionInfo")))
			params := map[string]map[string]any{}
			for _, p := range info["Parameters"].([]any) {
				params[str(p.(map[string]any)["Name"])] = p.(map[string]any)
			}
			if params["ImageURI"]["Required"] != true {
				t.Errorf("ImageURI %v, want Required", params["ImageURI"])
			}
			if tp := params["TransferProtocol"]; tp["Required"] != tc.transferRequired || !cmp.Equal(tp["AllowableValues"], tc.transferAllowed) {
				t.Errorf("TransferProtocol %v, want Required %v AllowableValues %v", tp, tc.transferRequired, tc.transferAllowed)
			}
			if allowed := at(us, "Actions", "#UpdateService.SimpleUpdate", "TransferProtocol@Redfish.AllowableValues"); !cmp.Equal(allowed, tc.transferAllowed) {
				t.Errorf("UpdateService TransferProtocol@Redfish.AllowableValues %v", allowed)
			}
			tg, listed := params["Targets"]
			switch {
			case tc.targetsAllowed == nil && listed:
				t.Errorf("Targets listed: %v", tg)
			case tc.targetsAllowed != nil && (tg["Required"] != tc.targetsRequired || !cmp.Equal(tg["AllowableValues"], tc.targetsAllowed)):
				t.Errorf("Targets %v, want Required %v AllowableValues %v", tg, tc.targetsRequired, tc.targetsAllowed)
			}
			for _, rq := range tc.reqs {
				r := call(t, "POST", u+tc.action, rq.body, true)
				if r.status != rq.status {
					t.Errorf("%s: %d %s, want %d", rq.name, r.status, r.body, rq.status)
					continue
				}
				if rq.param != "" {
					ei := extendedInfo(t, r)
					if !cmp.Equal(ei["RelatedProperties"], []any{"#/" + rq.param}) || !strings.Contains(str(ei["Message"]), rq.param) {
						t.Errorf("%s: ExtendedInfo %v does not name %s", rq.name, ei, rq.param)
					}
				}
			}
		})
	}
}

// TestRefusedMethods: a BMC may advertise an update method and refuse it
// (a disabled or licence-gated SimpleUpdate, a push it does not take):
// the refusal is a 400 Redfish error, and the other methods still work.
// openbmc is push-only: no SimpleUpdate at all.
func TestRefusedMethods(t *testing.T) {
	f := start(t, Options{}, BMCSpec{Name: "s1", Profile: ProfileDMTF, PowerOn: true, Refuse: []string{MethodSimpleUpdate, MethodHTTPPush}},
		BMCSpec{Name: "s2", Profile: ProfileOpenBMC, PowerOn: true})
	u := f.BMCs()[0].URL
	us := get(t, u+"/redfish/v1/UpdateService")
	if str(at(us, "Actions", "#UpdateService.SimpleUpdate", "target")) == "" || us["HttpPushUri"] != "/FWUpdate" {
		t.Fatalf("the refused methods must still be advertised: %v", us)
	}
	r := call(t, "POST", u+"/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", map[string]any{"ImageURI": "http://h/bios-2.0.bin", "TransferProtocol": "HTTP"}, true)
	if r.status != 400 || str(extendedInfo(t, r)["MessageId"]) != "Base.1.8.ActionNotSupported" {
		t.Errorf("refused SimpleUpdate: %d %s", r.status, r.body)
	}
	if resp := plainPush(t, u+"/FWUpdate", "bios-2.0.bin", "image bytes"); resp.StatusCode != 400 {
		t.Errorf("refused HttpPush: %d", resp.StatusCode)
	}
	if st := multipartPush(t, u+"/redfish/v1/UpdateService/upload", "bios-2.0.bin", `{"Targets": ["/redfish/v1/UpdateService/FirmwareInventory/BIOS"]}`); st != 202 {
		t.Errorf("multipart push (not refused): %d", st)
	}
	u2 := f.BMCs()[1].URL
	us2 := get(t, u2+"/redfish/v1/UpdateService")
	if _, ok := us2["Actions"]; ok || us2["MultipartHttpPushUri"] == nil {
		t.Errorf("openbmc must be push-only: %v", us2)
	}
}

// TestTaskMonitorsVanishAfterCompletion: iLO's monitor (and the basic
// BMC's task) answers 404 once the task finished; dmtf's stays.
func TestTaskMonitorsVanishAfterCompletion(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "ilo", Profile: ProfileILO5, PowerOn: true}, BMCSpec{Name: "dmtf", Profile: ProfileDMTF, PowerOn: true})
	ilo, dmtf := f.BMCs()[0].URL, f.BMCs()[1].URL
	r := call(t, "POST", ilo+"/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", map[string]any{"ImageURI": "http://h/nic-2.0.bin"}, true)
	r2 := call(t, "POST", dmtf+"/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", map[string]any{"ImageURI": "http://h/nic-2.0.bin"}, true)
	mon, mon2 := r.header.Get("Location"), r2.header.Get("Location")
	if r.status != 202 || r2.status != 202 {
		t.Fatalf("updates: %d %d", r.status, r2.status)
	}
	if s := call(t, "GET", ilo+mon, nil, true).status; s != 202 {
		t.Errorf("iLO monitor while running: %d", s)
	}
	clk.Advance(11 * time.Minute)
	if s := call(t, "GET", ilo+mon, nil, true).status; s != 404 {
		t.Errorf("iLO monitor after completion: %d, want 404", s)
	}
	if s := call(t, "GET", dmtf+mon2, nil, true).status; s != 200 {
		t.Errorf("dmtf monitor after completion: %d, want 200", s)
	}
}

// TestBMCRebootForgetsSessions: a BMC that restarts (after its own
// firmware is flashed, or a Manager.Reset) forgets every session: the old
// X-Auth-Token answers 401 and a new login works.
func TestBMCRebootForgetsSessions(t *testing.T) {
	for _, how := range []string{"flash", "reset"} {
		t.Run(how, func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileDMTF, PowerOn: true})
			u := f.BMCs()[0].URL
			login := func() string {
				r := call(t, "POST", u+"/redfish/v1/SessionService/Sessions", map[string]string{"UserName": testUser, "Password": testPass}, false)
				if r.status != 201 {
					t.Fatalf("login: %d", r.status)
				}
				return r.header.Get("X-Auth-Token")
			}
			withToken := func(tok string) int {
				req, _ := http.NewRequest("GET", u+"/redfish/v1/Systems", nil)
				req.Header.Set("X-Auth-Token", tok)
				resp, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			tok := login()
			if s := withToken(tok); s != 200 {
				t.Fatalf("token before: %d", s)
			}
			if how == "flash" {
				flash(t, clk, u, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", "http://h/bmc-1.46.0.bin", "")
			} else {
				call(t, "POST", u+"/redfish/v1/Managers/BMC/Actions/Manager.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
			}
			clk.Advance(4 * time.Minute)
			if s := withToken(tok); s != 401 {
				t.Errorf("old token after the BMC restart: %d, want 401", s)
			}
			if s := withToken(login()); s != 200 {
				t.Errorf("new session: %d", s)
			}
		})
	}
}

// multipartPush posts a small multipart update and returns the status.
func multipartPush(t *testing.T, url, file, params string) int {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, _ := mw.CreateFormField("UpdateParameters")
	fmt.Fprint(part, params)
	fp, _ := mw.CreateFormFile("UpdateFile", file)
	fmt.Fprint(fp, "image bytes")
	mw.Close()
	req, _ := http.NewRequest("POST", url, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth(testUser, testPass)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
