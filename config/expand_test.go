package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type serverRow struct{ Cluster, Rack, Name, Role, BMC string }

func rows(cfg *Config) []serverRow {
	var out []serverRow
	for _, s := range cfg.Servers() {
		out = append(out, serverRow{s.Cluster.Name, s.Rack.Name, s.Name, s.Role, s.BMC})
	}
	return out
}

const relSrc = `
release "r1" {
  version = "1.0.0"
}
`

func TestExpansion(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []serverRow
	}{
		{
			name: "count on racks and servers",
			src: `cluster "c" {
  release = release.r1
  rack "r" {
    count = 2
    server "s" {
      count = 2
      bmc   = "https://127.0.0.${count.index + 1}"
      role  = "compute"
    }
  }
}`,
			// Inner count shadows the rack's: names come from labels.
			want: nil, // duplicate server names; checked as an error below
		},
		{
			name: "for_each map, nested each, name attribute",
			src: `locals {
  racks = { b = 2, a = 1 }
}
cluster "c" {
  release = release.r1
  rack "x" {
    for_each = local.racks
    # The rack's each is visible in the server's for_each expression;
    # inside the server block, each is the server's.
    server "y" {
      for_each = { for i in [2, 1] : "${each.key}${i}" => "127.0.${each.value}.${i}" }
      name     = "srv-${each.key}"
      bmc      = "https://${each.value}:8443"
      role     = "compute"
    }
  }
}`,
			want: []serverRow{
				{"c", "a", "srv-a1", "compute", "https://127.0.1.1:8443"},
				{"c", "a", "srv-a2", "compute", "https://127.0.1.2:8443"},
				{"c", "b", "srv-b1", "compute", "https://127.0.2.1:8443"},
				{"c", "b", "srv-b2", "compute", "https://127.0.2.2:8443"},
			},
		},
		{
			name: "dynamic racks and servers",
			src: `locals {
  inv = {
    r2 = ["x", "y"]
    r1 = ["z"]
  }
}
cluster "c" {
  release = release.r1
  dynamic "rack" {
    for_each = local.inv
    labels   = [rack.key]
    content {
      dynamic "server" {
        for_each = rack.value
        labels   = ["${rack.key}-${server.value}"]
        content {
          bmc  = "https://127.0.${substr(rack.key, 1, 1)}.${server.key + 1}"
          role = "compute"
        }
      }
    }
  }
}`,
			want: []serverRow{
				{"c", "r1", "r1-z", "compute", "https://127.0.1.1"},
				{"c", "r2", "r2-x", "compute", "https://127.0.2.1"},
				{"c", "r2", "r2-y", "compute", "https://127.0.2.2"},
			},
		},
		{
			name: "count zero drops the block",
			src: `cluster "c" {
  release = release.r1
  rack "r" {
    server "s" {
      count = 0
      bmc   = "https://127.0.0.1"
      role  = "compute"
    }
    server "t" {
      bmc  = "https://127.0.0.2"
      role = "compute"
    }
  }
}`,
			want: []serverRow{{"c", "r", "t", "compute", "https://127.0.0.2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeConfig(t, map[string]string{"main.rf.hcl": relSrc + tt.src})
			l := NewLoader(LoadOptions{})
			cfg, diags := l.Load(".")
			var errs []string
			for _, d := range diags {
				if d.Summary != "Invalid control-plane placement" {
					errs = append(errs, d.Summary+": "+d.Detail)
				}
			}
			switch tt.name {
			case "count on racks and servers":
				// r-0 and r-1 each have s-0 and s-1: the same names in two
				// racks are duplicates, and so are the BMCs.
				want := []serverRow{
					{"c", "r-0", "s-0", "compute", "https://127.0.0.1"},
					{"c", "r-0", "s-1", "compute", "https://127.0.0.2"},
					{"c", "r-1", "s-0", "compute", "https://127.0.0.1"},
					{"c", "r-1", "s-1", "compute", "https://127.0.0.2"},
				}
				if diff := cmp.Diff(want, rows(cfg)); diff != "" {
					t.Errorf("servers (-want +got):\n%s", diff)
				}
				if len(errs) != 4 || !strings.HasPrefix(errs[0], "Duplicate server") {
					t.Errorf("want 2 duplicate servers and 2 duplicate BMCs, got %q", errs)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("diagnostics:\n%s", renderDiags(l, diags))
			}
			if diff := cmp.Diff(tt.want, rows(cfg)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInventoryCSV10000 generates a 10,000-server inventory and loads it
// through csvdecode and for_each, the way large fleets are described.
const inventorySrc = relSrc + `
locals {
  inventory = csvdecode(file("inventory.csv"))
  by_rack   = { for s in local.inventory : s.rack => s... }
}
cluster "big" {
  release = release.r1
  rack "inv" {
    for_each = local.by_rack
    server "inv" {
      for_each = each.value
      bmc      = each.value.bmc
      role     = each.value.role
    }
  }
}
`

// inventoryCSV returns racks×perRack servers with a valid control-plane
// placement.
func inventoryCSV(racks, perRack int) string {
	var b strings.Builder
	b.WriteString("name,rack,bmc,role\n")
	for r := 1; r <= racks; r++ {
		for s := 1; s <= perRack; s++ {
			role := "compute"
			switch {
			case s == 1 && r <= 3:
				role = "control_plane"
			case s == 1 && r == 4:
				role = "control_plane_spare"
			case s == 2:
				role = "management"
			}
			fmt.Fprintf(&b, "r%03d-s%03d,r%03d,https://127.%d.%d.%d:8443,%s\n", r, s, r, r/256+1, r%256, s, role)
		}
	}
	return b.String()
}

func TestInventoryCSV10000(t *testing.T) {
	const racks, perRack = 100, 100
	writeConfig(t, map[string]string{"main.rf.hcl": inventorySrc, "inventory.csv": inventoryCSV(racks, perRack)})
	start := time.Now()
	l := NewLoader(LoadOptions{})
	cfg, diags := l.Load(".")
	elapsed := time.Since(start)
	if len(diags) > 0 {
		t.Fatalf("diagnostics:\n%s", renderDiags(l, diags[:min(len(diags), 5)]))
	}
	servers := cfg.Servers()
	if len(servers) != racks*perRack {
		t.Fatalf("got %d servers, want %d", len(servers), racks*perRack)
	}
	if len(cfg.Clusters[0].Racks) != racks {
		t.Fatalf("got %d racks", len(cfg.Clusters[0].Racks))
	}
	// Declared order: racks in key order, servers in file order.
	if servers[0].Name != "r001-s001" || servers[perRack].Name != "r002-s001" || servers[len(servers)-1].Name != "r100-s100" {
		t.Errorf("order: %s, %s, %s", servers[0].Name, servers[perRack].Name, servers[len(servers)-1].Name)
	}
	if s := cfg.Server("r042-s007"); s == nil || s.Rack.Name != "r042" || s.Cluster.Name != "big" || s.BMC != "https://127.1.42.7:8443" {
		t.Errorf("lookup r042-s007 = %+v", s)
	}
	t.Logf("loaded %d servers in %s", len(servers), elapsed)
}

// BenchmarkLoad measures loading a CSV inventory of 100 to 10,000 servers.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{400, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			for name, src := range map[string]string{"main.rf.hcl": inventorySrc, "inventory.csv": inventoryCSV(n/100, 100)} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if _, diags := NewLoader(LoadOptions{}).Load(dir); diags.HasErrors() {
					b.Fatal(diags)
				}
			}
		})
	}
}

func TestTooManyInstances(t *testing.T) {
	src := relSrc + `cluster "c" {
  release = release.r1
  rack "r" {
    count = 1000
    server "s" {
      count = 1000
      bmc   = "https://127.0.0.1"
      role  = "compute"
    }
  }
}`
	writeConfig(t, map[string]string{"main.rf.hcl": src})
	l := NewLoader(LoadOptions{})
	l.maxInstances = 5000 // the default needs seconds to reach
	_, diags := l.Load(".")
	got := flatten(diags)
	if len(got) == 0 || got[0].Summary != "Too many instances" || got[0].Range != "main.rf.hcl:9,5-9,15" || len(got) != 1 {
		t.Fatalf("diagnostics (%d): %v", len(got), got[:min(len(got), 3)])
	}
}
