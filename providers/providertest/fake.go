package providertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
)

// Fake is an in-memory provider: a test double for the code that drives
// providers (the plugin shims, the planner, the executor), and the reference
// the conformance suite is checked against. Its servers are keyed by
// endpoint; an endpoint it does not know, or one marked Down, is
// unreachable. An update is staged and takes effect at the next reset, as on
// a real BMC with OperationApplyTime OnReset. A match rule means every active
// member it selects: an update stages the image on each (or on those its
// Targets name), and wait_ready checks each (providers.Match.AtTarget).
type Fake struct {
	mu         sync.Mutex
	servers    map[string]*fakeServer
	tasks      map[string]*providers.TaskStatus
	nextTask   int
	configured bool
	stopped    bool
}

// FakeServer is one server of a Fake.
type FakeServer struct {
	Endpoint   string
	Components []providers.Component
	// Down makes the server unreachable.
	Down bool
	// MemberTargets makes SimpleUpdate take Targets, one URI per member
	// (FirmwareInventory/<id>), at most TargetsPerRequest in one request
	// (0: any number); without it the update names no Targets.
	MemberTargets     bool
	TargetsPerRequest int
	// ApplyTimes are the OperationApplyTime values the BMC lists; nil sends
	// the intent's, as BMCs that do not say are treated by older plans.
	ApplyTimes []string
	// Basic makes the BMC refuse sessions and take Basic auth.
	Basic bool
}

type fakeServer struct {
	FakeServer
	power   string
	pending map[string]string // component ID → staged version
}

// NewFake returns a Fake serving servers.
func NewFake(servers ...FakeServer) *Fake {
	f := &Fake{servers: map[string]*fakeServer{}, tasks: map[string]*providers.TaskStatus{}}
	for _, s := range servers {
		s.Components = append([]providers.Component(nil), s.Components...)
		f.servers[s.Endpoint] = &fakeServer{FakeServer: s, power: providers.PowerOn, pending: map[string]string{}}
	}
	return f
}

var _ providers.Provider = (*Fake)(nil)

// Describe implements providers.Provider.
func (f *Fake) Describe(context.Context) (*providers.Description, providers.Diagnostics) {
	return &providers.Description{
		Name:            "fake",
		Version:         "0.0.0",
		ProtocolVersion: providers.ProtocolVersion,
		Schema: []providers.Attribute{
			{Name: "username", Type: "string", Required: true, Description: "BMC user."},
			{Name: "password", Type: "string", Sensitive: true, Description: "BMC password."},
			{Name: "concurrency", Type: "number", Description: "Servers observed at once."},
		},
		Capabilities: []string{"simple_update", "power", "tasks"},
	}, nil
}

// Configure implements providers.Provider.
func (f *Fake) Configure(_ context.Context, req *providers.ConfigureRequest) providers.Diagnostics {
	var cfg struct {
		Username    *string `json:"username"`
		Password    string  `json:"password"`
		Concurrency int     `json:"concurrency"`
	}
	dec := json.NewDecoder(bytes.NewReader(req.Config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		// The decoder's message names the field, never its value.
		return providers.Errorf("", "Invalid provider configuration", fmt.Sprintf("The fake provider's configuration does not decode: %v.", err))
	}
	if cfg.Username == nil || *cfg.Username == "" {
		return providers.Errorf("", "Missing username", `The fake provider needs "username".`)
	}
	f.mu.Lock()
	f.configured = true
	f.mu.Unlock()
	return nil
}

// Observe implements providers.Provider, through ObserveEach.
func (f *Fake) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	if d := f.ready(); d != nil {
		return d
	}
	return ObserveEach(ctx, req, 8, func(_ context.Context, t providers.Target) *providers.Observation { return f.observe(t) }, fn)
}

