package config

import (
	"os"
	"path/filepath"
	"testing"
)

// A cluster without any control-plane server (a storage or plain compute
// fleet) has no quorum to place: it validates, while a cluster with some
// control-plane servers is still held to the placement rules.
func TestPlacementOnlyForClustersWithAControlPlane(t *testing.T) {
	cases := []struct {
		name, role string
		wantErr    bool
	}{
		{"plain fleet", "compute", false},
		{"one control plane in one rack", "control_plane", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := `
release "r" {
  version = "1.0.0"
}

cluster "storage" {
  release = release.r
  rack "r1" {
    server "s1" {
      bmc  = "https://127.1.1.1:8443"
      role = "` + c.role + `"
    }
    server "s2" {
      bmc  = "https://127.1.1.2:8443"
      role = "compute"
    }
  }
}
`
			if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, diags := NewLoader(LoadOptions{}).Load(dir)
			if got := diags.HasErrors(); got != c.wantErr {
				t.Fatalf("errors = %v, want %v: %v", got, c.wantErr, diags)
			}
		})
	}
}
