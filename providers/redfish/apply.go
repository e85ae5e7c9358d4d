package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rackform/rackform/providers"
)

// Default bounds for steps whose Step.Timeout is zero.
const (
	defaultUpdateTimeout   = 60 * time.Minute
	defaultShutdownTimeout = 10 * time.Minute
	defaultPowerTimeout    = 10 * time.Minute
	defaultReadyTimeout    = 30 * time.Minute
	// forceOffTimeout bounds how long ForceOff may take to show as Off.
	forceOffTimeout = 2 * time.Minute
)

// Apply implements providers.Provider.
func (p *Provider) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	ctx, done := p.call(ctx)
	defer done()
	b, cfg, release, err := p.use(req.Target)
	if err != nil {
		return nil, p.fail(req.Target, "Cannot apply step", err)
	}
	ended := false // the step succeeded
	defer func() {
		release()
		if req.Last && ended {
			p.endSession(ctx, req.Target)
		}
	}()
	if fn == nil {
		fn = func(*providers.Progress) error { return nil }
	}
	s := &stepRun{p: p, b: b, cfg: cfg, t: req.Target, step: req.Step, progress: fn}
	kind, ok := stepKinds[req.Step.Kind]
	if !ok {
		return nil, providers.Errorf(req.Target.Name, "Unsupported step", fmt.Sprintf("The redfish provider has no step %q.", req.Step.Kind))
	}
	if kind.host && req.Target.Device != "" {
		return nil, p.fail(req.Target, s.summary(), s.errNoHost())
	}
	res, err := kind.run(s, ctx)
	if err != nil {
		return res, p.fail(req.Target, s.summary(), err)
	}
	ended = true
	return res, s.warnings
}

// stepKinds are the steps the provider runs; host says the step acts on
// the host, which a device does not have.
var stepKinds = map[providers.StepKind]struct {
	run  func(*stepRun, context.Context) (*providers.ApplyResult, error)
	host bool
}{
	providers.StepUpdate:    {(*stepRun).update, false},
	providers.StepShutdown:  {(*stepRun).shutdown, true},
	providers.StepPowerOn:   {(*stepRun).powerOn, true},
	providers.StepReset:     {(*stepRun).reset, true},
	providers.StepReimage:   {(*stepRun).reimage, true},
	providers.StepWaitReady: {(*stepRun).waitReady, false},
}

// stepRun is one Apply call.
type stepRun struct {
	p        *Provider
	b        bmc
	cfg      config
	t        providers.Target
	step     providers.Step
	progress func(*providers.Progress) error
	warnings providers.Diagnostics
}

func (s *stepRun) summary() string {
	what := string(s.step.Kind)
	if s.step.Component != "" {
		what += " " + s.step.Component
	}
	return "Step " + what + " failed"
}

func (s *stepRun) report(msg string, pct int) error {
	return s.progress(&providers.Progress{Message: msg, Percent: pct})
}

func (s *stepRun) deadline(def time.Duration) time.Time {
	d := s.step.Timeout
	if d <= 0 {
		d = def
	}
	return s.p.clock.Now().Add(d)
}

// finishTask reports the task monitor at once (so the caller journals it
// before anything else can go wrong) and waits for it.
func (s *stepRun) finishTask(ctx context.Context, acc *accepted, deadline time.Time) (*providers.ApplyResult, error) {
	res := &providers.ApplyResult{}
	if acc == nil || acc.TaskURI == "" {
		res.Message = "accepted without a task monitor"
		return res, nil
	}
	res.TaskURI = acc.TaskURI
	if err := s.progress(&providers.Progress{Message: "task started", Percent: -1, TaskURI: acc.TaskURI}); err != nil {
		return res, err
	}
	// Honour the 202's Retry-After before the first poll.
	if d, ok := parseRetryAfter(acc.RetryAfter, s.p.clock.Now()); ok {
		if err := s.p.clock.Sleep(ctx, min(d, s.cfg.PollInterval, max(deadline.Sub(s.p.clock.Now()), 0))); err != nil {
			return res, err
		}
	}
	st, err := s.p.waitTask(ctx, s.b, s.cfg, acc.TaskURI, deadline, s.progress)
	if err != nil {
		return res, err
	}
	switch st.State {
	case providers.TaskCompleted:
		res.TaskState, res.Message = st.State, "task completed"
	case providers.TaskGone:
		res.TaskState = st.State
		res.Message = "task monitor gone (the BMC deletes finished tasks); wait_ready verifies the outcome"
	default:
		msg := "the BMC task ended " + st.State
		if len(st.Messages) > 0 {
			msg += ": " + strings.Join(st.Messages, "; ")
		}
		return res, errors.New(msg)
	}
	return res, nil
}

