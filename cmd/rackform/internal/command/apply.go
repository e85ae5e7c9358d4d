package command

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"golang.org/x/term"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/internal/version"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/plugin"
)

// applyCommand applies a saved plan.
type applyCommand struct {
	*Meta
	runOpts
	expectSHA     optionalString
	allowUnsigned bool
}

// optionalString is a string flag that knows whether it was given, so an
// empty value (an unset CI variable: -expect-sha256 "$SHA") is an error
// instead of no check at all.
type optionalString struct {
	value string
	set   bool
}

func (o *optionalString) String() string { return o.value }
func (o *optionalString) Set(v string) error {
	o.value, o.set = v, true
	return nil
}

func (c *applyCommand) Synopsis() string { return "Apply a saved plan, rack by rack" }
func (c *applyCommand) Usage() string    { return "rackform apply [options] PLANFILE" }

func (c *applyCommand) Description() string {
	return `Applies exactly the plan in PLANFILE (written by "rackform plan -out"):
stage by stage, cluster by cluster, rack by rack, with the thresholds, waits,
pauses and approval gates the plan resolved. Every state change is written to
a journal in the state directory before it is acted on, so running apply
again with the same plan after a crash resumes where it stopped: BMC tasks
in flight are polled, not started again, and no step runs twice.

The plan's embedded checksum detects corruption (a damaged or truncated
file), not tampering: anyone who can write the file can recompute it.
Tampering is detected by a signature: with ` + EnvTrustedKeys + ` set
(PEM public keys, or key file paths separated by ":"), apply refuses a plan
that is unsigned, signed by another key, or changed after it was signed
(targets, images, hooks, expiry, BMC addresses: every byte), and
-allow-unsigned is refused. Without trusted keys, -expect-sha256 with the
hash that was reviewed detects it; outside a terminal, apply requires one of
the two, or an explicit -allow-unsigned.

The plan is refused, and nothing is touched, when it is corrupt, truncated
or of an unknown format; when its signature or SHA-256 is not the expected
one; when it has expired; when it has already been applied; when the
provider plugin binaries differ from those that made the plan; when a
sensitive variable or an environment variable the configuration reads is not
supplied; and when another apply holds the state lock (with -lock-timeout,
apply waits for it; with the postgres backend and -join, an apply of the
same plan runs beside it as another worker: each worker claims rollout
groups, the others' records come through the database).

Providers are configured from the configuration snapshot inside the plan and
the plan's variable values, never from the files in the working directory.
Sensitive variables are not stored in a plan: supply them again with -var,
-var-file or RACKFORM_VAR_name, and set the environment variables the
configuration reads with env().

A provider plugin that dies is restarted (a few times, with backoff) and
the steps it had in flight resume from the journal as after a crash of
apply: a BMC task is polled, an accepted update is found, never flashed
again. A plugin that cannot be restarted stops the run ("stopped: provider
unavailable", exit 3) with its servers resumable, not failed.

The first SIGINT or SIGTERM starts nothing new, gives up at once what only
reads or waits (polling a BMC task, waiting for a server to be ready,
shutdown and power-on waits, hooks: all journaled and resumed by the next
apply), lets requests that change a BMC finish (an update or reset until
the BMC returns its task, a reimage), and exits 130; a second one exits at
once (the journal stays consistent and the next apply resumes).

Exit status: 0 every planned server reached its target or was skipped
before its steps began; 4 the run completed but some servers failed, were
skipped after their steps began, or were left powered off, drained or with
a staged image (they are listed, each with the command that brings it
back); 1 error, refused, or the run failed (a threshold with on_breach =
"fail"); 2 bad arguments, or outside a terminal a plan nothing vouches for;
3 paused (after a rack, at an approval gate, on a breached threshold) or
stopped (by rackform stop, or a provider that could not be restarted); 130
interrupted. A pause prints the exact command that continues the run.`
}

