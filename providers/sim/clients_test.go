package sim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/internal/testenv"
)

// These tests run independent Redfish clients from Debian (redfishtool,
// python3-sushy, python3-sushy-cli) against the simulator. .ci/run installs
// them; elsewhere the tests skip with the package to install (testenv).

// debianPython is Debian's interpreter, which has python3-sushy; the first
// python3 on PATH may be another one.
const debianPython = "/usr/bin/python3"

func needTool(t *testing.T, c testenv.Component, name string) string {
	t.Helper()
	return testenv.Binary(t, c, name)
}

func needSushy(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(debianPython); err != nil {
		testenv.Missing(t, testenv.Sushy, debianPython+" not found")
	}
	if out, err := exec.Command(debianPython, "-c", "import sushy").CombinedOutput(); err != nil {
		testenv.Missing(t, testenv.Sushy, "import sushy: "+strings.TrimSpace(lastLine(string(out))))
	}
	testenv.Used(testenv.Sushy)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// clientEnv is the environment for client processes: no proxies, and no CA
// bundle overrides (requests lets REQUESTS_CA_BUNDLE win over the CA file a
// client passes).
func clientEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY":
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "NO_PROXY=*", "no_proxy=*"), extra...)
}

// run runs a client and returns its stdout; a failure shows both streams.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// eventually polls cond until it holds or the deadline passes. The clients
// run in real time, so this test cannot move a fake clock.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("client output is not JSON: %v\n%s", err, s)
	}
	return m
}

func TestRedfishtool(t *testing.T) {
	tool := needTool(t, testenv.Redfishtool, "redfishtool")
	f := start(t, Options{TLS: true, Speed: 6000}, BMCSpec{Name: "rt", Addr: "127.77.251.1:0", PowerOn: true, Firmware: map[string]string{"BIOS": "2.70"}})
	host := strings.TrimPrefix(f.BMCs()[0].URL, "https://")
	env := clientEnv()
	rt := func(args ...string) string {
		// redfishtool takes the password on its command line; it is the
		// simulator's own test credential.
		return run(t, env, tool, append([]string{"-r", host, "-u", testUser, "-p", testPass, "-S", "Always", "-A", "Session"}, args...)...)
	}

	t.Run("inventory", func(t *testing.T) {
		systems := decode(t, rt("Systems"))
		if n, _ := systems["Members@odata.count"].(float64); n != 1 {
			t.Errorf("Systems: %v", systems)
		}
		sys := decode(t, rt("Systems", "-1"))
		if sys["PowerState"] != "On" || sys["Id"] != "437XR1138R2" {
			t.Errorf("system: PowerState %v Id %v", sys["PowerState"], sys["Id"])
		}
		bios := decode(t, rt("raw", "GET", "/redfish/v1/UpdateService/FirmwareInventory/BIOS"))
		if bios["Version"] != "2.70" || bios["SoftwareId"] != "BIOS" {
			t.Errorf("BIOS item %v", bios)
		}
		mgr := decode(t, rt("Managers", "-1"))
		if mgr["FirmwareVersion"] != f.Versions("rt")["BMC"] {
			t.Errorf("manager FirmwareVersion %v", mgr["FirmwareVersion"])
		}
	})

	t.Run("reset", func(t *testing.T) {
		before := f.Stats("rt")
		rt("Systems", "reset", "GracefulRestart")
		eventually(t, "the GracefulRestart to boot the host", func() bool {
			st := f.Stats("rt")
			return st.Boots == before.Boots+1 && st.PowerState == "On"
		})
		if st := f.Stats("rt"); st.Resets != before.Resets+1 {
			t.Errorf("Resets %d, want %d", st.Resets, before.Resets+1)
		}
	})

	t.Run("update", func(t *testing.T) {
		rt("raw", "POST", "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", "-d",
			`{"ImageURI": "http://127.0.0.1:9/images/bios-2.80.bin", "TransferProtocol": "HTTP", "@Redfish.OperationApplyTime": "OnReset"}`)
		eventually(t, "the flash to finish", func() bool { return f.Stats("rt").Flashes["BIOS"] == 1 })
		task := decode(t, rt("raw", "GET", "/redfish/v1/TaskService/Tasks/1"))
		if task["TaskState"] != "Completed" {
			t.Errorf("task %v", task)
		}
		if v := decode(t, rt("raw", "GET", "/redfish/v1/UpdateService/FirmwareInventory/BIOS"))["Version"]; v != "2.70" {
			t.Errorf("BIOS before the reset %v, want 2.70 (OnReset)", v)
		}
		rt("Systems", "reset", "ForceRestart")
		eventually(t, "BIOS 2.80 after the reset", func() bool {
			return decode(t, rt("raw", "GET", "/redfish/v1/UpdateService/FirmwareInventory/BIOS"))["Version"] == "2.80"
		})
	})
	if st := f.Stats("rt"); st.SessionsOpen != 0 || st.SessionsCreated == 0 {
		t.Errorf("redfishtool sessions: open %d created %d (each run logs in and out)", st.SessionsOpen, st.SessionsCreated)
	}
}

