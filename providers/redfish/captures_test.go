package redfish

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/providers"
)

// captureRule is one release component's match rule against a capture,
// and what reading the capture must give for it.
type captureRule struct {
	name  string
	match providers.Match
	// active are the active members the rule selects, id → version,
	// exactly as the capture reports them; others the members it also
	// selects that do not run, id → state.
	active, others map[string]string
	// plan is the update plan for an image at the capture's image URL
	// (Component is filled in); a plan with a Problem is matched on its
	// Problem as a substring.
	plan providers.UpdatePlan
}

// captureCase is one public capture (../shared/redfish-mockups, served
// unmodified) and its rules.
type captureCase struct {
	dir, system string
	// image is the URL every image is fetched from.
	image string
	rules []captureRule
	// synthetic are the ids of members made from ComputerSystem.BiosVersion
	// or Manager.FirmwareVersion (only where the inventory has none).
	synthetic []string
	// noIdentity: the capture's System reports no UUID, serial, maker or model.
	noIdentity bool
}

const notListed = "not sent: the BMC lists no apply times for "

var captureCases = []captureCase{
	{dir: "dmtf/public-rackmount1", image: "https://images.example/fw.bin", rules: []captureRule{
		{name: "bios", match: providers.Match{ID: "BIOS"}, active: map[string]string{"BIOS": "P79 v1.45"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"BIOS"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "bmc", match: providers.Match{ID: "BMC"}, active: map[string]string{"BMC": "1.45.455b66-rev4"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"BMC"}, ApplyTimeFrom: notListed + "simple_update"}},
	}},
	{dir: "dmtf/public-liquid-cooled-server", image: "https://images.example/fw.bin", rules: []captureRule{
		{name: "bios", match: providers.Match{ID: "BIOS"}, active: map[string]string{"BIOS": "P79 v1.45"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"BIOS"}, ApplyTimeFrom: notListed + "simple_update"}},
	}},
	// HPE iLO 5: the redundant ROM ("Redundant System ROM", described
	// SystemRomBackup) is a standby copy a glob over the name also selects.
	{dir: "csm/DL325", image: "https://images.example/fw.bin", rules: []captureRule{
		{name: "bios", match: providers.Match{NamePattern: "*System ROM"}, active: map[string]string{"2": "A43 v2.52 (10/29/2021)"}, others: map[string]string{"6": "standby"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"2"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "bmc", match: providers.Match{NamePattern: "iLO 5"}, active: map[string]string{"1": "2.46 May 11 2021"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"1"}, ApplyTimeFrom: notListed + "simple_update"}},
	}},
	{dir: "csm/XL675d_A40", image: "https://images.example/fw.bin", rules: []captureRule{
		{name: "bios", match: providers.Match{NamePattern: "*System ROM"}, active: map[string]string{"2": "A47 v2.52 (10/29/2021)"}, others: map[string]string{"10": "standby"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"2"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "bmc", match: providers.Match{NamePattern: "iLO 5"}, active: map[string]string{"1": "2.55 Oct 01 2021"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"1"}, ApplyTimeFrom: notListed + "simple_update"}},
		// Eight GPUs, two firmware builds among them, none updateable.
		{name: "gpu", match: providers.Match{NamePattern: "NVIDIA A40"}, active: map[string]string{
			"15": "94.02.4B.00.01", "16": "94.02.4B.00.01", "17": "94.02.4B.00.01", "18": "94.02.5C.00.03",
			"19": "94.02.5C.00.03", "20": "94.02.4B.00.01", "21": "94.02.4B.00.01", "22": "94.02.4B.00.01"},
			plan: providers.UpdatePlan{Problem: "15 (NVIDIA A40) is not updateable on this BMC"}},
	}},
	// The Cray EX node card: the node's BIOS by its Node0. prefix, the BMC
	// shared; SimpleUpdate's ActionInfo requires TransferProtocol and lists
	// the allowed Targets; the recovery image is a standby copy; a NIC that
	// is UnavailableOffline is absent.
	{dir: "csm/EX235a", system: "Node0", image: "https://images.example/fw.bin", rules: []captureRule{
		{name: "bios", match: providers.Match{ID: "Node0.BIOS"}, active: map[string]string{"Node0.BIOS": "ex235a.bios-1.3.6"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS"}, Members: []string{"Node0.BIOS"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "nc", match: providers.Match{ID: "BMC"}, active: map[string]string{"BMC": "nc.1.6.16-21-prod-master.arm.2022-01-25T16:23:33+00:00.28331ff"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/BMC"}, Members: []string{"BMC"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "recovery", match: providers.Match{ID: "Recovery"}, others: map[string]string{"Recovery": "standby"},
			plan: providers.UpdatePlan{Problem: "no member that runs matches id Recovery, only Recovery nc.1.6.16"}},
		{name: "mgmt-nic", match: providers.Match{SoftwareID: "Ethernet:i210:*:*"}, others: map[string]string{"Node0.ManagementEthernet": "absent"},
			plan: providers.UpdatePlan{Problem: "no member that runs matches software id Ethernet:i210:*:*"}},
	}},
	// Gigabyte/AMI: SimpleUpdate only, TransferProtocol required and only
	// HTTP or FTP.
	{dir: "csm/Gigabyte", image: "http://images.example/fw.bin", rules: []captureRule{
		{name: "bios", match: providers.Match{ID: "BIOS"}, active: map[string]string{"BIOS": "C27"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTP", Members: []string{"BIOS"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "bmc", match: providers.Match{ID: "BMC"}, active: map[string]string{"BMC": "12.84.13"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTP", Members: []string{"BMC"}, ApplyTimeFrom: notListed + "simple_update"}},
	}},
	{dir: "csm/Gigabyte", image: "https://images.example/fw.bin", rules: []captureRule{
		{name: "bios", match: providers.Match{ID: "BIOS"}, active: map[string]string{"BIOS": "C27"},
			plan: providers.UpdatePlan{Problem: "SimpleUpdate allows TransferProtocol HTTP, FTP, not the image URL's HTTPS"}},
	}},
	// OpenBMC: push only; the Manager names its one image active; the
	// BMC's HttpPushUriApplyTime is OnReset, but multipart push lists no
	// apply time.
	{dir: "csm/OpenBMC-stock", image: "https://images.example/fw.bin", noIdentity: true, rules: []captureRule{
		{name: "bmc", match: providers.Match{ID: "5d0869c4"}, active: map[string]string{"5d0869c4": "2.15.0-dev-686-g100c36de90"},
			plan: providers.UpdatePlan{Method: "multipart_push", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/5d0869c4"}, Members: []string{"5d0869c4"}, ApplyTimeFrom: notListed + "multipart_push"}},
		{name: "bios", match: providers.Match{ID: "BIOS"},
			plan: providers.UpdatePlan{Problem: "no component on this BMC matches id BIOS"}},
	}},
	// Dell iDRAC9: Installed-/Previous-/Current- members share SoftwareId,
	// Name, Updateable and Status.State; only Installed- runs. Two NIC
	// ports are two active members of one SoftwareId. SimpleUpdate lists
	// OperationApplyTimeSupport: OnReset is sent.
	{dir: "dell/R750", image: "https://images.example/fw.bin", rules: []captureRule{
		{name: "bios", match: providers.Match{SoftwareID: "159"}, active: map[string]string{"Installed-159-1.8.2__BIOS.Setup.1-1": "1.8.2"},
			others: map[string]string{"Previous-159-1.2.4__BIOS.Setup.1-1": "previous", "Current-159-1.8.2__BIOS.Setup.1-1": "available"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"},
				ApplyTime: "OnReset", ApplyTimeFrom: "listed in SimpleUpdate's @Redfish.OperationApplyTimeSupport"}},
		{name: "idrac", match: providers.Match{SoftwareID: "25227"}, active: map[string]string{"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1": "6.00.30.00"},
			others: map[string]string{"Previous-25227-4.40.29.00__iDRAC.Embedded.1-1": "previous"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1"},
				ApplyTime: "OnReset", ApplyTimeFrom: "listed in SimpleUpdate's @Redfish.OperationApplyTimeSupport"}},
		{name: "nic", match: providers.Match{SoftwareID: "108089"},
			active: map[string]string{"Installed-108089-21.80.16.95__NIC.Integrated.1-1-1": "21.80.16.95", "Installed-108089-21.80.16.95__NIC.Integrated.1-2-1": "21.80.16.95"},
			others: map[string]string{"Current-108089-21.80.16.95__NIC.Integrated.1-1-1": "available", "Current-108089-21.80.16.95__NIC.Integrated.1-2-1": "available"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"Installed-108089-21.80.16.95__NIC.Integrated.1-1-1", "Installed-108089-21.80.16.95__NIC.Integrated.1-2-1"},
				ApplyTime: "OnReset", ApplyTimeFrom: "listed in SimpleUpdate's @Redfish.OperationApplyTimeSupport"}},
	}},
	// Lenovo XCC: pending placeholders named like the running image, the
	// backup BMC a standby spare; no synthetic BIOS beside the real UEFI;
	// SimpleUpdate's Targets list only BMC-Backup (optional: none sent).
	{dir: "lenovo/SR670V2", image: "https://images.example/fw.bin", rules: []captureRule{
		{name: "uefi", match: providers.Match{NamePattern: "Firmware:UEFI"}, active: map[string]string{"UEFI": "22J-1.51"}, others: map[string]string{"UEFI-Pending": "pending"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"UEFI"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "xcc", match: providers.Match{NamePattern: "Firmware:BMC"}, active: map[string]string{"BMC-Primary": "42S-2.83"},
			others: map[string]string{"BMC-Primary-Pending": "pending", "BMC-Backup": "standby"},
			plan:   providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"BMC-Primary"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "bios-by-id", match: providers.Match{ID: "BIOS"},
			plan: providers.UpdatePlan{Problem: "no component on this BMC matches id BIOS"}},
		{name: "bluefield", match: providers.Match{ID: "Slot_15.Bundle"}, active: map[string]string{"Slot_15.Bundle": "24.41.1000"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"Slot_15.Bundle"}, ApplyTimeFrom: notListed + "simple_update"}},
	}},
	// Supermicro with an HGX board: Backup_/Golden_/Staging_ copies beside
	// the BMC and BIOS; eight GPUs of one SoftwareId, each listed in
	// SimpleUpdate's Targets (a StringArray): one request names all eight.
	{dir: "supermicro/SYS-821GE-TNHR", image: "https://images.example/fw.bin", rules: []captureRule{
		{name: "bios", match: providers.Match{NamePattern: "BIOS*"}, active: map[string]string{"BIOS": "BIOS Date: 08/04/2023 Ver 1.4", "BIOS_ME": "6.0.5.46"},
			others: map[string]string{"Backup_BIOS": "absent", "Golden_BIOS": "standby", "Staging_BIOS": "pending"},
			plan:   providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Members: []string{"BIOS", "BIOS_ME"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "bmc", match: providers.Match{NamePattern: "BMC*"}, active: map[string]string{"BMC": "11.01.01"},
			others: map[string]string{"Backup_BMC": "absent", "Golden_BMC": "standby", "Staging_BMC": "pending"},
			plan:   providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/BMC"}, Members: []string{"BMC"}, ApplyTimeFrom: notListed + "simple_update"}},
		{name: "gpu", match: providers.Match{SoftwareID: "0x0020", Count: 8}, active: map[string]string{
			"HGX_FW_GPU_SXM_1": "96.00.61.00.01", "HGX_FW_GPU_SXM_2": "96.00.61.00.01", "HGX_FW_GPU_SXM_3": "96.00.61.00.01", "HGX_FW_GPU_SXM_4": "96.00.61.00.01",
			"HGX_FW_GPU_SXM_5": "96.00.61.00.01", "HGX_FW_GPU_SXM_6": "96.00.61.00.01", "HGX_FW_GPU_SXM_7": "96.00.61.00.01", "HGX_FW_GPU_SXM_8": "96.00.61.00.01"},
			plan: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Targets: hgxGPUs("/redfish/v1/UpdateService/FirmwareInventory/"), Members: hgxGPUs(""),
				ApplyTimeFrom: notListed + "simple_update"}},
		{name: "host-gpu", match: providers.Match{NamePattern: "GPU? System Slot1"}, active: map[string]string{
			"GPU1": "96.00.61.00.01", "GPU2": "96.00.61.00.01", "GPU3": "96.00.61.00.01", "GPU4": "96.00.61.00.01",
			"GPU5": "96.00.61.00.01", "GPU6": "96.00.61.00.01", "GPU7": "96.00.61.00.01", "GPU8": "96.00.61.00.01"},
			plan: providers.UpdatePlan{Problem: "GPU1 (GPU1 System Slot1) is not updateable on this BMC"}},
	}},
}

func hgxGPUs(prefix string) []string {
	var out []string
	for i := 1; i <= 8; i++ {
		out = append(out, prefix+"HGX_FW_GPU_SXM_"+string(rune('0'+i)))
	}
	return out
}

// TestObserveCaptures runs Observe with an update intent per rule against
// every public capture (every vendor folder of ../shared/redfish-mockups),
// served unmodified by providers/mockup, through the real provider: each
// is observed and says who the server is; each rule reads exactly the
// active members (the running image, every one of several), names the
// copies beside them with their state, and answers its intent with an
// update plan for exactly those members, or a Problem where the capture
// truly cannot take the image. No version is made up from the System or
// Manager where the inventory has the firmware.
func TestObserveCaptures(t *testing.T) {
	for _, c := range captureCases {
		t.Run(c.dir+"/"+strings.SplitN(c.image, ":", 2)[0], func(t *testing.T) {
			m := newMockupServer(t, c.dir)
			p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
			target := providers.Target{Name: "r01-c01", Endpoint: m.URL, System: c.system}
			for _, r := range c.rules {
				target.Updates = append(target.Updates, providers.UpdateIntent{Component: r.name, Match: r.match, ImageURI: c.image, ApplyTime: "OnReset"})
			}
			o := observeAll(t, p, target)[0]
			if o.Outcome != providers.OutcomeObserved || !o.Reachable {
				t.Fatalf("outcome %q: %v", o.Outcome, o.Diagnostics.Err())
			}
			if o.Identity.IsZero() != c.noIdentity {
				t.Errorf("identity %+v; the capture reports one: %v", o.Identity, !c.noIdentity)
			}
			if o.System == "" || o.Auth != providers.AuthSession {
				t.Errorf("system %q, auth %q: want the system read named, and a session", o.System, o.Auth)
			}
			var synthetic []string
			for _, comp := range o.Components {
				if comp.Source != "" {
					synthetic = append(synthetic, comp.ID)
				}
				if comp.State == "" {
					t.Errorf("member %s has no state", comp.ID)
				}
			}
			if strings.Join(synthetic, " ") != strings.Join(c.synthetic, " ") {
				t.Errorf("members made from the System or Manager: %v, want %v", synthetic, c.synthetic)
			}
			if len(o.Updates) != len(c.rules) {
				t.Fatalf("%d update plans for %d intents", len(o.Updates), len(c.rules))
			}
			for i, r := range c.rules {
				got := map[string]string{}
				gotOthers := map[string]string{}
				for _, comp := range r.match.Members(o.Components) {
					if comp.IsActive() {
						got[comp.ID] = comp.Version
					} else {
						gotOthers[comp.ID] = comp.State
					}
				}
				if diff := cmp.Diff(nonNil(r.active), got); diff != "" {
					t.Errorf("%s: active members (-want +got):\n%s", r.name, diff)
				}
				if diff := cmp.Diff(nonNil(r.others), gotOthers); diff != "" {
					t.Errorf("%s: members that do not run (-want +got):\n%s", r.name, diff)
				}
				gotPlan, want := o.Updates[i], r.plan
				want.Component = r.name
				if want.Problem != "" {
					if !strings.Contains(gotPlan.Problem, want.Problem) || gotPlan.Method != "" {
						t.Errorf("%s: plan %+v, want a problem saying %q", r.name, gotPlan, want.Problem)
					}
					continue
				}
				// ApplyTimeFrom is matched on its start (the rest says
				// what the BMC does instead).
				if strings.HasPrefix(gotPlan.ApplyTimeFrom, want.ApplyTimeFrom) {
					want.ApplyTimeFrom = gotPlan.ApplyTimeFrom
				}
				if diff := cmp.Diff(want, gotPlan); diff != "" {
					t.Errorf("%s: update plan (-want +got):\n%s", r.name, diff)
				}
			}
			if t.Failed() {
				for _, comp := range o.Components {
					t.Logf("%s %q %q %s (%s) source=%q", comp.ID, comp.Name, comp.Version, comp.State, comp.StateSign, comp.Source)
				}
			}
		})
	}
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// TestCaptureFallbackOnlyWithoutMember: each capture's System BiosVersion
// and Manager FirmwareVersion are never reported as members of their own
// when the inventory has the firmware (Lenovo's UEFI, HPE's System ROM,
// Dell's Installed- BIOS and iDRAC), and are where it has none (the
// inventory taken away).
func TestCaptureFallbackOnlyWithoutMember(t *testing.T) {
	for _, dir := range []string{"dell/R750", "lenovo/SR670V2", "supermicro/SYS-821GE-TNHR", "csm/XL675d_A40"} {
		t.Run(dir, func(t *testing.T) {
			m := newMockupServer(t, dir, notFound("/redfish/v1/UpdateService/FirmwareInventory"))
			p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
			o := observeAll(t, p, providers.Target{Name: "s", Endpoint: m.URL})[0]
			var ids []string
			for _, c := range o.Components {
				if c.Source != "" && c.IsActive() {
					ids = append(ids, c.ID)
				}
			}
			sort.Strings(ids)
			if strings.Join(ids, " ") != "BIOS BMC" {
				t.Errorf("without an inventory the members are %v, want BIOS and BMC from the System and Manager", ids)
			}
		})
	}
}
