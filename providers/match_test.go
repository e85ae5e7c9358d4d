package providers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rackform/rackform/config/version"
)

func TestMatchSelects(t *testing.T) {
	bios := Component{ID: "2", Name: "System ROM", SoftwareID: "BIOS"}
	cases := []struct {
		name string
		m    Match
		want bool
	}{
		{"software id", Match{SoftwareID: "BIOS"}, true},
		{"other software id", Match{SoftwareID: "BMC"}, false},
		{"id", Match{ID: "2"}, true},
		{"other id", Match{ID: "1"}, false},
		{"name glob", Match{NamePattern: "System*"}, true},
		{"name glob miss", Match{NamePattern: "NIC*"}, false},
		{"bad glob", Match{NamePattern: "["}, false},
		// SoftwareID wins over the other fields when set.
		{"software id first", Match{SoftwareID: "BMC", ID: "2"}, false},
		{"empty", Match{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.m.Selects(bios); got != c.want {
				t.Errorf("%+v.Selects(bios) = %v, want %v", c.m, got, c.want)
			}
		})
	}
	if _, ok := (Match{ID: "9"}).Find([]Component{bios}); ok {
		t.Error("Find found a component nothing matches")
	}
	if c, ok := (Match{ID: "2"}).Find([]Component{{ID: "1"}, bios}); !ok || c.SoftwareID != "BIOS" {
		t.Errorf("Find = %+v, %v", c, ok)
	}
}

// TestMatchAtTarget: a rule means every active member it selects. The
// members are shaped like the real captures': Dell's Installed/Previous
// pair with one SoftwareId, Supermicro's eight HGX GPUs, Lenovo's pending
// placeholder named like the running UEFI.
func TestMatchAtTarget(t *testing.T) {
	dotted := func(v string) version.Target { return version.Target{Version: v, Scheme: version.Dotted} }
	dell := []Component{
		{ID: "Current-159-1.8.2__BIOS.Setup.1-1", SoftwareID: "159", Name: "BIOS", Version: "1.8.2", State: StateAvailable},
		{ID: "Installed-159-1.8.2__BIOS.Setup.1-1", SoftwareID: "159", Name: "BIOS", Version: "1.8.2", State: StateActive},
		{ID: "Previous-159-1.2.4__BIOS.Setup.1-1", SoftwareID: "159", Name: "BIOS", Version: "1.2.4", State: StatePrevious},
	}
	var gpus []Component
	for i := 1; i <= 8; i++ {
		v := "96.00.89.00.01"
		if i == 3 || i == 7 {
			v = "96.00.61.00.01"
		}
		gpus = append(gpus, Component{ID: fmt.Sprintf("HGX_FW_GPU_SXM_%d", i), SoftwareID: "0x0020", Version: v, State: StateActive})
	}
	lenovo := []Component{
		{ID: "UEFI", Name: "Firmware:UEFI", SoftwareID: "UEFI-U8E1-6", Version: "22J-1.51", State: StateActive},
		{ID: "UEFI-Pending", Name: "Firmware:UEFI", Version: "", State: StatePending},
	}
	cases := []struct {
		name    string
		m       Match
		t       version.Target
		cs      []Component
		at      bool
		why     string
		wantErr bool
	}{
		{"dell at target: the previous image is not compared", Match{SoftwareID: "159"}, dotted("1.8.2"), dell, true, "", false},
		{"dell behind", Match{SoftwareID: "159"}, dotted("1.13.2"), dell, false, "Installed-159-1.8.2__BIOS.Setup.1-1 at 1.8.2", false},
		{"two GPUs of eight behind", Match{SoftwareID: "0x0020"}, dotted("96.00.89.00.01"), gpus, false, "HGX_FW_GPU_SXM_3 at 96.00.61.00.01, HGX_FW_GPU_SXM_7 at 96.00.61.00.01", false},
		{"all eight at target", Match{SoftwareID: "0x0020", Count: 8}, dotted("96.00.61.00.01"), setVersion(gpus, "96.00.61.00.01"), true, "", false},
		{"a GPU missing", Match{SoftwareID: "0x0020", Count: 8}, dotted("96.00.61.00.01"), setVersion(gpus[:7], "96.00.61.00.01"), false, "7 active members reported, the rule expects 8", false},
		{"the pending placeholder is not read", Match{NamePattern: "Firmware:UEFI"}, version.Target{Version: "22J-1.51", Scheme: version.Opaque}, lenovo, true, "", false},
		{"only non-active members", Match{ID: "UEFI-Pending"}, version.Target{Version: "22J-1.51", Scheme: version.Opaque}, lenovo, false, "no active member reported (UEFI-Pending (no version) pending)", false},
		{"nothing", Match{ID: "nope"}, dotted("1"), dell, false, "no active member reported", false},
		{"unreadable version", Match{ID: "UEFI"}, dotted("1.51"), lenovo, false, "", true},
		// plugins that say nothing about states: every member is active
		{"no states", Match{SoftwareID: "159"}, dotted("1.8.2"), setState(dell, ""), false, "Previous-159-1.2.4__BIOS.Setup.1-1 at 1.2.4", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at, why, err := c.m.AtTarget(c.t, c.cs)
			if at != c.at || (err != nil) != c.wantErr || !strings.HasPrefix(why, c.why) || (c.why == "" && why != "") {
				t.Errorf("AtTarget = %v, %q, %v; want %v, %q…, error %v", at, why, err, c.at, c.why, c.wantErr)
			}
		})
	}
}

