package redfish

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

const hgxGPU = "/redfish/v1/UpdateService/FirmwareInventory/HGX_FW_GPU_SXM_%d"

// gpuDocs answers the Supermicro capture's HGX GPU members with version
// for the GPUs listed in updated, and drops member drop (0: none) from the
// FirmwareInventory collection, as after an update that left some behind
// or a GPU that fell off the bus.
func gpuDocs(t *testing.T, updated []int, v string, drop int) mockupOpt {
	const dir = "supermicro/SYS-821GE-TNHR"
	docs := map[string]func() any{}
	for _, i := range updated {
		uri := fmt.Sprintf(hgxGPU, i)
		docs[uri] = func() any {
			d := captureJSON(t, dir, uri)
			d["Version"] = v
			return d
		}
	}
	if drop > 0 {
		docs["/redfish/v1/UpdateService/FirmwareInventory"] = func() any {
			d := captureJSON(t, dir, "/redfish/v1/UpdateService/FirmwareInventory")
			var kept []any
			for _, m := range d["Members"].([]any) {
				if m.(map[string]any)["@odata.id"] != fmt.Sprintf(hgxGPU, drop) {
					kept = append(kept, m)
				}
			}
			d["Members"], d["Members@odata.count"] = kept, len(kept)
			return d
		}
	}
	return serveJSON(docs)
}

