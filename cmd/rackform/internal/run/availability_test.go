package run

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/planner/plan"
)

// catalogWith is a catalog file publishing 4.6.2 at sites, its runtime
// image img.
func catalogWith(sites, img string) string {
	return `{"release": {"4.6.2": {"sites": ` + sites + `, "component": {"os": {"kind": "runtime", "version": "4.6.2", "image": "` + img + `", "match": {"software_id": "os"}}}}}}`
}

func pendingPlan(dir, source, caFile string) *plan.Plan {
	p := &plan.Plan{Config: plan.Snapshot{Dir: dir}}
	p.Catalog = &plan.Catalog{Source: source, CAFile: caFile, Entries: []plan.CatalogEntry{{Name: "4.6.2", Version: "4.6.2", Minor: "4.6", Sites: []string{"east"},
		Components: []plan.CatalogComponent{{Name: "os", Kind: "runtime", Version: "4.6.2", Image: "https://127.0.0.1/os.iso"}}}}}
	p.Run.Stages = []plan.Stage{{Groups: []plan.Group{{Clusters: []plan.Cluster{{ID: "cluster.north-1", Name: "north-1",
		Release: &plan.ReleaseChoice{Release: "4.6.2", Version: "4.6.2", Site: "north", Why: "…", Pending: "release 4.6.2 is not yet available at site north (published at east)"}}}}}}}
	return p
}

// Continue's availability check reads the plan's catalog source afresh: a
// pending cluster starts only once its release is listed at its site with
// the components the plan recorded.
func TestAvailableNow(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := pendingPlan(dir, "catalog.json", "")

	write(catalogWith(`["east"]`, "https://127.0.0.1/os.iso"))
	avail, notes := AvailableNow(p)
	if len(avail) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "still lists release 4.6.2 at east only, not at site north") {
		t.Errorf("not yet there: %v %v", avail, notes)
	}

	write(catalogWith(`["east", "north"]`, "https://127.0.0.1/other.iso"))
	avail, notes = AvailableNow(p)
	if len(avail) != 0 || len(notes) != 1 || !strings.Contains(notes[0], `now differs from what was planned (component "os"); plan again`) {
		t.Errorf("changed images: %v %v", avail, notes)
	}

	write(catalogWith(`["east", "north"]`, "https://127.0.0.1/os.iso"))
	avail, notes = AvailableNow(p)
	if avail["cluster.north-1"] != "release 4.6.2 is now available at site north (catalog catalog.json read again by continue)" || len(notes) != 0 {
		t.Errorf("published: %v %v", avail, notes)
	}

	// A catalog declared in HCL only is fixed by the plan.
	p.Catalog.Source = ""
	if avail, notes = AvailableNow(p); len(avail) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "plan again once release 4.6.2 is available at site north") {
		t.Errorf("no source: %v %v", avail, notes)
	}
}

// An https:// source is fetched again with the plan's ca_file, relative
// to the configuration directory.
func TestAvailableNowHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(catalogWith(`["north"]`, "https://127.0.0.1/os.iso")))
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	avail, notes := AvailableNow(pendingPlan(dir, srv.URL+"/catalog.json", "ca.pem"))
	if len(avail) != 1 || len(notes) != 0 {
		t.Errorf("https: %v %v", avail, notes)
	}
}
