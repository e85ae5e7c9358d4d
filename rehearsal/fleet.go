package rehearsal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Sleeper is what the fleet needs of the virtual clock: its calls come
// from the executor's workers, which are the clock's actors, and take
// their time by sleeping on it.
type Sleeper interface {
	Now() time.Time
	Sleep(ctx context.Context, t time.Time) error
}

// How long what the plan has no step for takes (a remediation reboot, a
// skipped server's power on): the planner's typical durations.
const (
	typicalShutdown  = 3 * time.Minute
	typicalReset     = 10 * time.Minute
	typicalReimage   = 30 * time.Minute
	typicalWaitReady = 10 * time.Minute
	typicalUpdate    = 10 * time.Minute
	typicalHook      = time.Minute
	// defaultReadyTimeout is the redfish provider's bound on a wait_ready
	// whose step gives none.
	defaultReadyTimeout = 30 * time.Minute
	// retryBudget is how long the redfish provider keeps retrying a BMC
	// that answers 503 with its defaults (5 attempts, Retry-After up to
	// 30s): a shorter busy spell costs a call that much time, a longer one
	// fails it.
	retryBudget = 2 * time.Minute
)

// Fleet is the simulated copy of a plan's fleet: one server per planned
// server, as it was observed (identity, inventory, power, health), and its
// BMC. It implements providers.Provider on the virtual clock: every step
// takes the plan's estimate of it, an update takes effect as its apply
// time says (after the next boot for OnReset), a boot applies what was
// staged, and wait_ready checks power, health and versions as the redfish
// provider does. Faults (a scenario's, resolved) change what it does.
type Fleet struct {
	clock  Sleeper
	seed   uint64
	random Random

	mu      sync.Mutex
	servers map[string]*server
	bmcs    map[string]*bmc
	changes changes
}

var _ providers.Provider = (*Fleet)(nil)

type bmc struct {
	url string
	// shared are the versions of the BMC's own components (Shared),
	// which every server behind it reports.
	shared map[string]string
	busy   []span
	down   []span
}

// span is [from, to); a zero to is for good.
type span struct{ from, to time.Time }

func (s span) holds(t time.Time) bool {
	return !t.Before(s.from) && (s.to.IsZero() || t.Before(s.to))
}

// condition is a host condition from at (zero: from the server's first
// boot of the rehearsal) for d (0: for good).
type condition struct {
	at time.Time
	d  time.Duration
}

type staged struct {
	match   providers.Match
	version string
}

type server struct {
	p   *plan.Server
	bmc *bmc
	// changes shares component lists between servers (the fleet's).
	changes *changes
	// comps are the server's components now; a shared one's version is
	// its BMC's. Read-only: the plan's list until an update changes it,
	// then one servers changed alike share (changes).
	comps         []providers.Component
	power, health string
	staged        []staged
	// readyAt is when a wait_ready finds the server back: the first
	// wait_ready after a change sets it to then plus the plan's estimate.
	readyAt   time.Time
	firstBoot time.Time
	boots     int
	// calls counts Apply calls by kind and component when the scenario
	// draws at random: the draws are per server and per call, so the
	// order in which goroutines run never changes them.
	calls []callCount
	tasks int

	neverReady        bool
	updateFails       []string
	slow              []Fault
	hostDown          []span
	readOnly, unknown []condition
}

