package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/internal/testenv"
)

// profileCaptures names the real BMC each profile is written from: the
// captures in ../shared/redfish-mockups (the first is the profile's own;
// the others add what it lacks, such as ilo5's version strings). basic has
// none: it is written for this project.
var profileCaptures = map[string][]string{
	ProfileDMTF:      {"dmtf/public-rackmount1"},
	ProfileILO5:      {"csm/DL325", "csm/XL675d_A40"},
	ProfileAMI:       {"csm/Gigabyte"},
	ProfileOpenBMC:   {"csm/OpenBMC-stock"},
	ProfileCrayEX:    {"csm/EX235a"},
	ProfileSlingshot: {"csm/Slingshot_Switch_Blade"},
	ProfileIDRAC:     {"dell/R750"},
	ProfileXCC:       {"lenovo/SR670V2"},
	ProfileHGX:       {"supermicro/SYS-821GE-TNHR"},
}

// captureDoc reads the document a capture serves at uri, nil when it has
// none.
func captureDoc(t *testing.T, dir, uri string) map[string]any {
	t.Helper()
	rel := strings.TrimPrefix(strings.TrimSuffix(uri, "/"), "/redfish/v1")
	raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel), "index.json"))
	if err != nil {
		return nil
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s %s: %v", dir, uri, err)
	}
	return doc
}

// members lists a collection's member links.
func members(doc map[string]any) []string {
	var out []string
	ms, _ := doc["Members"].([]any)
	for _, m := range ms {
		if id, ok := m.(map[string]any)["@odata.id"].(string); ok {
			out = append(out, strings.TrimSuffix(id, "/"))
		}
	}
	return out
}