func (c *applyCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	c.runOpts.flags(fs)
	c.expectSHA, c.allowUnsigned = optionalString{}, false
	fs.Var(&c.expectSHA, "expect-sha256", "Refuse the plan unless its SHA-256 is `HASH` (as printed by plan): the hash that was reviewed.")
	fs.BoolVar(&c.join, "join", false, "With the postgres backend, when another apply of the same plan is running, drive the run beside it as another worker (each worker claims rollout groups) instead of refusing or waiting for its lock.")
	fs.BoolVar(&c.allowUnsigned, "allow-unsigned", false, "Apply a plan that is neither signed by a trusted key nor checked with -expect-sha256 (needed outside a terminal). Its checksum only detects corruption.")
	fs.BoolVar(&c.rerun, "rerun", false, "Run a failed run of this plan again: what finished is kept, what failed or did not start is applied again.")
	c.habitFlags(fs)
	return fs
}

func (c *applyCommand) Run(ctx context.Context, args []string) int {
	rest, code, ok := c.parseFlags(c.Flags(), args, c)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		fmt.Fprintf(c.Stderr, "Error: apply takes one plan file, got %d arguments\n\n%s", len(rest), helpText(c))
		return ExitUsage
	}
	name := rest[0]
	expect := strings.TrimSpace(c.expectSHA.value)
	if c.expectSHA.set && expect == "" {
		fmt.Fprintf(c.Stderr, "Error: -expect-sha256 is empty: give the SHA-256 plan printed for the reviewed plan (is the variable holding it unset?)\n\n%s", helpText(c))
		return ExitUsage
	}
	keys, err := trustedKeys(c.Getenv)
	if err != nil {
		return c.fail("%s", err)
	}
	if c.allowUnsigned && len(keys) > 0 {
		fmt.Fprintf(c.Stderr, "Error: -allow-unsigned cannot be used while %s is set: with trusted keys, only signed plans are applied\n", EnvTrustedKeys)
		return ExitUsage
	}
	file, err := regularfile.Read(name)
	if err != nil {
		return c.fail("cannot read the plan file: %s", err)
	}
	p, err := plan.Decode(file)
	if err != nil {
		return c.fail("%s is not a usable plan: %s", name, err)
	}
	sha := plan.SHA256(file)
	if c.expectSHA.set && !strings.EqualFold(strings.TrimPrefix(expect, "sha256:"), sha) {
		return c.fail("%s has SHA-256 %s, not the expected %s; it is not the plan that was reviewed", name, sha, expect)
	}
	switch {
	case len(keys) > 0:
		if err := verifyPlan(name, file, p, keys); err != nil {
			return c.fail("%s", err)
		}
	case c.expectSHA.set, c.allowUnsigned:
	case c.input && isTerminal(c.Stderr) && isTerminalReader(c.Stdin):
		// A person at a terminal applies the file they have: say what
		// was not checked.
		fmt.Fprintf(c.Stderr, "Warning: %s\n", unverifiedNote(name, p))
	default:
		fmt.Fprintf(c.Stderr, "Error: %s\nOutside a terminal, apply needs one of: %s with the public key of the plan job's signing key; -expect-sha256 HASH with the SHA-256 that was reviewed; or -allow-unsigned to accept any plan file that is not corrupt.\n", unverifiedNote(name, p), EnvTrustedKeys)
		return ExitUsage
	}
	if err := plan.CheckSteps(p); err != nil {
		return c.fail("%s is not a usable plan: %s", name, err)
	}
	// The command printed to resume is the one that works again: with the
	// same trust option (trusted keys come from the environment).
	c.planPath = name
	switch {
	case c.expectSHA.set:
		c.planPath = "-expect-sha256 " + sha + " " + name
	case c.allowUnsigned:
		c.planPath = "-allow-unsigned " + name
	}
	var control func(*executor.Executor) error
	if c.rerun {
		control = func(e *executor.Executor) error { return e.Rerun(ctx) }
	}
	return c.runOpts.apply(ctx, c.Meta, p, sha, file, control)
}

// unverifiedNote says why nothing vouches for the plan.
func unverifiedNote(name string, p *plan.Plan) string {
	if p.SignedBy != "" {
		return fmt.Sprintf("%s is signed by %s, but %s is not set, so the signature cannot be checked; its checksum detects corruption, not tampering.", name, p.SignedBy, EnvTrustedKeys)
	}
	return fmt.Sprintf("%s is not signed and no -expect-sha256 was given: its checksum detects corruption, not tampering.", name)
}

