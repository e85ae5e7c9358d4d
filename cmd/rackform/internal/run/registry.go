package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/internal/regularfile"
	"github.com/rackform/rackform/planner/plan"
)

// EnvRunRegistry names the directory of the registry of started runs
// (default: rackform/runs in the user's configuration directory, such as
// ~/.config/rackform/runs).
const EnvRunRegistry = "RACKFORM_RUN_REGISTRY"

// The registry of started runs is how a plan runs once per machine and
// user whatever state directory each apply is given: one entry per plan
// SHA-256 naming the state directory of its run, written by apply (and
// continue, approve) before the run goes on, and an flock held while one
// of them drives it. Another state directory for the same plan is refused
// while that run exists; an entry whose state directory is gone or holds
// no started run of the plan is replaced. It fails closed (rule 45): an
// entry that cannot be read or is damaged (truncated, not an entry), or a
// registry that cannot be used, refuses a state directory that holds no
// run of the plan yet, saying what to do; a state directory that holds
// the run goes on (a damaged entry is then written again), since that is
// no second run. Its limits: it knows only this user on this machine and
// this registry directory (a run started by another user, with another
// HOME or RACKFORM_RUN_REGISTRY, or on another machine sharing nothing,
// is not seen; the PostgreSQL backend keys runs by plan hash in the
// database and needs none), and removing an entry by hand (or editing it
// to name another directory) forgets the run, except in the state
// directory the plan records (Open checks it).
type registry struct{ dir string }

// entry is one started run.
type entry struct {
	// StateDir is the run's state directory, absolute.
	StateDir string    `json:"state_dir"`
	Since    time.Time `json:"since"`
	PID      int       `json:"pid"`
}

// openRegistry opens (making) the registry directory; dir is what it
// names, also with an error ("" when none could be named).
func openRegistry(env Env) (g *registry, dir string, err error) {
	dir = env.getenv(EnvRunRegistry)
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return nil, "", err
		}
		dir = filepath.Join(base, "rackform", "runs")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, dir, err
	}
	return &registry{dir: dir}, dir, nil
}

func (g *registry) path(sha string) string { return filepath.Join(g.dir, sha+".json") }

