package config

import (
	"os"
	"path/filepath"
	"testing"
)

// A cluster without a provider attribute gets the only provider even when
// the provider block comes after the cluster in the files.
func TestDefaultProviderDeclaredAfterCluster(t *testing.T) {
	dir := t.TempDir()
	src := `
cluster "a" {
  release = release.r
  rack "r1" {
    server "s" {
      count = 3
      name  = "s${count.index}"
      bmc   = "https://127.1.1.${count.index + 1}:8443"
      role  = "control_plane"
    }
  }
}

release "r" {
  version = "1.0.0"
}

provider "zz" {
  username = "admin"
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := NewLoader(LoadOptions{}).Load(dir)
	if diags.HasErrors() {
		t.Fatalf("Load: %s", diags.Error())
	}
	c := cfg.Cluster("a")
	if c == nil || c.Provider == nil || c.Provider.Name != "zz" {
		t.Fatalf("cluster a's provider = %+v, want provider zz", c.Provider)
	}
}