// runOpts are the options of the commands that drive a run: apply,
// continue and approve.
type runOpts struct {
	json        bool
	jsonInto    string
	lockTimeout time.Duration
	stateDir    string
	vars        stringList
	varFiles    stringList
	noColor     bool

	// runID is -run of continue and approve; fromEnv: the backend is
	// chosen by the environment (continue, approve), not by the plan.
	runID   string
	fromEnv bool

	// planPath is the plan file apply was given, after the trust option it
	// was given with ("-allow-unsigned plan.json"; "" for continue and
	// approve), for the command printed to resume.
	planPath string
	// rerun: apply -rerun starts a failed run again (executor.Rerun).
	rerun bool
	// recheck: continue reads the catalog again for the clusters planned
	// pending (availability.go).
	recheck bool
	// join: apply -join runs beside an apply of the same plan that holds
	// the lock, as another worker of the run (postgres backend only).
	join bool

	// Tests replace these; nil means the real ones.
	start   providerStarter
	hashOf  func(plan.Provider, func(string) string) (string, error)
	clock   executor.Clock
	holder  string
	poll    time.Duration
	signals func(chan<- os.Signal) func()
}

func (o *runOpts) flags(fs *flag.FlagSet) {
	o.vars, o.varFiles = nil, nil
	fs.BoolVar(&o.json, "json", false, "Print the machine-readable event stream (JSON lines, docs/json.md) on stdout instead of the progress view.")
	fs.StringVar(&o.jsonInto, "json-into", "", "Also write the JSON-lines event stream to `FILE` (beside the progress view).")
	fs.DurationVar(&o.lockTimeout, "lock-timeout", 0, "Wait up to `DURATION` for a state lock held by another apply (default: refuse at once).")
	fs.StringVar(&o.stateDir, "state-dir", state.DefaultDir, "Keep the journal, plans and lock in `DIR`.")
	fs.Var(&o.vars, "var", "Set input variable `NAME=VALUE` (sensitive variables must be given again). Repeatable.")
	fs.Var(&o.varFiles, "var-file", "Read input variables from `FILE`. Repeatable.")
	fs.BoolVar(&o.noColor, "no-color", false, "Never colour or redraw the output (also: the NO_COLOR environment variable).")
}

// fail prints an error and returns ExitError.
func (m *Meta) fail(format string, args ...any) int {
	fmt.Fprintf(m.Stderr, "Error: "+format+"\n", args...)
	return ExitError
}

// openState opens the state backend in dir.
func openState(dir string) (*state.Dir, error) {
	b, err := state.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the state directory %s: %w", dir, err)
	}
	return b, nil
}

// currentPlan loads the plan the state backend applied last, verified like
// a plan file.
func currentPlan(ctx context.Context, b executor.Backend, dir string) (*plan.Plan, string, []byte, error) {
	sha, err := b.CurrentPlan(ctx)
	if errors.Is(err, executor.ErrNotFound) {
		return nil, "", nil, fmt.Errorf("the state directory %s holds no plan; run rackform apply PLANFILE first", dir)
	}
	if err != nil {
		return nil, "", nil, err
	}
	file, err := b.LoadPlan(ctx, sha)
	if err != nil {
		return nil, "", nil, fmt.Errorf("loading plan %s from %s: %w", shortSHA(sha), dir, err)
	}
	if got := plan.SHA256(file); got != sha {
		return nil, "", nil, fmt.Errorf("the stored plan %s in %s does not hash to its name (%s); it was modified", shortSHA(sha), dir, shortSHA(got))
	}
	p, err := plan.Decode(file)
	if err != nil {
		return nil, "", nil, fmt.Errorf("the stored plan %s is not usable: %w", shortSHA(sha), err)
	}
	return p, sha, file, nil
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// controlExecutor builds an executor without providers, for control
// operations and status.
func controlExecutor(b executor.Backend, p *plan.Plan, sha string) (*executor.Executor, error) {
	return executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: b})
}

