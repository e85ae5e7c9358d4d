package executortest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rackform/rackform/providers"
)

// Script says how one fake server behaves. The zero Script succeeds.
type Script struct {
	// FailApply fails the n-th Apply call on this server (1-based).
	FailApply int
	// FailKind fails every Apply of this step kind.
	FailKind providers.StepKind
	// HangApply blocks the n-th Apply call until Release or ctx is done.
	HangApply int
	// HangObserve blocks the n-th Observe of this server (1-based) until
	// Release or ctx is done, as a BMC that takes connections and never
	// answers; it then observes the server as it is by then.
	HangObserve int
	// Drift makes the server report a changed BMC version at observe time.
	Drift bool
	// AtTarget makes the server already report every target version.
	AtTarget bool
	// Unreachable makes the BMC unreachable.
	Unreachable bool
	// WaitReadyFails fails that many wait_ready calls.
	WaitReadyFails int
	// Health is the health the BMC reports ("" reads OK). HealthAfter,
	// when set, is what it reports from the first wait_ready on (the
	// firmware fixed the fault, or did not). wait_ready fails while the
	// health is not ready as providers.ReadyHealth says.
	Health, HealthAfter string
	// TaskState is what Task returns (default Completed).
	TaskState string
	// Staged makes updates and reimages invisible to Observe until the next
	// wait_ready (an OnReset flash shows only after the reset).
	Staged bool
	// Identity is who the BMC says the server is.
	Identity providers.Identity
	// ReportPower, when set, is the power state the ApplyResult of a
	// power step reports (as a BMC that did not do what was asked).
	ReportPower string
	// UpdateNotTaken makes the first n updates on this server not take,
	// as when the BMC restarts during the flash: each is accepted and
	// reports a task, which then vanishes (Apply returns TaskState Gone,
	// Task answers Gone), and the version does not change.
	UpdateNotTaken int
	// NotTakenOf, when set, limits UpdateNotTaken to the updates of this
	// component ID (the BMC restarts while its own firmware is flashed).
	NotTakenOf string
	// RestartLosesStaged, with Staged and UpdateNotTaken, makes the BMC
	// restart that loses an update also discard the images it had staged
	// for the next reset, as a BMC that keeps them only in memory: they
	// never show, though their tasks completed.
	RestartLosesStaged bool
	// DropStaged makes the BMC discard the first n images staged for the
	// next reset of each component ID it names, though their tasks
	// complete (as a restart before the reset does): they never show.
	DropStaged map[string]int
	// NoTask makes updates accepted with no task to follow (a BMC that
	// answers 204): no task URI, no task state; with UpdateNotTaken the
	// first n of them do not change the version.
	NoTask bool
	// ExpectVersions makes wait_ready fail while a version it expects is
	// not reported, as the real provider's does.
	ExpectVersions bool
	// StagedTaskGone, with Staged, makes the BMC lose the task of an
	// update it staged (it restarted after staging the image): the task
	// vanishes though the image waits for the next reset.
	StagedTaskGone bool
	// StagedTaskGoneOf, when set, limits StagedTaskGone to the updates of
	// this component ID.
	StagedTaskGoneOf string
	// PendingShown, with Staged, makes Observe report each staged image
	// as a pending member beside the active one (ID + "-Pending"), as
	// Lenovo's XCC and Dell's iDRAC do.
	PendingShown bool
	// TaskRunning makes Task answer Running, at TaskPercent, to that many
	// polls before it answers TaskState: a task frozen at one percent.
	TaskRunning int
	TaskPercent int
	// TaskNoAnswer makes Task answer that many polls with a diagnostic
	// marked providers.SummaryNoAnswer (the BMC restarting: connections
	// refused) before it answers as scripted.
	TaskNoAnswer int
}

// Call is one Apply the fake received.
type Call struct {
	Server    string
	Kind      providers.StepKind
	Component string
	ResetType string
	Timeout   time.Duration
	// ResumeSince is the step's ResumeSince (zero on a fresh start).
	ResumeSince time.Time
	// Step is the step as sent.
	Step providers.Step
	// Last is the request's Last: the server's last provider step.
	Last bool
	// Device is the target's Device: the kind of a rack member that is
	// not a server, "" for a server.
	Device string
}

