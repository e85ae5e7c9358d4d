package executortest

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/rackform/rackform/executor"
)

// Hooks is a fake HookRunner. Keys are "ADDRESS/drain" or "ADDRESS/uncordon".
type Hooks struct {
	mu    sync.Mutex
	calls []executor.Hook
	// Fail makes a hook return an error.
	Fail map[string]bool
	// Hang makes a hook block until its context ends (the executor's
	// timeout on its clock, or a hard stop).
	Hang    map[string]bool
	hanging chan string
}

// NewHooks returns fake hooks that succeed.
func NewHooks() *Hooks {
	return &Hooks{Fail: map[string]bool{}, Hang: map[string]bool{}, hanging: make(chan string, 64)}
}

// Env returns the value of key in a hook's environment.
func Env(h executor.Hook, key string) string {
	for _, kv := range h.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Hanging receives the key of each hook that starts hanging.
func (h *Hooks) Hanging() <-chan string { return h.hanging }

// Calls returns the hooks run so far.
func (h *Hooks) Calls() []executor.Hook {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]executor.Hook(nil), h.calls...)
}

// Run implements executor.HookRunner.
func (h *Hooks) Run(ctx context.Context, hk executor.Hook) error {
	key := Env(hk, "RACKFORM_ADDRESS") + "/" + hk.Name
	h.mu.Lock()
	h.calls = append(h.calls, hk)
	fail, hang := h.Fail[key], h.Hang[key]
	h.mu.Unlock()
	if hang {
		h.hanging <- key
		<-ctx.Done()
		return ctx.Err()
	}
	if fail {
		return errors.New(hk.Name + " hook exited with status 1")
	}
	return nil
}

// Crash wraps a backend and fails every Append after the first After ones,
// as if the process died: nothing after that point reaches the journal.
type Crash struct {
	executor.Backend
	After   int
	mu      sync.Mutex
	n       int
	OnCrash func()
}

// ErrCrashed is what Append returns once the crash point is reached.
var ErrCrashed = errors.New("simulated crash")

// Append implements executor.Backend. A batch that crosses the crash
// point is written up to it, as a crash between write and fsync may leave.
func (c *Crash) Append(ctx context.Context, sha string, recs ...[]byte) ([]int64, error) {
	c.mu.Lock()
	room := c.After - c.n
	if room >= len(recs) {
		c.n += len(recs)
		c.mu.Unlock()
		return c.Backend.Append(ctx, sha, recs...)
	}
	c.n += max(room, 0)
	c.mu.Unlock()
	if room > 0 {
		if _, err := c.Backend.Append(ctx, sha, recs[:room]...); err != nil {
			return nil, err
		}
	}
	if c.OnCrash != nil {
		c.OnCrash()
	}
	return nil, ErrCrashed
}

// Appended counts successful appends.
func (c *Crash) Appended() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