// apply checks that the plan may run, starts its providers from the
// plan's configuration snapshot and drives the run. control, when set, is
// recorded (continue, approve) after every check passed and before Run.
func (o *runOpts) apply(ctx context.Context, m *Meta, p *plan.Plan, sha string, file []byte, control func(*executor.Executor) error) int {
	clock := o.clock
	if clock == nil {
		clock = executor.RealClock()
	}
	expired := func() int {
		na := p.NotAfter
		return m.fail("plan %s expired at %s (made %s); plan again: what it observed is too old to trust", shortSHA(sha), na.UTC().Format(time.RFC3339), p.CreatedAt.UTC().Format(time.RFC3339))
	}
	isExpired := !p.NotAfter.IsZero() && clock.Now().After(p.NotAfter)
	if _, err := os.Stat(o.stateDir); isExpired && errors.Is(err, fs.ErrNotExist) && !o.postgresSelected(m, p) {
		return expired() // no state, so no started run: refuse touching nothing
	}
	b, err := o.openBackend(ctx, m, p)
	if err != nil {
		return m.fail("%s", err)
	}
	defer b.Close()
	if o.join && b.pg == nil {
		return m.fail("-join needs the postgres state backend (rackform { backend \"postgres\" } in the configuration, RACKFORM_PG_CONN_STR set): with %s only one apply drives a run", b.where)
	}

	ctl, err := controlExecutor(b, p, sha)
	if err != nil {
		return m.fail("%s", err)
	}
	st, err := ctl.Status(ctx)
	if err != nil {
		return m.fail("%s", err)
	}
	switch st.Run.State.Name {
	case executor.Completed, executor.Skipped:
		return m.fail("plan %s: %s", shortSHA(sha), executor.ErrAlreadyApplied)
	case executor.Failed:
		if !o.rerun {
			return m.fail("plan %s: %s (or run it again: rackform apply -rerun PLANFILE)", shortSHA(sha), executor.ErrRunFailed)
		}
	default:
		if o.rerun {
			return m.fail("plan %s: -rerun starts a failed run again, and this run is %s", shortSHA(sha), st.Run.State.String())
		}
	}
	// Expiry refuses only a fresh start: a started run is resumed and
	// continued after not_after (each server is observed again anyway).
	if isExpired && st.Run.State.Name == executor.NotStarted {
		return expired()
	}
	// Likewise an older plan format: a run started with it is resumed,
	// a new one needs what format 1.3 records (delivery, identity) in
	// the compact form of 1.4 (the observation it compares against).
	if st.Run.State.Name == executor.NotStarted {
		if err := plan.Applicable(p); err != nil {
			return m.fail("plan %s: %s", shortSHA(sha), err)
		}
	}
	if o.lockTimeout == 0 {
		if h, err := b.LockHolder(ctx); err == nil && !executor.HolderGone(*h) && !(o.join && control == nil && h.PlanSHA256 == sha && b.pg != nil) {
			if control != nil {
				// Another process is applying this backend's run: record
				// the request for it to obey, and leave the driving to it.
				if h.PlanSHA256 == sha {
					if err := control(ctl); err != nil {
						return m.controlFailed(err)
					}
					w := m.Stdout
					if o.json {
						w = m.Stderr // stdout is the event stream
					}
					fmt.Fprintf(w, "Recorded. The apply running as %s (pid %d, since %s) will act on it.\n", h.Who, h.PID, h.Since.UTC().Format(time.RFC3339))
					return ExitOK
				}
			}
			code := m.fail("%s", &executor.LockedError{Holder: *h})
			staleLockHint(m, h)
			return code
		}
	}
	if err := checkInputs(p, o.vars, o.varFiles, m.Getenv); err != nil {
		return m.fail("%s", err)
	}
	hashOf := o.hashOf
	if hashOf == nil {
		hashOf = pluginSHA256
	}
	for _, pp := range p.Providers {
		got, err := hashOf(pp, m.Getenv)
		if err != nil {
			return m.fail("provider %q: %s", pp.Name, err)
		}
		if got != pp.SHA256 {
			return m.fail("provider %q: the plugin binary (%s) hashes to %s, but the plan was made with %s; apply runs only the provider code that made the plan: plan again with this rackform", pp.Name, pp.Source, shortSHA(got), shortSHA(pp.SHA256))
		}
	}

	cfg, loader, cleanup, diags := loadSnapshot(p, o.vars, o.varFiles, m.Getenv)
	defer cleanup()
	color := m.Color && !o.noColor
	if diags.HasErrors() {
		m.showDiagnostics(diags, loader.Files(), color)
		return ExitError
	}
	if len(cfg.MissingEnv) > 0 {
		return m.fail("the configuration reads the environment variables %s, which are not set", strings.Join(cfg.MissingEnv, ", "))
	}

	// Signals: the first one is graceful (ctx, also cancelled by main), the
	// second one hard.
	graceful, cancelGraceful := context.WithCancel(ctx)
	defer cancelGraceful()
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	sigs := o.signals
	if sigs == nil {
		sigs = notifySignals
	}
	// Until a live view exists, notes go to stderr; then above its block.
	var note atomic.Pointer[func(string)]
	toStderr := func(s string) { fmt.Fprintln(m.Stderr, s) }
	note.Store(&toStderr)
	sigc := make(chan os.Signal, 4)
	stopSigs := sigs(sigc)
	defer stopSigs()
	go func() {
		n := 0
		for {
			select {
			case <-hard.Done():
				return
			case <-sigc:
				n++
				if n == 1 {
					(*note.Load())("Interrupt received: starting nothing new, giving up polls and waits (the next apply resumes them), letting requests that change a BMC finish. Interrupt again to exit at once (the journal stays consistent).")
					cancelGraceful()
				} else {
					cancelHard()
					return
				}
			}
		}
	}()

	start := o.start
	if start == nil {
		// Plugins are pinned by the plan, not by a lock file in the working
		// directory (the configuration's directory is a snapshot in memory).
		pins, cleanPins, err := planPins(p)
		defer cleanPins()
		if err != nil {
			return m.fail("pinning the plan's provider plugins: %s", err)
		}
		start = pluginStarter(pins, m.Getenv, m.Stderr)
	}
	running, pd := startProviders(hard, cfg, start)
	defer running.Close()
	if pd.HasErrors() {
		m.showDiagnostics(pd, loader.Files(), color)
		return ExitError
	}
	for _, info := range running.info {
		for _, pp := range p.Providers {
			if pp.Name == info.Name && info.SHA256 != "" && info.SHA256 != pp.SHA256 {
				return m.fail("provider %q: the started plugin hashes to %s, but the plan was made with %s", pp.Name, shortSHA(info.SHA256), shortSHA(pp.SHA256))
			}
		}
	}
	// A plugin that dies is restarted from the binary the plan pinned, and
	// configured as above; see supervised.
	running.supervise(start, func(name string) string {
		for _, pp := range p.Providers {
			if pp.Name == name {
				return pp.SHA256
			}
		}
		return ""
	}, func(s string) { (*note.Load())(s) })
	provs := map[string]providers.Provider{}
	targets := providerTargets(cfg)
	for name, pr := range running.byName {
		provs[name] = &credentialed{Provider: pr, targets: targets}
	}

	// Output: the human view unless -json; the JSON stream on stdout
	// (-json) or into a file (-json-into).
	var sinks []executor.Sink
	var view *applyview.View
	if o.json {
		js := applyview.NewJSON(m.Stdout)
		js.Version(version.String())
		sinks = append(sinks, js)
	} else {
		live := isTerminal(m.Stdout) && !o.noColor && m.Getenv("TERM") != "dumb"
		view = applyview.New(m.Stdout, p, sha, applyview.Options{Live: live, Color: color, Now: clock.Now, Command: nextCommand(b.dir, o.planPath), Width: termWidth(m.Stdout, m.Getenv)})
		if live {
			viewNote := view.Note
			note.Store(&viewNote)
			stopResize := followResize(view, m.Stdout, m.Getenv)
			defer stopResize()
		}
		sinks = append(sinks, view)
	}
	if o.jsonInto != "" {
		f, err := os.OpenFile(o.jsonInto, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return m.fail("opening -json-into file: %s", err)
		}
		defer f.Close()
		// Appended: each run of apply or continue starts with its own
		// version line.
		js := applyview.NewJSON(f)
		js.Version(version.String())
		sinks = append(sinks, js)
	}
	var available map[string]string
	if o.recheck {
		var notes []string
		available, notes = availableNow(p)
		for _, n := range notes {
			fmt.Fprintln(m.Stderr, "Note: "+n)
		}
	}
	e, err := executor.New(executor.Options{
		Plan: p, PlanSHA256: sha, PlanFile: file,
		Providers: provs, Backend: b.Backend, Clock: clock,
		Events:      multiSink(sinks),
		Holder:      o.holder,
		LockTimeout: o.lockTimeout,
		Join:        o.join && b.pg != nil,
		// Control records from other processes (stop, skip, approve) are
		// noticed within a second.
		PollInterval: pollOr(o.poll, time.Second),
		Available:    available,
	})
	if err != nil {
		return m.fail("%s", err)
	}
	if view != nil {
		if st, err := e.Status(ctx); err == nil {
			view.Start(st)
		}
		defer view.Close()
	}
	if control != nil {
		if err := control(e); err != nil {
			return m.controlFailed(err)
		}
	}
	out, err := e.Run(graceful, hard)
	if err != nil {
		if view != nil {
			view.Close()
		}
		var le *executor.LockedError
		switch {
		case errors.As(err, &le):
			code := m.fail("%s", le)
			staleLockHint(m, &le.Holder)
			return code
		case hard.Err() != nil:
			fmt.Fprintln(m.Stderr, "Interrupted.")
			return ExitInterrupted
		}
		return m.fail("%s", err)
	}
	if hard.Err() != nil && out.Status == executor.OutcomeInterrupted {
		return ExitInterrupted
	}
	return runExitCode(out)
}

func pollOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (m *Meta) controlFailed(err error) int {
	var re *executor.RefusedError
	if errors.As(err, &re) {
		fmt.Fprintf(m.Stderr, "Error: %s\n", re)
		return ExitError
	}
	return m.fail("%s", err)
}

// notifySignals relays SIGINT and SIGTERM to c until the returned function
// is called. It only adds a listener: main's NotifyContext still turns the
// first signal into a cancelled context, and neither signal kills the
// process while both listen.
func notifySignals(c chan<- os.Signal) func() {
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	return func() { signal.Stop(c) }
}

type multiSink []executor.Sink

func (s multiSink) Event(e executor.Event) {
	for _, x := range s {
		x.Event(e)
	}
}

// credentialed adds each server's credentials from the configuration to
// the targets the executor passes (it knows only names and BMC URLs from
// the plan, which holds no secret).
type credentialed struct {
	providers.Provider
	targets map[string]providers.Target
}

func (c *credentialed) fill(t providers.Target) providers.Target {
	if ct, ok := c.targets[t.Name]; ok && ct.Credentials != nil && t.Credentials == nil {
		t.Credentials = ct.Credentials
	}
	return t
}

func (c *credentialed) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	r := *req
	r.Targets = make([]providers.Target, len(req.Targets))
	for i, t := range req.Targets {
		r.Targets[i] = c.fill(t)
	}
	return c.Provider.Observe(ctx, &r, fn)
}

