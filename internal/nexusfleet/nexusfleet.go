// Package nexusfleet writes the configuration of a fleet of any size the
// way examples/nexus-lab writes one: one inventory CSV, clusters of 8 racks
// of about 30 servers, each cluster picking its racks from the inventory
// with a `for` filter and each rack its servers, beside the example's
// release, strategy and variables as they are. config's load tests and
// benchmarks and `make bench-scale` measure with it (docs/large-fleets.md).
package nexusfleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	perRack    = 30
	perCluster = 8
)

// Layout is how n servers are laid out: racks[i] is the number of servers
// of rack i, clusters[j] the number of racks of cluster j. Racks hold at
// most 30 servers, clusters 8 racks, and a remainder of fewer than four
// racks joins the cluster before it, so every cluster has racks enough for
// the usual control-plane placement.
func Layout(n int) (racks, clusters []int) {
	nr := (n + perRack - 1) / perRack
	for i := range nr {
		size := n / nr
		if i < n%nr {
			size++
		}
		racks = append(racks, size)
	}
	for left := nr; left > 0; {
		k := min(left, perCluster)
		if left-k > 0 && left-k < 4 {
			k = left
		}
		clusters = append(clusters, k)
		left -= k
	}
	return racks, clusters
}

// Fleet is what a generated configuration is made of besides its layout.
type Fleet struct {
	// Servers is how many servers it has.
	Servers int
	// Provider is the body of its provider "redfish" block.
	Provider string
	// BMC is the address of server i, in inventory order; nil: a
	// loopback address of its own (https://127.A.B.C:8443).
	BMC func(i int) string
	// Examples is the examples directory the nexus-lab files are read
	// from.
	Examples string
}

// Files returns the configuration's files by name: main.rf.hcl,
// inventory.csv and the nexus-lab example's release.rf.hcl,
// strategy.rf.hcl and variables.rf.hcl.
func Files(f Fleet) (map[string]string, error) {
	files := map[string]string{}
	for _, name := range []string{"release.rf.hcl", "strategy.rf.hcl", "variables.rf.hcl"} {
		b, err := os.ReadFile(filepath.Join(f.Examples, "nexus-lab", name))
		if err != nil {
			return nil, err
		}
		files[name] = string(b)
	}
	bmc := f.BMC
	if bmc == nil {
		bmc = func(i int) string {
			j := i + 1
			return fmt.Sprintf("https://127.%d.%d.%d:8443", 1+j>>16, j>>8&255, j&255)
		}
	}
	racks, clusters := Layout(f.Servers)
	var csv, hcl strings.Builder
	csv.WriteString("name,cluster,rack,bmc,role,node_name\n")
	fmt.Fprintf(&hcl, `variable "bmc_username" {
  type    = string
  default = "admin"
}

provider "redfish" {
%s}

locals {
  inventory = csvdecode(file("inventory.csv"))
}
`, f.Provider)
	rack, server := 0, 0
	for ci, nracks := range clusters {
		cluster := fmt.Sprintf("c%03d", ci+1)
		fmt.Fprintf(&hcl, `
cluster %q {
  strategy = strategy.nexus
  release  = release.r4_6_1
  provider = provider.redfish

  rack "inventory" {
    for_each = toset(distinct([for s in local.inventory : s.rack if s.cluster == %q]))

    server "inventory" {
      for_each  = [for s in local.inventory : s if s.rack == each.key]
      bmc       = each.value.bmc
      role      = each.value.role
      node_name = each.value.node_name
    }
  }
}
`, cluster, cluster)
		for r := range nracks {
			rackName := fmt.Sprintf("%s-r%02d", cluster, r+1)
			for sn := range racks[rack] {
				role := "compute"
				switch {
				case sn == 0 && r < 3:
					role = "control_plane"
				case sn == 0 && r == 3:
					role = "control_plane_spare"
				case sn == 1:
					role = "management"
				}
				name := fmt.Sprintf("%s-s%02d", rackName, sn+1)
				fmt.Fprintf(&csv, "%s,%s,%s,%s,%s,node-%s\n", name, cluster, rackName, bmc(server), role, name)
				server++
			}
			rack++
		}
	}
	files["main.rf.hcl"] = hcl.String()
	files["inventory.csv"] = csv.String()
	return files, nil
}
