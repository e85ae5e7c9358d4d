// Package providertest is the conformance suite every rackform provider must
// pass, run in-process or through the plugin protocol, and Fake, an
// in-memory provider for tests of the code that drives providers.
package providertest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

// Fixture is what the suite needs to know about a provider and the fleet it
// runs against.
type Fixture struct {
	// Name is the name Describe must report; "" accepts any non-empty name.
	Name string
	// New returns a fresh, unconfigured provider. The suite calls it more
	// than once; New registers its own cleanup with t.Cleanup.
	New func(t *testing.T) providers.Provider
	// Config is a valid provider configuration (a JSON object).
	Config json.RawMessage
	// InvalidConfig is a configuration Configure must reject.
	InvalidConfig json.RawMessage
	// Servers are reachable, with component versions known in advance.
	Servers []Server
	// Unreachable is a target nothing answers at.
	Unreachable providers.Target
	// WrongCredentials, when its Name is set, is a reachable BMC given
	// credentials it refuses: Observe must say credentials_refused.
	WrongCredentials providers.Target
	// Update is applied to one of Servers.
	Update Update
	// Secrets must never appear in a diagnostic or an observation (the
	// passwords in Config and in target credentials).
	Secrets []string
	// Timeout bounds each call (default 60s); CancelWithin is how soon a
	// cancelled Observe must return (default 5s).
	Timeout      time.Duration
	CancelWithin time.Duration
}

// Server is a reachable target and what it is known to report.
type Server struct {
	Target   providers.Target
	Versions []providers.Expectation
}

// Update is a change the suite applies and then checks.
type Update struct {
	// Server is the index into Fixture.Servers of the server to update.
	Server int
	// Steps run in order, typically update, reset, wait_ready.
	Steps []providers.Step
	// After is what the server reports once Steps are done.
	After providers.Expectation
}

// Run checks that the provider f.New returns behaves as the contract in
// package providers says.
func Run(t *testing.T, f Fixture) {
	t.Helper()
	if f.New == nil || len(f.Servers) == 0 || f.Unreachable.Name == "" || len(f.Update.Steps) == 0 ||
		f.Update.Server < 0 || f.Update.Server >= len(f.Servers) {
		t.Fatal("providertest: the fixture needs New, Servers, Unreachable and an Update of one of Servers")
	}
	if f.Timeout == 0 {
		f.Timeout = 60 * time.Second
	}
	if f.CancelWithin == 0 {
		f.CancelWithin = 5 * time.Second
	}
	s := &suite{f: f}

	t.Run("describe", s.describe)
	t.Run("configure_rejects_invalid", s.configureInvalid)

	s.p = f.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), f.Timeout)
	diags := s.p.Configure(ctx, &providers.ConfigureRequest{Config: f.Config})
	cancel()
	s.noSecrets(t, "Configure diagnostics", diags)
	if diags.HasErrors() {
		t.Fatalf("Configure with the fixture's valid config: %v", diags.Err())
	}

	t.Run("observe", s.observe)
	if f.WrongCredentials.Name != "" {
		t.Run("credentials_refused", s.wrongCredentials)
	}
	t.Run("fingerprint_stable", s.fingerprintStable)
	t.Run("apply", s.apply)
	t.Run("fingerprint_changes", s.fingerprintChanges)
	t.Run("task", s.task)
	t.Run("observe_cancel", s.observeCancel)
	t.Run("stop", s.stop)
}

type suite struct {
	f Fixture
	p providers.Provider
	// first is the first Observe's result by server name; taskURI is a
	// task the update reported; applied is set once the update is done.
	first   map[string]*providers.Observation
	taskURI string
	target  providers.Target
	applied bool
}

func (s *suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), s.f.Timeout)
	t.Cleanup(cancel)
	return ctx
}

var hclTypes = []string{"string", "number", "bool", "list(string)", "map(string)"}

