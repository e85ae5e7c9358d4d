// Package run opens a saved plan's run for the commands that drive one:
// apply (a plan file), continue and approve (the plan the state backend
// stores). It decides whether the run may go on here and what it needs,
// touching nothing until every check passed: the plan file's size, its
// SHA-256 (compared before the file is decoded), its signature, expiry and
// format, the state backend and the run recorded in it, the state lock,
// the sensitive inputs, the provider binaries' hashes, and the
// configuration loaded from the plan's own snapshot. It then drives the
// run: the providers pinned by the plan, supervised and given their
// credentials (Run.StartPinned), the executor and its options
// (Run.Executor). The commands parse flags, call it and render; tests call
// it directly.
package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
)

// Options are how a command opens a run.
type Options struct {
	Env
	// StateDir is -state-dir, StateDirSet whether it was given. Without
	// it apply uses the state directory the plan records (format 1.5),
	// continue and approve .rackform, or with an expected SHA-256 the one
	// the registry of started runs names for that plan.
	StateDir    string
	StateDirSet bool
	// Vars and VarFiles are -var and -var-file: the sensitive variables
	// given again.
	Vars, VarFiles []string
	// Clock judges expiry; nil: the wall clock.
	Clock executor.Clock
	// HashOf hashes the binary that would serve a provider; nil:
	// PluginSHA256.
	HashOf func(plan.Provider, func(string) string) (string, error)
	// LockTimeout is -lock-timeout: with one, a held lock is waited for
	// by the executor instead of refused here.
	LockTimeout time.Duration
	// Rerun is apply -rerun (a failed run applied again); Join is apply
	// -join (a worker beside the apply holding the lock, postgres only).
	Rerun, Join bool
	// Recheck: continue reads the catalog again for the clusters planned
	// pending (AvailableNow, in Executor).
	Recheck bool
	// Trust is what vouches for the plan the state backend stores
	// (continue, approve; OpenStored): checked by the rule apply checks a
	// plan file with (Trust.Check), its ExpectSHA256 the hash that was
	// reviewed.
	Trust Trust
}

// Run is a plan's run, opened: the plan, its backend and the state the
// backend records. Close releases the backend.
type Run struct {
	Plan   *plan.Plan
	SHA256 string
	// File is the plan file's bytes, stored in the backend by apply.
	File    []byte
	Backend *Backend
	// State is the run's state when opened (NotStarted before its first
	// apply).
	State executor.State
	// Control records control requests and reads the run's state,
	// without providers.
	Control *executor.Executor

	o Options
	// release lets go of the run's entry in the registry of started runs.
	release func()
	// made is the state directory Open created ("" when it existed):
	// Close removes it again while it is empty, so an apply refused
	// before its run started leaves nothing behind.
	made string
}

// Close releases the state backend and the run's registry entry.
func (r *Run) Close() error {
	err := r.Backend.Close()
	if r.made != "" {
		removeEmpty(r.made)
	}
	if r.release != nil {
		r.release()
	}
	return err
}

// removeEmpty removes the state directory dir and its subdirectories
// while they are empty; os.Remove never removes a directory that holds
// anything, so a run that recorded something keeps all of it.
func removeEmpty(dir string) {
	for _, sub := range []string{"journal", "plans"} {
		_ = os.Remove(filepath.Join(dir, sub))
	}
	_ = os.Remove(dir)
}

