package planner

import (
	"fmt"
	"strings"
)

// fixture builds a one-cluster configuration for rule tests: a release
// with a BIOS and a runtime, the strategy body given, and racks of
// servers written "name:role" (role c, m, cp or spare).
type fixture struct {
	strategy string
	racks    [][]string // each: rack name, then servers
	extra    string     // more top-level blocks
	cluster  string     // more cluster attributes
	release  string     // more release attributes
	runtime  string     // runtime version (default 4.6.1)
}

var roleNames = map[string]string{"c": "compute", "m": "management", "cp": "control_plane", "spare": "control_plane_spare"}

func (f fixture) String() string {
	var b strings.Builder
	rt := f.runtime
	if rt == "" {
		rt = "4.6.1"
	}
	fmt.Fprintf(&b, `provider "redfish" {}

release "r" {
  version = %q
  %s
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bios.bin"
    match {
      software_id = "BIOS"
    }
  }
  component "runtime" {
    kind    = "runtime"
    version = %q
    image   = "http://127.0.0.1:9/rt.iso"
    match {
      id = "RT"
    }
  }
}

strategy "s" {
%s
}
%s
cluster "c" {
  strategy = strategy.s
  release  = release.r
  %s
`, rt, f.release, rt, f.strategy, f.extra, f.cluster)
	n := 0
	for _, r := range f.racks {
		fmt.Fprintf(&b, "  rack %q {\n", r[0])
		for _, s := range r[1:] {
			name, role, _ := strings.Cut(s, ":")
			n++
			fmt.Fprintf(&b, "    server %q {\n      bmc  = \"https://127.2.%d.%d:8443\"\n      role = %q\n    }\n", name, n/200, n%200+1, roleNames[role])
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// cpRacks are three racks holding the control plane, so compute-rack tests
// satisfy the placement rules without mixing roles into their racks.
var cpRacks = [][]string{{"x-cp1", "cp1:cp", "spare:spare"}, {"x-cp2", "cp2:cp"}, {"x-cp3", "cp3:cp"}}

func withCP(racks ...[]string) [][]string { return append(append([][]string{}, cpRacks...), racks...) }
