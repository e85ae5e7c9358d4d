package run

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// Supervised is a provider whose plugin process is restarted when it dies.
// The executor knows only providers.Provider: a call cut short by the
// plugin's death comes back as providers.Unavailable, which the executor
// treats as an interruption (the step resumes from the journal, as after a
// crash of apply), never as a server failure. The next call (the executor
// first asks the provider to Describe itself) restarts the plugin: started
// again from the same pinned binary, described and configured as at the
// start, with bounded attempts and backoff. When it cannot be restarted,
// or died too often, every call is Unavailable and the executor stops the
// run with its servers resumable.
//
// This lives in package run, beside the plan's pins, because restarting a
// plugin is wiring: which binary (pinned by the plan), with which
// configuration (from the plan's snapshot, credentials included) - all
// things the executor must not know.
type Supervised struct {
	name string
	// start starts, describes and configures a fresh plugin.
	start func(ctx context.Context) (providers.Provider, func(), error)
	// note tells the operator (stderr, or above the live view).
	note func(string)

	// Restart policy: attempts per death, the backoff between them
	// (doubling), and at most maxRestarts restarts within window.
	attempts    int
	backoff     time.Duration
	maxRestarts int
	window      time.Duration
	now         func() time.Time
	sleep       func(ctx context.Context, d time.Duration) error

	mu       sync.Mutex
	cur      providers.Provider
	stop     func()
	gen      int
	broken   bool
	dead     error
	restarts []time.Time
}

var _ providers.Provider = (*Supervised)(nil)

// Restart policy defaults: three attempts a death (0.5 s, 1 s apart), at
// most five restarts in ten minutes: a plugin that crashes on every step
// stops the run instead of looping.
const (
	restartAttempts = 3
	restartBackoff  = 500 * time.Millisecond
	maxRestarts     = 5
	restartWindow   = 10 * time.Minute
)

