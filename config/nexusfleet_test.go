package config

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/internal/nexusfleet"
)

// A fleet written the way examples/nexus-lab writes one, at any size: one
// inventory CSV, clusters of 8 racks of about 30 servers, each cluster
// picking its racks from the inventory with a `for` filter and each rack
// its servers. The nexus-lab example's release, strategy and variables are
// used as they are.
//
//	go test ./config -run TestWriteNexusFleet -fleet-dir DIR -fleet-servers 100000
//
// writes one for measuring `rackform validate DIR` (docs/large-fleets.md).

var (
	fleetDir     = flag.String("fleet-dir", "", "TestWriteNexusFleet writes a nexus-lab style configuration into `DIR`")
	fleetServers = flag.Int("fleet-servers", 100_000, "the number of servers TestWriteNexusFleet writes")
)

// nexusFleetFiles returns the files of an n-server configuration, keyed by
// name (internal/nexusfleet), its BMCs on loopback addresses.
func nexusFleetFiles(t testing.TB, n int) map[string]string {
	t.Helper()
	files, err := nexusfleet.Files(nexusfleet.Fleet{Servers: n, Examples: filepath.Join("..", "examples"), Provider: `  username      = var.bmc_username
  password      = env("RACKFORM_BMC_PASSWORD")
  concurrency   = 64
  per_bmc_limit = 2
  poll_interval = var.bmc_poll_interval
`})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteNexusFleet writes the generated configuration for measuring
// the CLI; it does nothing without -fleet-dir.
func TestWriteNexusFleet(t *testing.T) {
	if *fleetDir == "" {
		t.Skip("no -fleet-dir")
	}
	if err := os.MkdirAll(*fleetDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, *fleetDir, nexusFleetFiles(t, *fleetServers))
}

// TestNexusFleet loads a generated fleet and checks it is what the
// inventory says: every row a server, in its rack of its cluster, in the
// file's order.
func TestNexusFleet(t *testing.T) {
	const n = 1000 // 34 racks: 3 clusters of 8 and one of 10
	racks, clusters := nexusfleet.Layout(n)
	if len(racks) != 34 || fmt.Sprint(clusters) != "[8 8 8 10]" {
		t.Fatalf("layout: %d racks, clusters %v", len(racks), clusters)
	}
	dir := t.TempDir()
	writeFiles(t, dir, nexusFleetFiles(t, n))
	l := NewLoader(LoadOptions{Getenv: func(string) string { return "" }})
	cfg, diags := l.Load(dir)
	if len(diags) > 0 {
		t.Fatalf("diagnostics:\n%s", renderDiags(l, diags[:min(len(diags), 5)]))
	}
	servers := cfg.Servers()
	if len(servers) != n || len(cfg.Clusters) != len(clusters) {
		t.Fatalf("%d servers in %d clusters, want %d in %d", len(servers), len(cfg.Clusters), n, len(clusters))
	}
	rows := strings.Split(strings.TrimSpace(nexusFleetFiles(t, n)["inventory.csv"]), "\n")[1:]
	for i, sv := range servers {
		f := strings.Split(rows[i], ",")
		got := []string{sv.Name, sv.Cluster.Name, sv.Rack.Name, sv.BMC, sv.Role, sv.NodeName}
		if strings.Join(got, ",") != rows[i] {
			t.Fatalf("server %d is %v, the inventory says %v", i, got, f)
		}
	}
	for i, c := range cfg.Clusters {
		if len(c.Racks) != clusters[i] {
			t.Errorf("cluster %s has %d racks, want %d", c.Name, len(c.Racks), clusters[i])
		}
	}
}

// TestNexusFleetMistakes: an inventory's mistakes read the same through
// the indexed filters: a renamed column is one error naming the file's
// columns (HCL's own evaluation, which the index leaves it to), and a bad
// cell names the row's line.
func TestNexusFleetMistakes(t *testing.T) {
	const n = 240 // one cluster of 8 racks
	for _, tt := range []struct {
		name     string
		edit     func(csv string) string
		want     string // summary
		contains string // in the detail
	}{
		{"the cluster column renamed", func(csv string) string {
			return strings.Replace(csv, "name,cluster,", "name,clustr,", 1)
		}, "Missing CSV column", `There is no column "cluster" in inventory.csv: its columns are name, clustr, rack, bmc, role and node_name.`},
		{"a bad role", func(csv string) string {
			return strings.Replace(csv, ",compute,node-c001-r05-s07", ",computer,node-c001-r05-s07", 1)
		}, "Unknown role", `Server "c001-r05-s07" (from inventory.csv line 128) has role "computer"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := nexusFleetFiles(t, n)
			files["inventory.csv"] = tt.edit(files["inventory.csv"])
			dir := t.TempDir()
			writeFiles(t, dir, files)
			_, diags := NewLoader(LoadOptions{Getenv: func(string) string { return "" }}).Load(dir)
			if len(diags) != 1 || diags[0].Summary != tt.want || !strings.Contains(diags[0].Detail, tt.contains) {
				t.Fatalf("want one %q containing %q, got %d:\n%v", tt.want, tt.contains, len(diags), flatten(diags))
			}
		})
	}
}