// NewFleet seeds the fleet from the plan's servers and applies the faults.
func NewFleet(p *plan.Plan, faults *Faults, clock Sleeper, seed uint64) *Fleet {
	f := &Fleet{clock: clock, seed: seed, servers: map[string]*server{}, bmcs: map[string]*bmc{}}
	if faults != nil {
		f.random = faults.Random
	}
	for i := range p.Servers {
		ps := &p.Servers[i]
		b := f.bmcs[ps.BMC]
		if b == nil {
			b = &bmc{url: ps.BMC}
			f.bmcs[ps.BMC] = b
		}
		s := &server{p: ps, bmc: b, changes: &f.changes, comps: ps.Observed.Components, power: ps.Observed.PowerState, health: ps.Observed.Health}
		for _, c := range s.comps {
			if _, ok := b.shared[c.ID]; c.Shared && !ok {
				if b.shared == nil {
					b.shared = map[string]string{}
				}
				b.shared[c.ID] = c.Version
			}
		}
		f.servers[ps.Address] = s
	}
	if faults == nil {
		return f
	}
	for _, ft := range faults.List {
		s := f.servers[ft.Server]
		if s == nil {
			continue
		}
		sp := span{from: ft.At}
		if ft.For > 0 {
			sp.to = ft.At.Add(ft.For)
		}
		switch ft.Kind {
		case FaultNeverReady:
			s.neverReady = true
		case FaultUpdateFails:
			s.updateFails = append(s.updateFails, ft.Component)
		case FaultSlow:
			s.slow = append(s.slow, ft)
		case FaultBMCBusy:
			s.bmc.busy = append(s.bmc.busy, sp)
		case FaultBMCDown:
			s.bmc.down = append(s.bmc.down, sp)
		case FaultHostDown:
			s.hostDown = append(s.hostDown, sp)
		case FaultReadOnlyFS:
			s.readOnly = append(s.readOnly, condition{ft.At, ft.For})
		case FaultUnknownState:
			s.unknown = append(s.unknown, condition{ft.At, ft.For})
		}
	}
	return f
}

// Describe implements providers.Provider.
func (f *Fleet) Describe(context.Context) (*providers.Description, providers.Diagnostics) {
	return &providers.Description{Name: "rehearsal", Version: "1", ProtocolVersion: providers.ProtocolVersion,
		Capabilities: []string{"simple_update", "power", "reimage", "tasks"}}, nil
}

// Configure implements providers.Provider.
func (f *Fleet) Configure(context.Context, *providers.ConfigureRequest) providers.Diagnostics {
	return nil
}

// Stop implements providers.Provider.
func (f *Fleet) Stop(context.Context) providers.Diagnostics { return nil }

// Task implements providers.Provider. A rehearsal never resumes a task
// (its journal starts empty and its process does not crash), so a task
// is always found finished.
func (f *Fleet) Task(_ context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	return &providers.TaskStatus{URI: req.TaskURI, State: providers.TaskGone}, nil
}

// Observe implements providers.Provider.
func (f *Fleet) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	for _, t := range req.Targets {
		s := f.servers[t.Name]
		if s == nil {
			if err := fn(&providers.Observation{Server: t.Name, Outcome: providers.OutcomeUnreachable,
				Diagnostics: providers.Errorf(t.Name, "Unknown server", "The rehearsal's fleet has no server "+t.Name+".")}); err != nil {
				return nil
			}
			continue
		}
		var obs *providers.Observation
		if err := f.gate(ctx, s); err != nil {
			obs = &providers.Observation{Server: t.Name, Outcome: providers.OutcomeUnreachable,
				Diagnostics: providers.Errorf(t.Name, "BMC unreachable", err.Error())}
		} else {
			f.mu.Lock()
			obs = f.observation(s, f.clock.Now())
			f.mu.Unlock()
		}
		if err := fn(obs); err != nil {
			return nil
		}
	}
	return nil
}

// gate is what a call to the server's BMC meets first: nothing, a 503
// spell (waited out within the provider's retry budget, else failed), or
// a BMC that does not answer.
func (f *Fleet) gate(ctx context.Context, s *server) error {
	now := f.clock.Now()
	if b := s.bmc; holding(b.down, now) {
		return fmt.Errorf("the BMC at %s does not answer (connection refused)", b.url)
	}
	for _, sp := range s.bmc.busy {
		if !sp.holds(now) {
			continue
		}
		if !sp.to.IsZero() && !sp.to.After(now.Add(retryBudget)) {
			if err := f.clock.Sleep(ctx, sp.to); err != nil {
				return err
			}
			return f.gate(ctx, s)
		}
		if err := f.clock.Sleep(ctx, now.Add(retryBudget)); err != nil {
			return err
		}
		return fmt.Errorf("the BMC at %s answered 503 Service Unavailable to every attempt for %s", s.bmc.url, retryBudget)
	}
	return nil
}

func holding(spans []span, t time.Time) bool {
	for _, sp := range spans {
		if sp.holds(t) {
			return true
		}
	}
	return false
}

