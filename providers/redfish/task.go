package redfish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/rackform/rackform/providers"
)

// Task implements providers.Provider: one poll of a task monitor.
func (p *Provider) Task(ctx context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	ctx, done := p.call(ctx)
	defer done()
	b, _, release, err := p.use(req.Target)
	if err != nil {
		return nil, p.fail(req.Target, "Cannot poll task", err)
	}
	defer release()
	st, _, _, err := pollTask(ctx, b, req.TaskURI)
	if err != nil {
		d := p.fail(req.Target, "Cannot poll task "+req.TaskURI, err)
		if noAnswer(err) && ctx.Err() == nil {
			// A BMC restarting in the middle of the update: the caller
			// polls again (waitTask below does the same within Apply).
			d[0].Summary = providers.SummaryNoAnswer
			d[0].Detail = "Polling task " + req.TaskURI + ": " + d[0].Detail
		}
		return nil, d
	}
	return &st, nil
}

// noAnswer reports whether err is a BMC that did not answer at all: the
// connection refused, reset or closed before an answer, or no answer in
// time. An HTTP status, whatever it is, is an answer.
func noAnswer(err error) bool {
	if err == nil || statusOf(err) != 0 || errors.Is(err, context.Canceled) {
		return false
	}
	var (
		ate *attemptTimeoutError
		op  *net.OpError
	)
	return errors.As(err, &ate) || errors.As(err, &op) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// pollTask polls uri once: the task's status, the answer's Retry-After,
// and the Task resource the answer names, if any (monitors and tasks
// differ).
func pollTask(ctx context.Context, b bmc, uri string) (st providers.TaskStatus, retryAfter, resource string, err error) {
	status, body, ra, err := b.Get(ctx, uri)
	if err != nil {
		return providers.TaskStatus{URI: uri, Percent: -1}, "", "", err
	}
	resource = taskResourceFromBody(body)
	st, ok := parseTaskBody(uri, status, body)
	if !ok {
		return st, ra, resource, &unreadableTaskError{status: status, body: truncate(strings.TrimSpace(string(body)), 120)}
	}
	return st, ra, resource, nil
}

// unreadableTaskError is a task monitor answer that is not a task.
type unreadableTaskError struct {
	status int
	body   string
}

func (e *unreadableTaskError) Error() string {
	return fmt.Sprintf("the task monitor answered HTTP %d with a body that is not a task: %q", e.status, e.body)
}

func isUnreadable(err error) bool {
	var u *unreadableTaskError
	return errors.As(err, &u)
}

// maxUnreadablePolls is how many answers in a row a task monitor may give
// that are not a task before the provider stops believing it will: a BMC
// that answers garbage fails the step clearly instead of at the timeout.
const maxUnreadablePolls = 3

// waitTask polls uri until the task is terminal or ctx ends. Connection
// errors are tolerated (an update may reset the BMC) until ctx's deadline.
// A task that vanished (404) is reported as Gone: the caller verifies the
// outcome by observing, as a real BMC deletes finished tasks.
func (p *Provider) waitTask(ctx context.Context, b bmc, cfg config, uri string, deadline time.Time, progress func(*providers.Progress) error) (providers.TaskStatus, error) {
	unreadable, lastState, resource := 0, "", ""
	var lastErr error
	for {
		st, ra, named, err := pollTask(ctx, b, uri)
		if named != "" {
			resource = named
		}
		if err == nil && st.State == providers.TaskGone && resource != "" && resource != uri {
			// iLO deletes the monitor of a finished task but keeps the Task
			// resource a 202 body named: read the outcome there.
			if fin, _, _, ferr := pollTask(ctx, b, resource); ferr == nil && fin.Terminal() && fin.State != providers.TaskGone {
				fin.URI = uri
				st = fin
			}
		}
		switch {
		case ctx.Err() != nil:
			return st, waitErr(ctx, "the task", lastState, lastErr)
		case err == nil:
			unreadable, lastErr = 0, nil
			if st.State != lastState || st.Percent >= 0 {
				msg := "task " + st.State
				if len(st.Messages) > 0 {
					msg += ": " + st.Messages[len(st.Messages)-1]
				}
				if err := progress(&providers.Progress{Message: msg, Percent: st.Percent, TaskURI: uri}); err != nil {
					return st, err
				}
			}
			lastState = st.State
			if st.Terminal() {
				return st, nil
			}
		case isUnreadable(err):
			unreadable++
			lastErr = err
			if unreadable >= maxUnreadablePolls {
				return st, err
			}
		default:
			lastErr = err
			p.log.Debug("task poll failed; retrying", "task", uri, "error", p.scrub(describe(err)))
		}
		if !p.clock.Now().Before(deadline) {
			return st, deadlineErr("the task did not finish", deadline, lastState, lastErr)
		}
		wait := cfg.PollInterval
		if d, ok := parseRetryAfter(ra, p.clock.Now()); ok {
			wait = min(max(wait, d), max(cfg.MaxDelay, cfg.PollInterval))
		}
		wait = min(wait, max(deadline.Sub(p.clock.Now()), 0))
		if err := p.clock.Sleep(ctx, wait); err != nil {
			return st, waitErr(ctx, "the task", lastState, lastErr)
		}
	}
}

// waitErr explains why a wait ended with its context.
func waitErr(ctx context.Context, what, last string, lastErr error) error {
	msg := what + " was interrupted (" + ctx.Err().Error() + ")"
	return withLast(msg, last, lastErr)
}

// deadlineErr explains why a bounded wait ended at its deadline.
func deadlineErr(what string, deadline time.Time, last string, lastErr error) error {
	return withLast(fmt.Sprintf("%s by %s", what, deadline.UTC().Format(time.RFC3339)), last, lastErr)
}

func withLast(msg, last string, lastErr error) error {
	if last != "" {
		msg += "; last: " + last
	}
	if lastErr != nil {
		msg += "; last error: " + describe(lastErr)
	}
	return fmt.Errorf("%s", msg)
}
