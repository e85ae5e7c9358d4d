package sim

import (
	"fmt"
	"time"
)

// Power states as Redfish spells them.
const (
	powerOn          = "On"
	powerOff         = "Off"
	powerPoweringOn  = "PoweringOn"
	powerPoweringOff = "PoweringOff"
)

// host is one ComputerSystem behind a BMC: its own power, boot override,
// virtual media and identity. Resetting one host never touches another.
type host struct {
	idx                    int
	id, path               string // "Node1", "/redfish/v1/Systems/Node1"
	vmediaColl, vmediaPath string
	name                   string // the server's name (HostName)
	uuid, serial           string
	power                  string
	powerGen               int
	health                 string
	boot                   struct{ target, enabled string }
	media                  struct{ image string }
	boots                  int
}

// hostPower is the power of the hosts behind one BMC: each boots (its
// staged versions and a reimage apply as the boot ends), shuts down and
// resets on its own, held down and made unhealthy by faults (fault.go,
// fault_timed.go). Its BMC's mu is held for every method.
type hostPower struct {
	fleet      *Fleet
	hosts      []*host    // the BMC's
	clock      *timeline  // when boots and shutdowns end
	faults     *faultSet  // no-return, ignore-graceful, slow, the conditions
	inv        *inventory // the versions a boot applies
	specHealth string     // BMCSpec.Health: the health the hosts start with
	// hostDown: a host-down fault holds the hosts off (fault_timed.go).
	hostDown bool
	// Counters for Stats.
	boots, resets, reimages int
}

// boot starts booting host h at t: its pending versions apply and a
// reimage installs when the boot finishes.
func (hp *hostPower) boot(h *host, t time.Time) {
	h.powerGen++
	gen := h.powerGen
	h.power = powerPoweringOn
	hp.boots++
	h.boots++
	d := hp.clock.jittered(jitterBoot, hp.fleet.timings.Boot)
	reimage := ""
	if h.boot.target == "Cd" && h.boot.enabled != "Disabled" && h.media.image != "" {
		if comp, v, ok := parseImage(h.media.image); ok && comp == ComponentRuntime {
			reimage = v
			d += hp.clock.jittered(jitterInstall, hp.fleet.timings.Install)
		}
	}
	d = hp.faults.slowBoot(d, reimage != "")
	if h.boot.enabled == "Once" {
		h.boot.target, h.boot.enabled = "None", "Disabled"
	}
	hp.clock.at(hp.clock.after(t, d), func(time.Time) {
		if h.powerGen != gen {
			return
		}
		if _, ok := hp.faults.take(FaultNoReturn, 0); ok {
			h.power, h.health = powerOff, "Critical"
			return
		}
		h.power = powerOn
		hp.inv.activate(func(p pending, c component) bool {
			return c.sys == h.idx || (c.sys < 0 && c.activation != activateBMC) || (c.sys < 0 && p.onReset)
		})
		if reimage != "" {
			if i, ok := hp.inv.hostComponent(h, ComponentRuntime); ok {
				hp.inv.versions[i] = reimage
			}
			hp.reimages++
		}
	})
}

// shutdown powers host h off gracefully from t, then runs then (if set).
func (hp *hostPower) shutdown(h *host, t time.Time, then func(h *host, at time.Time)) {
	h.powerGen++
	gen := h.powerGen
	h.power = powerPoweringOff
	hp.clock.at(hp.clock.after(t, hp.faults.slowed(hp.clock.jittered(jitterShutdown, hp.fleet.timings.Shutdown), "shutdown", "")), func(at time.Time) {
		if h.powerGen != gen {
			return
		}
		h.power = powerOff
		if then != nil {
			then(h, at)
		}
	})
}

// resetTypes are the ComputerSystem.Reset types every profile accepts.
var resetTypes = []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "ForceOn", "PushPowerButton", "PowerCycle"}

// reset performs a ComputerSystem.Reset of host h at now.
func (hp *hostPower) reset(h *host, now time.Time, kind string) error {
	ignoreGraceful := func() bool {
		_, ok := hp.faults.take(FaultIgnoreGraceful, 0)
		return ok
	}
	switch kind {
	case "On", "ForceOn":
		if h.power == powerOff || h.power == powerPoweringOff {
			hp.boot(h, now)
		}
	case "ForceOff":
		h.powerGen++
		h.power = powerOff
	case "GracefulShutdown":
		if h.power == powerOn && !ignoreGraceful() {
			hp.shutdown(h, now, nil)
		}
	case "GracefulRestart":
		switch {
		case h.power == powerOff:
			hp.boot(h, now)
		case h.power == powerOn && !ignoreGraceful():
			hp.shutdown(h, now, hp.boot)
		}
	case "ForceRestart", "PowerCycle":
		hp.boot(h, now)
	case "PushPowerButton":
		if h.power == powerOff {
			hp.boot(h, now)
		} else if h.power == powerOn && !ignoreGraceful() {
			hp.shutdown(h, now, nil)
		}
	case "Nmi":
	default:
		return fmt.Errorf("ResetType %q is not one of %v", kind, resetTypes)
	}
	hp.resets++
	return nil
}