// TestUpdateNamesEveryGPU: against the real Supermicro HGX capture, one
// rule over the eight GPUs' SoftwareId plans one SimpleUpdate naming all
// eight in Targets (the ActionInfo's Targets is a StringArray listing each),
// and apply sends exactly that, without an apply time the BMC does not
// list.
func TestUpdateNamesEveryGPU(t *testing.T) {
	a := &bmcActions{t: t, dir: "supermicro/SYS-821GE-TNHR"}
	m := newMockupServer(t, a.dir, a.opt())
	p := fastConfig(t, m)
	target := providers.Target{Name: "s", Endpoint: m.URL}
	in := providers.UpdateIntent{Component: "gpu", Match: providers.Match{SoftwareID: "0x0020", Count: 8}, ImageURI: "https://images.example/gpu.bin", ApplyTime: "OnReset"}
	plan := planFor(t, p, target, in)
	if len(plan.Targets) != 8 || plan.TargetsPerRequest != 0 || plan.ApplyTime != "" {
		t.Fatalf("plan %+v: want all eight GPUs in one request, no apply time", plan)
	}
	step := stepFrom(plan, in)
	step.ApplyTime = plan.ApplyTime
	if _, d := apply(t, p, target, step); d.HasErrors() {
		t.Fatalf("update: %v", d.Err())
	}
	sent := a.sent()
	if len(sent) != 1 {
		t.Fatalf("%d requests, want one SimpleUpdate", len(sent))
	}
	var body struct {
		Targets   []string
		ApplyTime *string `json:"@Redfish.OperationApplyTime"`
	}
	if err := json.Unmarshal(sent[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if strings.Join(body.Targets, " ") != strings.Join(hgxGPUs("/redfish/v1/UpdateService/FirmwareInventory/"), " ") || body.ApplyTime != nil {
		t.Errorf("SimpleUpdate body %s: want the eight GPUs as Targets and no apply time", sent[0].Body)
	}
}

// TestWaitReadyChecksEveryMember: wait_ready is ready only when every
// active member of the rule is at the target: one GPU of eight behind is
// named, a GPU missing from eight (count = 8) is named as such, and eight
// at the target are ready. On the Dell capture the BIOS is at its target
// 1.8.2 though the rollback image beside it is 1.2.4.
func TestWaitReadyChecksEveryMember(t *testing.T) {
	gpus := providers.Match{SoftwareID: "0x0020", Count: 8}
	wait := providers.Step{Kind: providers.StepWaitReady, Timeout: 100 * time.Millisecond,
		Expect: []providers.Expectation{{Component: "gpu", Match: gpus, Target: version.Target{Version: "96.00.89.00.01", Scheme: "dotted"}}}}
	cases := []struct {
		name    string
		updated []int
		drop    int
		why     string
	}{
		{"seven of eight", []int{1, 2, 3, 4, 5, 6, 7}, 0, "gpu not at 96.00.89.00.01: HGX_FW_GPU_SXM_8 at 96.00.61.00.01"},
		{"one gone", []int{1, 2, 3, 4, 5, 6, 7}, 8, "gpu not at 96.00.89.00.01: 7 active members reported, the rule expects 8"},
		{"all eight", []int{1, 2, 3, 4, 5, 6, 7, 8}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMockupServer(t, "supermicro/SYS-821GE-TNHR", gpuDocs(t, c.updated, "96.00.89.00.01", c.drop))
			p := fastConfig(t, m)
			res, d := apply(t, p, providers.Target{Name: "s", Endpoint: m.URL}, wait)
			if c.why == "" {
				if d.HasErrors() {
					t.Fatalf("wait_ready: %v", d.Err())
				}
				if got := len(gpus.Active(res.Observation.Components)); got != 8 {
					t.Errorf("the ready observation has %d GPUs, want 8", got)
				}
				return
			}
			if !d.HasErrors() || !strings.Contains(d.Err().Error(), c.why) {
				t.Errorf("wait_ready: %v; want it to say %q", d.Err(), c.why)
			}
		})
	}

	m := newMockupServer(t, "dell/R750")
	p := fastConfig(t, m)
	bios := providers.Match{SoftwareID: "159"}
	for _, c := range []struct {
		target string
		ready  bool
	}{{"1.8.2", true}, {"1.2.4", false}, {"1.13.2", false}} {
		st := providers.Step{Kind: providers.StepWaitReady, Timeout: 100 * time.Millisecond,
			Expect: []providers.Expectation{{Component: "bios", Match: bios, Target: version.Target{Version: c.target, Scheme: "dotted"}}}}
		_, d := apply(t, p, providers.Target{Name: "s", Endpoint: m.URL}, st)
		if d.HasErrors() == c.ready {
			t.Errorf("Dell BIOS at %s: ready = %v (%v), want %v", c.target, !d.HasErrors(), d.Err(), c.ready)
		}
	}
}

// TestOwnState: each vendor sign a member carries, as the real captures
// spell them, decides its state; a name merely containing a sign's
// letters ("Backplane", "AccVBIOS") does not.
func TestOwnState(t *testing.T) {
	cases := []struct {
		id, name, desc, version, status, dell string
		state, sign                           string
	}{
		{id: "Installed-159-1.8.2__BIOS.Setup.1-1", name: "BIOS", version: "1.8.2", status: "Enabled", dell: "Installed", state: "active", sign: "Id prefix Installed-"},
		{id: "Previous-159-1.2.4__BIOS.Setup.1-1", name: "BIOS", version: "1.2.4", status: "Enabled", dell: "AvailableForInstallation", state: "previous", sign: "Id prefix Previous-"},
		{id: "Current-159-1.8.2__BIOS.Setup.1-1", name: "BIOS", version: "1.8.2", status: "Enabled", dell: "AvailableForInstallation", state: "available", sign: "Id prefix Current-"},
		{id: "Available-159-1.13.2__BIOS.Setup.1-1", name: "BIOS", version: "1.13.2", status: "Enabled", state: "available", sign: "Id prefix Available-"},
		// Dell's Oem status without a Dell Id
		{id: "BIOS", name: "BIOS", version: "1.8.2", dell: "AvailableForInstallation", state: "available", sign: "Oem.Dell status AvailableForInstallation"},
		{id: "BMC-Primary-Pending", name: "Firmware:BMC", version: "-*", status: "Disabled", state: "pending", sign: "Status.State Disabled, named pending"},
		{id: "UEFI-Pending", name: "Firmware:UEFI", version: "", status: "Disabled", state: "pending"},
		{id: "BMC-Backup", name: "Firmware:BMC", version: "42S-2.83", status: "StandbySpare", state: "standby", sign: "Status.State StandbySpare"},
		{id: "Backup_BMC", name: "BMC Backup", version: "Not Present", status: "Enabled", state: "absent", sign: "version Not Present"},
		{id: "Golden_BIOS", name: "BIOS Golden", version: "BIOS Date: 05/04/2023 Ver 1.3", status: "Enabled", state: "standby", sign: "named golden"},
		{id: "Staging_BMC", name: "BMC Staging", version: "11.01.01", status: "Enabled", state: "pending", sign: "named staging"},
		{id: "10", name: "Redundant System ROM", desc: "SystemRomBackup", version: "A47 v2.40 (02/23/2021)", state: "standby"},
		{id: "Node0.ManagementEthernet", version: "undefined", status: "UnavailableOffline", state: "absent", sign: "Status.State UnavailableOffline"},
		{id: "GPU3", version: "95.02.39.00.01", status: "Absent", state: "absent"},
		{id: "GPU4", version: "95.02.39.00.01", status: "StandbyOffline", state: "standby"},
		{id: "PSU9", version: "1.0", status: "Disabled", state: "absent", sign: "Status.State Disabled"},
		{id: "X", version: "", state: "absent", sign: "no version"},
		// Not signs
		{id: "CPLD_Backplane_1", name: "CPLD1 Backplane 1", version: "03", status: "Enabled", state: "active"},
		{id: "Node0.AccVBIOS", name: "Node0.AccVBIOS", version: "113-D65201-Y36-592042", state: "active"},
		{id: "UEFI", name: "Firmware:UEFI", version: "22J-1.51", status: "Enabled", state: "active"},
		{id: "HGX_FW_GPU_SXM_1", name: "Software Inventory", version: "96.00.61.00.01", status: "Enabled", state: "active"},
		{id: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", name: "Integrated Dell Remote Access Controller", version: "6.00.30.00", status: "Enabled", state: "active"},
	}
	for _, c := range cases {
		state, sign := ownState(c.id, c.name, c.desc, c.version, c.status, c.dell)
		if state != c.state || (c.sign != "" && sign != c.sign) || (state != "active" && sign == "") {
			t.Errorf("%s: %s (%s), want %s (%s)", c.id, state, sign, c.state, c.sign)
		}
	}
}

// TestImageLinksDecide: where two members related to the Manager share a
// SoftwareId and say nothing else, the Manager's ActiveSoftwareImage names
// the one that runs and its other SoftwareImages are standby; the Manager
// is read for that even though the inventory has a member with id BMC.
func TestImageLinksDecide(t *testing.T) {
	const inv = "/redfish/v1/UpdateService/FirmwareInventory"
	m := newMockupServer(t, "dmtf/public-rackmount1", serveJSON(map[string]func() any{
		inv: func() any {
			return map[string]any{"@odata.id": inv, "Members": []any{
				map[string]any{"@odata.id": inv + "/BMC"}, map[string]any{"@odata.id": inv + "/BMC2"}, map[string]any{"@odata.id": inv + "/BIOS"}}}
		},
		inv + "/BMC2": func() any {
			d := captureJSON(t, "dmtf/public-rackmount1", inv+"/BMC")
			d["@odata.id"], d["Id"], d["Version"] = inv+"/BMC2", "BMC2", "1.40.0"
			return d
		},
		"/redfish/v1/Managers/BMC": func() any {
			d := captureJSON(t, "dmtf/public-rackmount1", "/redfish/v1/Managers/BMC")
			links, _ := d["Links"].(map[string]any)
			if links == nil {
				links = map[string]any{}
			}
			links["ActiveSoftwareImage"] = map[string]any{"@odata.id": inv + "/BMC2"}
			links["SoftwareImages"] = []any{map[string]any{"@odata.id": inv + "/BMC"}, map[string]any{"@odata.id": inv + "/BMC2"}}
			d["Links"] = links
			return d
		},
	}))
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
	got := map[string]string{}
	for _, c := range o.Components {
		got[c.ID] = c.State + " (" + c.StateSign + ")"
	}
	if got["BMC2"] != "active (Manager.Links.ActiveSoftwareImage)" || got["BMC"] != "standby (Manager.Links.SoftwareImages, not its ActiveSoftwareImage)" {
		t.Errorf("states %v: want BMC2 active and BMC standby, as the Manager says", got)
	}
}

// TestBiosLinksDecide: two members related to the system's Bios resource,
// one SoftwareId, nothing else to tell them apart: the Bios resource's
// ActiveSoftwareImage decides, read only then (a capture whose members
// decide themselves never reads it).
func TestBiosLinksDecide(t *testing.T) {
	const (
		dir  = "dmtf/public-rackmount1"
		inv  = "/redfish/v1/UpdateService/FirmwareInventory"
		bios = "/redfish/v1/Systems/437XR1138R2/Bios"
	)
	biosMember := func(id, v string) func() any {
		return func() any {
			d := captureJSON(t, dir, inv+"/BIOS")
			d["@odata.id"], d["Id"], d["Version"] = inv+"/"+id, id, v
			d["RelatedItem"] = []any{map[string]any{"@odata.id": bios}}
			return d
		}
	}
	m := newMockupServer(t, dir, serveJSON(map[string]func() any{
		inv: func() any {
			return map[string]any{"@odata.id": inv, "Members": []any{map[string]any{"@odata.id": inv + "/BIOS"}, map[string]any{"@odata.id": inv + "/BIOS-B"}}}
		},
		inv + "/BIOS":   biosMember("BIOS", "P79 v1.45"),
		inv + "/BIOS-B": biosMember("BIOS-B", "P79 v1.40"),
		bios: func() any {
			d := captureJSON(t, dir, bios)
			d["Links"] = map[string]any{"ActiveSoftwareImage": map[string]any{"@odata.id": inv + "/BIOS"},
				"SoftwareImages": []any{map[string]any{"@odata.id": inv + "/BIOS"}, map[string]any{"@odata.id": inv + "/BIOS-B"}}}
			return d
		},
	}))
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
	active := providers.Match{SoftwareID: "FEE82A67-6CE2-4625-9F44-237AD2402C28"}.Active(o.Components)
	if len(active) != 1 || active[0].ID != "BIOS" || active[0].StateSign != "Bios.Links.ActiveSoftwareImage" {
		t.Errorf("active BIOS members %+v, want BIOS as the Bios resource says", active)
	}
	if count(m.Log(), "GET "+bios) != 1 {
		t.Errorf("the Bios resource was not read once: %q", m.Log())
	}

	plain := newMockupServer(t, "supermicro/SYS-821GE-TNHR")
	observeAll(t, configure(t, Options{}, map[string]any{"ca_bundle": caPEM(plain)}), providers.Target{Name: "s", Endpoint: plain.URL})
	if n := count(plain.Log(), "GET /redfish/v1/Systems/1/Bios"); n != 0 {
		t.Errorf("the Bios resource was read %d times where the members decide", n)
	}
}

// TestSignWords: sign words are whole words of the Id, Name and
// Description in any case, split at punctuation and where a lower-case
// letter meets an upper-case one, never part of a longer word.
func TestSignWords(t *testing.T) {
	for _, c := range []struct {
		texts []string
		want  []string
	}{
		{[]string{"SystemRomBackup"}, []string{"backup"}},
		{[]string{"VBIOS", "Backplane", "UEFIx", "Stagingarea"}, nil},
		{[]string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, []string{"bios"}},
		{[]string{"Staging_BMC", "bmc-Pending"}, []string{"staging", "pending"}},
		{[]string{"", "Redundant System ROM", "uefi"}, []string{"redundant", "uefi"}},
		{[]string{"Ünïcode·Golden", "PREVIOUSrollback"}, []string{"golden"}},
		{[]string{"RecoveryImage", "stagedFW", "previous"}, []string{"recovery", "staged", "previous"}},
	} {
		got := signWords(c.texts...)
		for _, n := range signNames {
			if want := slices.Contains(c.want, n); got.has(n) != want {
				t.Errorf("signWords(%q) has %q: %v, want %v", c.texts, n, got.has(n), want)
			}
		}
	}
	if signWords("bios").has("bio") {
		t.Error("a word that is no sign name is found")
	}
}
