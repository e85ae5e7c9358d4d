package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/rackform/rackform/internal/regularfile"
)

// LockFile is the lock file's name at the root of a fleet config. It pins
// every external provider plugin to the SHA-256 of its binary:
//
//	{
//	  "format_version": 1,
//	  "providers": {
//	    "acme": {
//	      "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//	    }
//	  }
//	}
//
// It is JSON written with sorted keys and a trailing newline, so the same
// pins always give the same bytes and it diffs cleanly in review. A hash is
// of one binary for one platform.
const LockFile = ".rackform.lock.json"

// lockFormat is the lock file's format major; a file of another major is
// refused rather than half-understood.
const lockFormat = 1

// Lock is the set of provider pins read from, and written to, a lock file.
type Lock struct {
	// Providers maps a provider name to its pin.
	Providers map[string]Pin
	// path is where the lock was loaded from, for messages.
	path string
}

// Pin is one provider's pinned binary.
type Pin struct {
	SHA256 string `json:"sha256"`
}

type lockJSON struct {
	FormatVersion int            `json:"format_version"`
	Providers     map[string]Pin `json:"providers"`
}

// ErrNotPinned is wrapped by Verify's error for a provider the lock file
// does not list.
var ErrNotPinned = errors.New("provider is not pinned in the lock file; pin it with `rackform providers lock`")

// HashMismatchError refuses a plugin binary whose hash is not the pinned one.
type HashMismatchError struct {
	Provider string
	Path     string
	Want     string
	Got      string
	// Lock is the lock file the pin came from, when there is one.
	Lock string
}

func (e *HashMismatchError) Error() string {
	pinned := "was expected"
	if e.Lock != "" {
		pinned = "is pinned in " + e.Lock
	}
	return fmt.Sprintf("refusing provider %q: %s has SHA-256 %s, but %s %s; if this binary is the one you want, pin it again with `rackform providers lock`",
		e.Provider, e.Path, e.Got, e.Want, pinned)
}

// lockLimit bounds a lock file: a pin is about 150 bytes.
var lockLimit = regularfile.Limit{Bytes: 1 << 20, What: "a plugin lock file"}

// NewLock is a lock held in memory; from says where its pins came from,
// for messages.
func NewLock(pins map[string]Pin, from string) *Lock {
	return &Lock{Providers: pins, path: from}
}

// LoadLock reads a lock file (a regular file: a FIFO would block, a
// device never end). A missing file is an empty lock: nothing is
// pinned yet.
func LoadLock(path string) (*Lock, error) {
	l := &Lock{Providers: map[string]Pin{}, path: path}
	data, err := regularfile.Read(path, lockLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading lock file: %w", err)
	}
	return parseLock(data, path)
}

// parseLock decodes a lock file's bytes; path is only for messages.
func parseLock(data []byte, path string) (*Lock, error) {
	l := &Lock{Providers: map[string]Pin{}, path: path}
	var raw lockJSON
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("lock file %s is not valid: %w", path, err)
	}
	if raw.FormatVersion != lockFormat {
		return nil, fmt.Errorf("lock file %s has format_version %d; this rackform reads format %d", path, raw.FormatVersion, lockFormat)
	}
	for name, p := range raw.Providers {
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("lock file %s: %w", path, err)
		}
		if !isSHA256(p.SHA256) {
			return nil, fmt.Errorf("lock file %s: provider %q: sha256 %q is not 64 lowercase hex digits", path, name, p.SHA256)
		}
		l.Providers[name] = p
	}
	return l, nil
}

// Verify checks that the binary at path is the one pinned for provider name.
// It returns an error wrapping ErrNotPinned, a *HashMismatchError, or an
// error reading the file.
func (l *Lock) Verify(name, path string) error {
	spec, err := l.Spec(Binary{Name: name, Path: path})
	if err != nil {
		return err
	}
	return verifyFile(name, path, spec.SHA256, l.path)
}

// Pin records the hash of the binary at path for provider name and returns it.
func (l *Lock) Pin(name, path string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	sum, err := FileSHA256(path)
	if err != nil {
		return "", err
	}
	if l.Providers == nil {
		l.Providers = map[string]Pin{}
	}
	l.Providers[name] = Pin{SHA256: sum}
	return sum, nil
}

// Spec is how to start a discovered binary with its pin enforced.
func (l *Lock) Spec(b Binary) (Spec, error) {
	p, ok := l.Providers[b.Name]
	if !ok {
		return Spec{}, fmt.Errorf("provider %q (%s): %w %s; pin it first", b.Name, b.Path, ErrNotPinned, l.path)
	}
	return Spec{Name: b.Name, Path: b.Path, SHA256: p.SHA256}, nil
}

// Marshal renders the lock file. Map keys are sorted by encoding/json, so
// equal locks give equal bytes.
func (l *Lock) Marshal() []byte {
	providers := l.Providers
	if providers == nil {
		providers = map[string]Pin{}
	}
	out, err := json.MarshalIndent(lockJSON{FormatVersion: lockFormat, Providers: providers}, "", "  ")
	if err != nil {
		panic(err) // strings and ints only: cannot fail
	}
	return append(out, '\n')
}

// Write writes the lock file atomically (a temporary file renamed over
// path), so a crash never leaves half a lock file.
func (l *Lock) Write(path string) error {
	if err := regularfile.Write(path, l.Marshal(), 0o644); err != nil {
		return fmt.Errorf("writing lock file %s: %w", path, err)
	}
	l.path = path
	return nil
}

// FileSHA256 is the hex SHA-256 of a file, streamed (plugin binaries are
// tens of megabytes).
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("hashing plugin binary: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing plugin binary %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// BuiltinSHA256 is the hash of the running rackform binary, which serves the
// built-in providers: a plan records it so that apply can refuse to run a
// plan with other provider code than the one that planned it.
func BuiltinSHA256() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the rackform binary: %w", err)
	}
	return FileSHA256(exe)
}

func verifyFile(name, path, want, lock string) error {
	got, err := FileSHA256(path)
	if err != nil {
		return fmt.Errorf("provider %q: %w", name, err)
	}
	if got != strings.ToLower(want) {
		return &HashMismatchError{Provider: name, Path: path, Want: want, Got: got, Lock: lock}
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
