package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A timed fault holds from From until Until on the fleet's clock: a BMC
// answers 503 only within its spell, and drops every connection while it
// is down; two spells of one kind are both kept.
func TestTimedFaultsHoldWithinTheirSpell(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", PowerOn: true})
	u := f.BMCs()[0].URL
	t0 := clk.Now()
	for _, sp := range [][2]time.Duration{{time.Minute, 2 * time.Minute}, {5 * time.Minute, 6 * time.Minute}} {
		if err := f.SetFault("s1", Fault{Kind: FaultBusy, Timed: Timed{From: t0.Add(sp[0]), Until: t0.Add(sp[1])}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SetFault("s1", Fault{Kind: FaultDown, Timed: Timed{From: t0.Add(10 * time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, at := range []time.Duration{0, 90 * time.Second, 3 * time.Minute, 5*time.Minute + 30*time.Second, 7 * time.Minute} {
		clk.Set(t0.Add(at))
		got = append(got, call(t, "GET", u+"/redfish/v1/Systems", nil, true).status)
	}
	if d := cmp.Diff([]int{200, 503, 200, 503, 200}, got); d != "" {
		t.Errorf("statuses across two busy spells (-want +got):\n%s", d)
	}
	clk.Set(t0.Add(11 * time.Minute))
	if _, err := client.Get(u + "/redfish/v1/"); err == nil {
		t.Error("a BMC that is down answered")
	}
}

// host-down holds every host of the BMC off with health Critical, a reset
// asked of it meanwhile included, and brings it back on and healthy when
// its spell ends.
func TestHostDownFault(t *testing.T) {
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", PowerOn: true})
	u := f.BMCs()[0].URL
	const sysPath = "/redfish/v1/Systems/437XR1138R2"
	t0 := clk.Now()
	if err := f.SetFault("s1", Fault{Kind: FaultHostDown, Timed: Timed{From: t0.Add(time.Minute), Until: t0.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	state := func() [2]any {
		sys := get(t, u+sysPath)
		return [2]any{sys["PowerState"], at(sys, "Status", "Health")}
	}
	var got [][2]any
	got = append(got, state())
	clk.Advance(2 * time.Minute)
	got = append(got, state())
	call(t, "POST", u+sysPath+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, true)
	clk.Advance(10 * time.Minute)
	got = append(got, state())
	clk.Advance(time.Hour)
	got = append(got, state())
	want := [][2]any{{"On", "OK"}, {"Off", "Critical"}, {"Off", "Critical"}, {"On", "OK"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("power and health before, during (and after a reset On), after the spell (-want +got):\n%s", d)
	}
}

// task-fail limited to a component fails only that component's updates;
// slow makes that component's tasks take factor times as long, others not.
func TestComponentFaults(t *testing.T) {
	const su = "/redfish/v1/UpdateService/Actions/SimpleUpdate"
	clk := newClock()
	f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "s1", Profile: ProfileAMI, PowerOn: true, Firmware: map[string]string{"BIOS": "1.0", "NIC": "1.0"}})
	u := f.BMCs()[0].URL
	if err := f.SetFault("s1", Fault{Kind: FaultTaskFail, Timed: Timed{Component: "bios"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.SetFault("s1", Fault{Kind: FaultSlow, Timed: Timed{Component: "NIC", Factor: 3}}); err != nil {
		t.Fatal(err)
	}
	flash(t, clk, u, su, "http://h/bios-2.0.bin", "")
	flash(t, clk, u, su, "http://h/nic-2.0.bin", "")
	// Each flash above let 10 minutes pass, the time a flash takes: the
	// NIC's, slowed, takes 30.
	var got []string
	for _, id := range []string{"1", "2"} {
		got = append(got, str(call(t, "GET", u+"/redfish/v1/TaskService/Tasks/"+id, nil, true).json(t)["TaskState"]))
	}
	clk.Advance(25 * time.Minute)
	got = append(got, str(call(t, "GET", u+"/redfish/v1/TaskService/Tasks/2", nil, true).json(t)["TaskState"]))
	if d := cmp.Diff([]string{"Exception", "Running", "Completed"}, got); d != "" {
		t.Errorf("BIOS task (failed), NIC task after 10 minutes (slowed) and 35 (-want +got):\n%s", d)
	}
}

// The -fault flag's form takes the new kinds.
func TestParseTimedKinds(t *testing.T) {
	for in, want := range map[string]Fault{
		"down":      {Kind: FaultDown},
		"host-down": {Kind: FaultHostDown},
		"slow:2.5":  {Kind: FaultSlow, Timed: Timed{Factor: 2.5}},
	} {
		got, err := ParseFault(in)
		if err != nil || got != want {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"slow", "slow:0", "slow:x", "down:3", "host-down:1m"} {
		if ft, err := ParseFault(bad); err == nil {
			t.Errorf("ParseFault(%q) accepted: %+v", bad, ft)
		}
	}
}
