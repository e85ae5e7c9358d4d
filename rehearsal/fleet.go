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
	"github.com/rackform/rackform/internal/vclock"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// How long what the plan has no step for takes (a remediation reboot, a
// skipped server's power on): the plan's typical durations (plan.Typical*),
// and a minute for a hook.
const (
	typicalHook = time.Minute
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
	clock  vclock.Sleeper
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
func NewFleet(p *plan.Plan, faults *Faults, clock vclock.Sleeper, seed uint64) *Fleet {
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
	return slices.ContainsFunc(spans, func(sp span) bool { return sp.holds(t) })
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
		return plan.TypicalShutdown
	case "reset", "power_on":
		return plan.TypicalReset
	case "reimage":
		return plan.TypicalReimage
	case "wait_ready":
		return plan.TypicalWaitReady
	case "update":
		return plan.TypicalFirmwareUpdate
	}
	return typicalHook
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