// Open opens the run of the plan file f (decoded: p) for apply, in the
// backend the plan records (or, in plans before 1.5, its configuration
// selects): for the local one, the state directory the plan records
// relative to the plan file, or -state-dir. A plan whose run was started
// on this machine in another state directory is refused before anything
// is created (registry.go; without its entry, when that is the state
// directory the plan records: startedElsewhere).
func Open(ctx context.Context, f *File, p *plan.Plan, o Options) (*Run, error) {
	o = o.withDefaults()
	pg := selectsPostgres(p)
	if !pg {
		o.StateDir = StateDir(p, f.Name, o.StateDir, o.StateDirSet)
	}
	if o.Join && !pg {
		return nil, fmt.Errorf("-join needs the postgres state backend (rackform { backend \"postgres\" } in the configuration, %s set): with the state directory %s only one apply drives a run", config.EnvPGConnStr, o.StateDir)
	}
	_, statErr := os.Stat(o.StateDir)
	absent := !pg && errors.Is(statErr, fs.ErrNotExist)
	if absent {
		// No state, so no started run: what may not start is refused
		// before anything is created.
		if err := startable(p, f.SHA256, o.Clock); err != nil {
			return nil, err
		}
		if o.Rerun {
			return nil, fmt.Errorf("plan %s: -rerun starts a failed run again, and this plan has no run in the state directory %s", plan.ShortSHA(f.SHA256), o.StateDir)
		}
	}
	release := func() {}
	if !pg {
		var err error
		if release, err = o.claim(f.SHA256, o.StateDir); err != nil {
			return nil, err
		}
		// After the registry, which says more (a run being applied now).
		if err := startedElsewhere(p, f.Name, f.SHA256, o.StateDir); err != nil {
			release()
			return nil, err
		}
	}
	made := ""
	if absent {
		made = o.StateDir
	}
	b, err := OpenForPlan(ctx, o.Env, p, o.StateDir)
	if err != nil {
		release()
		return nil, err
	}
	r, err := open(ctx, b, &Stored{Plan: p, SHA256: f.SHA256, Bytes: f.Bytes}, o, release)
	if err != nil {
		if made != "" {
			removeEmpty(made)
		}
		return nil, err
	}
	r.made = made
	return r, nil
}

// claim records the run of plan sha as living in the state directory dir
// in the registry of started runs, or refuses it when it lives in
// another one. It fails closed: a registry that cannot be used refuses a
// run that has not started in dir (an *UnusableError); one that has goes
// on with a warning, being no second run.
func (o Options) claim(sha, dir string) (func(), error) {
	g, where, err := openRegistry(o.Env)
	if err != nil {
		err = &UnusableError{SHA256: sha, Dir: where, Err: err}
	} else {
		var release func()
		if release, err = g.claim(sha, dir); err == nil {
			return release, nil
		}
	}
	var unusable *UnusableError
	if !errors.As(err, &unusable) || !state.Started(dir, sha) {
		return nil, err
	}
	o.warn(fmt.Sprintf("the registry of started runs cannot be used (%v): the run of this plan in %s goes on, but a second apply of it with another state directory on this machine would not be refused until it can (make %s writable, or set %s to a writable directory)", unusable.Err, dir, unusable.Dir, EnvRunRegistry))
	return func() {}, nil
}

// startedElsewhere refuses the state directory dir for plan p (SHA-256
// sha, from planFile) when the state directory the plan records is
// another one that holds a started run of it: a second run. The registry
// of started runs refuses it too; this is seen without it (its entry
// removed, another HOME or RACKFORM_RUN_REGISTRY).
func startedElsewhere(p *plan.Plan, planFile, sha, dir string) error {
	recorded := StateDir(p, planFile, "", false)
	if canonical(recorded) == canonical(dir) || !state.Started(recorded, sha) {
		return nil
	}
	return &AlreadyStartedError{SHA256: sha, StateDir: recorded}
}