func TestSushy(t *testing.T) {
	needSushy(t)
	for _, tc := range []struct {
		profile, item string
		// monitored: sushy's task monitor sees the task processing (the
		// DMTF profile's task answers 202 while running; iLO's monitor too).
		monitored, vanishes bool
		target, mode        string // Targets, and "basic" for Basic auth and BiosVersion
		finalState          string
	}{
		{ProfileDMTF, "BIOS", true, false, "", "", "Completed"},
		{ProfileILO5, "2", true, true, "", "", "Completed"},
		{ProfileAMI, "BIOS", false, false, "", "", "Completed"},
		{ProfileCrayEX, "Node0.BIOS", false, false, "/redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS", "", "Completed"},
		// basic answers 204 with the task already Completed, then forgets it.
		{ProfileBasic, "", false, false, "/redfish/v1/Systems/1", "basic", "forgotten"},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			f := start(t, Options{TLS: true, Speed: 6000}, BMCSpec{Name: "sushy", Addr: "127.77.252.1:0", Profile: tc.profile, PowerOn: true, Firmware: map[string]string{"BIOS": "2.70"}})
			ca := filepath.Join(t.TempDir(), "ca.pem")
			if err := os.WriteFile(ca, f.CACertPEM(), 0o600); err != nil {
				t.Fatal(err)
			}
			script, _ := filepath.Abs("testdata/clients/sushy_update.py")
			out := decode(t, run(t, clientEnv("SIM_PASSWORD="+testPass), debianPython, script, f.BMCs()[0].URL, testUser, ca,
				"http://127.0.0.1:9/images/bios-2.80.bin", tc.item, tc.target, tc.mode))
			got := map[string]any{"version_before": out["version_before"], "version_after": out["version_after"], "final_state": out["final_state"], "power_after": out["power_after"]}
			if tc.finalState == "forgotten" && out["final_state"] == "Completed" {
				got["final_state"] = "forgotten" // sushy may read the task before the BMC forgets it
			}
			want := map[string]any{"version_before": "2.70", "version_after": "2.80", "final_state": tc.finalState, "power_after": "On"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sushy saw (-want +got):\n%s\nfull output: %v", diff, out)
			}
			if polls, _ := out["polls"].(float64); (polls > 0) != tc.monitored {
				t.Errorf("sushy polled the monitor %v times; want processing seen: %v", out["polls"], tc.monitored)
			}
			if out["monitor_vanished"] != tc.vanishes {
				t.Errorf("monitor vanished: %v, want %v", out["monitor_vanished"], tc.vanishes)
			}
			st := f.Stats("sushy")
			sessions := 1
			if tc.mode == "basic" {
				sessions = 0
			}
			if st.Flashes[tc.item] != 1 && st.Flashes["BIOS"] != 1 || st.Resets != 1 || st.SessionsOpen != 0 || st.SessionsCreated != sessions {
				t.Errorf("stats: flashes %v resets %d sessions open %d created %d", st.Flashes, st.Resets, st.SessionsOpen, st.SessionsCreated)
			}
		})
	}
}