func (s *stepRun) update(ctx context.Context) (*providers.ApplyResult, error) {
	if s.step.ImageURI == "" {
		return nil, errors.New("the step has no image_uri")
	}
	us, err := s.b.UpdateService(ctx)
	if err != nil {
		return nil, err
	}
	remote := isRemoteImage(s.step.ImageURI)
	method, planned := s.step.Method, true
	if method == "" || method == MethodAuto {
		// Older plans and tests: the provider chooses, as before plans
		// recorded the method.
		planned, method = false, s.cfg.UpdateMethod
		if method == MethodAuto {
			method = MethodPush
			if us.SimpleUpdateTarget != "" && remote {
				method = MethodSimpleUpdate
			}
		}
	}
	deadline := s.deadline(defaultUpdateTimeout)
	if t := s.resumeUpdate(ctx); t != nil {
		return s.attach(ctx, t, deadline)
	}
	if us.Offline != "" {
		// Enabled at plan, offline now: the image is not sent (rule 47).
		return nil, errors.New(us.Offline + ": the image was not sent; plan again once the BMC's UpdateService is enabled")
	}
	var acc *accepted
	switch method {
	case MethodSimpleUpdate:
		if us.SimpleUpdateTarget == "" {
			return nil, errors.New("the BMC does not offer UpdateService.SimpleUpdate; use method \"push\"")
		}
		if !remote {
			return nil, errors.New("SimpleUpdate needs an image URL the BMC can fetch, not a local path")
		}
		if s.step.SHA256 != "" {
			// The BMC pulls the image itself: check first that the URL
			// serves the reviewed bytes.
			if err := s.verifyPull(ctx); err != nil {
				return nil, err
			}
		}
		// A map, not gofish's parameter struct: gofish has no field for
		// @Redfish.OperationApplyTime.
		body := map[string]any{"ImageURI": s.step.ImageURI}
		if s.step.ApplyTime != "" {
			body["@Redfish.OperationApplyTime"] = s.step.ApplyTime
		}
		if planned {
			// Exactly what the plan decided from the BMC's ActionInfo.
			if s.step.TransferProtocol != "" {
				body["TransferProtocol"] = s.step.TransferProtocol
			}
			if len(s.step.Targets) > 0 {
				body["Targets"] = s.step.Targets
			}
		} else if us.SimpleUpdateTargets {
			// Some BMCs refuse an update that does not say what it is for.
			if t := s.targets(ctx); t != nil {
				body["Targets"] = t
			}
		}
		if err := s.report("SimpleUpdate "+redactURL(s.step.ImageURI), -1); err != nil {
			return nil, err
		}
		acc, err = s.b.Post(ctx, us.SimpleUpdateTarget, body)
		if err != nil {
			return nil, updateRefused("SimpleUpdate", body, err)
		}
	case MethodPush, providers.MethodMultipartPush, providers.MethodHTTPPush:
		acc, err = s.push(ctx, us, method)
	default:
		return nil, fmt.Errorf("unknown update method %q", method)
	}
	if err != nil {
		return nil, err
	}
	if acc != nil && acc.Status == http.StatusNoContent {
		// 204: accepted with nothing to follow (a Location, if any, is
		// not a task monitor then); wait_ready verifies the version.
		return &providers.ApplyResult{Message: "accepted by the BMC (HTTP 204, no task to follow); the version is verified when it is read back"}, nil
	}
	return s.finishTask(ctx, acc, deadline)
}

