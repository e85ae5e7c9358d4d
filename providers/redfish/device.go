package redfish

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/stmcginnis/gofish"

	"github.com/rackform/rackform/providers"
)

// A device (providers.Target.Device: a switch tray, a power shelf, a
// chassis controller) is a BMC with no ComputerSystem: the HPE Slingshot
// switch blade's controller lists a Manager (ManagerType
// EnclosureManager, no FirmwareVersion), a Chassis (its serial, model,
// power and health) and an UpdateService whose FirmwareInventory holds
// the running BMC image, a Recovery image of another version (standby,
// members.go) and members it marks not updateable (Bootloader, FPGA).
// Such a device is read through those three and never through
// /redfish/v1/Systems: the Manager stands for the system (a service
// without one answered without what the plan needs), the Chassis gives
// the identity, power and health, and every inventory member is the
// device's own. It has no host: shutdown, power_on, reset and reimage are
// refused, and it is ready when its Manager answers again and its
// versions read back.

// errNoManager is a service that lists no Manager.
var errNoManager = errors.New("the BMC lists no manager")

// Device reads a device's Manager and the Chassis it is in (the Manager's
// ManagerInChassis, else the first of the Chassis collection) into a
// systemInfo standing for the device: no URI or Id (there is no
// ComputerSystem), the chassis' identity, power state and health (the
// Manager's health when no chassis can be read).
func (b *gofishBMC) Device(ctx context.Context) (*systemInfo, *managerInfo, error) {
	m, err := b.Manager(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	if m == nil {
		return nil, nil, &requestError{method: http.MethodGet, uri: "/redfish/v1/Managers", err: errNoManager}
	}
	ctx = selfChecked(ctx) // read through getJSON only
	var ch *chassisDoc
	err = b.do(ctx, func(c *gofish.APIClient) error {
		if m.Chassis != "" {
			var doc chassisDoc
			if err := getJSON(ctx, c, m.Chassis, &doc); err == nil {
				ch = &doc
				return nil
			} else if outcomeOf(err) == providers.OutcomeCredentialsRefused {
				return err
			}
		}
		all, err := readMembers[chassisDoc](ctx, c, serviceLink(c, "chassis", "/redfish/v1/Chassis"), nil)
		if err != nil {
			if outcomeOf(err) == providers.OutcomeCredentialsRefused {
				return err
			}
			return nil // the identity is unknown; the Manager suffices
		}
		if len(all) > 0 {
			ch = &all[0]
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	dev := &systemInfo{Name: m.ID, Health: m.Health, PowerState: providers.PowerOn, ManagedBy: []string{m.URI}}
	if ch != nil {
		dev.Name = ch.ID
		ch.fill(dev)
	}
	return dev, m, nil
}

// subject reads what stands for t: its ComputerSystem, or for a device
// the systemInfo Device makes of its Manager and Chassis.
func (s *stepRun) subject(ctx context.Context) (*systemInfo, error) {
	if s.t.Device != "" {
		dev, _, err := s.b.Device(ctx)
		return dev, err
	}
	return s.b.System(ctx, s.t.System)
}

// errNoHost refuses a host step on a device.
func (s *stepRun) errNoHost() error {
	return errors.New("a " + strings.ReplaceAll(s.t.Device, "_", " ") + " has no host to " + string(s.step.Kind) +
		": a device takes only update and wait_ready steps (the plan was not made for this target)")
}