// OpenStored opens the run a command without a plan file acts on
// (continue, approve): in PostgreSQL when RACKFORM_PG_CONN_STR is set,
// else in the state directory; runID is -run (see Backend.Choose). With
// an expected SHA-256 (o.Trust, -expect-sha256: the hash that was
// reviewed) the run must be of that plan, and the plan stored for it must
// hash to it: a state directory whose plan was replaced by an edited one
// stored under its own hash is refused. The stored plan is vouched for
// like a plan file given to apply (Trust.Check): outside a terminal, a
// trusted signature, the reviewed hash or -allow-unsigned.
func OpenStored(ctx context.Context, runID string, o Options) (*Run, error) {
	o = o.withDefaults()
	expect := ""
	if o.Trust.Expect {
		expect = o.Trust.ExpectSHA256
	}
	want := typedSHA256(expect)
	if want != "" {
		if id := typedSHA256(runID); id != "" && !strings.HasPrefix(want, id) {
			return nil, fmt.Errorf("-run %s and -expect-sha256 %s name different plans", runID, expect)
		}
		runID = want
	}
	if o.StateDir == "" {
		o.StateDir = state.DefaultDir
	}
	if want != "" && !o.StateDirSet && o.PGConnStr() == "" {
		o.StateDir = registeredDir(o.Env, want, o.StateDir)
	}
	b, err := OpenControl(ctx, o.Env, o.StateDir)
	if err != nil {
		return nil, err
	}
	notReviewed := func(sha string) error {
		b.Close()
		return fmt.Errorf("%s holds the run of plan %s, not of the expected %s; it is not the plan that was reviewed (was the state changed? apply the reviewed plan file with -expect-sha256 instead)", b.Where, sha, want)
	}
	if want != "" && b.PG == nil {
		if sha, err := b.CurrentPlan(ctx); err == nil && sha != want {
			return nil, notReviewed(sha)
		}
	}
	s, err := b.Choose(ctx, runID)
	if err != nil {
		b.Close()
		return nil, err
	}
	if want != "" && s.SHA256 != want {
		return nil, notReviewed(s.SHA256)
	}
	// The state directory is as writable as a plan file: the stored plan
	// is vouched for like the one apply was given, before anything is
	// recorded.
	where := o.StateDir
	if b.PG != nil {
		where = b.Where
	}
	warning, err := o.Trust.Check(&File{Name: "the plan " + plan.ShortSHA(s.SHA256) + " in " + where, Bytes: s.Bytes, SHA256: s.SHA256}, s.Plan)
	if err != nil {
		b.Close()
		return nil, err
	}
	if warning != "" {
		o.warn(warning)
	}
	release := func() {}
	if b.PG == nil {
		if release, err = o.claim(s.SHA256, o.StateDir); err != nil {
			b.Close()
			return nil, err
		}
	}
	b.setPlanLease(s.Plan)
	return open(ctx, b, s, o, release)
}

// registeredDir is the state directory of the run of plan sha for a
// command given no -state-dir: dir when it holds that run, else the one
// the registry of started runs names, when it still holds it.
func registeredDir(env Env, sha, dir string) string {
	if state.Started(dir, sha) {
		return dir
	}
	g, _, err := openRegistry(env)
	if err != nil {
		return dir
	}
	if d := g.lookup(sha); d != "" && state.Started(d, sha) {
		return displayDir(d)
	}
	return dir
}

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = executor.RealClock()
	}
	if o.HashOf == nil {
		o.HashOf = PluginSHA256
	}
	return o
}