// updateRefused explains a refused update: a 400 naming one of the
// parameters sent says which, and what was sent.
func updateRefused(action string, body map[string]any, err error) error {
	var re *schemas.Error
	if !errors.As(err, &re) || re.HTTPReturnedStatusCode != http.StatusBadRequest {
		return fmt.Errorf("%s: %w", action, err)
	}
	text := re.Message + " " + strings.Join(messageArgs(re), " ")
	for _, x := range re.ExtendedInfos {
		text += " " + x.Message
	}
	for _, p := range []string{"Targets", "TransferProtocol", "ImageURI"} {
		if strings.Contains(text, p) {
			sent := "none"
			if v, ok := body[p]; ok {
				sent = fmt.Sprint(v)
				if p == "ImageURI" {
					sent = redactURL(fmt.Sprint(v))
				}
			}
			return fmt.Errorf("%s refused its %s parameter (sent: %s): %s", action, p, sent, describe(err))
		}
	}
	return fmt.Errorf("%s: %w", action, err)
}

// targets is the Targets of an update the plan did not decide: the
// @odata.id of every active inventory member the step's Match selects, or
// nil when there is no match rule or no such member (the update then goes
// without Targets, as before).
func (s *stepRun) targets(ctx context.Context) []string {
	if s.step.Match == (providers.Match{}) {
		return nil
	}
	items, err := s.b.Inventory(ctx)
	if err != nil {
		s.p.log.Debug("reading the inventory for Targets failed; updating without", "server", s.t.Name, "error", s.p.scrub(describe(err)))
		return nil
	}
	var out []string
	for _, it := range items {
		if it.IsActive() && s.step.Match.Selects(it.Component) && it.URI != "" {
			out = append(out, it.URI)
		}
	}
	return out
}

// isRemoteImage tells an image URL (the BMC can fetch it) from a local path
// (only the provider can read it, so it must be pushed).
func isRemoteImage(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Host != "" && u.Scheme != "file"
}

// redactURL drops user info from an image URL before it reaches a message.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

func (s *stepRun) shutdown(ctx context.Context) (*providers.ApplyResult, error) {
	sys, err := s.b.System(ctx, s.t.System)
	if err != nil {
		return nil, err
	}
	if sys.PowerState == providers.PowerOff {
		return &providers.ApplyResult{Message: "already off"}, nil
	}
	if allows(sys, "GracefulShutdown") {
		if _, err := s.resetTo(ctx, sys, "GracefulShutdown", "graceful shutdown", "GracefulShutdown, the server was not shut down"); err != nil {
			return nil, err
		}
		off, err := s.waitPower(ctx, providers.PowerOff, s.deadline(defaultShutdownTimeout))
		if err != nil {
			return nil, err
		}
		if off {
			return &providers.ApplyResult{Message: "shut down gracefully"}, nil
		}
		s.warnings = append(s.warnings, providers.Diagnostic{Severity: providers.Warning, Server: s.t.Name,
			Summary: "Graceful shutdown timed out", Detail: "The server did not power off in time; it was forced off."})
	}
	if _, err := s.resetTo(ctx, sys, "ForceOff", "force off", "ForceOff, the server was not powered off"); err != nil {
		return nil, err
	}
	off, err := s.waitPower(ctx, providers.PowerOff, s.p.clock.Now().Add(forceOffTimeout))
	if err != nil {
		return nil, err
	}
	if !off {
		return nil, fmt.Errorf("the server still reports power on %s after ForceOff", forceOffTimeout)
	}
	return &providers.ApplyResult{Message: "forced off"}, nil
}

