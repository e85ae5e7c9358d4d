package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// csvConfig is an inventory-driven cluster as in examples/nexus-lab: racks
// from the CSV's rack column, servers from its rows.
const csvConfig = relSrc + `
locals {
  inventory = csvdecode(file("inventory.csv"))
  racks     = distinct([for s in local.inventory : s.rack])
}
cluster "c" {
  release = release.r1
  rack "inventory" {
    for_each = toset(local.racks)
    server "inventory" {
      for_each = [for s in local.inventory : s if s.rack == each.key]
      bmc      = each.value.bmc
      role     = each.value.role
    }
  }
}
`

const csvRows = `r1-cp1,r1,https://127.0.0.1:1,control_plane
r1-cp2,r1,https://127.0.0.2:1,control_plane
r1-cp3,r1,https://127.0.0.3:1,control_plane
r1-c1,r1,https://127.0.0.4:1,compute
r1-c2,r1,https://127.0.0.5:1,compute
`

// A CSV file's mistakes are each one error that says what is wrong with
// the file (naming it and the columns it has), not one error per row, and
// no follow-on errors from what could not be expanded because of it.
func TestCSVErrorsOnceWithTheColumns(t *testing.T) {
	for _, tt := range []struct {
		name, csv string
		want      []diag
	}{
		{"as it should be", "name,rack,bmc,role\n" + csvRows, nil},
		{"a renamed column", "name,rack,bmc_url,role\n" + csvRows, []diag{
			{"error", "Missing CSV column",
				`There is no column "bmc" in inventory.csv: its columns are name, rack, bmc_url and role. Did you mean "bmc_url"? Rename the column in the file's first line, or the reference here.`,
				"main.rf.hcl:16,28-16,32"},
		}},
		{"the rack column renamed: the racks cannot be listed", "name,rack_name,bmc,role\n" + csvRows, []diag{
			{"error", "Missing CSV column",
				`There is no column "rack" in inventory.csv: its columns are name, rack_name, bmc and role. Did you mean "rack_name"? Rename the column in the file's first line, or the reference here.`,
				"main.rf.hcl:8,53-8,58"},
		}},
		{"no name column", "host,rack,bmc,role\n" + csvRows, []diag{
			{"error", "Invalid for_each argument",
				`The for_each list holds rows of inventory.csv, which has no "name" column: its columns are host, rack, bmc and role. Each row needs a name column, which names the instance it makes.`,
				"main.rf.hcl:15,18-15,70"},
		}},
		// Servers without a role: the cluster's control-plane placement
		// is not checked on them (it would echo the missing column).
		{"the role column renamed", "name,rack,bmc,kind\n" + csvRows, []diag{
			{"error", "Missing CSV column",
				`There is no column "role" in inventory.csv: its columns are name, rack, bmc and kind. Rename the column in the file's first line, or the reference here.`,
				"main.rf.hcl:17,28-17,33"},
		}},
		{"a CSV that does not parse", "name,rack,bmc,role\nx,\"r1\n", []diag{
			{"error", "Error in function call",
				`Call to function "csvdecode" failed: inventory.csv: CSV parse error on line 2: extraneous or missing " in quoted-field.`,
				"main.rf.hcl:7,15-7,25"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadFiles(t, map[string]string{"main.rf.hcl": csvConfig, "inventory.csv": tt.csv}, LoadOptions{})
			if d := cmp.Diff(tt.want, flatten(diags)); d != "" {
				t.Errorf("diagnostics (-want +got):\n%s", d)
			}
		})
	}
}

// validate without a value for a variable a for_each reads: the blocks
// are not expanded and nothing is reported about them (the value is not
// wrong, it is not known yet), nor about the cluster they leave empty.
func TestUnknownForEachIsNotAnError(t *testing.T) {
	src := relSrc + `
variable "racks" {
  type = set(string)
}
cluster "c" {
  release = release.r1
  rack "r" {
    for_each = var.racks
    server "s" {
      bmc  = "https://127.0.0.1:1"
      role = "compute"
    }
  }
}
`
	_, diags := loadFiles(t, map[string]string{"main.rf.hcl": src}, LoadOptions{UnsetVariablesUnknown: true})
	if len(diags) > 0 {
		t.Errorf("diagnostics for a for_each validate cannot know yet: %v", flatten(diags))
	}
}
