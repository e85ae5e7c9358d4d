package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
)

// A Source holds the journals of earlier runs and the plans they ran.
type Source interface {
	// Runs lists the runs it holds.
	Runs(ctx context.Context) ([]Run, error)
	// LoadPlan returns the plan file of the run of plan sha.
	LoadPlan(ctx context.Context, sha string) ([]byte, error)
	// Read returns the journal records of the run of plan sha after
	// position after (-1: all), as executor.Backend.Read does.
	Read(ctx context.Context, sha string, after int64) ([]executor.Entry, error)
	// String names the source in messages.
	String() string
}

// Run is one run a Source holds: the plan it ran, and when its journal was
// last written (which orders runs across sources, newest first), as a
// state directory lists its runs.
type Run = state.Run

// Store is what a state backend offers to read a run: its plan and its
// journal (executor.Backend has both).
type Store interface {
	LoadPlan(ctx context.Context, sha string) ([]byte, error)
	Read(ctx context.Context, sha string, after int64) ([]executor.Entry, error)
}

// FromBackend makes a Source of a state backend and its own listing of
// runs (such as executor/postgres.Backend.Runs). name names it in
// messages.
func FromBackend(name string, b Store, runs func(ctx context.Context) ([]Run, error)) Source {
	return &backendSource{Store: b, name: name, runs: runs}
}

type backendSource struct {
	Store
	name string
	runs func(ctx context.Context) ([]Run, error)
}

func (s *backendSource) Runs(ctx context.Context) ([]Run, error) { return s.runs(ctx) }
func (s *backendSource) String() string                          { return s.name }

// OpenStateDir makes a Source of a local state directory (executor/state's
// layout: journal/<sha>.jsonl, plans/<sha>.json), read-only: nothing is
// created, and a directory that holds no journal directory is an error
// wrapping fs.ErrNotExist.
func OpenStateDir(path string) (Source, error) {
	d, err := state.Inspect(path)
	if err != nil {
		return nil, err
	}
	return FromBackend("the state directory "+path, d, d.Runs), nil
}

// OpenArchive makes Sources of a directory of archived runs. It takes:
//
//   - a state directory, as apply leaves it (.rackform/: journal/ and
//     plans/);
//   - a directory of state directories, one level down, each read as
//     above: DIR/<job>/journal/… or DIR/<job>/.rackform/journal/… (one per
//     CI job's archived state, say);
//   - journal files, each named <plan sha256>.jsonl as in a state
//     directory's journal/, beside the plan files they ran, under any name
//     (a plan is found by its SHA-256).
//
// The last two may be mixed in one directory. A directory with none of
// them is an error.
func OpenArchive(path string) ([]Source, error) {
	if src, err := OpenStateDir(path); err == nil {
		return []Source{src}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []Source
	loose := false
	for _, e := range entries {
		sub := filepath.Join(path, e.Name())
		if e.IsDir() {
			if src, err := OpenStateDir(sub); err == nil {
				out = append(out, src)
			} else if src, err := OpenStateDir(filepath.Join(sub, state.DefaultDir)); err == nil {
				out = append(out, src)
			}
			continue
		}
		if sha, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && executor.CheckPlanSHA(sha) == nil {
			loose = true
		}
	}
	if loose {
		out = append(out, &files{dir: path})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no journals: give a state directory (with journal/ and plans/), a directory of state directories, or a directory of journal files named <plan sha256>.jsonl beside the plan files they ran", path)
	}
	return out, nil
}

// files is a directory of journal files <sha>.jsonl and plan files.
type files struct {
	dir string

	once  sync.Once
	plans map[string]string // plan SHA-256 → file
	err   error
}

func (f *files) String() string { return "the archive " + f.dir }

func (f *files) Runs(context.Context) ([]Run, error) {
	return state.Journals(f.dir)
}

// maxPlanFile bounds the files hashed while looking for plans: a plan of
// 10,000 servers is about 10 MB.
const maxPlanFile = 1 << 30

func (f *files) LoadPlan(_ context.Context, sha string) ([]byte, error) {
	f.once.Do(func() {
		f.plans = map[string]string{}
		var entries []fs.DirEntry
		if entries, f.err = os.ReadDir(f.dir); f.err != nil {
			return
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			if fi, err := e.Info(); err != nil || fi.Size() > maxPlanFile {
				continue
			}
			name := filepath.Join(f.dir, e.Name())
			if sum, err := hashFile(name); err == nil {
				f.plans[sum] = name
			}
		}
	})
	if f.err != nil {
		return nil, f.err
	}
	name, ok := f.plans[sha]
	if !ok {
		return nil, fmt.Errorf("no plan file in %s has SHA-256 %s: %w", f.dir, plan.ShortSHA(sha), executor.ErrNotFound)
	}
	return os.ReadFile(name)
}

func hashFile(name string) (string, error) {
	fh, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (f *files) Read(_ context.Context, sha string, after int64) ([]executor.Entry, error) {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return nil, err
	}
	return state.ReadJournal(filepath.Join(f.dir, sha+".jsonl"), after)
}
