package config

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// channelBase is a cluster at site east in a rollout that follows the
// rapid channel, with no release attribute: the channel selects it.
const channelBase = `
cluster "c1" {
  site = "east"
  rack "a" {
    server "a1" {
      bmc  = "https://127.0.0.1:8443"
      role = "control_plane"
    }
    server "a2" {
      bmc  = "https://127.0.0.2:8443"
      role = "control_plane"
    }
    server "a3" {
      bmc  = "https://127.0.0.3:8443"
      role = "control_plane"
    }
  }
}

rollout "auto" {
  channel         = "rapid"
  image_selection = "consistent"
  stage "all" {
    group "g" {
      clusters = [cluster.c1]
    }
  }
}
`

const catalogHCL = `
catalog {
  release "4.6.3" {
    sites = ["west"]
    component "os" {
      kind    = "runtime"
      version = "4.6.3"
      image   = "https://127.0.0.1/os-4.6.3.iso"
      match {
        software_id = "os"
      }
    }
  }
  release "4.6.2" {
    component "os" {
      kind    = "runtime"
      version = "4.6.2"
      image   = "https://127.0.0.1/os-4.6.2.iso"
      match {
        software_id = "os"
      }
    }
  }
}
`

// catalogJSON is the same catalog in HCL's JSON syntax, as a catalog file.
const catalogJSON = `{
  "release": {
    "4.5.4": {
      "minor": "4.5",
      "sites": ["east", "west"],
      "component": {
        "os": {
          "kind": "runtime", "version": "4.5.4", "image": "https://127.0.0.1/os-4.5.4.iso",
          "sha256": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          "match": {"software_id": "os"}
        }
      }
    }
  }
}
`

type entry struct {
	Name, Version, Minor string
	Sites                []string
	Components           []string
}

func entries(c *Catalog) []entry {
	var out []entry
	for _, r := range c.Entries {
		e := entry{Name: r.Name, Version: r.Version.String(), Minor: r.Minor, Sites: r.Sites}
		for _, comp := range r.Components {
			e.Components = append(e.Components, comp.Name+"="+comp.Version.String()+"@"+comp.Image+"#"+comp.SHA256)
		}
		out = append(out, e)
	}
	return out
}

