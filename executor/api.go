package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Options are an Executor's dependencies. Plan, PlanSHA256 and Backend are
// required; the rest have defaults.
type Options struct {
	// Plan is the decoded plan; PlanSHA256 its identity (hex SHA-256 of the
	// file bytes), which keys the journal.
	Plan       *plan.Plan
	PlanSHA256 string
	// PlanFile is the encoded plan. When set, Run stores it in the backend
	// so `continue` and `status` need no path.
	PlanFile []byte
	// Providers by plan.Server.Provider name. Only Run needs them: control
	// operations and Status work without.
	Providers map[string]providers.Provider
	Backend   Backend
	// Clock defaults to the real clock. A Virtual clock runs the apply on
	// simulated time (a rehearsal).
	Clock Clock
	// Hooks runs drain and uncordon commands; default ExecHooks.
	Hooks HookRunner
	// Events receives the event stream; default: discarded.
	Events Sink
	// Logger defaults to discarding.
	Logger *slog.Logger
	// Holder names who runs this process in locks and control records;
	// default "user@host".
	Holder string
	// LockTimeout is how long Run waits for a held lock (0: refuse at once).
	LockTimeout time.Duration
	// HolderGone reports whether a lock holder is gone for certain (a crashed
	// or killed apply): Run then takes the lock over, with a notice in the
	// log and in its run_started record. Default HolderGone: a process of
	// this host that no longer runs; a holder on another host is never gone.
	HolderGone func(LockInfo) bool
	// Join: when another apply of the same plan holds the state lock and
	// the backend is a Claimer (postgres), run beside it as a worker of
	// the run instead of waiting for the lock (Claimer). Without it such
	// an apply waits for the lock (LockTimeout) as a standby.
	Join bool
	// PollInterval is how often a running apply reads control records
	// written by other processes while it waits, and how often an in-flight
	// BMC task is polled on resume. Default 2s.
	PollInterval time.Duration
	// Synchronous runs provider and hook work on the scheduler goroutine,
	// one operation at a time in launch order. Event streams and journals
	// are then byte-for-byte deterministic under a fake clock; it is for
	// tests and golden files, never for real BMCs (no parallelism, no
	// engine-enforced hook timeouts).
	Synchronous bool
	// Available names, by cluster ID ("cluster.north-1"), the clusters
	// planned pending (their release not available at their site) that the
	// caller found available now, each with what it checked ("release
	// 4.6.2 is listed at site north in catalog.json"). Run journals each
	// before starting the cluster; a pending cluster not named stays
	// pending(availability). The CLI fills it on continue from a fresh
	// read of the plan's catalog source (availability.go).
	Available map[string]string
	// AllowExpired starts a fresh run of a plan past its not_after, which
	// Run otherwise refuses (ErrExpired). It is for rehearsals, which touch
	// no BMC: what plan observed being old does not matter there.
	AllowExpired bool
}

// Clock is the executor's time source. At returns a channel that receives
// once the clock reaches t (at once if t is past); deadlines are absolute
// so a fake clock advanced early still fires them.
//
// A clock may also implement Skipper: when nothing is in flight and the
// scheduler would only wait for time to pass (a wait_after, a window), it
// calls SkipTo instead of waiting, so tests with a fake clock never sleep.
type Clock interface {
	Now() time.Time
	At(t time.Time) <-chan time.Time
}

// Paced is implemented by a clock that runs faster than real time (the
// demo's, with the simulator's -speed): Pace is how much of its time
// passes in a unit of real time. A hook is a real process, which no clock
// speeds up, so on such a clock a hook is given at least minHookReal of
// real time before its timeout ends it (hookDeadline).
type Paced interface {
	Pace() float64
}

// minHookReal is the least real time a hook is given on a Paced clock:
// enough for a shell to start on a loaded machine.
const minHookReal = 10 * time.Second

