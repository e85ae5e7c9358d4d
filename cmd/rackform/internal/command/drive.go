package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/internal/version"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers/plugin"
)

// runOpts are the options of the commands that drive a run: apply,
// continue and approve. The run is opened by package run; drive starts
// its providers, shows it and maps how it ended to an exit code.
type runOpts struct {
	// Options are what the run is opened with (run.Open): -var,
	// -var-file, -lock-timeout, apply -rerun and -join, continue's
	// Recheck, the clock (tests, the demo). options adds the rest.
	run.Options
	json     bool
	jsonInto string
	// stateDir is -state-dir, and whether it was given.
	stateDir optionalString
	noColor  bool

	// expectSHA is -expect-sha256: the hash that was reviewed;
	// allowUnsigned is -allow-unsigned (trust).
	expectSHA     optionalString
	allowUnsigned bool
	// runID is -run of continue and approve.
	runID string
	// name is the command driving the run, for messages.
	name string

	// planPath is the plan file apply was given, after the trust option it
	// was given with ("-allow-unsigned plan.json"; "" for continue and
	// approve), for the command printed to resume.
	planPath string
	// resumeFlag is the option that vouched for the plan here
	// ("-expect-sha256 HASH", "-allow-unsigned", or "" for a trusted
	// signature or a person at a terminal), added to the continue and
	// approve commands printed to go on.
	resumeFlag string

	// Tests replace these; nil means the real ones (hashOf: Options.HashOf).
	start   run.ProviderStarter
	hashOf  func(plan.Provider, func(string) string) (string, error)
	holder  string
	poll    time.Duration
	signals func(chan<- os.Signal) func()
}

// flags registers the options apply, continue and approve share;
// stateDirUsage says where each finds the state without -state-dir.
func (o *runOpts) flags(fs *flag.FlagSet, stateDirUsage string) {
	o.Vars, o.VarFiles = nil, nil
	o.stateDir = optionalString{}
	fs.Var(&o.stateDir, "state-dir", stateDirUsage)
	fs.BoolVar(&o.json, "json", false, "Print the machine-readable event stream (JSON lines, docs/json.md) on stdout instead of the progress view.")
	fs.StringVar(&o.jsonInto, "json-into", "", "Also write the JSON-lines event stream to `FILE` (beside the progress view).")
	fs.DurationVar(&o.LockTimeout, "lock-timeout", 0, "Wait up to `DURATION` for a state lock held by another apply (default: refuse at once).")
	fs.Var((*stringList)(&o.Vars), "var", "Set input variable `NAME=VALUE` (sensitive variables must be given again). Repeatable.")
	fs.Var((*stringList)(&o.VarFiles), "var-file", "Read input variables from `FILE`. Repeatable.")
	fs.BoolVar(&o.noColor, "no-color", false, "Never colour or redraw the output (also: the NO_COLOR environment variable).")
}

// trust is what vouches for the plan the command drives (run.Trust):
// -expect-sha256, -allow-unsigned, the trusted keys in the environment and
// whether a person is at a terminal. ok is false when the command must
// exit with code: an empty -expect-sha256 (an unset CI variable), keys
// that cannot be read, -allow-unsigned beside trusted keys.
func (o *runOpts) trust(m *Meta) (t run.Trust, code int, ok bool) {
	expect := strings.TrimSpace(o.expectSHA.value)
	if o.expectSHA.set && expect == "" {
		return t, m.usageFor(o.name, "-expect-sha256 is empty: give the SHA-256 plan printed for the reviewed plan (is the variable holding it unset?)"), false
	}
	keys, err := trustedKeys(m.Getenv)
	if err != nil {
		return t, m.fail("%s", err), false
	}
	if o.allowUnsigned && len(keys) > 0 {
		return t, m.usage("-allow-unsigned cannot be used while %s is set: with trusted keys, only signed plans are applied", EnvTrustedKeys), false
	}
	return run.Trust{Keys: keys, Expect: o.expectSHA.set, ExpectSHA256: expect, AllowUnsigned: o.allowUnsigned,
		Interactive: m.input && isTerminal(m.Stderr) && isTerminalReader(m.Stdin), Command: o.name}, 0, true
}

// vouched records, for the commands printed to go on, the option that
// vouched for the plan of SHA-256 sha (trust): the same command then works
// again outside a terminal.
func (o *runOpts) vouched(t run.Trust, sha string) {
	switch {
	case len(t.Keys) > 0:
		o.resumeFlag = "" // the keys come from the environment
	case t.Expect:
		o.resumeFlag = "-expect-sha256 " + sha
	case t.AllowUnsigned:
		o.resumeFlag = "-allow-unsigned"
	}
}

// options are the run options of these flags, in the process m.
func (o *runOpts) options(m *Meta) run.Options {
	opts := o.Options
	opts.Env = m.runEnv()
	opts.StateDir, opts.StateDirSet = o.stateDir.value, o.stateDir.set
	opts.HashOf = o.hashOf
	return opts
}

