// Package state holds the executor's state backends: Dir, the local
// directory (default .rackform/), and Memory, for tests. Both implement
// executor.Backend.
package state

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/internal/regularfile"
)

// DefaultDir is the state directory apply uses unless told otherwise.
const DefaultDir = ".rackform"

// Dir is the local state backend:
//
//	DIR/plans/<sha>.json      plan files by SHA-256
//	DIR/current               the SHA of the plan applied last
//	DIR/journal/<sha>.jsonl   one journal per plan, one record a line
//	DIR/lock.json             the lock holder, while held
//
// Appends take an exclusive file lock (flock on Unix, LockFileEx on
// Windows) on DIR/journal/<sha>.lock, so control records from other
// processes interleave with a running apply line by line, and are fsynced
// before Append returns. A torn last line (a writer that died
// mid-write; it held the flock) is cut off by the next append.
type Dir struct {
	path string

	mu    sync.Mutex
	files map[string]*journalFile
}

// journalFile is an open journal with its lock file. mu serialises the
// appends of this process (a file lock is per process, not per goroutine).
type journalFile struct {
	mu   sync.Mutex
	f    *os.File
	lock *flock.Flock
}

var _ executor.Backend = (*Dir)(nil)

// Open opens (creating) the state directory at path.
func Open(path string) (*Dir, error) {
	for _, d := range []string{path, filepath.Join(path, "plans"), filepath.Join(path, "journal")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("state directory %s: %w", path, err)
		}
	}
	return &Dir{path: path, files: map[string]*journalFile{}}, nil
}

// Close closes cached journal files.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for k, j := range d.files {
		errs = append(errs, j.f.Close(), j.lock.Close())
		delete(d.files, k)
	}
	return errors.Join(errs...)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// SavePlan implements executor.Backend.
func (d *Dir) SavePlan(_ context.Context, sha string, file []byte) error {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return err
	}
	p := filepath.Join(d.path, "plans", sha+".json")
	if old, err := os.ReadFile(p); err != nil || !bytes.Equal(old, file) {
		if err := regularfile.Write(p, file, 0o600); err != nil {
			return fmt.Errorf("saving plan %s: %w", sha, err)
		}
	}
	return regularfile.Write(filepath.Join(d.path, "current"), []byte(sha+"\n"), 0o600)
}

// LoadPlan implements executor.Backend.
func (d *Dir) LoadPlan(_ context.Context, sha string) ([]byte, error) {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(d.path, "plans", sha+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("plan %s: %w", sha, executor.ErrNotFound)
	}
	return b, err
}

// CurrentPlan implements executor.Backend.
func (d *Dir) CurrentPlan(context.Context) (string, error) {
	b, err := os.ReadFile(filepath.Join(d.path, "current"))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no plan has been applied in %s: %w", d.path, executor.ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(b)), nil
}

func (d *Dir) journal(sha string) (*journalFile, error) {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if f := d.files[sha]; f != nil {
		return f, nil
	}
	p := filepath.Join(d.path, "journal", sha+".jsonl")
	_, statErr := os.Stat(p)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if errors.Is(statErr, os.ErrNotExist) {
		if err := syncDir(filepath.Dir(p)); err != nil {
			f.Close()
			return nil, err
		}
	}
	j := &journalFile{f: f, lock: flock.New(filepath.Join(d.path, "journal", sha+".lock"))}
	d.files[sha] = j
	return j, nil
}

// Append implements executor.Backend. A record's position is the byte
// offset just past its newline.
func (d *Dir) Append(_ context.Context, sha string, records ...[]byte) ([]int64, error) {
	size := 0
	for _, r := range records {
		if bytes.IndexByte(r, '\n') >= 0 {
			return nil, errors.New("a journal record must be one line")
		}
		size += len(r) + 1
	}
	j, err := d.journal(sha)
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.lock.Lock(); err != nil {
		return nil, fmt.Errorf("locking the journal: %w", err)
	}
	defer j.lock.Unlock()
	f := j.f
	end, err := repairTail(f)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", sha, err)
	}
	buf := make([]byte, 0, size)
	pos := make([]int64, len(records))
	for i, r := range records {
		buf = append(append(buf, r...), '\n')
		pos[i] = end + int64(len(buf))
	}
	if _, err := f.WriteAt(buf, end); err != nil {
		return nil, fmt.Errorf("journal %s: %w", sha, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("journal %s: fsync: %w", sha, err)
	}
	return pos, nil
}