// Provider is a scripted fake provider keyed by target name (the plan
// server address). Updates and reimages take effect at once and report a
// task URI first, like a BMC accepting SimpleUpdate; the effect survives a
// cancelled caller, as on a real BMC.
type Provider struct {
	// PerBMCTasks numbers each server's tasks on their own (1, 2, … on
	// each BMC, as every BMC has its own TaskService), so that task URIs do
	// not depend on the order in which concurrent workers call; by default
	// tasks are numbered across the fake.
	PerBMCTasks bool

	mu      sync.Mutex
	servers map[string]*fakeServer
	calls   []Call
	tasks   map[string]string
	nextID  int
	hangs   map[string]chan struct{}
	started map[string]chan struct{}
	polls   int
}

type fakeServer struct {
	script     Script
	components []providers.Component
	power      string
	applies    int
	observes   int
	waitFails  int
	waited     bool              // a wait_ready ran (HealthAfter applies)
	notTaken   int               // updates that did not take (UpdateNotTaken)
	taskPolls  int               // Task calls answered Running (TaskRunning)
	noAnswers  int               // Task calls answered SummaryNoAnswer (TaskNoAnswer)
	tasks      int               // tasks created on this BMC (PerBMCTasks)
	targets    map[string]string // component ID → target version
	staged     map[string]string // component ID → version after the next wait_ready
	dropped    map[string]int    // component ID → staged images discarded (DropStaged)
}

var _ providers.Provider = (*Provider)(nil)

// NewProvider returns an empty fake.
func NewProvider() *Provider {
	return &Provider{servers: map[string]*fakeServer{}, tasks: map[string]string{},
		hangs: map[string]chan struct{}{}, started: map[string]chan struct{}{}}
}

// Add registers a server with its initial components and script; targets
// maps component IDs to their target versions (for AtTarget).
func (p *Provider) Add(addr string, comps []providers.Component, targets map[string]string, s Script) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fs := &fakeServer{script: s, components: append([]providers.Component(nil), comps...), power: providers.PowerOn, targets: targets}
	if s.AtTarget {
		for i := range fs.components {
			if v, ok := targets[fs.components[i].ID]; ok {
				fs.components[i].Version = v
			}
		}
	}
	if s.Drift {
		fs.components = append(fs.components, providers.Component{ID: "NIC", Version: "9.9"})
	}
	p.servers[addr] = fs
	p.hangs[addr] = make(chan struct{})
	p.started[addr] = make(chan struct{}, 16)
}

// Release lets a hanging Apply or Observe on addr return.
func (p *Provider) Release(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.hangs[addr])
	p.hangs[addr] = make(chan struct{})
}

// Hanging receives each time an Apply or Observe on addr starts hanging.
func (p *Provider) Hanging(addr string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started[addr]
}

// Calls returns the Apply calls so far.
func (p *Provider) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// Count counts Apply calls on server of kind (any kind when "").
func (p *Provider) Count(server string, kind providers.StepKind) int {
	n := 0
	for _, c := range p.Calls() {
		if c.Server == server && (kind == "" || c.Kind == kind) {
			n++
		}
	}
	return n
}

// Polls counts Task calls.
func (p *Provider) Polls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls
}

// Fingerprint is the fake's fingerprint of a component list; plans built by
// Builder use it, so undrifted servers match.
func Fingerprint(comps []providers.Component) string {
	parts := make([]string, 0, len(comps))
	for _, c := range comps {
		parts = append(parts, c.ID+"="+c.Version)
	}
	sort.Strings(parts)
	sum := sha256.Sum256([]byte(strings.Join(parts, ",")))
	return hex.EncodeToString(sum[:8])
}

// Describe implements providers.Provider.
func (p *Provider) Describe(context.Context) (*providers.Description, providers.Diagnostics) {
	return &providers.Description{Name: "fake", Version: "0.0.0", ProtocolVersion: providers.ProtocolVersion}, nil
}

// Configure implements providers.Provider.
func (p *Provider) Configure(context.Context, *providers.ConfigureRequest) providers.Diagnostics {
	return nil
}

// Stop implements providers.Provider.
func (p *Provider) Stop(context.Context) providers.Diagnostics { return nil }