func (c *credentialed) Apply(ctx context.Context, req *providers.ApplyRequest, fn func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	r := *req
	r.Target = c.fill(r.Target)
	return c.Provider.Apply(ctx, &r, fn)
}

func (c *credentialed) Task(ctx context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	r := *req
	r.Target = c.fill(r.Target)
	return c.Provider.Task(ctx, &r)
}

// pluginSHA256 hashes the binary that would serve provider pp: the
// rackform binary for the built-in one, else the plugin in the plugins
// directory.
func pluginSHA256(pp plan.Provider, getenv func(string) string) (string, error) {
	if pp.Source == "builtin" {
		return plugin.BuiltinSHA256()
	}
	dir := plugin.Dir("", getenv)
	bins, err := plugin.Discover(dir)
	if err != nil {
		return "", err
	}
	for _, b := range bins {
		if b.Name == pp.Name {
			return plugin.FileSHA256(b.Path)
		}
	}
	return "", fmt.Errorf("no plugin binary %s%s in %s", plugin.BinaryPrefix, pp.Name, dir)
}

// checkInputs refuses to go on when a sensitive variable of the plan is not
// supplied again, or an environment variable the configuration reads is
// unset. Values are never read into messages.
func checkInputs(p *plan.Plan, vars, varFiles []string, getenv func(string) string) error {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	given := map[string]bool{}
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		given[strings.TrimSpace(name)] = true
	}
	parser := hclparse.NewParser()
	for _, path := range varFiles {
		src, err := regularfile.Read(path)
		if err != nil {
			return fmt.Errorf("cannot read the -var-file %s: %v", path, err)
		}
		var f *hcl.File
		var diags hcl.Diagnostics
		if strings.HasSuffix(path, ".json") {
			f, diags = parser.ParseJSON(src, path)
		} else {
			f, diags = parser.ParseHCL(src, path)
		}
		if diags.HasErrors() || f == nil {
			return fmt.Errorf("the -var-file %s cannot be parsed", path)
		}
		attrs, _ := f.Body.JustAttributes()
		for n := range attrs {
			given[n] = true
		}
	}
	var missing []string
	for _, n := range p.Inputs.Sensitive {
		if !given[n] && getenv(config.EnvVarPrefix+n) == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the sensitive variables %s are not stored in the plan and must be given again: use -var NAME=VALUE, -var-file or %sNAME", strings.Join(missing, ", "), config.EnvVarPrefix)
	}
	sensitive := map[string]bool{}
	for _, n := range p.Inputs.Sensitive {
		sensitive[n] = true
	}
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if _, inPlan := p.Inputs.Variables[name]; inPlan && !sensitive[name] {
			return fmt.Errorf("-var %s: the variable is not sensitive, so its value is in the plan; apply uses exactly what was reviewed (plan again to change it)", name)
		}
	}
	var unset []string
	for _, n := range p.Inputs.Env {
		if getenv(n) == "" {
			unset = append(unset, n)
		}
	}
	if len(unset) > 0 {
		return fmt.Errorf("the configuration reads the environment variables %s (credentials), which are not set", strings.Join(unset, ", "))
	}
	return nil
}

