package sim

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"
)

// crawl GETs every resource reachable from the service root by @odata.id
// links (and @Redfish.ActionInfo references) and returns them by path.
// Every link must answer 200: a dangling @odata.id fails the test.
func crawl(t *testing.T, base string) map[string]map[string]any {
	t.Helper()
	seen := map[string]map[string]any{}
	queue := []string{"/redfish/v1"}
	from := map[string]string{}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if _, ok := seen[p]; ok {
			continue
		}
		r := call(t, "GET", base+p, nil, true)
		if r.status != 200 && !(r.status == 202 && strings.HasPrefix(p, "/redfish/v1/TaskService/Tasks/")) {
			t.Errorf("dangling link: %s (linked from %s) answers %d: %s", p, from[p], r.status, r.body)
			seen[p] = nil
			continue
		}
		doc := r.json(t)
		seen[p] = doc
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					s, isString := x.(string)
					if isString && (k == "@odata.id" || k == "@Redfish.ActionInfo") {
						u, err := url.Parse(s)
						if err != nil || u.Fragment != "" && k == "@odata.id" {
							continue // a reference into a document (#/...)
						}
						q := cleanPath(u.Path)
						if _, ok := seen[q]; !ok {
							if _, ok := from[q]; !ok {
								from[q] = p
							}
							queue = append(queue, q)
						}
						continue
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(doc)
	}
	return seen
}

// TestConformanceNoDanglingLinks crawls every profile (after an update, so
// tasks exist) and checks the Redfish mandatory properties: each resource
// has @odata.id (its own path), @odata.type and Name; a non-collection
// also has Id. Every action that names an @Redfish.ActionInfo serves it,
// and no @odata.id anywhere leads to a 404.
func TestConformanceNoDanglingLinks(t *testing.T) {
	for _, p := range AllProfiles() {
		t.Run(p, func(t *testing.T) {
			clk := newClock()
			f := start(t, Options{Now: clk.Now}, BMCSpec{Name: "crawl-" + p, Profile: p, PowerOn: true})
			u := f.BMCs()[0].URL
			prof, _ := loadProfiles()
			pr := prof[p]
			if pr.simpleUpdatePath != "" {
				body := map[string]any{"ImageURI": "http://127.0.0.1:9/images/bios-9.9.bin", "TransferProtocol": "HTTP"}
				switch p {
				case ProfileBasic:
					body["Targets"] = []string{pr.systemPath}
				case ProfileCrayEX:
					body["Targets"] = []string{"/redfish/v1/UpdateService/FirmwareInventory/Node1.BIOS"}
				}
				if r := call(t, "POST", u+pr.simpleUpdatePath, body, true); r.status != 202 && r.status != 204 {
					t.Fatalf("SimpleUpdate: %d %s", r.status, r.body)
				}
			}
			clk.Advance(time.Minute)
			docs := crawl(t, u)
			if len(docs) < 10 {
				t.Errorf("crawled only %d resources", len(docs))
			}
			paths := sortedKeys(docs)
			for _, path := range paths {
				doc := docs[path]
				if doc == nil {
					continue
				}
				id := strings.TrimSuffix(asString(doc["@odata.id"]), "/")
				if id != path {
					t.Errorf("%s: @odata.id %q is not its own path", path, doc["@odata.id"])
				}
				typ := asString(doc["@odata.type"])
				if !strings.HasPrefix(typ, "#") {
					t.Errorf("%s: @odata.type %q", path, doc["@odata.type"])
				}
				if asString(doc["Name"]) == "" {
					t.Errorf("%s: no Name", path)
				}
				if !strings.HasSuffix(typ, "Collection") && asString(doc["Id"]) == "" {
					t.Errorf("%s: no Id (%s)", path, typ)
				}
				if strings.HasSuffix(typ, "Collection") {
					m, _ := doc["Members"].([]any)
					if n, ok := doc["Members@odata.count"].(float64); !ok || int(n) != len(m) {
						t.Errorf("%s: Members@odata.count %v, %d members", path, doc["Members@odata.count"], len(m))
					}
				}
				actions, _ := doc["Actions"].(map[string]any)
				for name, a := range actions {
					am, _ := a.(map[string]any)
					if name == "Oem" || am == nil {
						continue
					}
					if asString(am["target"]) == "" {
						t.Errorf("%s: action %s has no target", path, name)
					}
					if ai := asString(am["@Redfish.ActionInfo"]); ai != "" && docs[ai] == nil {
						t.Errorf("%s: action %s names ActionInfo %s, which is not served", path, name, ai)
					}
				}
			}
			// Every profile that has SimpleUpdate with parameters to check
			// advertises its ActionInfo.
			if pr.actionInfo {
				us := docs["/redfish/v1/UpdateService"]
				if ai := asString(at(us, "Actions", "#UpdateService.SimpleUpdate", "@Redfish.ActionInfo")); ai == "" {
					t.Error("SimpleUpdate does not name its ActionInfo")
				}
			}
			var systems []string
			for _, path := range paths {
				if strings.HasPrefix(asString(docs[path]["@odata.type"]), "#ComputerSystem.") {
					systems = append(systems, path)
				}
			}
			sort.Strings(systems)
			want := 1
			if p == ProfileCrayEX {
				want = 2
			}
			if len(systems) != want {
				t.Errorf("systems %v, want %d", systems, want)
			}
		})
	}
}