// effective is the server's power and health at t, with its host
// conditions. f.mu is held.
func (s *server) effective(t time.Time) (power, health string) {
	power, health = s.power, s.health
	if holding(s.hostDown, t) {
		return providers.PowerOff, "Critical"
	}
	if power != providers.PowerOn {
		return power, health
	}
	if s.conditionHolds(s.unknown, t) {
		health = ""
	}
	if s.conditionHolds(s.readOnly, t) {
		health = "Critical"
	}
	return power, health
}

func (s *server) conditionHolds(cs []condition, t time.Time) bool {
	for _, c := range cs {
		at := c.at
		if at.IsZero() {
			if at = s.firstBoot; at.IsZero() {
				continue
			}
		}
		if !t.Before(at) && (c.d == 0 || t.Before(at.Add(c.d))) {
			return true
		}
	}
	return false
}

// callCount is how many Apply calls of a kind and component a server
// had (a few kinds and components each: a list, not a map per server).
type callCount struct {
	kind, component string
	n               int
}

// count counts one more call of kind and component and returns how many
// there were. f.mu is held.
func (s *server) count(kind, component string) int {
	for i := range s.calls {
		if c := &s.calls[i]; c.kind == kind && c.component == component {
			c.n++
			return c.n
		}
	}
	s.calls = append(s.calls, callCount{kind, component, 1})
	return 1
}

// components are the server's components now, a shared one at its BMC's
// version. f.mu is held.
func (s *server) components() []providers.Component {
	out := slices.Clone(s.comps)
	for i, c := range out {
		if c.Shared {
			out[i].Version = s.bmc.shared[c.ID]
		}
	}
	return out
}

// observation is what the redfish provider would report. The fingerprint
// is the plan's while the server is as planned (so apply's drift check
// passes), another one once anything differs. f.mu is held.
func (f *Fleet) observation(s *server, t time.Time) *providers.Observation {
	power, health := s.effective(t)
	comps := s.components()
	obs := &providers.Observation{Server: s.p.Address, Reachable: true, Outcome: providers.OutcomeObserved,
		PowerState: power, Health: health, Components: comps, System: s.p.Observed.System, Identity: s.p.Identity}
	same := power == s.p.Observed.PowerState && health == s.p.Observed.Health && len(comps) == len(s.p.Observed.Components)
	for i := 0; same && i < len(comps); i++ {
		same = comps[i].ID == s.p.Observed.Components[i].ID && comps[i].Version == s.p.Observed.Components[i].Version
	}
	if same {
		obs.Fingerprint = s.p.Fingerprint
	} else {
		obs.Fingerprint = fingerprint(s.p.Fingerprint, power, health, comps)
	}
	return obs
}

func fingerprint(base, power, health string, comps []providers.Component) string {
	pairs := make([]string, 0, len(comps))
	for _, c := range comps {
		pairs = append(pairs, c.ID+"\x00"+c.Version)
	}
	sort.Strings(pairs)
	h := sha256.New()
	h.Write([]byte(base + "\npower\x00" + power + "\nhealth\x00" + health + "\n" + strings.Join(pairs, "\n")))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Apply implements providers.Provider.
func (f *Fleet) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	s := f.servers[req.Target.Name]
	what := string(req.Step.Kind)
	if req.Step.Component != "" {
		what += " " + req.Step.Component
	}
	fail := func(err error) (*providers.ApplyResult, providers.Diagnostics) {
		return nil, providers.Errorf(req.Target.Name, "Step "+what+" failed", err.Error())
	}
	if s == nil {
		return fail(errors.New("the rehearsal's fleet has no such server"))
	}
	if err := f.gate(ctx, s); err != nil {
		return fail(err)
	}
	if fn == nil {
		fn = func(*providers.Progress) error { return nil }
	}
	var res *providers.ApplyResult
	var err error
	switch req.Step.Kind {
	case providers.StepShutdown:
		res, err = f.shutdown(ctx, s, req.Step)
	case providers.StepUpdate:
		res, err = f.update(ctx, s, req.Step, fn)
	case providers.StepReimage:
		res, err = f.boot(ctx, s, req.Step, "ForceRestart")
	case providers.StepReset:
		res, err = f.boot(ctx, s, req.Step, req.Step.ResetType)
	case providers.StepPowerOn:
		res, err = f.boot(ctx, s, req.Step, "On")
	case providers.StepWaitReady:
		res, err = f.waitReady(ctx, s, req.Step)
	default:
		err = fmt.Errorf("the rehearsal's fleet has no step %q", req.Step.Kind)
	}
	if err != nil {
		return res, providers.Errorf(req.Target.Name, "Step "+what+" failed", err.Error())
	}
	return res, nil
}

