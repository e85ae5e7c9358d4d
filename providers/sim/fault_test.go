package sim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRequestFaults(t *testing.T) {
	for _, tc := range []struct {
		fault      Fault
		wantStatus int
		wantJSON   bool
		check      func(t *testing.T, r reply)
	}{
		{Fault{Kind: FaultError}, 500, true, nil},
		{Fault{Kind: FaultBusy, Latency: 3 * time.Second}, 503, true, func(t *testing.T, r reply) {
			if got := r.header.Get("Retry-After"); got != "3" {
				t.Errorf("Retry-After %q, want 3", got)
			}
		}},
		{Fault{Kind: FaultMalformed}, 200, false, nil},
	} {
		t.Run(string(tc.fault.Kind), func(t *testing.T) {
			f, u := one(t, Options{}, ProfileDMTF)
			ft := tc.fault
			ft.Count = 2
			if err := f.SetFault("s1", ft); err != nil {
				t.Fatal(err)
			}
			var got []int
			for i := 0; i < 3; i++ {
				r := call(t, "GET", u+"/redfish/v1/Systems", nil, true)
				got = append(got, r.status)
				if i == 0 {
					var v any
					if isJSON := json.Unmarshal(r.body, &v) == nil; isJSON != tc.wantJSON {
						t.Errorf("body is JSON: %v, want %v: %s", isJSON, tc.wantJSON, r.body)
					}
					if tc.check != nil {
						tc.check(t, r)
					}
				}
			}
			if diff := cmp.Diff([]int{tc.wantStatus, tc.wantStatus, 200}, got); diff != "" {
				t.Errorf("statuses; the fault clears after Count requests (-want +got):\n%s", diff)
			}
			if st := f.Stats("s1"); st.FaultsInjected != 2 {
				t.Errorf("FaultsInjected = %d, want 2", st.FaultsInjected)
			}
		})
	}
}