// Supervise wraps provider name's running plugin p (stop ends it) in a
// supervisor that restarts it with start (PinnedRestart) when it dies,
// telling the operator with note. Close ends the plugin it runs then.
func Supervise(name string, p providers.Provider, stop func(), start func(context.Context) (providers.Provider, func(), error), note func(string)) *Supervised {
	return &Supervised{name: name, cur: p, stop: stop, start: start, note: note,
		attempts: restartAttempts, backoff: restartBackoff, maxRestarts: maxRestarts, window: restartWindow,
		now: time.Now, sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// exited reports whether p is a plugin whose process has ended.
func exited(p providers.Provider) bool {
	e, ok := p.(interface{ Exited() bool })
	return ok && e.Exited()
}

// current returns the running provider, restarting a dead plugin first.
func (s *Supervised) current(ctx context.Context) (providers.Provider, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead != nil {
		return nil, s.gen, s.dead
	}
	if s.broken || exited(s.cur) {
		if err := s.restart(ctx); err != nil {
			return nil, s.gen, err
		}
	}
	return s.cur, s.gen, nil
}

// restart replaces the dead plugin. It runs with s.mu held: concurrent
// callers wait for it and then use the new plugin.
func (s *Supervised) restart(ctx context.Context) error {
	if s.stop != nil {
		s.stop() // whatever is left of the old process
		s.stop = nil
	}
	now := s.now()
	recent := s.restarts[:0]
	for _, t := range s.restarts {
		if now.Sub(t) < s.window {
			recent = append(recent, t)
		}
	}
	s.restarts = recent
	if len(s.restarts) >= s.maxRestarts {
		s.dead = fmt.Errorf("the plugin of provider %q died %d times within %s; it is not restarted again", s.name, len(s.restarts)+1, s.window)
		s.note(fmt.Sprintf("Provider %q: %s.", s.name, s.dead))
		return s.dead
	}
	s.note(fmt.Sprintf("Provider %q: the plugin process exited; restarting it (the steps it had in flight resume from the journal).", s.name))
	var last error
	wait := s.backoff
	for attempt := 1; attempt <= s.attempts; attempt++ {
		p, stop, err := s.start(ctx)
		if err == nil {
			s.cur, s.stop, s.broken = p, stop, false
			s.gen++
			s.restarts = append(s.restarts, now)
			s.note(fmt.Sprintf("Provider %q: restarted (%d of at most %d restarts within %s).", s.name, len(s.restarts), s.maxRestarts, s.window))
			return nil
		}
		last = err
		if ctx.Err() != nil {
			// Cancelled (an interrupt), not unrestartable: the next apply
			// starts the plugin afresh.
			return fmt.Errorf("restarting the plugin of provider %q: %w", s.name, ctx.Err())
		}
		if attempt < s.attempts {
			if err := s.sleep(ctx, wait); err != nil {
				return fmt.Errorf("restarting the plugin of provider %q: %w", s.name, err)
			}
			wait *= 2
		}
	}
	s.dead = fmt.Errorf("the plugin of provider %q exited and could not be restarted (%d attempts): %v", s.name, s.attempts, last)
	s.note(fmt.Sprintf("Provider %q: %s.", s.name, s.dead))
	return s.dead
}

// failed records that a call on generation gen found the plugin dead; the
// next call restarts it.
func (s *Supervised) failed(gen int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen == s.gen {
		s.broken = true
	}
}

// check looks at a call's diagnostics: a dead plugin is noted for restart
// and always reported as Unavailable.
func (s *Supervised) check(p providers.Provider, gen int, server string, d providers.Diagnostics) providers.Diagnostics {
	if d.Unavailable() {
		s.failed(gen)
		return d
	}
	if d.HasErrors() && exited(p) {
		s.failed(gen)
		return append(providers.Unavailable(server, fmt.Sprintf("the plugin of provider %q exited during the call", s.name)), d...)
	}
	return d
}

// call makes a call on the running plugin (restarting a dead one first)
// for server ("" for none) and looks at its diagnostics (check); a plugin
// that cannot be restarted answers Unavailable.
func (s *Supervised) call(ctx context.Context, server string, f func(providers.Provider) providers.Diagnostics) providers.Diagnostics {
	p, gen, err := s.current(ctx)
	if err != nil {
		return providers.Unavailable(server, err.Error())
	}
	return s.check(p, gen, server, f(p))
}

// Describe implements providers.Provider.
func (s *Supervised) Describe(ctx context.Context) (desc *providers.Description, d providers.Diagnostics) {
	d = s.call(ctx, "", func(p providers.Provider) (d providers.Diagnostics) {
		desc, d = p.Describe(ctx)
		return d
	})
	return desc, d
}

// Configure implements providers.Provider.
func (s *Supervised) Configure(ctx context.Context, req *providers.ConfigureRequest) providers.Diagnostics {
	return s.call(ctx, "", func(p providers.Provider) providers.Diagnostics { return p.Configure(ctx, req) })
}

// Observe implements providers.Provider.
func (s *Supervised) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	return s.call(ctx, "", func(p providers.Provider) providers.Diagnostics { return p.Observe(ctx, req, fn) })
}

// Apply implements providers.Provider.
func (s *Supervised) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (res *providers.ApplyResult, d providers.Diagnostics) {
	d = s.call(ctx, req.Target.Name, func(p providers.Provider) (d providers.Diagnostics) {
		res, d = p.Apply(ctx, req, fn)
		return d
	})
	return res, d
}

// Task implements providers.Provider.
func (s *Supervised) Task(ctx context.Context, req *providers.TaskRequest) (ts *providers.TaskStatus, d providers.Diagnostics) {
	d = s.call(ctx, req.Target.Name, func(p providers.Provider) (d providers.Diagnostics) {
		ts, d = p.Task(ctx, req)
		return d
	})
	return ts, d
}

// Stop implements providers.Provider.
func (s *Supervised) Stop(ctx context.Context) providers.Diagnostics {
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	return p.Stop(ctx)
}

// Close ends the current plugin.
func (s *Supervised) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
}

// PinnedRestart is how a supervisor starts provider name's plugin again:
// start starts, describes and configures a fresh one and says what binary
// serves it; a binary that no longer hashes to pinned (the SHA-256 the plan
// recorded, "" for none) is stopped and refused.
func PinnedRestart(start func(ctx context.Context) (providers.Provider, plan.Provider, func(), error), pinned string) func(context.Context) (providers.Provider, func(), error) {
	return func(ctx context.Context) (providers.Provider, func(), error) {
		p, info, stop, err := start(ctx)
		if err != nil {
			return nil, nil, err
		}
		if pinMismatch(info.SHA256, pinned) {
			stop()
			return nil, nil, fmt.Errorf("the plugin binary (%s) now hashes to %s, not %s as when the plan was made", info.Source, plan.ShortSHA(info.SHA256), plan.ShortSHA(pinned))
		}
		return p, stop, nil
	}
}

// CheckPinned refuses a provider plugin started for the run whose binary
// hashes to another SHA-256 than the one the plan was made with.
func (r *Run) CheckPinned(info plan.Provider) error {
	if want := r.PinnedSHA256(info.Name); pinMismatch(info.SHA256, want) {
		return fmt.Errorf("provider %q: the started plugin hashes to %s, but the plan was made with %s", info.Name, plan.ShortSHA(info.SHA256), plan.ShortSHA(want))
	}
	return nil
}

// pinMismatch reports whether a plugin's binary hashes to got where the
// plan pinned want (either empty: nothing to compare).
func pinMismatch(got, want string) bool { return want != "" && got != "" && got != want }