// repairTail cuts a torn last line off and returns the end offset.
func repairTail(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return size, nil
	}
	// Find the last newline before the torn record.
	end := int64(0)
	buf := make([]byte, 4096)
	for off := size; off > 0; {
		n := min(int64(len(buf)), off)
		off -= n
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = off + int64(i) + 1
			break
		}
	}
	if err := f.Truncate(end); err != nil {
		return 0, err
	}
	return end, f.Sync()
}

// Read implements executor.Backend.
func (d *Dir) Read(_ context.Context, sha string, after int64) ([]executor.Entry, error) {
	if err := executor.CheckPlanSHA(sha); err != nil {
		return nil, err
	}
	out, err := ReadJournal(filepath.Join(d.path, "journal", sha+".jsonl"), after)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// ReadJournal returns the records of the journal file name after position
// after (-1: all), as Dir.Read does: positions are byte offsets past each
// newline, and a torn last line is left out. It reads journals wherever
// they lie (an archive of them, say).
func ReadJournal(name string, after int64) ([]executor.Entry, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	start := max(after, 0)
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() <= start {
		return nil, nil
	}
	buf := make([]byte, fi.Size()-start)
	if _, err := f.ReadAt(buf, start); err != nil {
		return nil, err
	}
	// A trailing partial line is torn or still being written: scanLines
	// leaves it out.
	var out []executor.Entry
	err = scanLines(buf, start, start, func(en executor.Entry) error {
		if len(bytes.TrimSpace(en.Data)) > 0 {
			out = append(out, en)
		}
		return nil
	})
	return out, err
}

func (d *Dir) lockPath() string { return filepath.Join(d.path, "lock.json") }

// Lock implements executor.Backend: the lock file is written whole and
// then hard-linked into place, which fails if it exists.
func (d *Dir) Lock(_ context.Context, info executor.LockInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	err = regularfile.Create(d.lockPath(), append(b, '\n'), 0o600)
	if errors.Is(err, os.ErrExist) {
		h, herr := d.LockHolder(context.Background())
		var corrupt *executor.CorruptLockError
		if errors.As(herr, &corrupt) {
			return corrupt
		}
		if herr != nil {
			return fmt.Errorf("the state is locked and the lock file is unreadable (%v); remove %s if no apply is running", herr, d.lockPath())
		}
		return &executor.LockedError{Holder: *h}
	}
	return err
}

// Unlock implements executor.Backend.
func (d *Dir) Unlock(ctx context.Context, id string) error {
	h, err := d.LockHolder(ctx)
	var corrupt *executor.CorruptLockError
	switch {
	case errors.As(err, &corrupt) && corrupt.ID() == id:
		// The ID is a hash of the bytes just read: this removes exactly
		// the corrupt lock the operator was shown.
	case err != nil:
		return err
	case h.ID != id:
		return fmt.Errorf("the lock is held by %s with ID %s, not %s", h.Who, h.ID, id)
	}
	if err := os.Remove(d.lockPath()); err != nil {
		return err
	}
	return syncDir(d.path)
}

// LockHolder implements executor.Backend.
func (d *Dir) LockHolder(context.Context) (*executor.LockInfo, error) {
	b, err := os.ReadFile(d.lockPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, executor.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var h executor.LockInfo
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, &executor.CorruptLockError{Where: "file " + d.lockPath(), Raw: b, Err: err}
	}
	if h.ID == "" {
		return nil, &executor.CorruptLockError{Where: "file " + d.lockPath(), Raw: b, Err: errors.New("it names no lock ID")}
	}
	return &h, nil
}

// Memory is an in-memory Backend for tests, benchmarks and rehearsals.
// Positions are byte offsets as in Dir, so journal sizes are comparable.
// Journals are held compressed (memjournal.go): a rehearsal of 100,000
// servers writes millions of records.
type Memory struct {
	mu       sync.Mutex
	plans    map[string][]byte
	current  string
	journals map[string]*memJournal
	lock     *executor.LockInfo
}

var _ executor.Backend = (*Memory)(nil)

// NewMemory returns an empty Memory backend.
func NewMemory() *Memory {
	return &Memory{plans: map[string][]byte{}, journals: map[string]*memJournal{}}
}

// SavePlan implements executor.Backend.
func (m *Memory) SavePlan(_ context.Context, sha string, file []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.plans[sha] = bytes.Clone(file)
	m.current = sha
	return nil
}

// LoadPlan implements executor.Backend.
func (m *Memory) LoadPlan(_ context.Context, sha string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.plans[sha]
	if !ok {
		return nil, executor.ErrNotFound
	}
	return bytes.Clone(b), nil
}

// CurrentPlan implements executor.Backend.
func (m *Memory) CurrentPlan(context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current == "" {
		return "", executor.ErrNotFound
	}
	return m.current, nil
}

// Append implements executor.Backend.
func (m *Memory) Append(_ context.Context, sha string, records ...[]byte) ([]int64, error) {
	for _, r := range records {
		if bytes.IndexByte(r, '\n') >= 0 {
			return nil, errors.New("a journal record must be one line")
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.journals[sha]
	if j == nil {
		j = &memJournal{}
		m.journals[sha] = j
	}
	pos := make([]int64, len(records))
	for i, r := range records {
		pos[i] = j.append(r)
	}
	return pos, nil
}

// Read implements executor.Backend.
func (m *Memory) Read(ctx context.Context, sha string, after int64) ([]executor.Entry, error) {
	var out []executor.Entry
	err := m.Scan(ctx, sha, after, func(en executor.Entry) error {
		out = append(out, executor.Entry{Pos: en.Pos, Data: bytes.Clone(en.Data)})
		return nil
	})
	return out, err
}

// Scan implements executor.Scanner: the records are read back one block
// at a time, never all at once.
func (m *Memory) Scan(_ context.Context, sha string, after int64, fn func(executor.Entry) error) error {
	m.mu.Lock()
	j := m.journals[sha]
	var snap memJournal
	if j != nil {
		snap = j.snapshot(after)
	}
	m.mu.Unlock()
	return snap.scan(after, fn)
}

// Size is the journal's size in bytes.
func (m *Memory) Size(sha string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if j := m.journals[sha]; j != nil {
		return j.end
	}
	return 0
}

// Lock implements executor.Backend.
func (m *Memory) Lock(_ context.Context, info executor.LockInfo) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lock != nil {
		return &executor.LockedError{Holder: *m.lock}
	}
	h := info
	m.lock = &h
	return nil
}

// Unlock implements executor.Backend.
func (m *Memory) Unlock(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lock == nil {
		return executor.ErrNotFound
	}
	if m.lock.ID != id {
		return fmt.Errorf("the lock is held by %s with ID %s, not %s", m.lock.Who, m.lock.ID, id)
	}
	m.lock = nil
	return nil
}

// LockHolder implements executor.Backend.
func (m *Memory) LockHolder(context.Context) (*executor.LockInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lock == nil {
		return nil, executor.ErrNotFound
	}
	h := *m.lock
	return &h, nil
}

// Inspect opens the existing state directory at path to read its plans
// and journals (the history of earlier runs): unlike Open it creates
// nothing, and it fails when path holds no journal directory.
func Inspect(path string) (*Dir, error) {
	fi, err := os.Stat(filepath.Join(path, "journal"))
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", path, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("state directory %s: journal is not a directory", path)
	}
	return &Dir{path: path, files: map[string]*journalFile{}}, nil
}

// Run is a plan with a journal in the directory.
type Run struct {
	PlanSHA256 string
	// LastAppendAt is when the journal was last written: the file's
	// modification time.
	LastAppendAt time.Time
}

// Runs lists the plans with a journal in the directory, the most recently
// written first (then by SHA-256). Files that are no journal are left out.
func (d *Dir) Runs(context.Context) ([]Run, error) {
	out, err := Journals(filepath.Join(d.path, "journal"))
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", d.path, err)
	}
	return out, nil
}

// Journals lists the journal files <plan sha256>.jsonl in dir, the most
// recently written first (then by SHA-256); other files are left out.
func Journals(dir string) ([]Run, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Run
	for _, e := range entries {
		sha, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() || executor.CheckPlanSHA(sha) != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, Run{PlanSHA256: sha, LastAppendAt: fi.ModTime()})
	}
	slices.SortFunc(out, RecentFirst)
	return out, nil
}

// RecentFirst orders runs the most recently written first, then by
// SHA-256.
func RecentFirst(a, b Run) int {
	return cmp.Or(b.LastAppendAt.Compare(a.LastAppendAt), strings.Compare(a.PlanSHA256, b.PlanSHA256))
}

// Started reports whether the state directory dir holds a started run of
// plan sha: its journal has a record.
func Started(dir, sha string) bool {
	if executor.CheckPlanSHA(sha) != nil {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, "journal", sha+".jsonl"))
	return err == nil && fi.Size() > 0
}
