package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

const contextSrc = `
variable "pw" {
  type      = string
  sensitive = true
  default   = "ctx-secret-pw"
}
variable "drain" {
  default = "20 minutes"
}
variable "from" {
  default = "4.x"
}
locals {
  inventory = csvdecode(file("inventory.csv"))
  pct       = 150
  ver       = "one.two"
}
release "r1" {
  version      = local.ver
  upgrade_from = ["4.4.0", var.from]
}
strategy "s" {
  drain_timeout = var.drain
  management {
    threshold {
      type  = "percent"
      value = local.pct
    }
  }
}
cluster "c1" {
  release  = release.r1
  strategy = strategy.s
  rack "r01" {
    server "inv" {
      for_each = local.inventory
      bmc      = each.value.bmc
      role     = each.value.role
      credentials {
        username = "root"
        password = var.pw
      }
    }
  }
}
`

const contextCSV = `name,bmc,role
a1,https://127.0.0.1:8443,control_plane
a2,https://127.0.0.2:8443,computer
"a3",https://127.0.0.3:8443,control_plane
a4,ftp://127.0.0.4,control_plane
`

// TestDiagnosticsCarryExpressionValues: attribute-value errors carry their
// expression and a context in which its references resolve to what was
// evaluated, and a server generated from a CSV row names the file's line.
func TestDiagnosticsCarryExpressionValues(t *testing.T) {
	writeConfig(t, map[string]string{"main.rf.hcl": contextSrc, "inventory.csv": contextCSV})
	l := NewLoader(LoadOptions{})
	_, diags := l.Load(".")
	tests := []struct {
		summary   string
		traversal string
		value     cty.Value
		detail    string // a part of the detail
	}{
		{"Unknown role", "each.value.role", cty.StringVal("computer"), `Server "a2" (from inventory.csv line 3) has role "computer"`},
		{"Invalid BMC URL", "each.value.bmc", cty.StringVal("ftp://127.0.0.4"), `Server "a4" (from inventory.csv line 5):`},
		{"Invalid duration", "var.drain", cty.StringVal("20 minutes"), `"20 minutes" is not a duration`},
		{"Invalid threshold", "local.pct", cty.NumberIntVal(150), "got 150"},
		{"Invalid version", "local.ver", cty.StringVal("one.two"), "version does not parse"},
		{"Invalid version", "var.from", cty.StringVal("4.x"), "upgrade_from[1] does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.traversal, func(t *testing.T) {
			var d *hcl.Diagnostic
			for _, c := range diags {
				if c.Summary == tt.summary && strings.Contains(c.Detail, tt.detail) {
					d = c
				}
			}
			if d == nil {
				t.Fatalf("no %q diagnostic with %q in:\n%s", tt.summary, tt.detail, renderDiags(l, diags))
			}
			if d.Expression == nil || d.EvalContext == nil {
				t.Fatalf("diagnostic has no expression or context: %+v", d)
			}
			if got := d.Expression.Range(); *d.Subject != got {
				t.Errorf("expression range %v is not the subject %v", got, *d.Subject)
			}
			vars := d.Expression.Variables()
			if len(vars) != 1 || traversalText(vars[0]) != tt.traversal {
				t.Fatalf("expression refers to %d traversals, want %s", len(vars), tt.traversal)
			}
			v, vd := vars[0].TraverseAbs(d.EvalContext)
			if vd.HasErrors() || v.Equals(tt.value) != cty.True {
				t.Errorf("%s = %#v (%v), want %#v", tt.traversal, v, vd, tt.value)
			}
			for name, root := range d.EvalContext.Variables {
				if strings.Contains(fmt.Sprintf("%#v", root), "ctx-secret-pw") {
					t.Errorf("the context's %s holds the sensitive value", name)
				}
			}
		})
	}
}

// TestGeneratedServerOrigin: duplicates among generated servers say which
// inventory lines clash; without a CSV, a for_each key that is not the
// name is given instead.
func TestGeneratedServerOrigin(t *testing.T) {
	src := relSrc + `
locals {
  inventory = csvdecode(file("inventory.csv"))
}
cluster "c" {
  release = release.r1
  rack "r" {
    server "s" {
      for_each = local.inventory
      bmc      = each.value.bmc
      role     = "control_plane"
    }
    server "t" {
      for_each = { k1 = "https://127.0.0.9:1" }
      name     = "t-${each.key}"
      bmc      = each.value
      role     = "computer"
    }
  }
}
`
	csv := "name,bmc\ns1,https://127.0.0.1:1\ns2,https://127.0.0.2:1\n\"s\n1\",https://127.0.0.3:1\ns4,https://127.0.0.1:1\ns1,https://127.0.0.5:1\n"
	writeConfig(t, map[string]string{"main.rf.hcl": src, "inventory.csv": csv})
	l := NewLoader(LoadOptions{})
	_, diags := l.Load(".")
	want := map[string]string{
		"Duplicate BMC address": `Server "s4" (from inventory.csv line 6) has the BMC address https://127.0.0.1:1, which server "s1" at main.rf.hcl:12 (cluster "c", rack "r", from inventory.csv line 2) already has.`,
		"Duplicate server":      `A server named "s1" (from inventory.csv line 7) is already declared at main.rf.hcl:12 (cluster "c", rack "r", from inventory.csv line 2).`,
		"Unknown role":          `Server "t-k1" (from for_each key "k1") has role "computer"`,
	}
	for summary, part := range want {
		found := false
		for _, d := range diags {
			found = found || d.Summary == summary && strings.Contains(d.Detail, part)
		}
		if !found {
			t.Errorf("no %q diagnostic saying %q in:\n%s", summary, part, renderDiags(l, diags))
		}
	}
}