func setVersion(cs []Component, v string) []Component {
	out := append([]Component(nil), cs...)
	for i := range out {
		out[i].Version = v
	}
	return out
}

func setState(cs []Component, s string) []Component {
	out := append([]Component(nil), cs...)
	for i := range out {
		out[i].State = s
	}
	return out
}

func TestMatchActiveAndMembers(t *testing.T) {
	cs := []Component{
		{ID: "BMC-Primary", Name: "Firmware:BMC", State: StateActive},
		{ID: "BMC-Primary-Pending", Name: "Firmware:BMC", State: StatePending},
		{ID: "BMC-Backup", Name: "Firmware:BMC", State: StateStandby},
		{ID: "UEFI", Name: "Firmware:UEFI"},
	}
	m := Match{NamePattern: "Firmware:*"}
	if got := len(m.Members(cs)); got != 4 {
		t.Errorf("Members: %d, want 4", got)
	}
	var ids []string
	for _, c := range m.Active(cs) {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, " ") != "BMC-Primary UEFI" {
		t.Errorf("Active = %v, want BMC-Primary and UEFI (no state: active)", ids)
	}
}

// TestMatchAtTargetOf: an update step for three GPUs of eight is at target
// when those three are, whatever the others report; when one of its
// members is gone (a Dell Id renamed by the update) every active member
// decides; the rule's count is checked on all of them.
func TestMatchAtTargetOf(t *testing.T) {
	var gpus []Component
	for i := 1; i <= 8; i++ {
		v := "96.00.61.00.01"
		if i <= 3 {
			v = "96.00.89.00.01"
		}
		gpus = append(gpus, Component{ID: fmt.Sprintf("GPU_%d", i), SoftwareID: "0x0020", Version: v, State: StateActive})
	}
	tg := version.Target{Version: "96.00.89.00.01", Scheme: version.Dotted}
	m := Match{SoftwareID: "0x0020", Count: 8}
	for _, c := range []struct {
		name string
		cs   []Component
		ids  []string
		at   bool
	}{
		{"the step's three", gpus, []string{"GPU_1", "GPU_2", "GPU_3"}, true},
		{"the next three", gpus, []string{"GPU_4", "GPU_5", "GPU_6"}, false},
		{"no ids: all eight", gpus, nil, false},
		{"a member renamed: all eight", gpus, []string{"GPU_1", "GPU_9"}, false},
		{"one gone: the count", gpus[:7], []string{"GPU_1"}, false},
	} {
		if at, why, err := m.AtTargetOf(tg, c.cs, c.ids); at != c.at || err != nil {
			t.Errorf("%s: %v (%s, %v), want %v", c.name, at, why, err, c.at)
		}
	}
	dell := []Component{{ID: "Installed-159-1.13.2__BIOS.Setup.1-1", SoftwareID: "159", Version: "1.13.2", State: StateActive},
		{ID: "Previous-159-1.8.2__BIOS.Setup.1-1", SoftwareID: "159", Version: "1.8.2", State: StatePrevious}}
	if at, why, err := (Match{SoftwareID: "159", Count: 1}).AtTargetOf(version.Target{Version: "1.13.2", Scheme: version.Dotted}, dell, []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}); !at {
		t.Errorf("Dell after its update: %v (%s, %v); the renamed Installed member is at target", at, why, err)
	}
}