// runEnv is the process as package run sees it.
func (m *Meta) runEnv() run.Env {
	return run.Env{
		Getenv: m.Getenv,
		Note:   func(s string) { fmt.Fprintf(m.Stderr, "Note: %s\n", s) },
		Warn:   func(s string) { fmt.Fprintf(m.Stderr, "Warning: %s\n", s) },
	}
}

// fail prints an error and returns ExitError.
// The actions an error names (a lock to force-unlock, the apply a
// refused request needs) are written as their canonical commands.
func (m *Meta) fail(format string, args ...any) int {
	fmt.Fprintf(m.Stderr, "Error: %s\n", views.CanonicalText(fmt.Sprintf(format, args...)))
	return ExitError
}

// drive starts the run r opened: it checks the state lock, prepares what
// the run needs (inputs, provider binaries, the configuration from the
// plan's snapshot), starts the providers and drives the run with a view.
// control, when set, is recorded (continue, approve) after every check
// passed and before Run. It closes r.
func (o *runOpts) drive(ctx context.Context, m *Meta, r *run.Run, control func(*executor.Executor) error) int {
	defer r.Close()
	// What is not the run's view: on stderr with -json (stdout is the
	// event stream).
	says := m.Stdout
	if o.json {
		says = m.Stderr
	}
	if h, err := r.Busy(ctx, control); err != nil {
		var le *executor.LockedError
		if errors.As(err, &le) {
			code := m.fail("%s", le)
			staleLockHint(m, &le.Holder)
			return code
		}
		return m.controlFailed(err)
	} else if h != nil {
		fmt.Fprintf(says, "Recorded. The apply running as %s (pid %d, since %s) will act on it.\n", h.Who, h.PID, h.Since.UTC().Format(time.RFC3339))
		return ExitOK
	}
	type prepared struct {
		*run.Prepared
		err error
	}
	pr, ok := untilDone(ctx, func() prepared {
		p, err := r.Prepare()
		return prepared{p, err}
	})
	if !ok {
		return m.interrupted(o.name)
	}
	defer pr.Cleanup()
	color := m.Color && !o.noColor
	if pr.err != nil {
		var de *run.DiagnosticsError
		if errors.As(pr.err, &de) {
			m.showDiagnostics(de.Diags, de.Files, color)
			return ExitError
		}
		return m.fail("%s", pr.err)
	}
	p, sha, b, cfg := r.Plan, r.SHA256, r.Backend, pr.Config
	// Where the run's state is, from any working directory: the plan
	// records it (beside the plan file), -state-dir overrides it.
	fmt.Fprintf(says, "state: %s\n", stateName(b))
	clock := r.Clock()

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
		pins := run.PlanLock(p)
		start = pluginStarter(func() (*plugin.Lock, error) { return pins, nil }, m.Getenv, m.Stderr)
	}
	// A plugin that dies is restarted from the binary the plan pinned, and
	// configured as at the start (run.Supervise).
	running, provs, pd, err := r.StartPinned(hard, cfg, start, func(s string) { (*note.Load())(s) })
	defer running.Close()
	if pd.HasErrors() {
		m.showDiagnostics(pd, pr.Loader.Files(), color)
		return ExitError
	}
	if err != nil {
		return m.fail("%s", err)
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
		view = applyview.New(m.Stdout, p, sha, applyview.Options{Live: live, Color: color, Now: clock.Now, Resume: o.resumeWith(b), Width: termWidth(m.Stdout, m.Getenv)})
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
	e, err := r.Executor(run.Drive{Providers: provs, Events: multiSink(sinks), Holder: o.holder, Poll: o.poll})
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
		if errors.As(err, &le) {
			code := m.fail("%s", le)
			staleLockHint(m, &le.Holder)
			return code
		}
		code := ExitInterrupted
		if hard.Err() != nil {
			fmt.Fprintln(m.Stderr, "Interrupted.")
		} else {
			code = m.fail("%s", err)
		}
		applyview.LeftBehind(m.Stderr, out, o.resumeWith(b))
		return code
	}
	if hard.Err() != nil && out.Status == executor.OutcomeInterrupted {
		return ExitInterrupted
	}
	return runExitCode(out)
}

func (m *Meta) controlFailed(err error) int {
	var re *executor.RefusedError
	if errors.As(err, &re) {
		fmt.Fprintf(m.Stderr, "Error: %s\n", views.CanonicalText(re.Error()))
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

// resumeWith is how this run was driven, for the commands printed to go on:
// its state directory, the plan file apply was given, and the option that
// vouched for the plan (runOpts.resumeFlag) for continue and approve.
func (o *runOpts) resumeWith(b *run.Backend) *applyview.Resume {
	return &applyview.Resume{StateDir: b.Dir, PlanFile: o.planPath, Vouch: o.resumeFlag}
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

// stateName says where a run's state is, for the "state: …" line.
func stateName(b *run.Backend) string {
	if b.PG != nil {
		return b.Where
	}
	return b.Dir
}