// hookTimeout is how long on clock c a hook with timeout d may run: d, or
// minHookReal of real time when c runs so fast that d is less.
func hookTimeout(c Clock, d time.Duration) time.Duration {
	if p, ok := c.(Paced); ok && p.Pace() > 1 {
		if floor := time.Duration(p.Pace() * float64(minHookReal)); d < floor {
			return floor
		}
	}
	return d
}

// Skipper is implemented by fake clocks; see Clock.
type Skipper interface {
	SkipTo(t time.Time)
}

// Virtual is a clock on which time moves only while everything the
// executor runs waits for it, so that a rehearsal replays hours of waits,
// tasks and windows in seconds, and the same inputs give the same journal
// and events (internal/vclock is one). When Options.Clock implements it,
// every worker goroutine is one of the clock's actors (Start before it
// begins, Done when it ends); a worker waits for time only through Sleep,
// and Parks before each message it hands the scheduler. The scheduler is
// the coordinator: instead of waiting for messages or a timer, it Settles,
// then takes the Parked messages (Unpark first) in a canonical order (the
// servers' order in the plan, then the op), and when none wait it moves
// the clock (AdvanceTo) to the earliest of Next and its own wake-up (a
// wait's end, a hook's deadline, the poll interval).
type Virtual interface {
	Clock
	// Start registers an actor about to start; Done one that ends.
	Start()
	Done()
	// Sleep blocks the calling actor until t or ctx ends.
	Sleep(ctx context.Context, t time.Time) error
	// Park marks the calling actor as handing a message to the
	// coordinator, which calls Unpark(n) just before it receives n of them.
	Park()
	Unpark(n int)
	// Parked is how many actors are parked.
	Parked() int
	// Settle returns once no actor runs.
	Settle()
	// Next is the earliest time an actor sleeps until (false: none).
	Next() (time.Time, bool)
	// AdvanceTo moves the clock to t, waking what is due.
	AdvanceTo(t time.Time)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) At(t time.Time) <-chan time.Time {
	return time.After(time.Until(t))
}

// RealClock is the wall clock.
func RealClock() Clock { return realClock{} }

// Hook is one drain or uncordon command for one server.
type Hook struct {
	// Name is "drain" or "uncordon".
	Name string
	Argv []string
	// Env holds RACKFORM_SERVER, RACKFORM_NODE, RACKFORM_RACK and
	// RACKFORM_CLUSTER as KEY=VALUE.
	Env []string
	// Timeout bounds the command; the executor also cancels ctx at the
	// deadline on its own clock.
	Timeout time.Duration
}

// HookRunner runs hooks. Run returns nil on success; a timeout is reported
// as an error wrapping context.DeadlineExceeded.
type HookRunner interface {
	Run(ctx context.Context, h Hook) error
}