func TestLatencyFault(t *testing.T) {
	f, u := one(t, Options{Latency: 20 * time.Millisecond}, ProfileDMTF)
	if err := f.SetFault("s1", Fault{Kind: FaultLatency, Latency: 80 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	call(t, "GET", u+"/redfish/v1/", nil, false)
	if d := time.Since(begin); d < 100*time.Millisecond {
		t.Errorf("request took %v, want at least 100ms (20ms base + 80ms fault)", d)
	}
}

func TestTimeoutFaultHoldsUntilTheClientGivesUp(t *testing.T) {
	f, u := one(t, Options{}, ProfileDMTF)
	if err := f.SetFault("s1", Fault{Kind: FaultTimeout}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u+"/redfish/v1/", nil)
	_, err := http.DefaultClient.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the client's deadline", err)
	}
	// Close must not wait for the held request's two minutes.
	done := make(chan struct{})
	go func() { f.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked by a held request")
	}
}

func TestTimeoutFaultIsBounded(t *testing.T) {
	f, u := one(t, Options{}, ProfileDMTF)
	if err := f.SetFault("s1", Fault{Kind: FaultTimeout, Latency: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	_, err := client.Get(u + "/redfish/v1/")
	if err == nil {
		t.Fatal("a timed-out request got an answer")
	}
}

func TestTaskFaults(t *testing.T) {
	const su = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
	for _, tc := range []struct {
		kind      FaultKind
		wantState string
		wantBIOS  string
	}{
		{FaultTaskFail, "Exception", "1.0"},
		{FaultTaskHang, "Running", "1.0"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", PowerOn: true, Firmware: map[string]string{"BIOS": "1.0"}})
			u := f.BMCs()[0].URL
			if err := f.SetFault("s1", Fault{Kind: tc.kind}); err != nil {
				t.Fatal(err)
			}
			flash(t, clk, u, su, "http://h/bios-2.0.bin", "Immediate")
			clk.Advance(time.Hour)
			// The DMTF profile's task answers 202 while it runs.
			task := call(t, "GET", u+"/redfish/v1/TaskService/Tasks/1", nil, true).json(t)
			if task["TaskState"] != tc.wantState {
				t.Errorf("TaskState %v, want %s", task["TaskState"], tc.wantState)
			}
			call(t, "POST", u+"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
			clk.Advance(time.Hour)
			if v := f.Versions("s1")["BIOS"]; v != tc.wantBIOS {
				t.Errorf("BIOS %q, want %q", v, tc.wantBIOS)
			}
		})
	}
}

func TestNoReturnFault(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", PowerOn: true})
	u := f.BMCs()[0].URL
	if err := f.SetFault("s1", Fault{Kind: FaultNoReturn}); err != nil {
		t.Fatal(err)
	}
	call(t, "POST", u+"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"}, true)
	clk.Advance(time.Hour)
	sys := get(t, u+"/redfish/v1/Systems/437XR1138R2")
	if sys["PowerState"] != "Off" || at(sys, "Status", "Health") != "Critical" {
		t.Errorf("PowerState %v Health %v, want Off Critical", sys["PowerState"], at(sys, "Status", "Health"))
	}
}

func TestIgnoreGracefulFault(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", PowerOn: true})
	u := f.BMCs()[0].URL
	if err := f.SetFault("s1", Fault{Kind: FaultIgnoreGraceful}); err != nil {
		t.Fatal(err)
	}
	reset := u + "/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset"
	call(t, "POST", reset, map[string]string{"ResetType": "GracefulShutdown"}, true)
	clk.Advance(10 * time.Minute)
	if p, _ := f.PowerState("s1"); p != "On" {
		t.Fatalf("after an ignored GracefulShutdown: %s, want On", p)
	}
	call(t, "POST", reset, map[string]string{"ResetType": "ForceOff"}, true)
	if p, _ := f.PowerState("s1"); p != "Off" {
		t.Errorf("after ForceOff: %s", p)
	}
}

func TestFaultRateIsDeterministic(t *testing.T) {
	specs := func() []BMCSpec {
		var s []BMCSpec
		for i := 0; i < 40; i++ {
			s = append(s, BMCSpec{Name: "n" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Addr: "127.0.0.1:0"})
		}
		return s
	}
	run := func(seed uint64) []int {
		f := start(t, Options{}, specs()...)
		f.SetFaultRate(FaultRate{Seed: seed, Rates: map[FaultKind]float64{FaultBusy: 0.3}})
		var statuses []int
		for _, b := range f.BMCs() {
			for i := 0; i < 3; i++ {
				statuses = append(statuses, call(t, "GET", b.URL+"/redfish/v1/Systems", nil, true).status)
			}
		}
		return statuses
	}
	a, b, c := run(7), run(7), run(8)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different faults:\n%s", diff)
	}
	if cmp.Equal(a, c) {
		t.Error("different seeds gave the same faults")
	}
	busy := 0
	for _, s := range a {
		if s == 503 {
			busy++
		}
	}
	if busy < 15 || busy > 60 { // 120 requests at p=0.3
		t.Errorf("%d of 120 requests busy at rate 0.3", busy)
	}
}

func TestParseFault(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Fault
		err  bool
	}{
		{"latency:50ms", Fault{Kind: FaultLatency, Latency: 50 * time.Millisecond}, false},
		{"busy", Fault{Kind: FaultBusy}, false},
		{"session-limit:1", Fault{Kind: FaultSessionLimit, Limit: 1}, false},
		{"error:3", Fault{Kind: FaultError, Count: 3}, false},
		{"no-return", Fault{Kind: FaultNoReturn}, false},
		{"latency:soon", Fault{}, true},
		{"explode", Fault{}, true},
		{"task-fail:1", Fault{}, true},
		{"update-offline", Fault{Kind: FaultUpdateOffline}, false},
		{"update-offline:Disabled", Fault{Kind: FaultUpdateOffline, State: "Disabled"}, false},
		{"update-offline:Enabled", Fault{}, true},
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

func TestNothingRunsAfterClose(t *testing.T) {
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(t.Context())
	specs := fleetSpecs(50)
	f, err := New(Options{Username: testUser, Password: testPass}, specs)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.SetFault(specs[0].Name, Fault{Kind: FaultTimeout}); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		_, err := client.Get(f.BMCs()[0].URL + "/redfish/v1/")
		held <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the request reach the held handler
	cancel()                          // the start context ends the fleet
	f.Close()                         // and Close waits until it has stopped
	if err := <-held; err == nil {
		t.Error("the held request got an answer")
	}
	client.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+2 {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Close, %d before Start:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

func TestCountedTaskFaultClears(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileAMI, PowerOn: true})
	u := f.BMCs()[0].URL
	if err := f.SetFault("s1", Fault{Kind: FaultTaskFail, Count: 1}); err != nil {
		t.Fatal(err)
	}
	flash(t, clk, u, "/redfish/v1/UpdateService/Actions/SimpleUpdate", "http://h/nic-2.0.bin", "")
	flash(t, clk, u, "/redfish/v1/UpdateService/Actions/SimpleUpdate", "http://h/nic-2.0.bin", "")
	var got []string
	for _, id := range []string{"1", "2"} {
		got = append(got, str(get(t, u+"/redfish/v1/TaskService/Tasks/"+id)["TaskState"]))
	}
	if diff := cmp.Diff([]string{"Exception", "Completed"}, got); diff != "" {
		t.Errorf("task states (-want +got):\n%s", diff)
	}
	if st := f.Stats("s1"); st.TasksFailed != 1 || st.TasksCompleted != 1 || f.Versions("s1")["NIC"] != "2.0" {
		t.Errorf("stats %+v, NIC %s", st, f.Versions("s1")["NIC"])
	}
}

// The remediation triggers of rack resiliency can be injected and cleared,
// and clearing one returns the server to health OK: read-only root
// filesystem (On, Critical), Unknown state (On, no health), provisioning
// that does not finish (every boot ends Off, Critical; after the clear
// the next boot comes up healthy), and no-return once cleared.
func TestRemediationTriggerFaultsInjectAndClear(t *testing.T) {
	health := func(sys map[string]any) any { return at(sys, "Status", "Health") }
	const sysPath = "/redfish/v1/Systems/437XR1138R2"
	for _, kind := range []FaultKind{FaultReadOnlyFS, FaultUnknownState} {
		t.Run(string(kind), func(t *testing.T) {
			f, u := one(t, Options{}, ProfileDMTF)
			if err := f.SetFault("s1", Fault{Kind: kind}); err != nil {
				t.Fatal(err)
			}
			want := map[FaultKind]any{FaultReadOnlyFS: "Critical", FaultUnknownState: ""}[kind]
			for i := 0; i < 2; i++ { // it holds until cleared
				sys := get(t, u+sysPath)
				if sys["PowerState"] != "On" || health(sys) != want {
					t.Fatalf("with %s: PowerState %v Health %q, want On %q", kind, sys["PowerState"], health(sys), want)
				}
			}
			if err := f.SetFault("s1", Fault{}); err != nil {
				t.Fatal(err)
			}
			if sys := get(t, u+sysPath); health(sys) != "OK" {
				t.Errorf("after the clear: Health %q, want OK", health(sys))
			}
		})
	}
	for _, kind := range []FaultKind{FaultProvisioning, FaultNoReturn} {
		t.Run(string(kind), func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", PowerOn: true})
			u := f.BMCs()[0].URL
			if err := f.SetFault("s1", Fault{Kind: kind}); err != nil {
				t.Fatal(err)
			}
			reset := func(typ string) {
				if r := call(t, "POST", u+sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": typ}, true); r.status >= 300 {
					t.Fatalf("reset %s: %d %s", typ, r.status, r.body)
				}
				clk.Advance(time.Hour)
			}
			reset("ForceRestart")
			if sys := get(t, u+sysPath); sys["PowerState"] != "Off" || health(sys) != "Critical" {
				t.Fatalf("the boot did not fail: PowerState %v Health %v", sys["PowerState"], health(sys))
			}
			if kind == FaultProvisioning {
				reset("On") // still not provisioned
				if sys := get(t, u+sysPath); sys["PowerState"] != "Off" || health(sys) != "Critical" {
					t.Fatalf("provisioning finished while the fault holds: PowerState %v Health %v", sys["PowerState"], health(sys))
				}
			}
			if err := f.SetFault("s1", Fault{}); err != nil {
				t.Fatal(err)
			}
			if sys := get(t, u+sysPath); health(sys) != "OK" {
				t.Errorf("after the clear: Health %q, want OK", health(sys))
			}
			reset("On")
			if sys := get(t, u+sysPath); sys["PowerState"] != "On" || health(sys) != "OK" {
				t.Errorf("after the clear the boot did not come up: PowerState %v Health %v", sys["PowerState"], health(sys))
			}
		})
	}
}

// TestUpdateOfflineFault: the UpdateService reports the state the fault
// gives (UnavailableOffline by default, as a GPU tray's does; Disabled
// with ServiceEnabled false) and refuses updates while it holds; cleared,
// it takes them again.
func TestUpdateOfflineFault(t *testing.T) {
	f, u := one(t, Options{}, ProfileDMTF)
	us := u + "/redfish/v1/UpdateService"
	update := map[string]any{"ImageURI": "http://127.0.0.1:9/bios-2.80.bin", "TransferProtocol": "HTTP", "Targets": []string{"/redfish/v1/UpdateService/FirmwareInventory/BIOS"}}
	simple := us + "/Actions/UpdateService.SimpleUpdate"
	for _, tc := range []struct {
		state, want string
		enabled     bool
	}{{"", "UnavailableOffline", true}, {"StandbyOffline", "StandbyOffline", true}, {"Disabled", "Disabled", false}} {
		if err := f.SetFault("s1", Fault{Kind: FaultUpdateOffline, State: tc.state}); err != nil {
			t.Fatal(err)
		}
		doc := get(t, us)
		if at(doc, "Status", "State") != tc.want || doc["ServiceEnabled"] != tc.enabled {
			t.Errorf("fault state %q: Status.State %v ServiceEnabled %v, want %s %v", tc.state, at(doc, "Status", "State"), doc["ServiceEnabled"], tc.want, tc.enabled)
		}
		if r := call(t, "POST", simple, update, true); r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "ServiceDisabled") {
			t.Errorf("fault state %q: SimpleUpdate answered %d %s, want 503 ServiceDisabled", tc.state, r.status, r.body)
		}
	}
	if err := f.SetFault("s1", Fault{}); err != nil {
		t.Fatal(err)
	}
	if doc := get(t, us); at(doc, "Status", "State") == "UnavailableOffline" || doc["ServiceEnabled"] != true {
		t.Errorf("after the clear: %v", doc)
	}
	if r := call(t, "POST", simple, update, true); r.status >= 300 {
		t.Errorf("after the clear: SimpleUpdate answered %d %s", r.status, r.body)
	}
}