// snapshotName says where the configuration comes from at apply, in errors
// ("inventory.csv is not in the plan's configuration snapshot").
const snapshotName = "the plan's configuration snapshot"

// loadSnapshot loads the configuration recorded in the plan, from the
// plan's snapshot alone, in memory: its *.rf.hcl files and the files the
// configuration read with file() or templatefile() when the plan was made.
// Nothing is read from the plan's configuration directory or the working
// directory, so apply evaluates exactly what was reviewed; a file the
// configuration reads that is not in the snapshot (a plan of format 1.0
// made before data files were recorded) is an error naming it. The plan's
// non-sensitive variable values win over anything given now; the sensitive
// ones are given again (-var, -var-file, RACKFORM_VAR_).
func loadSnapshot(p *plan.Plan, vars, varFiles []string, getenv func(string) string) (*config.Config, *config.Loader, func(), hcl.Diagnostics) {
	loader := config.NewLoader(config.LoadOptions{Vars: vars, VarFiles: varFiles, Getenv: getenv})
	fail := func(cleanup func(), summary string, err error) (*config.Config, *config.Loader, func(), hcl.Diagnostics) {
		return nil, loader, cleanup, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: err.Error()}}
	}
	mem, err := snapshotFS(p.Config)
	if err != nil {
		return fail(func() {}, "Unusable configuration snapshot", err)
	}
	files := append([]string(nil), varFiles...)
	cleanup := func() {}
	if len(p.Inputs.Variables) > 0 {
		// The plan's values as one more -var-file, last so they win: a
		// private temporary file written from the plan only.
		tmp, err := os.MkdirTemp("", "rackform-apply-")
		if err != nil {
			return fail(cleanup, "Cannot create a temporary directory", err)
		}
		cleanup = func() { os.RemoveAll(tmp) }
		b, err := json.Marshal(p.Inputs.Variables)
		if err != nil {
			return fail(cleanup, "Cannot encode the plan's variables", err)
		}
		path := filepath.Join(tmp, "plan-inputs.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return fail(cleanup, "Cannot write the plan's variables", err)
		}
		files = append(files, path)
	}
	// Only sensitive variables come from -var: the others are the plan's.
	sensitive := map[string]bool{}
	for _, n := range p.Inputs.Sensitive {
		sensitive[n] = true
	}
	var keep []string
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		if sensitive[strings.TrimSpace(name)] {
			keep = append(keep, v)
		}
	}
	loader = config.NewLoader(config.LoadOptions{Vars: keep, VarFiles: files, Getenv: getenv, FS: mem, FSName: snapshotName})
	cfg, diags := loader.Load(".")
	return cfg, loader, cleanup, diags
}

