package executortest

import (
	"context"
	"fmt"
	"time"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/internal/vclock"
	"github.com/rackform/rackform/providers"
)

// Timed makes a provider's calls take time on a virtual clock, so that a
// run takes as long in virtual time as its steps say. Took maps what a call
// does to how long it takes: a step kind ("shutdown", "update", …), or
// "observe" and "task". An Apply does its work on the wrapped provider
// first (an update reports its task URI at once, as a BMC accepting it
// does), then takes its time; one with a task reports its percent at each
// fifth of it.
type Timed struct {
	providers.Provider
	Clock vclock.Sleeper
	Took  map[string]time.Duration
}

var _ providers.Provider = (*Timed)(nil)

// Observe implements providers.Provider.
func (t *Timed) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	if err := t.take(ctx, "observe", 1, nil); err != nil {
		return providers.Errorf("", "observe cancelled", err.Error())
	}
	return t.Provider.Observe(ctx, req, fn)
}

// Apply implements providers.Provider.
func (t *Timed) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	res, diags := t.Provider.Apply(ctx, req, fn)
	if diags.HasErrors() {
		return res, diags
	}
	parts := 1
	if res != nil && res.TaskURI != "" {
		parts = 5
	}
	if err := t.take(ctx, string(req.Step.Kind), parts, fn); err != nil {
		return nil, providers.Errorf(req.Target.Name, string(req.Step.Kind)+" cancelled", err.Error())
	}
	return res, diags
}

// Task implements providers.Provider.
func (t *Timed) Task(ctx context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	if err := t.take(ctx, "task", 1, nil); err != nil {
		return nil, providers.Errorf(req.Target.Name, "task poll cancelled", err.Error())
	}
	return t.Provider.Task(ctx, req)
}

// take sleeps Took[what] in parts, reporting the percent between them.
func (t *Timed) take(ctx context.Context, what string, parts int, fn func(*providers.Progress) error) error {
	d := t.Took[what]
	if d <= 0 {
		return nil
	}
	for i := 1; i <= parts; i++ {
		if err := t.Clock.Sleep(ctx, t.Clock.Now().Add(d/time.Duration(parts))); err != nil {
			return err
		}
		if fn != nil && i < parts {
			if err := fn(&providers.Progress{Percent: 100 * i / parts}); err != nil {
				return err
			}
		}
	}
	return nil
}

// TimedHooks makes hooks take time on a virtual clock: Took by hook name
// ("drain", "uncordon"). A hook whose context ends first (the executor's
// timeout, an interrupt) fails as a command killed at its deadline does.
type TimedHooks struct {
	executor.HookRunner
	Clock vclock.Sleeper
	Took  map[string]time.Duration
}

// Run implements executor.HookRunner.
func (h *TimedHooks) Run(ctx context.Context, hk executor.Hook) error {
	if err := h.Clock.Sleep(ctx, h.Clock.Now().Add(h.Took[hk.Name])); err != nil {
		return fmt.Errorf("%s hook did not finish: %w", hk.Name, err)
	}
	return h.HookRunner.Run(ctx, hk)
}