// read returns the entry of plan sha, nil when there is none; an entry
// that cannot be read, or is not an entry naming an absolute state
// directory (truncated, edited), is an *EntryError.
func (g *registry) read(sha string) (*entry, error) {
	b, err := os.ReadFile(g.path(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &EntryError{SHA256: sha, Entry: g.path(sha), Err: err}
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, &EntryError{SHA256: sha, Entry: g.path(sha), Err: err}
	}
	if !filepath.IsAbs(e.StateDir) {
		return nil, &EntryError{SHA256: sha, Entry: g.path(sha), Err: fmt.Errorf("it names no absolute state directory (%q)", e.StateDir)}
	}
	return &e, nil
}

// EntryError is an entry of the registry of started runs that cannot be
// read or is damaged: it may have named the state directory of a run of
// the plan, so a run in another one is refused.
type EntryError struct {
	SHA256, Entry string
	Err           error
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("the entry of plan %s in the registry of started runs, %s, cannot be read or is damaged (%v): it may name the state directory of a run of this plan started on this machine, and a second run would upgrade its servers again. If that run exists, go on with it in its state directory (rackform continue -state-dir DIR, or apply with -state-dir DIR); if you are sure this plan was never applied on this machine, remove %s and apply again",
		plan.ShortSHA(e.SHA256), e.Entry, e.Err, e.Entry)
}

func (e *EntryError) Unwrap() error { return e.Err }

// UnusableError is a registry of started runs that cannot be used (its
// directory cannot be made, locked or written): whether the plan runs in
// another state directory is unknown, so a run that did not start is
// refused.
type UnusableError struct {
	SHA256, Dir string
	Err         error
}

func (e *UnusableError) Error() string {
	where := e.Dir
	if where == "" {
		where = "its directory"
	}
	return fmt.Sprintf("the registry of started runs cannot be used (%v): it is how a plan is applied once on this machine whatever state directory each apply is given, so plan %s, which has no run in this state directory, is not started here. Make %s a directory this user can write, or set %s to one (the same for every apply on this machine)",
		e.Err, plan.ShortSHA(e.SHA256), where, EnvRunRegistry)
}

func (e *UnusableError) Unwrap() error { return e.Err }

func (g *registry) write(sha string, e entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return regularfile.Write(g.path(sha), append(b, '\n'), 0o600)
}

// canonical is dir as an absolute path with symbolic links resolved (in
// the part of it that exists), so one directory reached two ways, before
// and after it is created, compares equal.
func canonical(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	var rest []string
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// AlreadyStartedError is a plan whose run exists in another state
// directory on this machine.
type AlreadyStartedError struct {
	SHA256, StateDir, Entry string
	// Running: an apply, continue or approve is driving it now.
	Running bool
}

func (e *AlreadyStartedError) Error() string {
	if e.StateDir == "" {
		return fmt.Sprintf("plan %s is being applied now on this machine, from another state directory (the registry of started runs, %s, is being written): a second run would upgrade its servers again", plan.ShortSHA(e.SHA256), e.Entry)
	}
	now := "was started"
	if e.Running {
		now = "is being applied now"
	}
	seen := "the registry of started runs: " + e.Entry
	if e.Entry == "" {
		seen = "it is the state directory the plan records"
	}
	return fmt.Sprintf("plan %s %s on this machine with the state directory %s: a second run would upgrade its servers again. Go on with that run (rackform continue -state-dir %s, or apply with -state-dir %s); if it is abandoned and its state directory removed, this run may start (%s)",
		plan.ShortSHA(e.SHA256), now, displayDir(e.StateDir), displayDir(e.StateDir), displayDir(e.StateDir), seen)
}

// claim records that the run of plan sha lives in the state directory
// stateDir, or refuses with an *AlreadyStartedError when it lives in
// another one. While release is not called, this process holds the
// entry's lock: another apply of the plan with another state directory is
// refused at once as running. A damaged entry is an *EntryError, except
// for the state directory that holds the run, for which it is written
// again; a registry that cannot be locked or written, an *UnusableError.
func (g *registry) claim(sha, stateDir string) (release func(), err error) {
	dir := canonical(stateDir)
	lk := flock.New(g.path(sha) + ".lock")
	locked, err := lk.TryLock()
	if err != nil {
		return nil, &UnusableError{SHA256: sha, Dir: g.dir, Err: fmt.Errorf("locking %s: %w", g.path(sha)+".lock", err)}
	}
	unlock := func() { _ = lk.Unlock() }
	fail := func(err error) (func(), error) {
		if locked {
			unlock()
		}
		return nil, err
	}
	e, err := g.read(sha)
	damaged := err != nil
	if damaged {
		if !state.Started(stateDir, sha) {
			return fail(err)
		}
		// This state directory holds the run: going on with it starts
		// no second one, and the entry is written again below.
		e = nil
	}
	if e != nil && canonical(e.StateDir) != dir {
		if !locked || state.Started(e.StateDir, sha) {
			return fail(&AlreadyStartedError{SHA256: sha, StateDir: e.StateDir, Entry: g.path(sha), Running: !locked})
		}
		// Stale: that state directory is gone or holds no run of it.
	}
	if !locked {
		if e == nil && !damaged {
			return nil, &AlreadyStartedError{SHA256: sha, Entry: g.path(sha), Running: true}
		}
		// An apply of this plan in this state directory holds the entry:
		// the state lock decides between the two.
		return func() {}, nil
	}
	if e == nil || canonical(e.StateDir) != dir {
		if err := g.write(sha, entry{StateDir: dir, Since: time.Now().UTC(), PID: os.Getpid()}); err != nil {
			return fail(&UnusableError{SHA256: sha, Dir: g.dir, Err: fmt.Errorf("writing %s: %w", g.path(sha), err)})
		}
	}
	return unlock, nil
}

// lookup returns the state directory the registry records for plan sha,
// "" when none.
func (g *registry) lookup(sha string) string {
	e, err := g.read(sha)
	if err != nil || e == nil {
		return ""
	}
	return e.StateDir
}
