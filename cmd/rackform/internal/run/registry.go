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
// no started run of the plan is replaced. Its limits: it knows only this
// user on this machine (a run started by another user, or on another
// machine sharing nothing, is not seen; the PostgreSQL backend keys runs
// by plan hash in the database and needs none), and removing an entry by
// hand forgets the run.
type registry struct{ dir string }

// entry is one started run.
type entry struct {
	// StateDir is the run's state directory, absolute.
	StateDir string    `json:"state_dir"`
	Since    time.Time `json:"since"`
	PID      int       `json:"pid"`
}

func openRegistry(env Env) (*registry, error) {
	dir := env.getenv(EnvRunRegistry)
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(base, "rackform", "runs")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &registry{dir: dir}, nil
}

func (g *registry) path(sha string) string { return filepath.Join(g.dir, sha+".json") }

func (g *registry) read(sha string) (*entry, error) {
	b, err := os.ReadFile(g.path(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil || e.StateDir == "" {
		return nil, nil // torn or edited: as if absent
	}
	return &e, nil
}

func (g *registry) write(sha string, e entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(g.dir, ".entry-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), g.path(sha))
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
		return fmt.Sprintf("plan %s is being applied now on this machine, from another state directory (the registry of started runs, %s, is being written): a second run would upgrade its servers again", short(e.SHA256), e.Entry)
	}
	now := "was started"
	if e.Running {
		now = "is being applied now"
	}
	return fmt.Sprintf("plan %s %s on this machine with the state directory %s: a second run would upgrade its servers again. Go on with that run (rackform continue -state-dir %s, or apply with -state-dir %s); if it is abandoned and its state directory removed, this run may start (the registry of started runs: %s)",
		short(e.SHA256), now, displayDir(e.StateDir), displayDir(e.StateDir), displayDir(e.StateDir), e.Entry)
}

// claim records that the run of plan sha lives in the state directory
// stateDir, or refuses with an *AlreadyStartedError when it lives in
// another one. While release is not called, this process holds the
// entry's lock: another apply of the plan with another state directory is
// refused at once as running.
func (g *registry) claim(sha, stateDir string) (release func(), err error) {
	dir := canonical(stateDir)
	lk := flock.New(g.path(sha) + ".lock")
	locked, err := lk.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking the registry of started runs: %w", err)
	}
	unlock := func() { _ = lk.Unlock() }
	e, err := g.read(sha)
	if err != nil {
		if locked {
			unlock()
		}
		return nil, fmt.Errorf("reading the registry of started runs: %w", err)
	}
	if e != nil && canonical(e.StateDir) != dir {
		if !locked || state.Started(e.StateDir, sha) {
			if locked {
				unlock()
			}
			return nil, &AlreadyStartedError{SHA256: sha, StateDir: e.StateDir, Entry: g.path(sha), Running: !locked}
		}
		// Stale: that state directory is gone or holds no run of it.
	}
	if !locked {
		if e == nil {
			return nil, &AlreadyStartedError{SHA256: sha, Entry: g.path(sha), Running: true}
		}
		// An apply of this plan in this state directory holds the entry:
		// the state lock decides between the two.
		return func() {}, nil
	}
	if e == nil || canonical(e.StateDir) != dir {
		if err := g.write(sha, entry{StateDir: dir, Since: time.Now().UTC(), PID: os.Getpid()}); err != nil {
			unlock()
			return nil, fmt.Errorf("writing the registry of started runs: %w", err)
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
