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
		i, found := b.targetComponent(target)
		if !found {
			t.message = fmt.Sprintf("Target %s is not an updateable inventory item.", target)
			idx = nil
			break
		}
		idx = append(idx, i)
	}
	if len(targets) == 0 && comp != "" {
		var matches []int
		for i, c := range b.comps {
			base := b.baseKey(c)
			if (strings.EqualFold(base, comp) || strings.EqualFold(c.key, comp)) && !b.absent[i] {
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
		if !b.comps[i].canUpdate() || b.absent[i] {
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
		key = b.comps[t.comp].key
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
		c := b.comps[i]
		if b.stats.Flashes == nil {
			b.stats.Flashes, b.stats.MemberFlashes = map[string]int{}, map[string]int{}
		}
		b.stats.Flashes[c.key]++
		b.stats.MemberFlashes[c.id]++
		p := pending{comp: i, version: t.version}
		switch {
		case applyTime == "OnReset":
			p.onReset = true
			b.pending = append(b.pending, p)
		case c.activation == activateNow:
			b.setVersion(i, t.version)
		case c.activation == activateBMC:
			b.pending = append(b.pending, p)
			restart = true
		default:
			b.pending = append(b.pending, p)
		}
	}
	return restart
}

// targetComponent resolves a Targets entry to a component: an updateable
// member's active member, or (basic, hgx) the System for its BIOS and the
// Manager for the BMC.
func (b *bmc) targetComponent(target string) (int, bool) {
	target = cleanPath(target)
	if b.prof.targetsSystemManager || b.prof.systemManagerTargets {
		if target == b.prof.managerPath {
			return b.component(ComponentBMC)
		}
		for _, h := range b.hosts {
			if target == h.path {
				return b.hostComponent(h, ComponentBIOS)
			}
		}
		if b.prof.targetsSystemManager {
			return 0, false
		}
	}
	for i := range b.comps {
		if b.memberPath(i) == target {
			return i, true
		}
	}
	return 0, false
}

// targetsAllowed lists the Targets values the SimpleUpdate ActionInfo
// allows: updateable inventory members (or only those the profile names),
// or on basic the Systems and the Manager (hgx: both).
func (b *bmc) targetsAllowed() []string {
	var out []string
	if b.prof.targetsSystemManager || b.prof.systemManagerTargets {
		out = append(out, b.prof.managerPath)
		for _, h := range b.hosts {
			out = append(out, h.path)
		}
		if b.prof.targetsSystemManager {
			return append(out[1:], out[0]) // Systems, then the Manager
		}
	}
	for i, c := range b.comps {
		if c.canUpdate() && (b.prof.targetsOnly == nil || contains(b.prof.targetsOnly, c.id)) {
			out = append(out, b.memberPath(i))
		}
	}
	return out
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
