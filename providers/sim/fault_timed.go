package sim

import (
	"strings"
	"time"
)

// The faults of a rehearsal scenario (rackform sim -scenario): a fault can
// hold from one moment to another (a BMC that answers 503 for a while, a
// BMC or a host that goes down at some time), be limited to one
// component's updates, or slow what a BMC does down.

// The scenario's own kinds.
const (
	// FaultDown: the BMC does not answer at all, as a BMC that dropped
	// off the network: every connection is dropped.
	FaultDown FaultKind = "down"
	// FaultHostDown: every host of the BMC goes down, off with health
	// Critical, whatever is asked of it; when the fault ends the hosts
	// come back on with the health the BMC started with.
	FaultHostDown FaultKind = "host-down"
	// FaultSlow: what the BMC does takes Factor times as long: update
	// tasks by default, and boots and shutdowns as Steps says.
	FaultSlow FaultKind = "slow"
)

// Timed is when a fault holds, and what it is limited to.
type Timed struct {
	// From and Until bound when the fault holds, on the fleet's clock
	// (real time): zero From is from now, zero Until for good.
	From  time.Time `json:"from,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Component limits task-fail, slow and bmc-restart-during-update to
	// the updates of one component (BIOS, BMC, NIC, CPLD, GPU, Runtime;
	// any case).
	Component string `json:"component,omitempty"`
	// Factor is slow's: how many times as long.
	Factor float64 `json:"factor,omitempty"`
	// Steps are what slow slows, comma-separated, in a plan's words:
	// update (the tasks; the default), shutdown, reset, power_on and
	// wait_ready (a boot: what they all wait for), reimage (a boot from
	// virtual media).
	Steps string `json:"steps,omitempty"`
}

// holds says whether ft holds now.
func (fs *faultSet) holds(ft Fault) bool {
	if ft.From.IsZero() && ft.Until.IsZero() {
		return true
	}
	now := fs.fleet.opts.Now()
	return !now.Before(ft.From) && (ft.Until.IsZero() || now.Before(ft.Until))
}

// forComponent returns the fault of kind k limited to component comp that
// holds, using one of its uses. Faults limited to a component are never
// met by take.
func (fs *faultSet) forComponent(k FaultKind, comp string) (Fault, bool) {
	return fs.use(k, func(ft Fault) bool { return ft.Component != "" && strings.EqualFold(ft.Component, comp) })
}

// use returns the first fault of kind k set on the BMC that holds now
// and that want accepts, using one use of a counted fault.
func (fs *faultSet) use(k FaultKind, want func(Fault) bool) (Fault, bool) {
	for i, ft := range fs.list {
		if ft.Kind != k || !want(ft) || !fs.holds(ft) {
			continue
		}
		if ft.Count > 0 {
			fs.list[i].Count--
			if fs.list[i].Count == 0 {
				fs.list = append(fs.list[:i:i], fs.list[i+1:]...)
			}
		}
		return ft, true
	}
	return Fault{}, false
}

// slowed is d (simulated) slowed by every slow fault that holds for step
// (of component comp, for updates).
func (fs *faultSet) slowed(d time.Duration, step, comp string) time.Duration {
	for _, ft := range fs.list {
		if ft.Kind != FaultSlow || !fs.holds(ft) || ft.Factor <= 0 {
			continue
		}
		steps := ft.Steps
		if steps == "" {
			steps = "update"
		}
		if !strings.Contains(","+steps+",", ","+step+",") || (ft.Component != "" && !strings.EqualFold(ft.Component, comp)) {
			continue
		}
		d = time.Duration(float64(d) * ft.Factor)
	}
	return d
}

// slowBoot is a boot of d slowed: a reimage's boot as reimage, another as
// any of the steps that wait for it.
func (fs *faultSet) slowBoot(d time.Duration, reimage bool) time.Duration {
	if reimage {
		return fs.slowed(d, "reimage", "")
	}
	for _, step := range []string{"reset", "power_on", "wait_ready"} {
		if s := fs.slowed(d, step, ""); s != d {
			return s
		}
	}
	return d
}

// hostDownSync holds the hosts down while a host-down fault holds, and
// brings them back when it ends; it reports whether they are down.
func (hp *hostPower) hostDownSync() bool {
	down := hp.faults.has(FaultHostDown)
	switch {
	case down:
		for _, h := range hp.hosts {
			if !hp.hostDown {
				h.powerGen++ // a boot or shutdown under way is cut
			}
			h.power, h.health = powerOff, "Critical"
		}
	case hp.hostDown:
		for _, h := range hp.hosts {
			h.powerGen++
			h.power, h.health = powerOn, hp.baseHealth()
		}
	}
	hp.hostDown = down
	return down
}