// The catalog lists each release's component versions, images (+ sha256),
// its minor line and where it is available; a release block inside it may
// leave out version (the label is the version).
func TestCatalogReleaseBlocksAndFile(t *testing.T) {
	cfg, diags := loadFiles(t, map[string]string{
		"main.rf.hcl":  channelBase + strings.Replace(catalogHCL, "catalog {", "catalog {\n  source = \"catalog.json\"", 1),
		"catalog.json": catalogJSON,
	}, LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []entry{
		{Name: "4.6.3", Version: "4.6.3", Minor: "4.6", Sites: []string{"west"}, Components: []string{"os=4.6.3@https://127.0.0.1/os-4.6.3.iso#"}},
		{Name: "4.6.2", Version: "4.6.2", Minor: "4.6", Components: []string{"os=4.6.2@https://127.0.0.1/os-4.6.2.iso#"}},
		{Name: "4.5.4", Version: "4.5.4", Minor: "4.5", Sites: []string{"east", "west"}, Components: []string{"os=4.5.4@https://127.0.0.1/os-4.5.4.iso#" + strings.Repeat("a", 64)}},
	}
	if d := cmp.Diff(want, entries(cfg.Catalog)); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	if got := cfg.Clusters[0].Site; got != "east" {
		t.Errorf("site = %q, want east", got)
	}
	ro := cfg.Rollouts[0]
	if ro.Channel != ChannelRapid || ro.ImageSelection != SelectConsistent || ro.Scope != ScopeFull {
		t.Errorf("rollout = %q %q %q", ro.Channel, ro.ImageSelection, ro.Scope)
	}
	// Recorded by value: the catalog file is a data file, so a plan holds
	// its bytes and apply reads it from there.
	if len(cfg.DataFiles) != 1 || cfg.DataFiles[0].Name != "catalog.json" || string(cfg.DataFiles[0].Bytes) != catalogJSON {
		t.Errorf("data files = %+v, want catalog.json as read", cfg.DataFiles)
	}
	if got := cfg.Catalog.Entry(cfg.Catalog.Entries[2].Version); got == nil || got.Name != "4.5.4" {
		t.Errorf("Entry(4.5.4) = %v", got)
	}
	if !cfg.Catalog.Entries[1].AvailableAt("anywhere") || cfg.Catalog.Entries[0].AvailableAt("east") {
		t.Error("availability: a release without sites is everywhere; one with sites only there")
	}
}

// A catalog source may be a file:// URL.
func TestCatalogFileURL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "published.json")
	if err := os.WriteFile(path, []byte(catalogJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := loadFiles(t, map[string]string{
		"main.rf.hcl": channelBase + "catalog {\n  source = \"file://" + filepath.ToSlash(path) + "\"\n}\n",
	}, LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(cfg.Catalog.Entries) != 1 || cfg.Catalog.Entries[0].Name != "4.5.4" {
		t.Errorf("entries = %+v", entries(cfg.Catalog))
	}
	if len(cfg.DataFiles) != 1 || cfg.DataFiles[0].Name != filepath.ToSlash(path) {
		t.Errorf("data files = %+v", cfg.DataFiles)
	}
}

// An https:// catalog is verified with ca_file, recorded under its URL,
// and read from the snapshot (never fetched again) when loading from one.
func TestCatalogHTTPSWithCA(t *testing.T) {
	fetches := 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches++
		w.Write([]byte(catalogJSON))
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("test server at %s, not on loopback", srv.URL)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	url := srv.URL + "/catalog.json"
	cfg, diags := loadFiles(t, map[string]string{
		"main.rf.hcl": channelBase + "catalog {\n  source  = \"" + url + "\"\n  ca_file = \"ca.pem\"\n}\n",
		"ca.pem":      string(ca),
	}, LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(cfg.Catalog.Entries) != 1 || fetches != 1 {
		t.Fatalf("entries = %+v after %d fetches", entries(cfg.Catalog), fetches)
	}
	if len(cfg.DataFiles) != 1 || cfg.DataFiles[0].Name != url {
		t.Fatalf("data files = %+v, want the catalog under its URL", cfg.DataFiles)
	}

	// Without the CA the server is not trusted.
	_, diags = loadFiles(t, map[string]string{
		"main.rf.hcl": channelBase + "catalog {\n  source = \"" + url + "\"\n}\n",
	}, LoadOptions{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Cannot read the catalog") {
		t.Errorf("without ca_file: %v, want a certificate error", diags)
	}

	// Loading from a snapshot (apply) reads the recorded bytes only.
	mem := MemFS{"main.rf.hcl": []byte(channelBase + "catalog {\n  source  = \"" + url + "\"\n  ca_file = \"ca.pem\"\n}\n"), url: []byte(catalogJSON)}
	before := fetches
	cfg, diags = NewLoader(LoadOptions{FS: mem}).Load(".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if fetches != before || len(cfg.Catalog.Entries) != 1 {
		t.Errorf("snapshot load fetched %d times, entries %d", fetches-before, len(cfg.Catalog.Entries))
	}
}

func TestChannelRules(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // summaries
	}{
		{"channel without a catalog", map[string]string{"main.rf.hcl": channelBase},
			[]string{"Channel without a catalog"}},
		{"cluster without release outside a channel rollout", map[string]string{"main.rf.hcl": strings.Replace(channelBase, `channel         = "rapid"
  image_selection = "consistent"`, "", 1) + catalogHCL},
			[]string{"Missing release"}},
		{"image_selection without channel", map[string]string{"main.rf.hcl": strings.Replace(channelBase, `channel         = "rapid"`, "", 1) + catalogHCL},
			[]string{"Missing release", "image_selection without a channel"}},
		{"firmware channel is firmware only", map[string]string{"main.rf.hcl": strings.Replace(channelBase, `channel         = "rapid"`, "channel = \"firmware\"\n  scope = \"full\"", 1) + catalogHCL},
			[]string{"Firmware channel moves firmware only"}},
		{"unknown channel", map[string]string{"main.rf.hcl": strings.Replace(channelBase, `"rapid"`, `"beta"`, 1) + catalogHCL},
			[]string{"Invalid value for channel"}},
		{"minor outside the version", map[string]string{"main.rf.hcl": channelBase + strings.Replace(catalogHCL, `sites = ["west"]`, `minor = "4.5"`, 1)},
			[]string{"Release outside its minor line"}},
		{"empty sites", map[string]string{"main.rf.hcl": channelBase + strings.Replace(catalogHCL, `sites = ["west"]`, `sites = []`, 1)},
			[]string{"Release available nowhere"}},
		{"duplicate entry", map[string]string{"main.rf.hcl": channelBase + strings.Replace(catalogHCL, `release "4.6.2"`, `release "4.6.3"`, 1)},
			[]string{"Duplicate catalog release"}},
		{"missing source file", map[string]string{"main.rf.hcl": channelBase + "catalog {\n  source = \"nope.json\"\n}\n"},
			[]string{"Cannot read the catalog"}},
		{"source scheme", map[string]string{"main.rf.hcl": channelBase + "catalog {\n  source = \"ftp://x/c.json\"\n}\n"},
			[]string{"Cannot read the catalog"}},
		{"valid", map[string]string{"main.rf.hcl": channelBase + catalogHCL}, nil},
		{"region is a site", map[string]string{"main.rf.hcl": strings.Replace(channelBase, `site = "east"`, `region = "east"`, 1) + catalogHCL}, nil},
		{"site and region", map[string]string{"main.rf.hcl": strings.Replace(channelBase, `site = "east"`, "site = \"east\"\n  region = \"east\"", 1) + catalogHCL},
			[]string{"Both site and region"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadFiles(t, tt.files, LoadOptions{})
			var got []string
			for _, d := range diags {
				if d.Severity == 1 { // error
					got = append(got, d.Summary)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", d, diags)
			}
		})
	}
}

// Continue reads the catalog source afresh (ReadCatalog), outside any
// configuration, to see whether a pending release reached a site.
func TestReadCatalogAfresh(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalogJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, diags := ReadCatalog("catalog.json", "", dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(rs) != 1 || rs[0].Version.String() != "4.5.4" || !rs[0].AvailableAt("east") || rs[0].AvailableAt("north") {
		t.Errorf("releases = %+v", rs)
	}
	if _, diags := ReadCatalog("missing.json", "", dir); !diags.HasErrors() {
		t.Error("a missing catalog read without an error")
	}
}

// FuzzCatalogFile: a catalog file is untrusted bytes (it may come from a
// URL): reading it never panics, and what it publishes always has a name.
func FuzzCatalogFile(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "examples", "channels", "catalog.json")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(catalogJSON))
	f.Add([]byte(`{"release": {"x": {"sites": []}}}`))
	f.Add([]byte(`{"release": []}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "catalog.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		rs, _ := ReadCatalog("catalog.json", "", dir)
		for _, r := range rs {
			if r == nil || r.Name == "" && !r.Version.IsZero() {
				t.Fatalf("release without a name: %+v", r)
			}
		}
	})
}
