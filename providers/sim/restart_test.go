package sim

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestBMCRestartDuringUpdate: with bmc-restart-during-update the BMC goes
// away halfway through the flash for its reset time, sessions are lost,
// and it comes back without the task (monitor and Task 404); the NIC
// shows its new version only when the flash took, and a counted fault
// lets the next update run as usual.
func TestBMCRestartDuringUpdate(t *testing.T) {
	const su = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
	for _, tc := range []struct {
		fault string
		// nic is the NIC's version after the first update, then after
		// the second.
		nic    [2]string
		lost   int // updates lost to a restart, of the two
		resets int
	}{
		{"bmc-restart-during-update:took", [2]string{"3.1", "3.2"}, 2, 2},
		{"bmc-restart-during-update:lost", [2]string{"1.0", "1.0"}, 2, 2},
		{"bmc-restart-during-update:lost:1", [2]string{"1.0", "3.2"}, 1, 1},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", PowerOn: true, Firmware: map[string]string{"NIC": "1.0"}})
			u := f.BMCs()[0].URL
			ft, err := ParseFault(tc.fault)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.SetFault("s1", ft); err != nil {
				t.Fatal(err)
			}
			noKeepAlive := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			for i, image := range []string{"http://h/nic-3.1.bin", "http://h/nic-3.2.bin"} {
				login := call(t, "POST", u+"/redfish/v1/SessionService/Sessions", map[string]string{"UserName": testUser, "Password": testPass}, false)
				r := simpleUpdate(t, u, su, map[string]any{"ImageURI": image, "@Redfish.OperationApplyTime": "Immediate"})
				if r.status != 202 {
					t.Fatalf("SimpleUpdate %s: %d %s", image, r.status, r.body)
				}
				monitor := r.header.Get("Location")
				task := "/redfish/v1/TaskService/Tasks/" + str(r.json(t)["Id"])
				hit := i < tc.lost
				clk.Advance(6 * time.Minute) // past half the 10-minute flash
				resp, err := noKeepAlive.Get(u + "/redfish/v1/")
				if err == nil {
					resp.Body.Close()
				}
				if down := err != nil; down != hit {
					t.Fatalf("update %d: BMC unreachable halfway through the flash: %v (%v), want %v", i+1, down, err, hit)
				}
				clk.Advance(10 * time.Minute) // the flash's end and the 3-minute reset
				for _, p := range []string{monitor, task} {
					want := http.StatusOK
					if hit {
						want = http.StatusNotFound
					}
					if r := call(t, "GET", u+trimBase(u, p), nil, true); r.status != want {
						t.Errorf("update %d: GET %s after the restart: %d, want %d", i+1, p, r.status, want)
					}
				}
				req, _ := http.NewRequest("GET", u+"/redfish/v1/Systems", nil)
				req.Header.Set("X-Auth-Token", login.header.Get("X-Auth-Token"))
				resp, err = noKeepAlive.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if want := map[bool]int{true: 401, false: 200}[hit]; resp.StatusCode != want {
					t.Errorf("update %d: the session from before: %d, want %d (a restart loses sessions)", i+1, resp.StatusCode, want)
				}
				if v := f.Versions("s1")["NIC"]; v != tc.nic[i] {
					t.Errorf("update %d: NIC %q, want %q", i+1, v, tc.nic[i])
				}
			}
			st := f.Stats("s1")
			got := [4]int{st.Updates, st.UpdatesLost, st.BMCResets, st.FaultsInjected}
			if diff := cmp.Diff([4]int{2, tc.lost, tc.resets, tc.lost}, got); diff != "" {
				t.Errorf("updates, updates lost, BMC resets, faults injected (-want +got):\n%s", diff)
			}
		})
	}
}

// trimBase makes a Location (absolute or a path) a path.
func trimBase(u, p string) string {
	if len(p) > len(u) && p[:len(u)] == u {
		return p[len(u):]
	}
	return p
}

func TestParseRestartFault(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Fault
		err  bool
	}{
		{"bmc-restart-during-update:took", Fault{Kind: FaultBMCRestartDuringUpdate, Took: true}, false},
		{"bmc-restart-during-update:lost", Fault{Kind: FaultBMCRestartDuringUpdate}, false},
		{"bmc-restart-during-update:lost:1", Fault{Kind: FaultBMCRestartDuringUpdate, Count: 1}, false},
		{"bmc-restart-during-update:took:2", Fault{Kind: FaultBMCRestartDuringUpdate, Took: true, Count: 2}, false},
		{"bmc-restart-during-update:lost:1:drops-staged", Fault{Kind: FaultBMCRestartDuringUpdate, Count: 1, DropsStaged: true}, false},
		{"bmc-restart-during-update:took:drops-staged", Fault{Kind: FaultBMCRestartDuringUpdate, Took: true, DropsStaged: true}, false},
		{"bmc-restart-during-update:drops-staged", Fault{}, true},
		{"bmc-restart-during-update", Fault{}, true},
		{"bmc-restart-during-update:maybe", Fault{}, true},
		{"bmc-restart-during-update:lost:0", Fault{}, true},
		{"bmc-restart-during-update:lost:x", Fault{}, true},
	} {
		got, err := ParseFault(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseFault(%q) error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseFault(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestBMCRestartDropsStagedImages: a BIOS image staged for the next host
// reset (its task completed) survives a BMC restart during a later update,
// unless the fault says the restart drops staged images (issue 33, item
// 1): then the reset applies nothing and the BIOS keeps its old version,
// while the update the restart hit took as the fault says. A fault
// limited to the NIC leaves the BIOS's own update alone.
func TestBMCRestartDropsStagedImages(t *testing.T) {
	const su = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
	const reset = "/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset"
	for _, tc := range []struct {
		name string
		ft   Fault
		bios string
	}{
		{"staged image kept", Fault{Kind: FaultBMCRestartDuringUpdate, Took: true, Count: 1, Timed: Timed{Component: "nic"}}, "2.80"},
		{"staged image dropped", Fault{Kind: FaultBMCRestartDuringUpdate, Took: true, Count: 1, DropsStaged: true, Timed: Timed{Component: "nic"}}, "1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", PowerOn: true, Firmware: map[string]string{"BIOS": "1.0", "NIC": "1.0"}})
			u := f.BMCs()[0].URL
			if err := f.SetFault("s1", tc.ft); err != nil {
				t.Fatal(err)
			}
			flash(t, clk, u, su, "http://h/images/bios-2.80.bin", "OnReset")
			if r := simpleUpdate(t, u, su, map[string]any{"ImageURI": "http://h/images/NIC-3.1.fwpkg"}); r.status != 202 {
				t.Fatalf("SimpleUpdate: %d %s", r.status, r.body)
			}
			clk.Advance(16 * time.Minute) // the flash, the restart halfway and the BMC's reset time
			call(t, "POST", u+reset, map[string]string{"ResetType": "ForceRestart"}, true)
			clk.Advance(2 * time.Minute)
			v := f.Versions("s1")
			if v["BIOS"] != tc.bios || v["NIC"] != "3.1" {
				t.Errorf("after the reset BIOS %q and NIC %q, want %q and 3.1", v["BIOS"], v["NIC"], tc.bios)
			}
			if st := f.Stats("s1"); st.UpdatesLost != 1 || st.BMCResets != 1 || st.Updates != 2 {
				t.Errorf("updates %d, lost %d, BMC resets %d, want 2, 1 and 1 (only the NIC's update hit)", st.Updates, st.UpdatesLost, st.BMCResets)
			}
		})
	}
}