func TestSushyCLI(t *testing.T) {
	cli := needTool(t, testenv.Sushycli, "sushycli")
	f := start(t, Options{TLS: true, Speed: 6000}, BMCSpec{Name: "cli", Addr: "127.77.253.1:0", Profile: ProfileAMI, PowerOn: true, Firmware: map[string]string{"Runtime": "4.5.0"}})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, f.CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(f.BMCs()[0].URL)
	env := clientEnv()
	sc := func(args ...string) string {
		return run(t, env, cli, append(args, "--username", testUser, "--password", testPass, "--service-endpoint", u.String(), "--tls-certificates", ca)...)
	}
	const system, manager, media = "/redfish/v1/Systems/Self", "/redfish/v1/Managers/Self", "/redfish/v1/Managers/Self/VirtualMedia/CD1"

	var systems []map[string]any
	if err := json.Unmarshal([]byte(sc("system", "list", "-f", "json")), &systems); err != nil || len(systems) != 1 || systems[0]["System ID"] != system {
		t.Fatalf("system list: %v %v", systems, err)
	}
	var inv []map[string]any
	if err := json.Unmarshal([]byte(sc("system", "inventory", "show", "--system-id", system, "-f", "json")), &inv); err != nil || len(inv) != 1 || inv[0]["Identity"] != "Self" {
		t.Fatalf("system inventory: %v %v", inv, err)
	}
	if !strings.Contains(sc("manager", "vmedia", "list", "--manager-id", manager), media) {
		t.Fatal("vmedia list does not show CD1")
	}
	if !strings.Contains(sc("system", "power", "show", "--system-id", system), "ON") {
		t.Error("power show is not ON")
	}

	// The runtime update: insert the image, boot once from CD, power cycle.
	sc("manager", "vmedia", "insert", "--manager-id", manager, "--device-id", media, "--image", "http://127.0.0.1:9/images/runtime-4.6.1.iso")
	// sushycli 0.4 passes "cd" where sushy 4.3 wants its enum, so its
	// "system boot set" fails; set the override as another client would.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.CACertPEM())
	tlsClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("PATCH", f.BMCs()[0].URL+system, strings.NewReader(`{"Boot": {"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}}`))
	req.SetBasicAuth(testUser, testPass)
	resp, err := tlsClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("boot override: %d", resp.StatusCode)
	}
	sc("system", "power", "off", "--system-id", system)
	eventually(t, "power off", func() bool { p, _ := f.PowerState("cli"); return p == "Off" })
	sc("system", "power", "on", "--system-id", system)
	eventually(t, "Runtime 4.6.1", func() bool { return f.Versions("cli")["Runtime"] == "4.6.1" })
	if !strings.Contains(sc("system", "power", "show", "--system-id", system), "ON") {
		t.Error("power show is not ON after the reimage")
	}
	if st := f.Stats("cli"); st.Reimages != 1 || st.SessionsOpen != 0 {
		t.Errorf("stats: reimages %d, sessions open %d", st.Reimages, st.SessionsOpen)
	}
}

