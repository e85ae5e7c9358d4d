package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Configuration load must be linear in its size: these benchmarks load
// the shapes the fleet-scale targets name (20,000 locals and 100,000
// inventory rows each under 5 s, 10,000 servers filtered per rack with
// `for` under 1 s, a 100,000-server fleet written the nexus-lab way under
// 10 s and 500 MB: docs/large-fleets.md).

func benchLoadDir(b *testing.B, files map[string]string) {
	dir := b.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, diags := NewLoader(LoadOptions{}).Load(dir); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

// localsSrc declares n locals, each using the one before it.
func localsSrc(n int) string {
	var b strings.Builder
	b.WriteString(relSrc)
	b.WriteString("locals {\n  l0 = 0\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  l%d = local.l%d + 1\n", i, i-1)
	}
	b.WriteString("}\n")
	b.WriteString(`cluster "c" {
  release = release.r1
  rack "r1" {
    server "s1" {
      bmc  = "https://127.0.0.1"
      role = "compute"
      labels = { n = "${local.l` + fmt.Sprint(n-1) + `}" }
    }
  }
}
`)
	return b.String()
}

// BenchmarkLoadLocals: 2,000 to 20,000 locals in a chain.
func BenchmarkLoadLocals(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchLoadDir(b, map[string]string{"main.rf.hcl": localsSrc(n)})
		})
	}
}

// BenchmarkLoadInventoryRows: a 100,000-row inventory grouped by rack.
func BenchmarkLoadInventoryRows(b *testing.B) {
	benchLoadDir(b, map[string]string{"main.rf.hcl": inventorySrc, "inventory.csv": inventoryCSV(1000, 100)})
}

// rackFilterSrc is the nexus-lab shape: one inventory, each rack's servers
// picked from it with a `for` filter.
const rackFilterSrc = relSrc + `
locals {
  inventory = csvdecode(file("inventory.csv"))
  racks     = distinct([for s in local.inventory : s.rack])
}
cluster "big" {
  release = release.r1
  rack "inv" {
    for_each = toset(local.racks)
    server "inv" {
      for_each = [for s in local.inventory : s if s.rack == each.key]
      bmc      = each.value.bmc
      role     = each.value.role
    }
  }
}
`

// BenchmarkLoadRackFilters: 10,000 servers in 1,000 racks of 10, each rack
// filtering the whole inventory.
func BenchmarkLoadRackFilters(b *testing.B) {
	benchLoadDir(b, map[string]string{"main.rf.hcl": rackFilterSrc, "inventory.csv": inventoryCSV(1000, 10)})
}

// BenchmarkLoadRackFiltersSmall: 1,000 servers in 100 racks (profiling).
func BenchmarkLoadRackFiltersSmall(b *testing.B) {
	benchLoadDir(b, map[string]string{"main.rf.hcl": rackFilterSrc, "inventory.csv": inventoryCSV(100, 10)})
}

// BenchmarkLoadNexusFleet: 10,000 and 100,000 servers written the way
// examples/nexus-lab writes a fleet (nexusfleet_test.go), loaded as plan
// loads them: clusters of 8 racks, each cluster's racks and each rack's
// servers filtered from one inventory CSV.
func BenchmarkLoadNexusFleet(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			writeFiles(b, dir, nexusFleetFiles(b, n))
			getenv := func(name string) string {
				if name == "RACKFORM_BMC_PASSWORD" {
					return "secret"
				}
				return ""
			}
			b.ReportAllocs()
			for b.Loop() {
				cfg, diags := NewLoader(LoadOptions{Getenv: getenv}).Load(dir)
				if len(diags) > 0 || len(cfg.Servers()) != n {
					b.Fatalf("%d servers, diagnostics: %v", len(cfg.Servers()), diags)
				}
			}
		})
	}
}