// call counts one Apply of kind (and component) on s and says how long it
// takes and whether it fails, from the plan's estimate and the faults.
func (f *Fleet) call(s *server, kind, component string) (time.Duration, bool) {
	n := 0
	if len(f.random.Slow) > 0 || len(f.random.Fail) > 0 {
		// Only random draws need the count: without them a fleet of
		// 100,000 servers keeps no list of calls.
		f.mu.Lock()
		n = s.count(kind, component)
		f.mu.Unlock()
	}
	d := estimate(s.p, kind, component)
	for _, sl := range s.slow {
		if slices.Contains(sl.Steps, kind) && (sl.Component == "" || sl.Component == component) {
			d = time.Duration(float64(d) * sl.Factor)
		}
	}
	if p := f.random.Slow[kind]; p > 0 && roll(f.seed, "slow", s.p.Address, kind, component, strconv.Itoa(n)) < p {
		d = time.Duration(float64(d) * f.random.Factor)
	}
	failed := false
	if kind == string(providers.StepUpdate) {
		for _, c := range s.updateFails {
			failed = failed || c == "" || c == component
		}
	}
	if p := f.random.Fail[kind]; p > 0 && kind != string(providers.StepWaitReady) && roll(f.seed, "fail", s.p.Address, kind, component, strconv.Itoa(n)) < p {
		failed = true
	}
	return d, failed
}

// estimate is how long the plan expects a step of kind (and component) of
// the server to take; what it has no step for takes the typical time.
func estimate(p *plan.Server, kind, component string) time.Duration {
	var found time.Duration
	ok := false
	for _, st := range p.Steps {
		if string(st.Kind) != kind {
			continue
		}
		if st.Component == component {
			return time.Duration(st.Estimate)
		}
		if !ok {
			found, ok = time.Duration(st.Estimate), true
		}
	}
	if ok {
		return found
	}
	switch kind {
	case "shutdown":
		return typicalShutdown
	case "reset", "power_on":
		return typicalReset
	case "reimage":
		return typicalReimage
	case "wait_ready":
		return typicalWaitReady
	case "update":
		return typicalUpdate
	}
	return typicalHook
}

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
	var next time.Time
	consider := func(x time.Time) {
		if x.After(t) && (next.IsZero() || x.Before(next)) {
			next = x
		}
	}
	for _, l := range [][]span{s.hostDown, s.bmc.busy, s.bmc.down} {
		for _, sp := range l {
			consider(sp.from)
			if !sp.to.IsZero() {
				consider(sp.to)
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
			consider(at)
			if c.d > 0 {
				consider(at.Add(c.d))
			}
		}
	}
	return next
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Hooks returns the fleet's hook runner: a rehearsal runs no command; a
// configured drain, uncordon or takeover hook takes the plan's estimate
// of its step (or a minute) and succeeds, unless a random fault fails it.
func (f *Fleet) Hooks() executor.HookRunner { return hookRunner{f} }

type hookRunner struct{ f *Fleet }

func (h hookRunner) Run(ctx context.Context, hk executor.Hook) error {
	addr := ""
	for _, kv := range hk.Env {
		if v, ok := strings.CutPrefix(kv, "RACKFORM_ADDRESS="); ok {
			addr = v
		}
	}
	f := h.f
	d, failed := typicalHook, false
	if s := f.servers[addr]; s != nil {
		d, failed = f.call(s, hk.Name, "")
	}
	if err := f.clock.Sleep(ctx, f.clock.Now().Add(d)); err != nil {
		return fmt.Errorf("%s hook did not finish: %w", hk.Name, err)
	}
	if failed {
		return fmt.Errorf("%s hook failed: exit status 1 (a random fault of the scenario)", hk.Name)
	}
	return nil
}

// roll is a number in [0,1) drawn from the seed and parts: the same seed
// and parts give the same number, whatever else the rehearsal drew.
func roll(seed uint64, parts ...string) float64 {
	h := sha256.New()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	var x uint64
	for _, c := range sum[:8] {
		x = x<<8 | uint64(c)
	}
	return float64(x>>11) / (1 << 53)
}