// snapshotFS is the plan's configuration snapshot as an in-memory file set
// rooted at the configuration directory: data files by the names the
// configuration read them by, configuration files at the root. Every
// file's bytes are checked against its recorded SHA-256.
func snapshotFS(snap plan.Snapshot) (config.MemFS, error) {
	mem := config.MemFS{}
	for _, f := range snap.DataFiles {
		b, err := f.Bytes()
		if err != nil {
			return nil, err
		}
		mem[f.Name] = b
	}
	for _, f := range snap.Files {
		b, err := f.Bytes()
		if err != nil {
			return nil, err
		}
		name := path.Clean(filepath.ToSlash(f.Name))
		if !fs.ValidPath(name) || strings.Contains(name, "/") {
			name = path.Base(name)
		}
		mem[name] = b
	}
	if len(snap.Files) == 0 {
		return nil, errors.New("the plan holds no configuration files")
	}
	return mem, nil
}

// planPins writes a plugin lock file pinning every external provider to
// the SHA-256 the plan was made with, in a private temporary directory, for
// pluginStarter: apply starts only the plugins the plan names, whatever
// lock file the working directory holds now.
func planPins(p *plan.Plan) (string, func(), error) {
	dir, err := os.MkdirTemp("", "rackform-pins-")
	if err != nil {
		return "", func() {}, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	lock := &plugin.Lock{Providers: map[string]plugin.Pin{}}
	for _, pp := range p.Providers {
		if pp.Source != "builtin" {
			lock.Providers[pp.Name] = plugin.Pin{SHA256: pp.SHA256}
		}
	}
	if err := lock.Write(filepath.Join(dir, plugin.LockFile)); err != nil {
		return "", cleanup, err
	}
	return dir, cleanup, nil
}

// staleLockHint says so when the lock holder is a process of this host that
// no longer runs (a crashed or killed apply). Run takes such a lock over
// (executor.HolderGone); the hint is for a refusal that raced with it.
func staleLockHint(m *Meta, h *executor.LockInfo) {
	if h.Expired {
		fmt.Fprintf(m.Stderr, "Note: the lease of the apply holding the lock expired at %s without being renewed: that apply is gone, and the next apply takes the lock over.\n", h.LeaseExpires.UTC().Format(time.RFC3339))
		return
	}
	if executor.HolderGone(*h) {
		host, _ := os.Hostname()
		fmt.Fprintf(m.Stderr, "Note: pid %d is not running on this host (%s): the apply holding the lock is gone.\n", h.PID, host)
	}
}

// nextCommand rewrites a command printed to go on: PLANFILE becomes the
// plan file apply was given (for continue and approve, which have none,
// "rackform apply PLANFILE" becomes "rackform continue"), and the state
// directory is added to every rackform apply, continue and approve in it
// when it is not the default.
func nextCommand(stateDir, planPath string) func(string) string {
	return func(cmd string) string {
		if planPath != "" {
			cmd = strings.ReplaceAll(cmd, "PLANFILE", planPath)
		} else {
			cmd = strings.ReplaceAll(cmd, "rackform apply PLANFILE", "rackform continue")
		}
		if stateDir == "" || filepath.Clean(stateDir) == state.DefaultDir {
			return cmd
		}
		for _, sub := range []string{"apply", "continue", "approve"} {
			prefix := "rackform " + sub
			var b strings.Builder
			for rest := cmd; ; {
				i := strings.Index(rest, prefix)
				if i < 0 {
					b.WriteString(rest)
					break
				}
				end := i + len(prefix)
				b.WriteString(rest[:end])
				if end == len(rest) || rest[end] == ' ' {
					b.WriteString(" -state-dir " + stateDir)
				}
				rest = rest[end:]
			}
			cmd = b.String()
		}
		return cmd
	}
}

// termWidth is the width of the terminal w writes to: COLUMNS when set,
// else what the terminal says; 0 when unknown.
func termWidth(w io.Writer, getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}