func (s *suite) describe(t *testing.T) {
	p := s.f.New(t)
	d, diags := p.Describe(s.ctx(t))
	if diags.HasErrors() || d == nil {
		t.Fatalf("Describe: %v (description %v)", diags.Err(), d)
	}
	if d.Name == "" || (s.f.Name != "" && d.Name != s.f.Name) {
		t.Errorf("Describe name = %q, want %q (or any non-empty name)", d.Name, s.f.Name)
	}
	if d.ProtocolVersion != providers.ProtocolVersion {
		t.Errorf("Describe protocol version = %d, want %d", d.ProtocolVersion, providers.ProtocolVersion)
	}
	if len(d.Schema) == 0 {
		t.Errorf("Describe has no configuration schema")
	}
	attrs := map[string]providers.Attribute{}
	for _, a := range d.Schema {
		if a.Name == "" {
			t.Errorf("schema attribute without a name: %+v", a)
		}
		if _, dup := attrs[a.Name]; dup {
			t.Errorf("schema attribute %q declared twice", a.Name)
		}
		if !slices.Contains(hclTypes, a.Type) {
			t.Errorf("schema attribute %q has type %q, want one of %v", a.Name, a.Type, hclTypes)
		}
		attrs[a.Name] = a
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(s.f.Config, &cfg); err != nil {
		t.Fatalf("the fixture's Config is not a JSON object: %v", err)
	}
	for k := range cfg {
		if _, ok := attrs[k]; !ok {
			t.Errorf("the fixture's Config sets %q, which the schema does not declare", k)
		}
	}
	for _, a := range d.Schema {
		if _, ok := cfg[a.Name]; a.Required && !ok {
			t.Errorf("schema attribute %q is required but the fixture's valid Config omits it", a.Name)
		}
	}
}

func (s *suite) configureInvalid(t *testing.T) {
	p := s.f.New(t)
	diags := p.Configure(s.ctx(t), &providers.ConfigureRequest{Config: s.f.InvalidConfig})
	if !diags.HasErrors() {
		t.Fatalf("Configure accepted an invalid config (%s); want error diagnostics", s.f.InvalidConfig)
	}
	for _, d := range diags {
		if d.Summary == "" {
			t.Errorf("diagnostic without a summary: %+v", d)
		}
	}
	s.noSecrets(t, "Configure diagnostics", diags)
}

// observeAll runs Observe and returns the observations by server, failing
// on duplicates and on callbacks made after Observe returned.
func (s *suite) observeAll(t *testing.T, targets []providers.Target) (map[string]*providers.Observation, providers.Diagnostics) {
	t.Helper()
	var mu sync.Mutex
	var returned atomic.Bool
	got := map[string]*providers.Observation{}
	diags := s.p.Observe(s.ctx(t), &providers.ObserveRequest{Targets: targets}, func(o *providers.Observation) error {
		if returned.Load() {
			t.Errorf("Observe called its callback after it returned (server %q)", o.Server)
		}
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[o.Server]; dup {
			t.Errorf("Observe reported server %q twice", o.Server)
		}
		got[o.Server] = o
		return nil
	})
	returned.Store(true)
	s.noSecrets(t, "Observe diagnostics", diags)
	for _, o := range got {
		s.noSecrets(t, "observation of "+o.Server, o)
	}
	return got, diags
}

func (s *suite) targets() []providers.Target {
	var ts []providers.Target
	for _, sv := range s.f.Servers {
		ts = append(ts, sv.Target)
	}
	return append(ts, s.f.Unreachable)
}

func (s *suite) observe(t *testing.T) {
	got, _ := s.observeAll(t, s.targets())
	if len(got) != len(s.f.Servers)+1 {
		t.Errorf("Observe reported %d servers, want %d (one per target)", len(got), len(s.f.Servers)+1)
	}
	for _, sv := range s.f.Servers {
		o := got[sv.Target.Name]
		if o == nil {
			t.Errorf("Observe did not report reachable server %q", sv.Target.Name)
			continue
		}
		if !o.Reachable || o.Diagnostics.HasErrors() {
			t.Errorf("server %q: reachable = %v, diagnostics %v; want reachable without errors", o.Server, o.Reachable, o.Diagnostics.Err())
		}
		if o.EffectiveOutcome() != providers.OutcomeObserved {
			t.Errorf("server %q: outcome %q, want observed", o.Server, o.Outcome)
		}
		checkUpdates(t, sv.Target, o)
		checkStates(t, o)
		if o.Fingerprint == "" {
			t.Errorf("server %q has no fingerprint", o.Server)
		}
		for _, want := range sv.Versions {
			checkVersion(t, o, want)
		}
	}
	u := got[s.f.Unreachable.Name]
	switch {
	case u == nil:
		t.Errorf("Observe dropped unreachable server %q; it must be reported by name", s.f.Unreachable.Name)
	case u.Reachable:
		t.Errorf("unreachable server %q reported reachable", u.Server)
	case u.EffectiveOutcome() != providers.OutcomeUnreachable:
		t.Errorf("unreachable server %q: outcome %q, want unreachable", u.Server, u.Outcome)
	case !u.Diagnostics.HasErrors():
		t.Errorf("unreachable server %q has no error diagnostic", u.Server)
	default:
		named := false
		for _, d := range u.Diagnostics {
			named = named || d.Server == u.Server
		}
		if !named {
			t.Errorf("unreachable server %q: no diagnostic names it: %v", u.Server, u.Diagnostics)
		}
	}
	s.first = got
}

// checkUpdates: every update intent of target is answered, in order, by
// a plan naming its component with either a method or a problem.
func checkUpdates(t *testing.T, target providers.Target, o *providers.Observation) {
	t.Helper()
	if len(o.Updates) != len(target.Updates) {
		t.Errorf("server %q: %d update plans for %d intents", o.Server, len(o.Updates), len(target.Updates))
		return
	}
	for i, in := range target.Updates {
		u := o.Updates[i]
		if u.Component != in.Component || (u.Method == "") == (u.Problem == "") {
			t.Errorf("server %q: plan %+v for intent %q: want the component echoed and exactly one of method or problem", o.Server, u, in.Component)
		}
	}
}

// wrongCredentials: a BMC refusing the credentials is reported as such,
// with a diagnostic naming the server.
func (s *suite) wrongCredentials(t *testing.T) {
	got, _ := s.observeAll(t, []providers.Target{s.f.WrongCredentials})
	o := got[s.f.WrongCredentials.Name]
	switch {
	case o == nil:
		t.Fatalf("Observe dropped %q", s.f.WrongCredentials.Name)
	case o.Reachable || o.EffectiveOutcome() != providers.OutcomeCredentialsRefused:
		t.Errorf("server %q: reachable %v, outcome %q; want credentials_refused", o.Server, o.Reachable, o.Outcome)
	case !o.Diagnostics.HasErrors() || o.Diagnostics[0].Server != o.Server:
		t.Errorf("server %q: diagnostics %v; want an error naming it", o.Server, o.Diagnostics)
	}
	s.noSecrets(t, "wrong credentials observation", o)
}

// checkVersion: every active member want.Match selects reports exactly
// want.Version (a rule means all of them).
func checkVersion(t *testing.T, o *providers.Observation, want providers.Expectation) {
	t.Helper()
	at, why, err := want.Match.AtTarget(version.Target{Version: want.Target.Version}, o.Components)
	if err != nil || !at {
		t.Errorf("server %q component %s (%+v): want %q, but %s%v; it reports %+v", o.Server, want.Component, want.Match, want.Target.Version, why, err, o.Components)
	}
}

// checkStates: a member's state is one the contract names ("" reads as
// active), and so is how the BMC was authenticated.
func checkStates(t *testing.T, o *providers.Observation) {
	t.Helper()
	for _, c := range o.Components {
		switch c.State {
		case "", providers.StateActive, providers.StatePrevious, providers.StatePending, providers.StateAvailable, providers.StateStandby, providers.StateAbsent:
		default:
			t.Errorf("server %q member %s: state %q is not one the contract names", o.Server, c.ID, c.State)
		}
	}
	switch o.Auth {
	case "", providers.AuthSession, providers.AuthBasic:
	default:
		t.Errorf("server %q: auth %q is not one the contract names", o.Server, o.Auth)
	}
}

func (s *suite) fingerprintStable(t *testing.T) {
	if s.first == nil {
		t.Skip("observe failed")
	}
	s.compareFingerprints(t, "")
}

// compareFingerprints observes every server again and compares each
// fingerprint with the first observation's: the server updated ("" for
// none) must have changed, every other must not have.
func (s *suite) compareFingerprints(t *testing.T, updated string) {
	now, _ := s.observeAll(t, s.targets())
	for _, sv := range s.f.Servers {
		name := sv.Target.Name
		before, after := s.first[name], now[name]
		if before == nil || after == nil {
			t.Errorf("server %q missing from an observation", name)
			continue
		}
		changed := before.Fingerprint != after.Fingerprint
		switch {
		case name == updated && !changed:
			t.Errorf("server %q: fingerprint unchanged after a version changed (%s)", name, after.Fingerprint)
		case name != updated && changed && updated == "":
			t.Errorf("server %q: fingerprint changed between two observations of the same state: %s then %s", name, before.Fingerprint, after.Fingerprint)
		case name != updated && changed:
			t.Errorf("server %q: fingerprint changed although nothing was done to it", name)
		}
	}
}

func (s *suite) apply(t *testing.T) {
	u := s.f.Update
	s.target = s.f.Servers[u.Server].Target
	for _, step := range u.Steps {
		var progress []providers.Progress
		res, diags := s.p.Apply(s.ctx(t), &providers.ApplyRequest{Target: s.target, Step: step}, func(p *providers.Progress) error {
			progress = append(progress, *p)
			return nil
		})
		s.noSecrets(t, "Apply diagnostics", diags)
		if diags.HasErrors() {
			t.Fatalf("Apply %s on %s: %v", step.Kind, s.target.Name, diags.Err())
		}
		for _, p := range progress {
			if p.Percent < -1 || p.Percent > 100 {
				t.Errorf("Apply %s: progress percent %d out of range -1..100", step.Kind, p.Percent)
			}
			if p.TaskURI != "" && s.taskURI == "" {
				s.taskURI = p.TaskURI
			}
		}
		if res != nil && res.TaskURI != "" {
			reported := slices.ContainsFunc(progress, func(p providers.Progress) bool { return p.TaskURI == res.TaskURI })
			if !reported {
				t.Errorf("Apply %s: result has task %s, but no progress reported it before the step completed (the executor must journal it first)", step.Kind, res.TaskURI)
			}
		}
	}
	got, _ := s.observeAll(t, []providers.Target{s.target})
	o := got[s.target.Name]
	if o == nil {
		t.Fatalf("Observe after the update did not report %q", s.target.Name)
	}
	checkVersion(t, o, u.After)
	s.applied = true
}

func (s *suite) fingerprintChanges(t *testing.T) {
	if s.first == nil || !s.applied {
		t.Skip("observe or apply failed")
	}
	s.compareFingerprints(t, s.target.Name)
}

func (s *suite) task(t *testing.T) {
	if s.taskURI == "" {
		t.Skip("the provider reported no BMC task during the update")
	}
	st, diags := s.p.Task(s.ctx(t), &providers.TaskRequest{Target: s.target, TaskURI: s.taskURI})
	s.noSecrets(t, "Task diagnostics", diags)
	if diags.HasErrors() || st == nil {
		t.Fatalf("Task %s: %v (status %v)", s.taskURI, diags.Err(), st)
	}
	if !st.Terminal() {
		t.Errorf("Task %s after the step completed: state %q, want a terminal state or %q", s.taskURI, st.State, providers.TaskGone)
	}
	if st.State == providers.TaskException || st.State == providers.TaskKilled {
		t.Errorf("Task %s of a successful update: state %q", s.taskURI, st.State)
	}
}

// observeCancel cancels an Observe of many targets as soon as the first
// result arrives: it must return within CancelWithin and call back no more.
func (s *suite) observeCancel(t *testing.T) {
	var targets []providers.Target
	for i := range 100 {
		for _, sv := range s.f.Servers {
			tg := sv.Target
			tg.Name = fmt.Sprintf("%s#%d", tg.Name, i)
			targets = append(targets, tg)
		}
	}
	ctx, cancel := context.WithCancel(s.ctx(t))
	defer cancel()
	var returned atomic.Bool
	var calls atomic.Int64
	var cancelledAt atomic.Int64
	start := time.Now()
	done := make(chan providers.Diagnostics, 1)
	go func() {
		diags := s.p.Observe(ctx, &providers.ObserveRequest{Targets: targets}, func(o *providers.Observation) error {
			if returned.Load() {
				t.Errorf("Observe called back after it returned (server %q)", o.Server)
			}
			if calls.Add(1) == 1 {
				cancelledAt.Store(int64(time.Since(start)))
				cancel()
			}
			return nil
		})
		returned.Store(true)
		done <- diags
	}()
	select {
	case <-done:
		took := time.Since(start) - time.Duration(cancelledAt.Load())
		if calls.Load() > 0 && took > s.f.CancelWithin {
			t.Errorf("Observe returned %v after cancellation, want within %v", took, s.f.CancelWithin)
		}
	case <-time.After(s.f.CancelWithin + s.f.Timeout):
		t.Fatalf("Observe did not return after cancellation")
	}
	if calls.Load() == 0 {
		t.Errorf("Observe of %d targets returned without any result", len(targets))
	}
}

func (s *suite) stop(t *testing.T) {
	diags := s.p.Stop(s.ctx(t))
	if diags.HasErrors() {
		t.Errorf("Stop: %v", diags.Err())
	}
}

// noSecrets fails when any of the fixture's secrets appears in v's JSON or
// text form.
func (s *suite) noSecrets(t *testing.T, where string, v any) {
	t.Helper()
	if len(s.f.Secrets) == 0 {
		return
	}
	b, _ := json.Marshal(v)
	text := string(b) + fmt.Sprint(v)
	for _, secret := range s.f.Secrets {
		if secret != "" && strings.Contains(text, secret) {
			t.Errorf("%s reveal a secret", where)
		}
	}
}