// Sink receives events. Event is called from the scheduler goroutine only,
// so it sees events in order and must not block for long.
type Sink interface {
	Event(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Event implements Sink.
func (f SinkFunc) Event(e Event) { f(e) }

type discardSink struct{}

func (discardSink) Event(Event) {}

// OutcomeStatus is how Run ended. The CLI maps each to an exit code in
// one place (cmd/rackform/internal/command/exitcode.go).
type OutcomeStatus string

// Outcomes (docs/operating.md: Exit codes).
const (
	// OutcomeCompleted: every planned server reached its target or was
	// skipped before its steps began.
	OutcomeCompleted OutcomeStatus = "completed"
	// OutcomeCompletedWithFailures: the run completed, but some servers
	// failed, were skipped after their steps began, or were left out of
	// service (Outcome.Stranded lists those).
	OutcomeCompletedWithFailures OutcomeStatus = "completed_with_failures"
	// OutcomeFailed: the run failed (a scope breached with on_breach =
	// "fail"); a new plan picks up what is left.
	OutcomeFailed OutcomeStatus = "failed"
	// OutcomePaused: after a rack, at a gate, on a breach.
	OutcomePaused OutcomeStatus = "paused"
	// OutcomeStopped: by the operator, or because a provider could not be
	// restarted (Reason provider_unavailable); apply or continue resumes.
	OutcomeStopped OutcomeStatus = "stopped"
	// OutcomeInterrupted: SIGINT/SIGTERM; apply resumes.
	OutcomeInterrupted OutcomeStatus = "interrupted"
)

// Outcome is the result of Run.
type Outcome struct {
	Status OutcomeStatus `json:"status"`
	// Reason is the state reason: threshold, after_rack, approval, window,
	// provider_unavailable…
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Next are what resumes the run, e.g. a continue or the approval of
	// gate stage.prod.gate.qa; the CLI renders each as the command line to
	// run (here, in JSON, each is its text: NextAction.String).
	Next []NextAction `json:"next,omitempty"`
	// Servers counts how the plan's servers ended (completed runs).
	Servers *ServerCounts `json:"servers,omitempty"`
	// Stranded lists every server left powered off, drained or with a
	// staged image, with what brings it back.
	Stranded []Stranded `json:"stranded,omitempty"`
}

// ServerCounts are the plan's servers by how they ended.
type ServerCounts struct {
	Upgraded int `json:"upgraded"`
	Failed   int `json:"failed"`
	// Skipped counts every skipped server: in the plan, already at
	// target, by the operator.
	Skipped int `json:"skipped"`
	// SkippedAfterStart counts those of Skipped the operator skipped after
	// their steps began: they did not reach their target.
	SkippedAfterStart int `json:"skipped_after_start,omitempty"`
}

func (o Outcome) String() string {
	s := string(o.Status)
	if o.Reason != "" {
		s += "(" + o.Reason + ")"
	}
	if o.Message != "" {
		s += ": " + o.Message
	}
	for i, a := range o.Next {
		if i == 0 {
			s += "; next: "
		} else {
			s += ", "
		}
		s += a.String()
	}
	return s
}

// Errors Run and the control operations return; match with errors.Is/As.
var (
	// ErrAlreadyApplied: the plan's journal says it completed (rule 25).
	ErrAlreadyApplied = errors.New("this plan has already been applied completely; plan again to make further changes")
	// ErrRunFailed: the plan's run failed; a new plan picks up what is left.
	ErrRunFailed = errors.New("this plan's run failed; plan again to pick up the servers that are not at target")
	// ErrExpired: now is past the plan's not_after.
	ErrExpired = errors.New("the plan has expired")
)

// RefusedError is a control operation (approve, skip, continue, stop) that
// was refused without recording anything.
type RefusedError struct {
	Op     string
	Target string
	Reason string
	// Already is the final state the target, or the run, has reached
	// that refused the request (a skip of a server in a failed run has
	// Failed); empty when the request was refused for another reason.
	Already StateName
}

func (e *RefusedError) Error() string {
	if e.Target == "" {
		return fmt.Sprintf("%s refused: %s", e.Op, e.Reason)
	}
	return fmt.Sprintf("%s %s refused: %s", e.Op, e.Target, e.Reason)
}

// defaultHolder is "user@host", used in locks and control records.
func defaultHolder() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return name + "@" + host
}

func (o *Options) withDefaults() error {
	if o.Plan == nil {
		return errors.New("executor: no plan")
	}
	if o.PlanSHA256 == "" {
		return errors.New("executor: no plan SHA-256")
	}
	if o.Backend == nil {
		return errors.New("executor: no state backend")
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if _, ok := o.Clock.(Virtual); ok && o.Synchronous {
		// Synchronous work runs on the scheduler goroutine, which is not
		// an actor of the clock: a provider sleeping on it would stop time.
		return errors.New("executor: a virtual clock runs the workers concurrently on simulated time; it cannot be combined with Synchronous")
	}
	if o.Hooks == nil {
		o.Hooks = ExecHooks{}
	}
	if o.Events == nil {
		o.Events = discardSink{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Holder == "" {
		o.Holder = defaultHolder()
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	if o.HolderGone == nil {
		o.HolderGone = HolderGone
	}
	return nil
}
