package config

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// Devices are the members of a rack that are not servers: switch trays,
// power shelves, chassis and enclosure controllers, cooling distribution
// units. Each has a BMC that answers Redfish with a Manager, a Chassis and
// an UpdateService, but no ComputerSystem and no host: its firmware is
// updated with the same component rules as a server's, and nothing is
// drained, powered off or reimaged. A device is a Server with Kind set and
// Role RoleDevice, so everything that addresses, observes and diffs a
// server does the same for it; the strategy's devices attribute places the
// devices (Strategy.Devices).

// Device kinds, as operators name the boxes of a rack.
const (
	DeviceSwitchTray              = "switch_tray"
	DeviceSwitchBlade             = "switch_blade"
	DevicePowerShelf              = "power_shelf"
	DeviceChassisController       = "chassis_controller"
	DeviceEnclosureController     = "enclosure_controller"
	DeviceCoolingDistributionUnit = "cooling_distribution_unit"
)

// DeviceKinds lists every device kind.
var DeviceKinds = []string{DeviceSwitchTray, DeviceSwitchBlade, DevicePowerShelf, DeviceChassisController,
	DeviceEnclosureController, DeviceCoolingDistributionUnit}

// RoleDevice is the role of every device. It is not a role a server block
// may declare: a device is declared with a device block.
const RoleDevice = "device"

// Where a strategy places a cluster's devices (Strategy.Devices).
const (
	// DevicesBeforeServers: the devices phase runs first.
	DevicesBeforeServers = "before_servers"
	// DevicesAfterServers: the devices phase runs after every server
	// phase (the default).
	DevicesAfterServers = "after_servers"
)

var deviceSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "for_each"}, {Name: "count"}, {Name: "name"},
		{Name: "kind", Required: true}, {Name: "bmc", Required: true},
		{Name: "labels"}, {Name: "maintenance_window"}, {Name: "update_method"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "credentials"}},
}

// IsDevice reports whether sv is a device rather than a server.
func (sv *Server) IsDevice() bool { return sv.Kind != "" }

// For reports whether the component is for sv: a component that names
// device kinds (devices = [...]) is for devices of those kinds only, one
// that names none for servers only.
func (c *Component) For(sv *Server) bool {
	if len(c.Devices) == 0 {
		return !sv.IsDevice()
	}
	return slices.Contains(c.Devices, sv.Kind)
}

func (s *loadState) decodeDevice(b *hcl.Block, c *hcl.BodyContent, in instance, r *Rack, diags *hcl.Diagnostics) *Server {
	sv, a := s.decodeMember(b, c, in, r, diags)
	sv.Role = RoleDevice
	sv.Kind = a.oneOf("kind", "", DeviceKinds...)
	if sv.Kind == "" {
		// Reported by oneOf (or the schema, when missing); still a device.
		sv.Kind = "unknown"
	}
	sv.NodeName = sv.Name
	sv.Labels = a.strMap("labels")
	s.decodeMemberRest(b, c, in, sv, a, diags)
	return sv
}

// decodeComponentDevices reads a component's devices attribute: the
// device kinds it is for.
func decodeComponentDevices(a *attrs, c *Component, b *hcl.Block) {
	kinds, ok := a.strList("devices")
	if !ok {
		return
	}
	if len(kinds) == 0 {
		a.errorf(a.rng("devices", b.DefRange), "Invalid devices",
			"Component %q has an empty devices list: name the device kinds it is for (%s), or leave devices out for a component of servers.", c.Name, orList(DeviceKinds))
		return
	}
	for _, k := range kinds {
		if !slices.Contains(DeviceKinds, k) {
			a.errorf(a.rng("devices", b.DefRange), "Unknown device kind",
				"Component %q names device kind %q; a device kind must be %s.", c.Name, k, orList(DeviceKinds))
			return
		}
	}
	if c.Kind == KindRuntime || c.Method == MethodReimage {
		a.errorf(a.rng("devices", b.DefRange), "A device has no runtime",
			"Component %q is a runtime installed by reimaging a host, and devices have no host: a component for devices is firmware, sent to the device's UpdateService.", c.Name)
		return
	}
	// A device has no host reset to apply a staged image: its images are
	// applied at once (the device's controller restarts itself where its
	// firmware needs it), and it is never rebooted.
	switch c.ApplyTime {
	case ApplyOnReset, ApplyInMaintenanceWindowOnReset:
		if a.m["apply_time"] != nil {
			a.errorf(a.rng("apply_time", b.DefRange), "A device has no host reset",
				"Component %q is for devices and has apply_time = %q, but a device has no host whose reset would apply a staged image: leave apply_time out (Immediate) or set %q.", c.Name, c.ApplyTime, ApplyImmediate)
			return
		}
		c.ApplyTime = ApplyImmediate
	}
	if c.Reboot && a.m["reboot"] != nil {
		a.errorf(a.rng("reboot", b.DefRange), "A device has no host reset",
			"Component %q is for devices and says reboot = true, but a device has no host to reboot: leave reboot out.", c.Name)
		return
	}
	c.Reboot = false
	c.Devices = kinds
}