// allows reports whether the system accepts resetType; a system that lists
// nothing is assumed to accept the standard types.
func allows(sys *systemInfo, resetType string) bool {
	return len(sys.ResetTypes) == 0 || slices.Contains(sys.ResetTypes, resetType)
}

// waitPower polls until the power state is want (true) or the deadline
// passes (false). Read errors are tolerated until the deadline.
func (s *stepRun) waitPower(ctx context.Context, want string, deadline time.Time) (bool, error) {
	for {
		sys, err := s.b.System(ctx, s.t.System)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if err == nil && sys.PowerState == want {
			return true, nil
		}
		now := s.p.clock.Now()
		if !now.Before(deadline) {
			return false, nil
		}
		if err := s.p.clock.Sleep(ctx, min(s.cfg.PollInterval, deadline.Sub(now))); err != nil {
			return false, err
		}
	}
}

func (s *stepRun) powerOn(ctx context.Context) (*providers.ApplyResult, error) {
	sys, err := s.b.System(ctx, s.t.System)
	if err != nil {
		return nil, err
	}
	if sys.PowerState == providers.PowerOn {
		return &providers.ApplyResult{Message: "already on"}, nil
	}
	if _, err := s.resetTo(ctx, sys, "On", "power on", "ResetType On, the server was not powered on"); err != nil {
		return nil, err
	}
	on, err := s.waitPower(ctx, providers.PowerOn, s.deadline(defaultPowerTimeout))
	if err != nil {
		return nil, err
	}
	if !on {
		return nil, errors.New("the server did not report power on in time")
	}
	return &providers.ApplyResult{Message: "powered on"}, nil
}

// resetHost resets the host with resetType, or powers it on when it is off
// (a restart of a powered-off host is refused by most BMCs). A reset type
// the system does not list falls back to ForceRestart.
func (s *stepRun) resetHost(ctx context.Context, sys *systemInfo, resetType string) (*accepted, string, error) {
	if resetType == "" {
		resetType = "GracefulRestart"
	}
	if sys.PowerState == providers.PowerOff {
		resetType = "On"
	} else if !allows(sys, resetType) {
		resetType = "ForceRestart"
	}
	if sys.ResetTarget == "" {
		return nil, resetType, errors.New("the system offers no Reset action")
	}
	acc, err := s.resetTo(ctx, sys, resetType, "reset "+resetType, "reset "+resetType+", the server was not reset")
	return acc, resetType, err
}

// resetTo sends the system's Reset action with resetType, first telling
// the caller what it does; refused words what the BMC refused.
func (s *stepRun) resetTo(ctx context.Context, sys *systemInfo, resetType, what, refused string) (*accepted, error) {
	if err := s.report(what, -1); err != nil {
		return nil, err
	}
	acc, err := s.b.Post(ctx, sys.ResetTarget, map[string]any{"ResetType": resetType})
	if err != nil {
		return nil, fmt.Errorf("the BMC refused %s: %w", refused, err)
	}
	return acc, nil
}

func (s *stepRun) reset(ctx context.Context) (*providers.ApplyResult, error) {
	sys, err := s.b.System(ctx, s.t.System)
	if err != nil {
		return nil, err
	}
	acc, rt, err := s.resetHost(ctx, sys, s.step.ResetType)
	if err != nil {
		return nil, err
	}
	deadline := s.deadline(defaultPowerTimeout)
	res, err := s.finishTask(ctx, acc, deadline)
	if err != nil {
		return res, err
	}
	// A reset that ends in a power state (On from Off, ForceOff,
	// GracefulShutdown) succeeds only once the BMC reports that state. A
	// restart passes through Off and back, so reading On proves nothing:
	// it is reported as requested, and wait_ready confirms the server.
	want := ""
	switch rt {
	case "On", "ForceOn":
		want = providers.PowerOn
	case "ForceOff", "GracefulShutdown":
		want = providers.PowerOff
	}
	if want == "" {
		if res.TaskURI == "" {
			res.Message = "reset " + rt + " requested (accepted by the BMC)"
		}
		return res, nil
	}
	ok, err := s.waitPower(ctx, want, deadline)
	if err != nil {
		return res, err
	}
	if !ok {
		return res, fmt.Errorf("reset %s was accepted, but the server did not report power %s in time", rt, want)
	}
	if res.TaskURI == "" {
		res.Message = "reset " + rt + " done; power reads " + want
	}
	return res, nil
}

