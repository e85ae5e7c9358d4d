package sim

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzParseImage: image names come from clients (ImageURI, file names).
func FuzzParseImage(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:9/images/bios-2.80.bin", "runtime-4.6.1.iso", "C:\\x\\nic-1.fwpkg", "%zz", "-", "bmc-.bin.bin"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		comp, v, ok := parseImage(s)
		if !ok && (comp != "" || v != "") {
			t.Fatalf("parseImage(%q) = %q %q false", s, comp, v)
		}
		if ok && v == "" {
			t.Fatalf("parseImage(%q): ok with an empty version", s)
		}
	})
}

// FuzzParseFault: -fault and the admin API take fault specs from users.
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"latency:50ms", "busy", "session-limit:2", "error:-1", "timeout:xyz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ft, err := ParseFault(s)
		if err == nil && ft.validate() != nil {
			t.Fatalf("ParseFault(%q) accepted an invalid fault %+v", s, ft)
		}
	})
}

// FuzzRequestBodies: every body a BMC parses comes from a client. Whatever
// arrives, the simulator answers (no panic) and never with a 5xx, which
// would blame the BMC for a client's mistake.
func FuzzRequestBodies(f *testing.F) {
	for _, s := range []string{
		`{"ImageURI":"http://h/bios-2.0.bin","Targets":["/redfish/v1/UpdateService/FirmwareInventory/BIOS"],"@Redfish.OperationApplyTime":"OnReset"}`,
		`{"ResetType":"ForceRestart"}`, `{"Image":"http://h/runtime-1.iso","Inserted":true}`,
		`{"Boot":{"BootSourceOverrideTarget":"Cd"}}`, `{"UserName":"admin","Password":"x"}`,
		"--b\r\nContent-Disposition: form-data; name=\"UpdateFile\"; filename=\"nic-1.bin\"\r\n\r\nxx\r\n--b--\r\n",
		`{"Targets":[1]}`, `[`, ``,
	} {
		for m := range 7 {
			f.Add(uint8(m), s)
		}
	}
	fleet, err := New(Options{Username: testUser, Password: testPass}, []BMCSpec{{Name: "fz", Addr: "127.0.0.1:0", PowerOn: true}})
	if err != nil {
		f.Fatal(err)
	}
	b := fleet.bmcs[0]
	targets := []struct{ method, path, ctype string }{
		{"POST", b.prof.simpleUpdatePath, "application/json"},
		{"POST", b.prof.systemPath + "/Actions/ComputerSystem.Reset", "application/json"},
		{"POST", b.prof.vmediaPath + "/Actions/VirtualMedia.InsertMedia", "application/json"},
		{"PATCH", b.prof.systemPath, "application/json"},
		{"POST", "/redfish/v1/SessionService/Sessions", "application/json"},
		{"POST", b.prof.multipartPath, "multipart/form-data; boundary=b"},
		{"POST", b.prof.pushPath, "application/octet-stream"},
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		tg := targets[int(which)%len(targets)]
		req := httptest.NewRequest(tg.method, tg.path, strings.NewReader(body))
		req.Header.Set("Content-Type", tg.ctype)
		req.SetBasicAuth(testUser, testPass)
		rec := httptest.NewRecorder()
		b.route(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s with %q: %d %s", tg.method, tg.path, body, rec.Code, rec.Body)
		}
	})
}
