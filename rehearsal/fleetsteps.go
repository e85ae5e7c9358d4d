package rehearsal

// What each step does to a simulated server: power, flashes staged for
// the next boot and applied by it, the versions set, readiness and when
// it changes next.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rackform/rackform/providers"
)

func (f *Fleet) shutdown(ctx context.Context, s *server, st providers.Step) (*providers.ApplyResult, error) {
	f.mu.Lock()
	power, _ := s.effective(f.clock.Now())
	f.mu.Unlock()
	if power == providers.PowerOff {
		return &providers.ApplyResult{Message: "already off", Observation: f.observe(s)}, nil
	}
	d, failed := f.call(s, "shutdown", "")
	if err := f.clock.Sleep(ctx, f.clock.Now().Add(d)); err != nil {
		return nil, err
	}
	if failed {
		return nil, errors.New("the BMC refused GracefulShutdown, the server was not shut down")
	}
	f.mu.Lock()
	s.power, s.readyAt = providers.PowerOff, time.Time{}
	f.mu.Unlock()
	return &providers.ApplyResult{Message: "shut down gracefully", Observation: f.observe(s)}, nil
}

func (f *Fleet) observe(s *server) *providers.Observation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.observation(s, f.clock.Now())
}

func (f *Fleet) update(ctx context.Context, s *server, st providers.Step, fn func(*providers.Progress) error) (*providers.ApplyResult, error) {
	d, failed := f.call(s, "update", st.Component)
	// Numbered per server (per system behind a shared BMC), not per
	// fleet: the order in which servers reach their updates must not
	// change the journal.
	f.mu.Lock()
	s.tasks++
	uri := "/redfish/v1/TaskService/Tasks/" + strconv.Itoa(s.tasks)
	if s.p.System != "" {
		uri = "/redfish/v1/TaskService/Tasks/" + s.p.System + "." + strconv.Itoa(s.tasks)
	}
	f.mu.Unlock()
	res := &providers.ApplyResult{TaskURI: uri}
	if err := fn(&providers.Progress{Message: "task started", Percent: -1, TaskURI: uri}); err != nil {
		return res, err
	}
	if err := f.clock.Sleep(ctx, f.clock.Now().Add(d)); err != nil {
		return res, err
	}
	if holding(s.bmc.down, f.clock.Now()) {
		return res, fmt.Errorf("polling task %s: the BMC at %s does not answer (connection refused)", uri, s.bmc.url)
	}
	if failed {
		return res, errors.New("the BMC task ended Exception: the update of " + st.Component + " failed")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s.flash(st)
	s.readyAt = time.Time{}
	res.Message = "task completed"
	return res, nil
}

// flash does what a finished update does: applies the image now, or
// stages it for the next boot, as its apply time says. f.mu is held.
func (s *server) flash(st providers.Step) {
	if st.ApplyTime == "" || st.ApplyTime == "Immediate" {
		s.set(st.Match, st.Target.Version)
	} else {
		s.staged = append(s.staged, staged{st.Match, st.Target.Version})
	}
}

// bootBack is a boot that came back at now: on, healthy as observed,
// with what was staged (and a reimage's version) applied. f.mu is held.
func (s *server) bootBack(st providers.Step, now time.Time) {
	s.power = providers.PowerOn
	s.health = s.p.Observed.Health
	if s.health == "" {
		s.health = "OK"
	}
	for _, x := range s.staged {
		s.set(x.match, x.version)
	}
	s.staged = nil
	if st.Kind == providers.StepReimage && st.Target.Version != "" {
		s.set(st.Match, st.Target.Version)
	}
	if s.firstBoot.IsZero() {
		s.firstBoot = now
	}
}

// set sets the version of every component m selects (a shared one on the
// BMC). f.mu is held.
func (s *server) set(m providers.Match, v string) {
	for _, c := range s.comps {
		if c.Shared && m.Selects(c) {
			s.bmc.shared[c.ID] = v
		}
	}
	s.comps = s.changes.set(s.comps, m, v)
}

// changes shares the lists servers' updates leave: a fleet of 100,000
// servers holds a handful of distinct ones.
type changes map[change][]providers.Component

// change is a list and one update of it.
type change struct {
	list *providers.Component
	n    int
	m    providers.Match
	v    string
}

// set returns comps with the version of every component m selects (but
// a shared one, whose version is its BMC's) set to v, as a list of its
// own: comps is never changed.
func (c *changes) set(comps []providers.Component, m providers.Match, v string) []providers.Component {
	if len(comps) == 0 {
		return comps
	}
	k := change{&comps[0], len(comps), m, v}
	if out, ok := (*c)[k]; ok {
		return out
	}
	out := slices.Clone(comps)
	for i, x := range out {
		if !x.Shared && m.Selects(x) {
			out[i].Version = v
		}
	}
	if *c == nil {
		*c = changes{}
	}
	(*c)[k] = out
	return out
}

// boot resets (or reimages, or powers on) the host and boots it: a boot
// that comes back applies what was staged (and the reimage's version);
// one that does not (never_ready, or a random wait_ready failure) leaves
// the host off with health Critical, as a BMC shows a server that never
// came back. A reset to On fails then, as the redfish provider's does
// when the power never reads On.
func (f *Fleet) boot(ctx context.Context, s *server, st providers.Step, resetType string) (*providers.ApplyResult, error) {
	kind := string(st.Kind)
	f.mu.Lock()
	power, _ := s.effective(f.clock.Now())
	f.mu.Unlock()
	if st.Kind == providers.StepPowerOn && power == providers.PowerOn {
		return &providers.ApplyResult{Message: "already on", Observation: f.observe(s)}, nil
	}
	if resetType == "" {
		resetType = "GracefulRestart"
	}
	if power == providers.PowerOff {
		resetType = "On"
	}
	component := ""
	if st.Kind == providers.StepReimage {
		component = st.Component
	}
	d, failed := f.call(s, kind, component)
	if err := f.clock.Sleep(ctx, f.clock.Now().Add(d)); err != nil {
		return nil, err
	}
	if failed {
		return nil, fmt.Errorf("the BMC refused reset %s, the server was not reset", resetType)
	}
	f.mu.Lock()
	s.boots++
	back := !s.neverReady
	if p := f.random.Fail["wait_ready"]; back && p > 0 && roll(f.seed, "fail", s.p.Address, "wait_ready", "boot", strconv.Itoa(s.boots)) < p {
		back = false
	}
	now := f.clock.Now()
	s.readyAt = time.Time{}
	if back {
		s.bootBack(st, now)
	} else {
		s.power, s.health = providers.PowerOff, "Critical"
	}
	obs := f.observation(s, now)
	f.mu.Unlock()
	res := &providers.ApplyResult{Observation: obs}
	switch {
	case st.Kind == providers.StepReimage:
		res.Message = "booting " + st.ImageURI + " from virtual media (reset ForceRestart)"
	case (resetType == "On" || resetType == "ForceOn") && obs.PowerState != providers.PowerOn:
		return res, fmt.Errorf("reset %s was accepted, but the server did not report power On in time", resetType)
	case resetType == "On" || resetType == "ForceOn":
		res.Message = "reset " + resetType + " done; power reads On"
	default:
		res.Message = "reset " + resetType + " requested (accepted by the BMC)"
	}
	return res, nil
}

// waitReady waits until the server is on, healthy and at every expected
// version, or the step's timeout passes. The server is back the plan's
// wait_ready estimate after the first wait_ready since it last changed;
// what holds it then (a condition, an unreachable BMC, a boot that did
// not come back) is checked again at each moment it may end.
func (f *Fleet) waitReady(ctx context.Context, s *server, st providers.Step) (*providers.ApplyResult, error) {
	timeout := st.Timeout
	if timeout <= 0 {
		timeout = defaultReadyTimeout
	}
	now := f.clock.Now()
	deadline := now.Add(timeout)
	f.mu.Lock()
	if s.readyAt.IsZero() {
		s.readyAt = now.Add(estimate(s.p, "wait_ready", ""))
	}
	t := s.readyAt
	f.mu.Unlock()
	if t.Before(now) {
		t = now
	}
	why := "not back yet"
	// Back at the deadline counts: an estimate capped by the timeout (the
	// planner caps them) is met exactly.
	for !t.After(deadline) {
		if err := f.clock.Sleep(ctx, t); err != nil {
			return nil, err
		}
		f.mu.Lock()
		why = f.notReady(s, t, st.Expect, st.AcceptCritical)
		var obs *providers.Observation
		if why == "" {
			obs = f.observation(s, t)
		}
		next := s.nextChange(t)
		f.mu.Unlock()
		if why == "" {
			return &providers.ApplyResult{Message: "ready", Observation: obs}, nil
		}
		if next.IsZero() || !t.Before(deadline) {
			break
		}
		t = next
		if t.After(deadline) {
			t = deadline
		}
	}
	if err := f.clock.Sleep(ctx, deadline); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the server was not ready by %s (waited %s): still %s", deadline.UTC().Format(time.RFC3339), timeout, why)
}

// notReady says what the server still waits for at t, "" when ready.
// f.mu is held.
func (f *Fleet) notReady(s *server, t time.Time, expect []providers.Expectation, acceptCritical bool) string {
	if holding(s.bmc.down, t) || holding(s.bmc.busy, t) {
		return "its BMC cannot be read"
	}
	power, health := s.effective(t)
	if power != providers.PowerOn {
		return "power is " + orUnknown(power)
	}
	if why := providers.ReadyHealth(health, acceptCritical); why != "" {
		return why
	}
	comps := s.components()
	var missing []string
	for _, e := range expect {
		// The one "at target" rule, as the redfish provider's wait_ready:
		// every active member the rule selects.
		at, why, err := e.Match.AtTarget(e.Target, comps)
		switch {
		case err != nil:
			missing = append(missing, fmt.Sprintf("%s: %v (want %s)", e.Component, err, e.Target.Version))
		case !at:
			missing = append(missing, fmt.Sprintf("%s: %s (want %s)", e.Component, why, e.Target.Version))
		}
	}
	return strings.Join(missing, ", ")
}

// nextChange is the first moment after t at which a fault on s begins or
// ends (zero: none). f.mu is held.
func (s *server) nextChange(t time.Time) time.Time {
	next := earliest{after: t}
	for _, l := range [][]span{s.hostDown, s.bmc.busy, s.bmc.down} {
		for _, sp := range l {
			next.consider(sp.from)
			if !sp.to.IsZero() {
				next.consider(sp.to)
			}
		}
	}
	for _, l := range [][]condition{s.readOnly, s.unknown} {
		for _, c := range l {
			at := c.at
			if at.IsZero() {
				at = s.firstBoot
			}
			if at.IsZero() {
				continue
			}
			next.consider(at)
			if c.d > 0 {
				next.consider(at.Add(c.d))
			}
		}
	}
	return next.at
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
