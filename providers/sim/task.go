package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// startTask creates an update task at now for image (with optional
// targets: inventory members, or on basic the System or Manager; several
// where the profile takes several) and apply time. b.mu is held.
func (b *bmc) startTask(now time.Time, image string, targets []string, applyTime string, payload taskPayload) *task {
	b.nextTask++
	t := &task{id: strconv.Itoa(b.nextTask), comp: -1, image: image, start: now, end: b.clock.after(now, b.clock.jittered(jitterFlash, b.fleet.timings.Flash)), payload: payload}
	if b.prof.acceptNoContent {
		t.end = now
	}
	comp, version, ok := parseImage(image)
	var idx []int
	for _, target := range targets {
		i, found := b.inv.targetComponent(target)
		if !found {
			t.message = fmt.Sprintf("Target %s is not an updateable inventory item.", target)
			idx = nil
			break
		}
		idx = append(idx, i)
	}
	if len(targets) == 0 && comp != "" {
		var matches []int
		for i, c := range b.inv.comps {
			base := b.inv.baseKey(c)
			if (strings.EqualFold(base, comp) || strings.EqualFold(c.key, comp)) && !b.inv.absent[i] {
				matches = append(matches, i) // an absent member takes no image
			}
		}
		// Several members of one key (8 GPUs) take one image together
		// where the profile says so; elsewhere the image must name one.
		if len(matches) == 1 || (len(matches) > 1 && b.prof.multiTarget) {
			idx = matches
		}
	}
	for _, i := range idx {
		if !b.inv.comps[i].canUpdate() || b.inv.absent[i] {
			idx = nil
			break
		}
	}
	if len(idx) > 0 && ok {
		t.comp, t.more, t.version = idx[0], idx[1:], version
	} else if t.message == "" {
		t.message = fmt.Sprintf("The image %s does not apply to any updateable component of this server (want <component>-<version>.bin, component one of BMC, BIOS, NIC, CPLD, GPU).", image)
	}
	b.stats.Updates++
	key := ""
	if t.comp >= 0 {
		key = b.inv.comps[t.comp].key
		t.end = now.Add(b.faults.slowed(t.end.Sub(now), "update", key))
	}
	fail := t.comp < 0
	if b.faults.forComponent(FaultTaskFail, key) {
		fail = true
		b.stats.FaultsInjected++
		if t.message == "" {
			t.message = "The " + key + " image failed verification (injected fault)."
		}
	} else if _, ok := b.faults.take(FaultTaskFail, 0); ok {
		fail = true
		b.stats.FaultsInjected++
		if t.message == "" {
			t.message = "The firmware image failed verification (injected fault)."
		}
	}
	if _, ok := b.faults.take(FaultTaskHang, 0); ok {
		t.hang = true
		b.stats.FaultsInjected++
	}
	b.tasks = append(b.tasks, t)
	if len(b.tasks) > maxTasks {
		b.tasks = b.tasks[len(b.tasks)-maxTasks:]
	}
	if t.hang {
		return t
	}
	if !fail && b.restartDuringUpdate(t, now, applyTime) {
		return t // the BMC restarts before the task ends (restart.go)
	}
	finish := func(at time.Time) {
		if fail {
			t.state = "Exception"
			b.stats.TasksFailed++
			return
		}
		t.state = "Completed"
		b.stats.TasksCompleted++
		if b.flash(t, applyTime) {
			if t.end.Equal(t.start) {
				// Accepted and completed in one request (basic): the BMC
				// answers, then goes away a moment later.
				at = at.Add(10 * time.Millisecond)
			}
			b.bmcReset(at)
		}
	}
	if t.end.Equal(now) {
		finish(now)
		return t
	}
	b.clock.at(t.end, finish)
	return t
}

// flash writes task t's image to its components: each shows its version
// at once, at the next host reset, or (a BMC's own firmware) when the BMC
// restarts; restart reports the last. b.mu is held.
func (b *bmc) flash(t *task, applyTime string) (restart bool) {
	for _, i := range append([]int{t.comp}, t.more...) {
		c := b.inv.comps[i]
		if b.stats.Flashes == nil {
			b.stats.Flashes, b.stats.MemberFlashes = map[string]int{}, map[string]int{}
		}
		b.stats.Flashes[c.key]++
		b.stats.MemberFlashes[c.id]++
		p := pending{comp: i, version: t.version}
		switch {
		case applyTime == "OnReset":
			p.onReset = true
			b.inv.pending = append(b.inv.pending, p)
		case c.activation == activateNow:
			b.inv.setVersion(i, t.version)
		case c.activation == activateBMC:
			b.inv.pending = append(b.inv.pending, p)
			restart = true
		default:
			b.inv.pending = append(b.inv.pending, p)
		}
	}
	return restart
}

// taskState is the task's state, percent and message at now.
func (t *task) status(now time.Time) (state string, percent int) {
	if t.state != "" {
		return t.state, 100
	}
	total := t.end.Sub(t.start)
	f := 0.0
	if total > 0 {
		f = float64(now.Sub(t.start)) / float64(total)
	}
	switch {
	case f < 0.03:
		return "New", 0
	case f < 0.08:
		return "Starting", 0
	case t.hang:
		return "Running", min(int(f*100), 42)
	default:
		return "Running", min(int(f*100), 99)
	}
}

func (b *bmc) task(id string) *task {
	for _, t := range b.tasks {
		if t.id == id {
			return t
		}
	}
	return nil
}
