package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const devicesConfig = `
release "r1" {
  version = "4.5.0"
  component "bios" {
    match {
      software_id = "BIOS"
    }
    version = "1.2.3"
    scheme  = "dotted"
    image   = "https://127.0.0.1/bios.bin"
  }
  component "switch_bmc" {
    devices = ["switch_tray", "switch_blade"]
    match {
      id = "BMC"
    }
    version = "sc.1.7.3"
    scheme  = "opaque"
    allow_change = true
    image   = "https://127.0.0.1/sc.bin"
  }
}

strategy "s" {
  devices = "before_servers"
}

cluster "c1" {
  release  = release.r1
  strategy = strategy.s
  rack "a" {
    server "a1" {
      bmc  = "https://127.0.0.1:8443"
      role = "compute"
    }
    device "nvswitch-1" {
      kind = "switch_tray"
      bmc  = "https://127.0.0.9:8443"
      labels = { tray = "1" }
    }
  }
}
`

// TestDevices: a device block declares a rack member that is not a
// server: its kind, its BMC, no role; a component's devices say which
// kinds it is for; the strategy's devices attribute places them.
func TestDevices(t *testing.T) {
	cfg, diags := loadFiles(t, map[string]string{"main.rf.hcl": devicesConfig}, LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := cfg.Clusters[0]
	if got := c.Strategy.Devices; got != DevicesBeforeServers {
		t.Errorf("strategy devices %q, want %q", got, DevicesBeforeServers)
	}
	if got := NewDefaultStrategy().Devices; got != DevicesAfterServers {
		t.Errorf("default strategy devices %q, want %q", got, DevicesAfterServers)
	}
	servers := c.Servers()
	if len(servers) != 2 {
		t.Fatalf("%d rack members, want 2", len(servers))
	}
	srv, dev := servers[0], servers[1]
	if srv.IsDevice() || !dev.IsDevice() {
		t.Fatalf("IsDevice: server %v, device %v", srv.IsDevice(), dev.IsDevice())
	}
	if dev.Kind != DeviceSwitchTray || dev.Role != RoleDevice || dev.BMC != "https://127.0.0.9:8443" || dev.Labels["tray"] != "1" {
		t.Errorf("device %+v", dev)
	}
	bios, sw := cfg.Releases[0].Components[0], cfg.Releases[0].Components[1]
	if diff := cmp.Diff([]string{"switch_tray", "switch_blade"}, sw.Devices); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
	if sw.ApplyTime != ApplyImmediate || sw.Reboot || bios.ApplyTime != ApplyOnReset || !bios.Reboot {
		t.Errorf("apply times: a device's %s (reboot %v), a server's %s (reboot %v); want Immediate without reboot, OnReset with", sw.ApplyTime, sw.Reboot, bios.ApplyTime, bios.Reboot)
	}
	for _, x := range []struct {
		c    *Component
		s    *Server
		want bool
	}{{bios, srv, true}, {bios, dev, false}, {sw, srv, false}, {sw, dev, true}} {
		if got := x.c.For(x.s); got != x.want {
			t.Errorf("component %s for %s: %v, want %v", x.c.Name, x.s.Name, got, x.want)
		}
	}
}

// TestDeviceErrors: an unknown kind, a role on a device, a component for
// an unknown kind or a runtime for devices are errors naming the block.
func TestDeviceErrors(t *testing.T) {
	cases := []struct{ name, from, to, want string }{
		{"unknown kind", `kind = "switch_tray"`, `kind = "toaster"`, `"toaster" is not a valid kind: it must be "switch_tray"`},
		{"role on a device", `kind = "switch_tray"`, "kind = \"switch_tray\"\n      role = \"compute\"", `An argument named "role" is not expected here`},
		{"missing kind", `kind = "switch_tray"`, ``, `The argument "kind" is required`},
		{"unknown device kind of a component", `devices = ["switch_tray", "switch_blade"]`, `devices = ["toaster"]`, `names device kind "toaster"`},
		{"empty devices", `devices = ["switch_tray", "switch_blade"]`, `devices = []`, `has an empty devices list`},
		{"placement", `devices = "before_servers"`, `devices = "sometime"`, `"sometime"`},
		{"staged on a device", `allow_change = true`, "allow_change = true\n    apply_time = \"OnReset\"", `a device has no host whose reset would apply a staged image`},
		{"reboot on a device", `allow_change = true`, "allow_change = true\n    reboot = true", `a device has no host to reboot`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(devicesConfig, c.from, c.to, 1)
			_, diags := loadFiles(t, map[string]string{"main.rf.hcl": src}, LoadOptions{})
			if !diags.HasErrors() {
				t.Fatalf("no error")
			}
			var all []string
			for _, d := range diags {
				all = append(all, d.Summary+": "+d.Detail)
				if d.Subject == nil || d.Subject.Filename != "main.rf.hcl" {
					t.Errorf("diagnostic %q names no place in main.rf.hcl", d.Summary)
				}
			}
			if !strings.Contains(strings.Join(all, "\n"), c.want) {
				t.Errorf("diagnostics do not say %q:\n%s", c.want, strings.Join(all, "\n"))
			}
		})
	}
}
