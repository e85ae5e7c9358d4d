package redfish

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stmcginnis/gofish"

	"github.com/rackform/rackform/internal/testenv"
	"github.com/rackform/rackform/providers"
)

// TestServiceLinksReadFromGofish: the service root's links that gofish
// keeps private (Systems, Managers, UpdateService) are read from it, not
// assumed; a gofish upgrade that renames them fails here instead of every
// observation quietly using the standard paths.
func TestServiceLinksReadFromGofish(t *testing.T) {
	for _, profile := range []string{"dmtf/public-rackmount1", "csm/Gigabyte"} {
		m := newMockupServer(t, profile)
		raw, err := os.ReadFile(filepath.Join(testenv.Mockup(t, profile), "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		var root struct{ Systems, Managers, UpdateService odataLink }
		if err := json.Unmarshal(raw, &root); err != nil {
			t.Fatal(err)
		}
		c, err := gofish.ConnectContext(context.Background(), gofish.ClientConfig{Endpoint: m.URL, HTTPClient: &http.Client{Transport: m.Client().Transport}, Username: testUser, Password: testPassword, BasicAuth: true})
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		for name, want := range map[string]string{"systems": root.Systems.ID, "managers": root.Managers.ID, "updateService": root.UpdateService.ID} {
			if want == "" {
				t.Fatalf("%s: the capture's root has no %s link", profile, name)
			}
			if got := serviceLink(c, name, "fallback"); got != want {
				t.Errorf("%s: service link %s = %q, want %q (the root's)", profile, name, got, want)
			}
		}
	}
}

// TestCutInventoryReadAgain: the expanded inventory and the other
// documents an observation decodes itself skip the transport's JSON check
// (one pass over the body, not two), yet an inventory cut short once is
// read again and the server observed, and one the UpdateService answers
// twice at the same moment is read once.
func TestCutInventoryReadAgain(t *testing.T) {
	var (
		mu              sync.Mutex
		cut             = 1
		inventory, upds int
	)
	m := newMockupServer(t, "dmtf/public-rackmount1", intercept(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if r.Method != http.MethodGet {
			return false
		}
		switch strings.TrimSuffix(r.URL.Path, "/") {
		case "/redfish/v1/UpdateService":
			upds++
		case "/redfish/v1/UpdateService/FirmwareInventory":
			inventory++
			if cut > 0 {
				cut--
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"Members": [{"@odata.id": "/redfish/v1/UpdateService/FirmwareInventory/BMC", "Id": "BM`)
				return true
			}
		}
		return false
	}))
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	obs := observeAll(t, p, providers.Target{Name: "s1", Endpoint: m.URL, Updates: []providers.UpdateIntent{{Component: "BMC"}}})
	if o := obs[0]; !o.Reachable || len(o.Components) == 0 {
		t.Fatalf("not observed after one cut inventory: %v", o.Diagnostics.Err())
	}
	if inventory != 2 {
		t.Errorf("FirmwareInventory read %d times, want 2 (once cut, once again)", inventory)
	}
	if upds != 1 {
		t.Errorf("UpdateService read %d times, want 1 (the update plan and the inventory links share the read)", upds)
	}
}

// TestManagerNotReadWhenInventoryHasBMC: the Manager is read only for the
// BMC version fallback, so a BMC whose inventory has a "BMC" member costs
// one request less per server; the observation is the same.
func TestManagerNotReadWhenInventoryHasBMC(t *testing.T) {
	var managers atomic.Int32
	m := newMockupServer(t, "dmtf/public-rackmount1", intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/redfish/v1/Managers") {
			managers.Add(1)
		}
		return false
	}))
	p := configure(t, Options{}, map[string]any{"ca_bundle": caPEM(m)})
	o := observeAll(t, p, providers.Target{Name: "s1", Endpoint: m.URL})[0]
	if !o.Reachable {
		t.Fatalf("not observed: %v", o.Diagnostics.Err())
	}
	var bmc *providers.Component
	for i := range o.Components {
		if o.Components[i].ID == "BMC" {
			bmc = &o.Components[i]
		}
	}
	if bmc == nil || bmc.Source == providers.SourceManager {
		t.Fatalf("components %+v: want the inventory's BMC member", o.Components)
	}
	if n := managers.Load(); n != 0 {
		t.Errorf("the Manager was read %d times, want 0 (the inventory has the BMC's version)", n)
	}
}