// properties lists the property paths of doc compared with a capture: its
// top-level properties, and one level into the objects whose shape clients
// read (each action, Links, ProtocolFeaturesSupported, Boot, Status).
func properties(doc map[string]any) []string {
	var out []string
	for k, v := range doc {
		if k == "@odata.id" || k == "@odata.type" {
			continue // checked apart
		}
		out = append(out, k)
		inner, ok := v.(map[string]any)
		if !ok {
			continue
		}
		switch k {
		case "Actions":
			for a, x := range inner {
				out = append(out, k+"/"+a)
				if am, ok := x.(map[string]any); ok {
					for p := range am {
						out = append(out, k+"/"+a+"/"+p)
					}
				}
			}
		case "Links", "ProtocolFeaturesSupported", "Boot":
			for p := range inner {
				out = append(out, k+"/"+p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// versionShape is a version string's format: each run of digits a 9, each
// run of letters an a, the rest as it is ("A43 v2.52 (10/29/2021)" →
// "a9 a9.9 (9/9/9)"), so "P79 v1.46" has the format of "P79 v1.45".
func versionShape(v string) string {
	v = regexp.MustCompile(`[0-9]+`).ReplaceAllString(v, "9")
	return regexp.MustCompile(`[A-Za-z]+`).ReplaceAllString(v, "a")
}

func schemaType(doc map[string]any) (name, version string) {
	t := strings.Split(strings.TrimPrefix(asString(doc["@odata.type"]), "#"), ".")
	if len(t) == 3 {
		return t[0], t[1]
	}
	return t[0], ""
}

// TestProfilesHoldToTheirCaptures holds every profile against the real BMC
// it is written from (the captures are read at test time, never copied
// into the repository). For each resource the provider reads (the service
// root, the System, Manager and Chassis, the UpdateService and its
// SimpleUpdateActionInfo, the TaskService and SessionService, the
// FirmwareInventory members):
//   - the profile serves it exactly when the capture does;
//   - it declares the capture's schema type, and its version unless the
//     profile names the change (additions "@odata.type");
//   - every property it serves (and the members of its actions, Links,
//     ProtocolFeaturesSupported and Boot) is one the capture has, or one
//     the simulator adds on every profile (commonAdditions) or on this one
//     (profile.additions), each with its reason; an addition the capture
//     turns out to have is an error, so the lists stay true;
//   - every inventory member the capture also has reports a version in the
//     capture's format, and so do ComputerSystem.BiosVersion and
//     Manager.FirmwareVersion; a member the capture lacks is an addition.
func TestProfilesHoldToTheirCaptures(t *testing.T) {
	testenv.MockupsDir(t) // skips, naming what to install, where the captures are absent
	profs, err := loadProfiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(AllProfiles(), DeviceProfiles()...) {
		caps, ok := profileCaptures[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			pr := profs[name]
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "cap-" + name, Profile: name, PowerOn: true})
			u := f.BMCs()[0].URL
			dirs := make([]string, len(caps))
			for i, c := range caps {
				dirs[i] = testenv.Mockup(t, c)
			}
			own := dirs[0]
			served := func(uri string) map[string]any {
				r := call(t, "GET", u+uri, nil, true)
				if r.status != 200 {
					return nil
				}
				return r.json(t)
			}
			// pick finds a collection's member: the one with the profile's
			// Id, else the first.
			pick := func(dir, coll, id string) string {
				ms := members(captureDoc(t, dir, coll))
				for _, m := range ms {
					if strings.HasSuffix(m, "/"+id) {
						return m
					}
				}
				if len(ms) == 0 {
					return ""
				}
				return ms[0]
			}
			lastID := func(p string) string { return p[strings.LastIndex(p, "/")+1:] }
			sysURI := pr.systemPath
			type kind struct{ name, profile, capture string }
			kinds := []kind{
				{"ServiceRoot", "/redfish/v1", "/redfish/v1"},
				{"ComputerSystem", sysURI, pick(own, "/redfish/v1/Systems", lastID(sysURI))},
				{"Manager", pr.managerPath, pick(own, "/redfish/v1/Managers", lastID(pr.managerPath))},
				{"Chassis", pr.chassisPath, pick(own, "/redfish/v1/Chassis", lastID(pr.chassisPath))},
				{"UpdateService", "/redfish/v1/UpdateService", "/redfish/v1/UpdateService"},
				{"TaskService", "/redfish/v1/TaskService", "/redfish/v1/TaskService"},
				{"SessionService", "/redfish/v1/SessionService", "/redfish/v1/SessionService"},
			}
			us, capUS := served("/redfish/v1/UpdateService"), captureDoc(t, own, "/redfish/v1/UpdateService")
			ai := asString(at(us, "Actions", "#UpdateService.SimpleUpdate", "@Redfish.ActionInfo"))
			capAI := asString(at(capUS, "Actions", "#UpdateService.SimpleUpdate", "@Redfish.ActionInfo"))
			if (ai == "") != (capAI == "") {
				t.Errorf("SimpleUpdateActionInfo: the profile names %q, the capture %q: a BMC has one or not", ai, capAI)
			}
			if ai != "" && capAI != "" {
				kinds = append(kinds, kind{"ActionInfo", ai, capAI})
			}
			if pr.noSystems {
				// A device: the capture has no Systems collection, nor
				// does the profile, nor a link to one.
				kinds = slices.DeleteFunc(kinds, func(k kind) bool { return k.name == "ComputerSystem" })
				if r := call(t, "GET", u+"/redfish/v1/Systems", nil, true); r.status != 404 || captureDoc(t, own, "/redfish/v1/Systems") != nil {
					t.Errorf("Systems: served %d; a device has none, as its capture", r.status)
				}
				if _, ok := served("/redfish/v1")["Systems"]; ok {
					t.Errorf("the service root links Systems; a device has none")
				}
			}
			for _, k := range kinds {
				doc := served(k.profile)
				var capDocs []map[string]any
				for _, d := range dirs {
					if cd := captureDoc(t, d, k.capture); cd != nil {
						capDocs = append(capDocs, cd)
					}
				}
				if doc == nil || len(capDocs) == 0 {
					t.Errorf("%s: served %v (%s), in the capture %v (%s): both must have it", k.name, doc != nil, k.profile, len(capDocs) > 0, k.capture)
					continue
				}
				compareDoc(t, pr, k.name, doc, capDocs)
			}
			// Inventory members and their version formats.
			capMembers := map[string]map[string]any{} // by Id, the first capture's first
			var capInv []map[string]any
			for _, d := range dirs {
				for _, m := range members(captureDoc(t, d, "/redfish/v1/UpdateService/FirmwareInventory")) {
					cd := captureDoc(t, d, m)
					if cd == nil {
						continue
					}
					capInv = append(capInv, cd)
					if _, seen := capMembers[asString(cd["Id"])]; !seen {
						capMembers[asString(cd["Id"])] = cd
					}
				}
			}
			for _, m := range members(served("/redfish/v1/UpdateService/FirmwareInventory")) {
				item := served(m)
				id := asString(item["Id"])
				capID := regexp.MustCompile(`^Node[0-9]+\.`).ReplaceAllString(id, "Node0.") // crayex: every node's member as Node0's
				cm, ok := capMembers[capID]
				if !ok {
					if reason := addition(pr, "FirmwareInventory", id); reason == "" {
						t.Errorf("inventory member %s: the capture has none, and the profile does not say why it adds it", id)
					}
					continue
				}
				if addition(pr, "FirmwareInventory", id) != "" {
					t.Errorf("inventory member %s: listed as an addition, but the capture has it", id)
				}
				if got, want := versionShape(asString(item["Version"])), versionShape(asString(cm["Version"])); got != want {
					t.Errorf("inventory member %s: version %q has the format %q; the capture's %q has %q", id, item["Version"], got, cm["Version"], want)
				}
				compareDoc(t, pr, "SoftwareInventory", item, capInv)
			}
			var sys, capSys map[string]any
			if !pr.noSystems {
				sys, capSys = served(sysURI), captureDoc(t, own, kinds[1].capture)
			}
			mgr, capMgr := served(pr.managerPath), captureDoc(t, own, pick(own, "/redfish/v1/Managers", lastID(pr.managerPath)))
			for _, v := range []struct{ what, got, want string }{
				{"BiosVersion", asString(sys["BiosVersion"]), asString(capSys["BiosVersion"])},
				{"FirmwareVersion", asString(mgr["FirmwareVersion"]), asString(capMgr["FirmwareVersion"])},
			} {
				if (v.got == "") != (v.want == "") {
					t.Errorf("%s: %q, the capture %q: reported by both or neither", v.what, v.got, v.want)
				}
				// A release date the profile leaves out ("P79 v1.45
				// (12/06/2017)", "TGBT42S 2.83 2023-07-05": the simulator
				// cannot know the date of a version it is given) is the
				// same format up to it.
				want := versionShape(v.want)
				if got := versionShape(v.got); got != want && !strings.HasPrefix(want, got+" (") && !strings.HasPrefix(want, got+" 9-9-9") {
					t.Errorf("%s %q has the format %q; the capture's %q has %q", v.what, v.got, got, v.want, want)
				}
			}
			clk.Advance(time.Minute)
		})
	}
}

// addition is the reason the profile (or every profile) serves property
// of the resource kind although the capture lacks it, "" when it gives
// none.
func addition(pr *profile, kind, property string) string {
	if r := pr.additions[kind][property]; r != "" {
		return r
	}
	return commonAdditions[kind][property]
}

// compareDoc holds one served document against the capture's documents of
// its kind (several: an inventory member against every member).
func compareDoc(t *testing.T, pr *profile, kind string, doc map[string]any, capDocs []map[string]any) {
	t.Helper()
	have := map[string]bool{}
	typeOK, versionOK := false, false
	name, version := schemaType(doc)
	for _, cd := range capDocs {
		for _, p := range properties(cd) {
			have[p] = true
		}
		if n, v := schemaType(cd); n == name {
			typeOK = true
			versionOK = versionOK || v == version
		}
	}
	if !typeOK {
		t.Errorf("%s %s: type %s, not the capture's", kind, doc["@odata.id"], doc["@odata.type"])
	}
	if typeOK && !versionOK && pr.additions[kind]["@odata.type"] == "" {
		t.Errorf("%s %s: declares %s; the capture another version, and the profile does not say why", kind, doc["@odata.id"], doc["@odata.type"])
	}
	for _, p := range properties(doc) {
		switch {
		case have[p] && pr.additions[kind][p] != "":
			t.Errorf("%s: %s is listed as an addition of profile %s, but the capture has it", kind, p, pr.name)
		case !have[p] && addition(pr, kind, p) == "":
			t.Errorf("%s %s: serves %s, which the capture lacks (add it to the profile's additions with the reason, or drop it)", kind, doc["@odata.id"], p)
		}
	}
}
