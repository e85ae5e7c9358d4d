package redfish

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/providers"
)

// captureCase is one public capture and what planning BIOS and BMC
// updates against it must give.
type captureCase struct {
	dir, system string
	bios, bmc   providers.Match
	// image is the URL both images are fetched from.
	image string
	// wantBIOS and wantBMC are the plans; a non-empty Problem is matched
	// as a substring.
	wantBIOS, wantBMC providers.UpdatePlan
	// noIdentity: the capture's System reports no UUID, serial, maker or model.
	noIdentity bool
}

var captureCases = []captureCase{
	{dir: "dmtf/public-rackmount1", bios: providers.Match{ID: "BIOS"}, bmc: providers.Match{ID: "BMC"}, image: "https://images.example/fw.bin",
		wantBIOS: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS"},
		wantBMC:  providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS"}},
	{dir: "dmtf/public-liquid-cooled-server", bios: providers.Match{ID: "BIOS"}, bmc: providers.Match{ID: "BMC"}, image: "https://images.example/fw.bin",
		wantBIOS: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS"},
		wantBMC:  providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS"}},
	{dir: "csm/DL325", bios: providers.Match{NamePattern: "System ROM"}, bmc: providers.Match{NamePattern: "iLO 5"}, image: "https://images.example/fw.bin",
		wantBIOS: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS"},
		wantBMC:  providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS"}},
	{dir: "csm/XL675d_A40", bios: providers.Match{NamePattern: "System ROM"}, bmc: providers.Match{NamePattern: "iLO 5"}, image: "https://images.example/fw.bin",
		wantBIOS: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS"},
		wantBMC:  providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS"}},
	// The Cray EX node card: the node's BIOS by its Node0. prefix, the BMC
	// shared; SimpleUpdate's ActionInfo requires TransferProtocol and lists
	// the allowed Targets.
	{dir: "csm/EX235a", system: "Node0", bios: providers.Match{ID: "Node0.BIOS"}, bmc: providers.Match{ID: "BMC"}, image: "https://images.example/fw.bin",
		wantBIOS: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/Node0.BIOS"}},
		wantBMC:  providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTPS", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/BMC"}}},
	// Gigabyte/AMI: SimpleUpdate only, TransferProtocol required and only
	// HTTP or FTP: an https image cannot be delivered, an http one can.
	{dir: "csm/Gigabyte", bios: providers.Match{ID: "BIOS"}, bmc: providers.Match{ID: "BMC"}, image: "https://images.example/fw.bin",
		wantBIOS: providers.UpdatePlan{Problem: "SimpleUpdate allows TransferProtocol HTTP, FTP, not the image URL's HTTPS"},
		wantBMC:  providers.UpdatePlan{Problem: "SimpleUpdate allows TransferProtocol HTTP, FTP, not the image URL's HTTPS"}},
	{dir: "csm/Gigabyte", bios: providers.Match{ID: "BIOS"}, bmc: providers.Match{ID: "BMC"}, image: "http://images.example/fw.bin",
		wantBIOS: providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTP"},
		wantBMC:  providers.UpdatePlan{Method: "simple_update", TransferProtocol: "HTTP"}},
	// OpenBMC: push only; its inventory and System report no BIOS at all.
	{dir: "csm/OpenBMC-stock", bios: providers.Match{ID: "BIOS"}, bmc: providers.Match{ID: "5d0869c4"}, image: "https://images.example/fw.bin",
		wantBIOS:   providers.UpdatePlan{Problem: "no component on this BMC matches id BIOS"},
		wantBMC:    providers.UpdatePlan{Method: "multipart_push", Targets: []string{"/redfish/v1/UpdateService/FirmwareInventory/5d0869c4"}},
		noIdentity: true},
}

// TestObserveCaptures runs Observe with BIOS and BMC update intents
// against every public capture, served unmodified by providers/mockup:
// each is observed, names who the server is, reports its real version
// strings, and answers each intent with an update plan, or a Problem
// where the capture truly cannot take the image.
func TestObserveCaptures(t *testing.T) {
	for _, c := range captureCases {
		t.Run(c.dir+"/"+strings.SplitN(c.image, ":", 2)[0], func(t *testing.T) {
			m := newMockupServer(t, c.dir)
			p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
			target := providers.Target{Name: "r01-c01", Endpoint: m.URL, System: c.system, Updates: []providers.UpdateIntent{
				{Component: "bios", Match: c.bios, ImageURI: c.image},
				{Component: "bmc", Match: c.bmc, ImageURI: c.image},
			}}
			o := observeAll(t, p, target)[0]
			if o.Outcome != providers.OutcomeObserved || !o.Reachable {
				t.Fatalf("outcome %q: %v", o.Outcome, o.Diagnostics.Err())
			}
			for _, comp := range o.Components {
				t.Logf("%s %q %q source=%q shared=%v updateable=%v", comp.ID, comp.Name, comp.Version, comp.Source, comp.Shared, comp.Updateable)
			}
			if o.Identity.IsZero() != c.noIdentity {
				t.Errorf("identity %+v; the capture reports one: %v", o.Identity, !c.noIdentity)
			}
			if o.System == "" {
				t.Error("the system read is not named")
			}
			for _, want := range []struct {
				m providers.Match
				p providers.UpdatePlan
			}{{c.bios, c.wantBIOS}, {c.bmc, c.wantBMC}} {
				if comp, ok := want.m.Find(o.Components); ok && (comp.Version == "" || strings.TrimSpace(comp.Version) != comp.Version) {
					t.Errorf("%s: version %q is not a real version string", comp.ID, comp.Version)
				} else if !ok && want.p.Problem == "" {
					t.Errorf("no component matches %+v in %+v", want.m, o.Components)
				}
			}
			if len(o.Updates) != 2 {
				t.Fatalf("%d update plans for 2 intents", len(o.Updates))
			}
			for i, want := range []providers.UpdatePlan{c.wantBIOS, c.wantBMC} {
				got := o.Updates[i]
				want.Component = target.Updates[i].Component
				if want.Problem != "" {
					if !strings.Contains(got.Problem, want.Problem) || got.Method != "" {
						t.Errorf("%s: plan %+v, want a problem saying %q", want.Component, got, want.Problem)
					}
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: update plan (-want +got):\n%s", want.Component, diff)
				}
			}
		})
	}
}

// TestInventoryIdsUniqueAcrossCollections: an iLO numbers its
// FirmwareInventory and its SoftwareInventory (OS packages) alike, 1, 2,
// 3...; id = "1" must select the iLO firmware only, never the package
// that shares its number, which is named by its collection instead.
func TestInventoryIdsUniqueAcrossCollections(t *testing.T) {
	m := newMockupServer(t, "csm/DL325")
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "r01-c01", Endpoint: m.URL})[0]
	if o.Outcome != providers.OutcomeObserved {
		t.Fatalf("outcome %q: %v", o.Outcome, o.Diagnostics.Err())
	}
	seen := map[string]bool{}
	for _, c := range o.Components {
		if seen[c.ID] {
			t.Errorf("two components have id %q", c.ID)
		}
		seen[c.ID] = true
	}
	var ids []string
	for _, c := range o.Components {
		if (providers.Match{ID: "1"}).Selects(c) {
			ids = append(ids, c.ID+" "+c.Name)
		}
	}
	if len(ids) != 1 || ids[0] != "1 iLO 5" {
		t.Errorf("id 1 selects %q, want the iLO 5 firmware only", ids)
	}
	if !seen["SoftwareInventory/1"] {
		t.Errorf("the SoftwareInventory member 1 is not named by its collection: %v", seen)
	}
}
