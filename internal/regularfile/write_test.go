package regularfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAndCreate: Write replaces, Create refuses to, and neither
// leaves a temporary file behind.
func TestWriteAndCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "current")
	if err := Write(path, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two\n" {
		t.Errorf("after two writes the file holds %q, want the second", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	lock := filepath.Join(dir, "lock")
	if err := Create(lock, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Create(lock, []byte("theirs\n"), 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second Create: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(lock); string(b) != "mine\n" {
		t.Errorf("the lock holds %q after a refused Create, want the first", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v, want current and lock only", names)
	}
}