// TestClientsReadEveryProfile reads each profile's inventory with
// redfishtool and sushycli: the shapes copied from real BMCs must suit
// clients written for real BMCs.
func TestClientsReadEveryProfile(t *testing.T) {
	tool := needTool(t, testenv.Redfishtool, "redfishtool")
	cli := needTool(t, testenv.Sushycli, "sushycli")
	var specs []BMCSpec
	for i, p := range AllProfiles() {
		specs = append(specs, BMCSpec{Name: p, Addr: fmt.Sprintf("127.77.254.%d:0", i+1), Profile: p, PowerOn: true, Firmware: map[string]string{"BIOS": "9.9." + p}})
	}
	f := start(t, Options{TLS: true, Speed: 6000}, specs...)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, f.CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	env := clientEnv()
	for _, b := range f.BMCs() {
		t.Run(b.Name, func(t *testing.T) {
			host := strings.TrimPrefix(b.URL, "https://")
			rt := func(args ...string) map[string]any {
				return decode(t, run(t, env, tool, append([]string{"-r", host, "-u", testUser, "-p", testPass, "-S", "Always"}, args...)...))
			}
			one := []string{"-1"} // the only system
			if b.Profile == ProfileCrayEX {
				one = []string{"-I", "Node1"}
			}
			sys := rt(append([]string{"Systems"}, one...)...)
			mgr := rt("Managers", "-1")
			rt("Chassis", "-1")
			profs, _ := loadProfiles()
			wantFW := any(nil)
			if mv := profs[b.Profile].managerVersion; mv != nil {
				wantFW = mv(f.Versions(b.Name)["BMC"])
			}
			if sys["PowerState"] != "On" || mgr["FirmwareVersion"] != wantFW {
				t.Errorf("redfishtool: PowerState %v, FirmwareVersion %v", sys["PowerState"], mgr["FirmwareVersion"])
			}
			pr := profs[b.Profile]
			wantBios := "9.9." + b.Name
			if pr.biosVersion != nil {
				wantBios = pr.biosVersion(wantBios) // the vendor's own spelling (XCC: U8E1<build>)
			}
			if sys["BiosVersion"] != nil && sys["BiosVersion"] != wantBios {
				t.Errorf("redfishtool: BiosVersion %v, want %s", sys["BiosVersion"], wantBios)
			}
			if b.Profile != ProfileBasic { // basic has no FirmwareInventory
				biosSW := "BIOS"
				for _, c := range pr.components {
					if c.key == ComponentBIOS && c.softwareID != "" {
						biosSW = c.softwareID
					}
				}
				coll := rt("raw", "GET", "/redfish/v1/UpdateService/FirmwareInventory")
				found := 0
				for _, m := range coll["Members"].([]any) {
					item := rt("raw", "GET", str(m.(map[string]any)["@odata.id"]))
					if item["SoftwareId"] == biosSW && item["Version"] == "9.9."+b.Name {
						found++
					}
				}
				// Two nodes' BIOS on crayex; Dell lists the running BIOS
				// twice (Installed- and Current-).
				if want := map[bool]int{true: 2, false: 1}[b.Profile == ProfileCrayEX || b.Profile == ProfileIDRAC]; found != want {
					t.Errorf("redfishtool: %d BIOS items at version 9.9.%s, want %d", found, b.Name, want)
				}
			}
			sc := func(args ...string) string {
				return run(t, env, cli, append(args, "--username", testUser, "--password", testPass, "--service-endpoint", b.URL, "--tls-certificates", ca)...)
			}
			var inv []map[string]any
			sysArgs := []string{"system", "inventory", "show", "-f", "json"}
			if b.Profile == ProfileCrayEX {
				sysArgs = append(sysArgs, "--system-id", "/redfish/v1/Systems/Node1")
			}
			if err := json.Unmarshal([]byte(sc(sysArgs...)), &inv); err != nil || len(inv) != 1 || inv[0]["Identity"] != sys["Id"] {
				t.Errorf("sushycli system inventory: %v %v", inv, err)
			}
			if err := json.Unmarshal([]byte(sc("manager", "inventory", "show", "-f", "json")), &inv); err != nil || len(inv) != 1 || inv[0]["Identity"] != mgr["Id"] {
				t.Errorf("sushycli manager inventory: %v %v", inv, err)
			}
			if err := json.Unmarshal([]byte(sc("chassis", "inventory", "show", "-f", "json")), &inv); err != nil || len(inv) != 1 {
				t.Errorf("sushycli chassis inventory: %v %v", inv, err)
			}
			if !strings.Contains(sc(append([]string{"system", "power", "show"}, sysArgs[5:]...)...), "ON") {
				t.Error("sushycli: power is not ON")
			}
		})
	}
}
