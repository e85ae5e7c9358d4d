package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A BMC restarts when asked (Manager.Reset), after a flash of its own
// firmware, and under bmc-restart-during-update: it is unreachable for a
// while and comes back having lost its sessions.

// down reports whether the BMC is unreachable at now: restarting, or
// under the down fault.
func (b *bmc) down(now time.Time) bool { return now.Before(b.bmcDown) || b.faults.has(FaultDown) }

// bmcReset makes the BMC unreachable from t for BMCResetTime; sessions are
// lost (an old X-Auth-Token answers 401 afterwards), and pending BMC
// versions apply when it is back. The hosts keep running.
func (b *bmc) bmcReset(t time.Time) {
	b.stats.BMCResets++
	b.bmcDown = b.clock.after(t, b.clock.jittered(jitterBMCReset, b.fleet.timings.BMCReset))
	b.sessions.drop()
	if b.prof.forgetTasks {
		b.tasks.list = nil
	}
	b.clock.at(b.bmcDown, func(time.Time) {
		b.inv.activate(func(_ pending, c component) bool { return c.activation == activateBMC })
	})
}

// FaultBMCRestartDuringUpdate makes the BMC restart while an update task
// runs, as a BMC whose watchdog fires mid-flash or that reboots itself to
// finish one does: halfway through the flash the BMC goes away for its
// reset time (connections refused, sessions lost), and comes back without
// the task: its monitor and its Task answer 404, so nothing says how the
// update ended. Fault.Took says whether the flash was done first (the
// component shows its new version as a completed flash would: at once,
// at the next host reset, or after this restart for the BMC's own
// firmware) or not (the old version stays). Fault.Count is how many
// updates it hits (0: every one); an update it does not hit runs as
// usual, so lost:1 is a flash that takes on its second try.
// Fault.DropsStaged (a last :drops-staged) makes the restart also discard
// the images the BMC had staged for the next host reset, as a BMC that
// keeps them only in memory does: their tasks completed, and the reset
// applies nothing. Fault.Component limits it to that component's updates.
const FaultBMCRestartDuringUpdate FaultKind = "bmc-restart-during-update"

// dropsStaged is the last part of bmc-restart-during-update's ARG that
// sets Fault.DropsStaged.
const dropsStaged = "drops-staged"

// parseRestartArg reads bmc-restart-during-update's ARG: took or lost,
// then optionally :COUNT (lost:1, the next update only), then optionally
// :drops-staged.
func parseRestartArg(ft Fault, arg string, hasArg bool) (Fault, error) {
	if rest, ok := strings.CutSuffix(arg, ":"+dropsStaged); ok {
		arg, ft.DropsStaged = rest, true
	}
	took, count, hasCount := strings.Cut(arg, ":")
	switch {
	case !hasArg:
		return Fault{}, fmt.Errorf("fault %s: say whether the flash took: %s:took or %s:lost (then optionally :COUNT and :%s)", ft.Kind, ft.Kind, ft.Kind, dropsStaged)
	case took == "took":
		ft.Took = true
	case took == "lost":
	default:
		return Fault{}, fmt.Errorf("fault %s: argument %q: want took or lost, then optionally :COUNT and :%s", ft.Kind, arg, dropsStaged)
	}
	if hasCount {
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 {
			return Fault{}, fmt.Errorf("fault %s: count %q is not a positive number of updates", ft.Kind, count)
		}
		ft.Count = n
	}
	return ft, nil
}

// restartDuringUpdate arms the restart on task t, started at now, when the
// fault holds for this update: it reports whether it did (the task then
// never ends by itself). b.mu is held.
func (b *bmc) restartDuringUpdate(t *task, now time.Time, applyTime string) bool {
	ft, ok := b.faults.take(FaultBMCRestartDuringUpdate, 0)
	if !ok && t.comp >= 0 {
		// One limited to a component hits only that component's updates.
		ft, ok = b.faults.forComponent(FaultBMCRestartDuringUpdate, b.inv.comps[t.comp].key)
	}
	if !ok {
		return false
	}
	b.stats.FaultsInjected++
	at := now.Add(t.end.Sub(now) / 2)
	if !at.After(now) {
		// A task done in one request (basic): the BMC answers first.
		at = now.Add(10 * time.Millisecond)
	}
	b.clock.at(at, func(at time.Time) {
		b.tasks.forget(t)
		b.stats.UpdatesLost++
		if ft.DropsStaged {
			b.inv.dropStaged()
		}
		if ft.Took {
			b.flash(t, applyTime)
		}
		b.bmcReset(at)
	})
	return true
}