// ObserveEach is a fake's Observe: it reads up to req.Concurrency servers
// at once (workers when the request sets none), observe reading one, and
// calls fn from one goroutine at a time, as the plugin client and the
// redfish provider do. A callback error stops the feed like a cancellation
// does. observe returns nil for a server it was cut off from (ctx ended):
// nothing is sent for it.
func ObserveEach(ctx context.Context, req *providers.ObserveRequest, workers int,
	observe func(context.Context, providers.Target) *providers.Observation, fn func(*providers.Observation) error) providers.Diagnostics {
	if req.Concurrency > 0 {
		workers = req.Concurrency
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	jobs := make(chan providers.Target)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var diags providers.Diagnostics
	for range min(workers, max(len(req.Targets), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				o := observe(ctx, t)
				if o == nil {
					continue
				}
				mu.Lock()
				if err := fn(o); err != nil {
					diags = append(diags, providers.Errorf("", "Observe stopped", err.Error())...)
					stop()
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, t := range req.Targets {
		select {
		case jobs <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if len(diags) == 0 && ctx.Err() != nil {
		diags = providers.Errorf("", "Observe cancelled", ctx.Err().Error()+".")
	}
	return diags
}

func (f *Fake) ready() providers.Diagnostics {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.stopped:
		return providers.Errorf("", "Provider stopped", "The fake provider was stopped.")
	case !f.configured:
		return providers.Errorf("", "Provider not configured", "Configure the fake provider first.")
	}
	return nil
}

func (f *Fake) observe(t providers.Target) *providers.Observation {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.servers[t.Endpoint]
	if !ok || s.Down {
		return &providers.Observation{
			Server:      t.Name,
			Outcome:     providers.OutcomeUnreachable,
			Diagnostics: providers.Errorf(t.Name, "BMC unreachable", fmt.Sprintf("Cannot connect to %s.", t.Endpoint)),
		}
	}
	o := &providers.Observation{
		Server:     t.Name,
		Reachable:  true,
		Outcome:    providers.OutcomeObserved,
		PowerState: s.power,
		Health:     "OK",
		Components: append([]providers.Component(nil), s.Components...),
		Auth:       providers.AuthSession,
	}
	if s.Basic {
		o.Auth = providers.AuthBasic
	}
	o.Fingerprint = fingerprint(o)
	// Every update is deliverable by SimpleUpdate (or the override) to the
	// active members the rule selects, unless there are none or one is
	// not updateable.
	for _, in := range t.Updates {
		plan := providers.UpdatePlan{Component: in.Component, Method: providers.MethodSimpleUpdate, ApplyTime: in.ApplyTime, ApplyTimeFrom: "the fake BMC takes any apply time"}
		if in.Method != "" && in.Method != "auto" {
			plan.Method = in.Method
		}
		if s.ApplyTimes != nil && !slices.Contains(s.ApplyTimes, in.ApplyTime) {
			plan.ApplyTime, plan.ApplyTimeFrom = "", "not sent: the fake BMC lists "+strings.Join(s.ApplyTimes, ", ")
		}
		active := in.Match.Active(o.Components)
		for _, c := range active {
			plan.Members = append(plan.Members, c.ID)
			if s.MemberTargets {
				plan.Targets = append(plan.Targets, memberURI(c.ID))
			}
			if !c.Updateable && plan.Problem == "" {
				plan.Problem = c.ID + " is not updateable on this BMC"
			}
		}
		plan.TargetsPerRequest = s.TargetsPerRequest
		if len(active) == 0 {
			plan.Problem = "no active component matches on this server"
		}
		if plan.Problem != "" {
			plan = providers.UpdatePlan{Component: in.Component, Problem: plan.Problem}
		}
		o.Updates = append(o.Updates, plan)
	}
	return o
}

// memberURI is the Targets URI of inventory member id.
func memberURI(id string) string { return "/redfish/v1/UpdateService/FirmwareInventory/" + id }

func fingerprint(o *providers.Observation) string {
	cs := append([]providers.Component(nil), o.Components...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", o.PowerState, o.Health)
	for _, c := range cs {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", c.ID, c.SoftwareID, c.Version)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Apply implements providers.Provider.
func (f *Fake) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	if d := f.ready(); d != nil {
		return nil, d
	}
	name := req.Target.Name
	f.mu.Lock()
	s, ok := f.servers[req.Target.Endpoint]
	f.mu.Unlock()
	if !ok || s.Down {
		return nil, providers.Errorf(name, "BMC unreachable", fmt.Sprintf("Cannot connect to %s.", req.Target.Endpoint))
	}
	if err := ctx.Err(); err != nil {
		return nil, providers.Errorf(name, "Step cancelled", err.Error()+".")
	}
	step := req.Step
	switch step.Kind {
	case providers.StepUpdate:
		f.mu.Lock()
		var ids []string
		for _, c := range step.Match.Active(s.Components) {
			if len(step.Targets) == 0 || slices.Contains(step.Targets, memberURI(c.ID)) {
				ids = append(ids, c.ID)
			}
		}
		if len(ids) == 0 {
			f.mu.Unlock()
			return nil, providers.Errorf(name, "No such component", fmt.Sprintf("No active component matches %q on %s.", step.Component, name))
		}
		f.nextTask++
		uri := fmt.Sprintf("/redfish/v1/TaskService/Tasks/%d", f.nextTask)
		task := &providers.TaskStatus{URI: uri, State: providers.TaskRunning}
		f.tasks[uri] = task
		f.mu.Unlock()
		// The task URI is reported before the work, as the contract requires.
		for _, pct := range []int{0, 50, 100} {
			if err := fn(&providers.Progress{Message: "flashing " + strings.Join(ids, ", "), Percent: pct, TaskURI: uri}); err != nil {
				return nil, providers.Errorf(name, "Step stopped", err.Error()+".")
			}
		}
		f.mu.Lock()
		for _, id := range ids {
			s.pending[id] = step.Target.Version
		}
		task.State, task.Percent = providers.TaskCompleted, 100
		f.mu.Unlock()
		return &providers.ApplyResult{TaskURI: uri, Message: "staged " + step.Target.Version + "; takes effect at the next reset"}, nil
	case providers.StepReset, providers.StepPowerOn:
		f.mu.Lock()
		for i := range s.Components {
			if v, ok := s.pending[s.Components[i].ID]; ok {
				s.Components[i].Version = v
			}
		}
		clear(s.pending)
		s.power = providers.PowerOn
		f.mu.Unlock()
		return &providers.ApplyResult{Message: "reset"}, nil
	case providers.StepShutdown:
		f.mu.Lock()
		s.power = providers.PowerOff
		f.mu.Unlock()
		return &providers.ApplyResult{Message: "off"}, nil
	case providers.StepWaitReady:
		o := f.observe(req.Target)
		for _, e := range step.Expect {
			at, why, err := e.Match.AtTarget(e.Target, o.Components)
			if err != nil {
				why = err.Error()
			}
			if !at {
				return nil, providers.Errorf(name, "Not at target version", fmt.Sprintf("%s is not at %s: %s.", e.Component, e.Target.Version, why))
			}
		}
		return &providers.ApplyResult{Message: "ready", Observation: o}, nil
	}
	return nil, providers.Errorf(name, "Unsupported step", fmt.Sprintf("The fake provider cannot %q.", step.Kind))
}

// Task implements providers.Provider. A task it does not know is Gone, as
// on a BMC that deleted a finished task.
func (f *Fake) Task(_ context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[req.TaskURI]
	if !ok {
		return &providers.TaskStatus{URI: req.TaskURI, State: providers.TaskGone}, nil
	}
	st := *t
	return &st, nil
}

// Stop implements providers.Provider.
func (f *Fake) Stop(context.Context) providers.Diagnostics {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	return nil
}

// FakeFleet is the fleet FakeFixture expects a Fake to serve.
func FakeFleet() []FakeServer {
	return []FakeServer{
		{Endpoint: "https://127.1.0.1:8443", Components: []providers.Component{
			{ID: "BMC", Name: "BMC Firmware", SoftwareID: "bmc", Version: "1.10", Updateable: true},
			{ID: "BIOS", Name: "System ROM", SoftwareID: "bios", Version: "2.0.1", Updateable: true},
		}},
		{Endpoint: "https://127.1.0.2:8443", Components: []providers.Component{
			{ID: "BMC", Name: "BMC Firmware", SoftwareID: "bmc", Version: "1.10", Updateable: true},
			{ID: "BIOS", Name: "System ROM", SoftwareID: "bios", Version: "2.0.1", Updateable: true},
		}},
	}
}

// FakeFixture is the conformance fixture for a Fake serving FakeFleet.
// newProvider returns the provider under test: the Fake itself, or a client
// of it through the plugin protocol.
func FakeFixture(newProvider func(t *testing.T) providers.Provider) Fixture {
	bios := providers.Match{ID: "BIOS"}
	return Fixture{
		Name:          "fake",
		New:           newProvider,
		Config:        json.RawMessage(`{"username":"admin","password":"s3cret-pw"}`),
		InvalidConfig: json.RawMessage(`{"user":"admin","password":"s3cret-pw"}`),
		Servers: []Server{
			{Target: providers.Target{Name: "r01-c01", Endpoint: "https://127.1.0.1:8443",
				Updates: []providers.UpdateIntent{{Component: "bios", Match: bios, ImageURI: "http://127.0.0.1/bios.bin"}}},
				Versions: []providers.Expectation{{Component: "bios", Match: bios, Target: version.Target{Version: "2.0.1"}}}},
			{Target: providers.Target{Name: "r01-c02", Endpoint: "https://127.1.0.2:8443",
				Credentials: &providers.Credentials{Username: "root", Password: "target-pw"}},
				Versions: []providers.Expectation{{Component: "bmc", Match: providers.Match{SoftwareID: "bmc"}, Target: version.Target{Version: "1.10"}}}},
		},
		Unreachable: providers.Target{Name: "r01-c03", Endpoint: "https://127.1.0.3:8443"},
		Update: Update{
			Server: 0,
			Steps: []providers.Step{
				{Kind: providers.StepUpdate, Component: "bios", Match: bios, Target: version.Target{Version: "2.1.0"}, ImageURI: "http://127.0.0.1/bios.bin", ApplyTime: "OnReset"},
				{Kind: providers.StepReset, ResetType: "GracefulRestart"},
				{Kind: providers.StepWaitReady, Expect: []providers.Expectation{{Component: "bios", Match: bios, Target: version.Target{Version: "2.1.0"}}}},
			},
			After: providers.Expectation{Component: "bios", Match: bios, Target: version.Target{Version: "2.1.0"}},
		},
		Secrets: []string{"s3cret-pw", "target-pw"},
	}
}