// Observe implements providers.Provider.
func (p *Provider) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	for _, t := range req.Targets {
		if err := p.hangObserve(ctx, t.Name); err != nil {
			return providers.Errorf(t.Name, "cancelled", err.Error())
		}
		p.mu.Lock()
		s := p.servers[t.Name]
		var o *providers.Observation
		switch {
		case s == nil || s.script.Unreachable:
			o = &providers.Observation{Server: t.Name, Diagnostics: providers.Errorf(t.Name, "BMC unreachable", "connection refused")}
		default:
			o = &providers.Observation{Server: t.Name, Reachable: true, PowerState: s.power, Health: s.healthNow(),
				Components: append([]providers.Component(nil), s.components...), Fingerprint: Fingerprint(s.components),
				Identity: s.script.Identity}
			if s.script.PendingShown {
				for _, c := range s.components {
					if v, ok := s.staged[c.ID]; ok {
						c.ID, c.Version, c.State = c.ID+"-Pending", v, providers.StatePending
						o.Components = append(o.Components, c)
					}
				}
			}
		}
		p.mu.Unlock()
		if err := fn(o); err != nil {
			return providers.Errorf(t.Name, "observe callback failed", err.Error())
		}
	}
	return nil
}

// hangObserve blocks an Observe of name as its script says (HangObserve).
func (p *Provider) hangObserve(ctx context.Context, name string) error {
	p.mu.Lock()
	s := p.servers[name]
	if s == nil {
		p.mu.Unlock()
		return nil
	}
	s.observes++
	if s.script.HangObserve != s.observes {
		p.mu.Unlock()
		return nil
	}
	hangCh, startedCh := p.hangs[name], p.started[name]
	p.mu.Unlock()
	startedCh <- struct{}{}
	select {
	case <-hangCh:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Apply implements providers.Provider.
func (p *Provider) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	name := req.Target.Name
	if err := ctx.Err(); err != nil {
		// As over gRPC: a call with a cancelled context never reaches the BMC.
		return nil, providers.Errorf(name, "cancelled", err.Error())
	}
	p.mu.Lock()
	s := p.servers[name]
	if s == nil {
		p.mu.Unlock()
		return nil, providers.Errorf(name, "unknown server", "")
	}
	s.applies++
	n := s.applies
	p.calls = append(p.calls, Call{Server: name, Kind: req.Step.Kind, Component: req.Step.Component, ResetType: req.Step.ResetType, Timeout: req.Step.Timeout, ResumeSince: req.Step.ResumeSince, Step: req.Step, Last: req.Last, Device: req.Target.Device})
	hang := s.script.HangApply == n
	hangCh, startedCh := p.hangs[name], p.started[name]
	fail := s.script.FailApply == n || (s.script.FailKind != "" && s.script.FailKind == req.Step.Kind)
	var uri, taskState, waitHealth string
	switch req.Step.Kind {
	case providers.StepUpdate, providers.StepReimage:
		taken := true
		if req.Step.Kind == providers.StepUpdate && s.notTaken < s.script.UpdateNotTaken &&
			(s.script.NotTakenOf == "" || req.Step.Match.Selects(providers.Component{ID: s.script.NotTakenOf})) {
			s.notTaken++
			taken = false
			if s.script.RestartLosesStaged {
				s.staged = nil
			}
		}
		for i := range s.components {
			if !taken {
				break
			}
			if req.Step.Match.Selects(s.components[i]) {
				if s.script.Staged {
					if s.staged == nil {
						s.staged = map[string]string{}
					}
					s.staged[s.components[i].ID] = req.Step.Target.Version
					if id := s.components[i].ID; req.Step.Kind == providers.StepUpdate && s.dropped[id] < s.script.DropStaged[id] {
						if s.dropped == nil {
							s.dropped = map[string]int{}
						}
						s.dropped[id]++
						delete(s.staged, id)
					}
					continue
				}
				s.components[i].Version = req.Step.Target.Version
			}
		}
		if req.Step.Kind == providers.StepReimage {
			s.power = providers.PowerOn // the reimage boots the host
		}
		p.nextID++
		uri = fmt.Sprintf("/redfish/v1/TaskService/Tasks/%d", p.nextID)
		if p.PerBMCTasks {
			s.tasks++
			uri = fmt.Sprintf("/redfish/v1/TaskService/Tasks/%d", s.tasks)
		}
		taskState = providers.TaskCompleted
		switch {
		case req.Step.Kind == providers.StepUpdate && s.script.NoTask:
			uri, taskState = "", "" // accepted (204): nothing to follow
		case taken && s.script.Staged && s.script.StagedTaskGone &&
			(s.script.StagedTaskGoneOf == "" || req.Step.Match.Selects(providers.Component{ID: s.script.StagedTaskGoneOf})):
			taskState = providers.TaskGone // staged, then the BMC restarted
		case taken:
			p.tasks[taskKey(name, uri)] = name
		default:
			taskState = providers.TaskGone // the BMC lost it
		}
	case providers.StepShutdown:
		s.power = providers.PowerOff
	case providers.StepPowerOn, providers.StepReset:
		s.power = providers.PowerOn
	case providers.StepWaitReady:
		for i := range s.components {
			if v, ok := s.staged[s.components[i].ID]; ok {
				s.components[i].Version = v
			}
		}
		s.staged = nil
		s.waited = true
		if s.waitFails < s.script.WaitReadyFails {
			s.waitFails++
			fail = true
		}
		if why := providers.ReadyHealth(s.healthNow(), req.Step.AcceptCritical); why != "" {
			fail = true
		}
		waitHealth = s.healthNow()
		if s.script.ExpectVersions && !s.reports(req.Step.Expect) {
			fail = true
		}
	}
	p.mu.Unlock()
	if uri != "" {
		if err := fn(&providers.Progress{TaskURI: uri, Percent: 0, Message: "task created"}); err != nil {
			return nil, providers.Errorf(name, "progress callback failed", err.Error())
		}
	}
	if hang {
		startedCh <- struct{}{}
		select {
		case <-hangCh:
		case <-ctx.Done():
			return nil, providers.Errorf(name, "cancelled", ctx.Err().Error())
		}
	}
	if fail {
		return nil, providers.Errorf(name, string(req.Step.Kind)+" failed", "scripted failure")
	}
	res := &providers.ApplyResult{TaskURI: uri, TaskState: taskState, Message: string(req.Step.Kind) + " ok"}
	switch req.Step.Kind {
	case providers.StepWaitReady:
		res.Observation = &providers.Observation{Server: name, Reachable: true, PowerState: providers.PowerOn, Health: waitHealth}
	case providers.StepShutdown, providers.StepPowerOn, providers.StepReset:
		if s.script.ReportPower != "" {
			res.Observation = &providers.Observation{Server: name, Reachable: true, PowerState: s.script.ReportPower}
		}
	}
	return res, nil
}

// healthNow is the health the server's BMC reports now.
func (s *fakeServer) healthNow() string {
	h := s.script.Health
	if s.waited && s.script.HealthAfter != "" {
		h = s.script.HealthAfter
	}
	if h == "" {
		h = "OK"
	}
	return h
}

// reports says whether the server reports every expected version, by the
// rule every provider's wait_ready follows (providers.Match.AtTarget).
func (s *fakeServer) reports(expect []providers.Expectation) bool {
	for _, e := range expect {
		if at, _, _ := e.Match.AtTarget(e.Target, s.components); !at {
			return false
		}
	}
	return true
}

// Task implements providers.Provider.
func (p *Provider) Task(_ context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.polls++
	s := p.servers[req.Target.Name]
	if s != nil && s.noAnswers < s.script.TaskNoAnswer {
		s.noAnswers++
		return nil, providers.Errorf(req.Target.Name, providers.SummaryNoAnswer, "Polling task "+req.TaskURI+": connection refused")
	}
	state := providers.TaskCompleted
	if s != nil && s.script.TaskState != "" {
		state = s.script.TaskState
	}
	if _, ok := p.tasks[taskKey(req.Target.Name, req.TaskURI)]; !ok {
		state = providers.TaskGone
	}
	if s != nil && state != providers.TaskGone && s.taskPolls < s.script.TaskRunning {
		s.taskPolls++
		return &providers.TaskStatus{URI: req.TaskURI, State: providers.TaskRunning, Percent: s.script.TaskPercent}, nil
	}
	return &providers.TaskStatus{URI: req.TaskURI, State: state, Percent: 100}, nil
}

// taskKey names a task by its BMC and URI: with PerBMCTasks two BMCs have
// a task of the same URI.
func taskKey(server, uri string) string { return server + " " + uri }

// SetUnreachable makes addr's BMC stop (or start again) answering, as a
// server that goes down, or is restored, during a run.
func (p *Provider) SetUnreachable(addr string, down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.servers[addr]; s != nil {
		s.script.Unreachable = down
	}
}