// open reads the run's state in b and refuses what may not go on: a run
// completed or failed (without -rerun), a fresh start of an expired plan
// or of an older format.
func open(ctx context.Context, b *Backend, s *Stored, o Options, release func()) (*Run, error) {
	r := &Run{Plan: s.Plan, SHA256: s.SHA256, File: s.Bytes, Backend: b, o: o, release: release}
	if err := r.check(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Run) check(ctx context.Context) error {
	ctl, err := Control(r.Backend, r.Plan, r.SHA256)
	if err != nil {
		return err
	}
	st, err := ctl.Status(ctx)
	if err != nil {
		return err
	}
	r.Control, r.State = ctl, st.Run.State
	switch r.State.Name {
	case executor.Completed, executor.Skipped:
		return fmt.Errorf("plan %s: %w", plan.ShortSHA(r.SHA256), executor.ErrAlreadyApplied)
	case executor.Failed:
		if !r.o.Rerun {
			return fmt.Errorf("plan %s: %w (or run it again: rackform apply -rerun PLANFILE)", plan.ShortSHA(r.SHA256), executor.ErrRunFailed)
		}
	default:
		if r.o.Rerun {
			return fmt.Errorf("plan %s: -rerun starts a failed run again, and this run is %s", plan.ShortSHA(r.SHA256), r.State.String())
		}
	}
	if r.State.Name != executor.NotStarted {
		return nil
	}
	return startable(r.Plan, r.SHA256, r.o.Clock)
}

// startable refuses to start a new run of plan p (SHA-256 sha) when it
// has expired by clock or is of a format apply no longer starts. Neither
// refuses a started run: it is resumed and continued after not_after
// (each server is observed again anyway) and in its older format; a new
// one needs what format 1.3 records (delivery, identity) in the compact
// form of 1.4 (the observation it compares against).
func startable(p *plan.Plan, sha string, clock executor.Clock) error {
	if !p.NotAfter.IsZero() && clock.Now().After(p.NotAfter) {
		return fmt.Errorf("plan %s expired at %s (made %s); plan again: what it observed is too old to trust", plan.ShortSHA(sha), p.NotAfter.UTC().Format(time.RFC3339), p.CreatedAt.UTC().Format(time.RFC3339))
	}
	if err := plan.Applicable(p); err != nil {
		return fmt.Errorf("plan %s: %w", plan.ShortSHA(sha), err)
	}
	return nil
}

// Busy looks at the state lock before anything is started. Without
// -lock-timeout a lock held by a live apply refuses the run with an
// *executor.LockedError, except: an apply -join beside the apply of the
// same plan (postgres); and, with control (continue, approve), an apply
// of this very plan, for which control is recorded (it acts on it) and
// Busy returns its holder, so the command says so and ends.
func (r *Run) Busy(ctx context.Context, control func(*executor.Executor) error) (*executor.LockInfo, error) {
	if r.o.LockTimeout != 0 {
		return nil, nil // the executor waits for the lock
	}
	h, err := r.Backend.LockHolder(ctx)
	if err != nil || executor.HolderGone(*h) {
		return nil, nil
	}
	if r.o.Join && control == nil && h.PlanSHA256 == r.SHA256 && r.Backend.PG != nil {
		return nil, nil
	}
	if control != nil && h.PlanSHA256 == r.SHA256 {
		// Another process is applying this backend's run: record the
		// request for it to obey, and leave the driving to it.
		if err := control(r.Control); err != nil {
			return nil, err
		}
		return h, nil
	}
	return nil, &executor.LockedError{Holder: *h}
}

// Prepared is what a run needs to start its providers: the configuration
// loaded from the plan's snapshot.
type Prepared struct {
	Config *config.Config
	// Loader holds the parsed files, for diagnostics with snippets.
	Loader *config.Loader
	// Cleanup removes the temporary files the load needed.
	Cleanup func()
}

// DiagnosticsError is a configuration problem with source ranges, for the
// command to render with snippets.
type DiagnosticsError struct {
	Diags hcl.Diagnostics
	Files map[string]*hcl.File
}

func (e *DiagnosticsError) Error() string { return e.Diags.Error() }

// Prepare checks what the run needs from this process and loads the
// configuration: the sensitive variables and environment variables the
// plan names, the provider binaries (their SHA-256 must be the plan's),
// the configuration from the plan's snapshot alone, and each provider's
// CA bundle (its SHA-256 must be the plan's; the provider is then given
// the bytes checked). The caller calls Cleanup, also after an error.
func (r *Run) Prepare() (*Prepared, error) {
	out := &Prepared{Cleanup: func() {}}
	p, o := r.Plan, r.o
	if err := CheckInputs(p, o.Vars, o.VarFiles, o.Getenv); err != nil {
		return out, err
	}
	for _, pp := range p.Providers {
		got, err := o.HashOf(pp, o.getenv)
		if err != nil {
			return out, fmt.Errorf("provider %q: %s", pp.Name, err)
		}
		if got != pp.SHA256 {
			return out, fmt.Errorf("provider %q: the plugin binary (%s) hashes to %s, but the plan was made with %s; apply runs only the provider code that made the plan: plan again with this rackform", pp.Name, pp.Source, plan.ShortSHA(got), plan.ShortSHA(pp.SHA256))
		}
	}
	cfg, loader, cleanup, diags := LoadSnapshot(p, o.Vars, o.VarFiles, o.Getenv)
	out.Loader, out.Cleanup = loader, cleanup
	if diags.HasErrors() {
		return out, &DiagnosticsError{Diags: diags, Files: loader.Files()}
	}
	if len(cfg.MissingEnv) > 0 {
		return out, fmt.Errorf("the configuration reads the environment variables %s, which are not set", strings.Join(cfg.MissingEnv, ", "))
	}
	if err := checkCABundles(p, cfg); err != nil {
		return out, err
	}
	out.Config = cfg
	return out, nil
}

// PinnedSHA256 is the SHA-256 the plan expects of provider name's binary,
// "" for a provider it does not name: a plugin restarted from another
// binary is refused.
func (r *Run) PinnedSHA256(name string) string {
	for _, pp := range r.Plan.Providers {
		if pp.Name == name {
			return pp.SHA256
		}
	}
	return ""
}