func (s *stepRun) reimage(ctx context.Context) (*providers.ApplyResult, error) {
	if s.step.ImageURI == "" {
		return nil, errors.New("the step has no image_uri")
	}
	if !isRemoteImage(s.step.ImageURI) {
		return nil, errors.New("virtual media needs an image URL the BMC can fetch, not a local path")
	}
	sys, err := s.b.System(ctx, s.t.System)
	if err != nil {
		return nil, err
	}
	vm, err := s.b.VirtualMedia(ctx, sys)
	if err != nil {
		return nil, err
	}
	if !s.step.ResumeSince.IsZero() && vm.Inserted && vm.Image == s.step.ImageURI {
		// Resumed after a crash, with this image already inserted by the
		// earlier attempt: never insert, override and reset twice.
		switch {
		case sys.BootOverride == "Cd" && sys.BootOverrideEnabled != "" && sys.BootOverrideEnabled != "Disabled":
			// Inserted and the boot override pending: only the reset is missing.
			return s.reimageReset(ctx, sys, "resumed: media and boot override already set; ")
		case sys.PowerState == providers.PowerPoweringOn:
			// The reset happened and consumed the override: the host is
			// booting (installing) from the media; wait_ready follows it.
			return &providers.ApplyResult{Message: "resumed: the host is already booting " + redactURL(s.step.ImageURI) + " from virtual media"}, nil
		case sys.PowerState == providers.PowerOn:
			// The boot may have finished between the executor's check and
			// now: with the media still inserted and the component
			// reporting exactly the step's version, the install is done;
			// installing again would only repeat it.
			if v, ok := s.installedVersion(ctx); ok {
				return &providers.ApplyResult{Message: "resumed: the host already booted " + redactURL(s.step.ImageURI) + " from virtual media and reports " + v}, nil
			}
		}
	}
	if vm.Inserted && vm.EjectTarget != "" {
		if err := s.report("eject "+redactURL(vm.Image), -1); err != nil {
			return nil, err
		}
		if _, err := s.b.Post(ctx, vm.EjectTarget, map[string]any{}); err != nil {
			return nil, fmt.Errorf("ejecting the current virtual media: %w", err)
		}
	}
	if err := s.report("insert "+redactURL(s.step.ImageURI), -1); err != nil {
		return nil, err
	}
	media := map[string]any{"Image": s.step.ImageURI, "Inserted": true, "WriteProtected": true}
	if vm.InsertTarget != "" {
		acc, err := s.b.Post(ctx, vm.InsertTarget, media)
		if err != nil {
			return nil, fmt.Errorf("inserting virtual media: %w", err)
		}
		if _, err := s.finishTask(ctx, acc, s.deadline(defaultPowerTimeout)); err != nil {
			return nil, fmt.Errorf("inserting virtual media: %w", err)
		}
	} else if err := s.b.Patch(ctx, vm.URI, media); err != nil {
		return nil, fmt.Errorf("inserting virtual media: %w", err)
	}
	if err := s.report("boot once from Cd", -1); err != nil {
		return nil, err
	}
	boot := map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}}
	if err := s.b.Patch(ctx, sys.URI, boot); err != nil {
		return nil, fmt.Errorf("setting the one-time boot override: %w", err)
	}
	return s.reimageReset(ctx, sys, "")
}