// firstVersions are the schema versions that first define properties the
// simulator serves after their type's v1_0_0 (from DMTF's CSDL, Redfish
// 2025.4): a document that declares an older version must not serve them.
var firstVersions = []struct {
	typ, path string
	since     [3]int
}{
	{"UpdateService", "HttpPushUri", [3]int{1, 1, 0}},
	{"UpdateService", "HttpPushUriOptions", [3]int{1, 4, 0}},
	{"UpdateService", "MaxImageSizeBytes", [3]int{1, 5, 0}},
	{"UpdateService", "MultipartHttpPushUri", [3]int{1, 6, 0}},
	{"ComputerSystem", "VirtualMedia", [3]int{1, 13, 0}},
	{"ServiceRoot", "ProtocolFeaturesSupported", [3]int{1, 3, 0}},
	{"ServiceRoot", "Product", [3]int{1, 3, 0}},
	{"ServiceRoot", "Vendor", [3]int{1, 5, 0}},
	{"ServiceRoot", "UpdateService", [3]int{1, 1, 0}},
	{"ServiceRoot", "Links/ManagerProvidingService", [3]int{1, 15, 0}},
	{"SoftwareInventory", "SoftwareId", [3]int{1, 1, 0}},
	{"SoftwareInventory", "RelatedItem", [3]int{1, 1, 0}},
	{"SoftwareInventory", "Manufacturer", [3]int{1, 2, 0}},
	{"Manager", "Links/ActiveSoftwareImage", [3]int{1, 6, 0}},
	{"Manager", "Links/SoftwareImages", [3]int{1, 6, 0}},
	{"Manager", "Links/ManagerInChassis", [3]int{1, 1, 0}},
	{"Manager", "PowerState", [3]int{1, 2, 0}},
}

// TestDeclaredVersionsDefineWhatIsServed crawls every profile and holds
// each document to the schema version it declares, as DMTF's
// Redfish-Service-Validator does: no property newer than the version
// (firstVersions), no @Redfish.Copyright (an annotation for mockups only),
// and the service root's Links.Sessions (required by its schema).
func TestDeclaredVersionsDefineWhatIsServed(t *testing.T) {
	for _, p := range AllProfiles() {
		t.Run(p, func(t *testing.T) {
			_, u := one(t, Options{}, p)
			docs := crawl(t, u)
			if str(at(docs["/redfish/v1"], "Links", "Sessions", "@odata.id")) == "" {
				t.Error("the service root has no Links.Sessions")
			}
			for _, path := range sortedKeys(docs) {
				doc := docs[path]
				if _, ok := doc["@Redfish.Copyright"]; ok {
					t.Errorf("%s: @Redfish.Copyright (for mockups only)", path)
				}
				name, version := schemaType(doc)
				var v [3]int
				if _, err := fmt.Sscanf(version, "v%d_%d_%d", &v[0], &v[1], &v[2]); err != nil {
					continue // a collection, or no version
				}
				for _, fv := range firstVersions {
					keys := strings.Split(fv.path, "/")
					if fv.typ != name || at(doc, keys...) == nil {
						continue
					}
					if v[0] < fv.since[0] || v[0] == fv.since[0] && (v[1] < fv.since[1] || v[1] == fv.since[1] && v[2] < fv.since[2]) {
						t.Errorf("%s: serves %s, which %s defines only from v%d_%d_%d, but declares %s", path, fv.path, name, fv.since[0], fv.since[1], fv.since[2], doc["@odata.type"])
					}
				}
			}
		})
	}
}