// installedVersion reports whether the step's component is at the step's
// version: every active member its Match selects, compared by the step's
// scheme (the one "at target" rule, providers.Match.AtTarget). A doubt (a
// version the scheme cannot read) reinstalls rather than skips.
func (s *stepRun) installedVersion(ctx context.Context) (string, bool) {
	if s.step.Target.Version == "" {
		return "", false
	}
	st, err := s.p.readState(ctx, s.b, s.t)
	if err != nil {
		return "", false
	}
	at, _, err := s.step.Match.AtTarget(s.step.Target, st.components())
	if err != nil || !at {
		return "", false
	}
	return orName(s.step.Component, s.step.Match) + " " + s.step.Target.Version, true
}

// reimageReset resets the host into the inserted media.
func (s *stepRun) reimageReset(ctx context.Context, sys *systemInfo, note string) (*providers.ApplyResult, error) {
	acc, rt, err := s.resetHost(ctx, sys, "ForceRestart")
	if err != nil {
		return nil, err
	}
	res, err := s.finishTask(ctx, acc, s.deadline(defaultPowerTimeout))
	if res != nil {
		res.Message = note + "booting " + redactURL(s.step.ImageURI) + " from virtual media (reset " + rt + ")"
	}
	return res, err
}

// waitReady polls until the server is on, healthy and reports every
// expected version. Connection errors, refused connections and lost
// sessions are normal while a BMC resets and are tolerated until the
// deadline.
func (s *stepRun) waitReady(ctx context.Context) (*providers.ApplyResult, error) {
	deadline := s.deadline(defaultReadyTimeout)
	var (
		lastWhy string
		lastErr error
	)
	for {
		why, obs, err := s.readyOnce(ctx)
		if ctx.Err() != nil {
			return nil, waitErr(ctx, "waiting for the server", lastWhy, lastErr)
		}
		if err == nil && why == "" {
			return &providers.ApplyResult{Message: "ready", Observation: obs}, nil
		}
		if err != nil {
			lastErr = err
		} else {
			lastWhy, lastErr = why, nil
			if perr := s.report(why, -1); perr != nil {
				return nil, perr
			}
		}
		now := s.p.clock.Now()
		if !now.Before(deadline) {
			return nil, deadlineErr("the server was not ready", deadline, "still "+lastWhy, lastErr)
		}
		if err := s.p.clock.Sleep(ctx, min(s.cfg.PollInterval, deadline.Sub(now))); err != nil {
			return nil, waitErr(ctx, "waiting for the server", lastWhy, lastErr)
		}
	}
}

// readyOnce observes once; why is "" when the server is ready, otherwise
// what it still waits for.
// A device is ready when its Manager answers and its versions read back:
// it has no host whose power or health would say more.
func (s *stepRun) readyOnce(ctx context.Context) (string, *providers.Observation, error) {
	sys, err := s.subject(ctx)
	if err != nil {
		return "", nil, err
	}
	if sys.PowerState != providers.PowerOn && s.t.Device == "" {
		return "power is " + orUnknown(sys.PowerState), nil, nil
	}
	if why := providers.ReadyHealth(sys.Health, s.step.AcceptCritical); why != "" && s.t.Device == "" {
		return why, nil, nil
	}
	st, err := s.p.readState(ctx, s.b, s.t)
	if err != nil {
		return "", nil, err
	}
	comps := st.components()
	var missing []string
	for _, e := range s.step.Expect {
		// Every active member the rule selects, compared in the
		// component's scheme: the BMC may decorate the version ("U30
		// v2.54 (03/01/2023)" for "U30 v2.54").
		at, why, err := e.Match.AtTarget(e.Target, comps)
		switch {
		case err != nil:
			missing = append(missing, fmt.Sprintf("%s: %v", orName(e.Component, e.Match), err))
		case !at:
			missing = append(missing, fmt.Sprintf("%s not at %s: %s", orName(e.Component, e.Match), e.Target.Version, why))
		}
	}
	if len(missing) > 0 {
		return strings.Join(missing, ", "), nil, nil
	}
	obs := observed(s.t.Name, s.b.Auth(), sys, comps)
	return "", &obs, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orName(name string, m providers.Match) string {
	if name != "" {
		return name
	}
	return matchText(m)
}
