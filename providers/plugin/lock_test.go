package plugin

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// acmeHash is the SHA-256 of "acme binary\n" (as sha256sum prints it).
const acmeHash = "f5f138be9de5a39611b61281fee3e031a7e3abdbf946638775bb23fe9cb60338"

func TestLockPinWriteLoad(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "acme"), "acme binary\n", 0o755)
	writeFile(t, filepath.Join(dir, "zeta"), "zeta binary\n", 0o755)
	lockPath := filepath.Join(dir, LockFile)

	l, err := LoadLock(lockPath)
	if err != nil {
		t.Fatalf("LoadLock of a missing file: %v", err)
	}
	if len(l.Providers) != 0 {
		t.Fatalf("missing lock file has pins: %v", l.Providers)
	}
	// Pin in reverse order: the file must not depend on it.
	for _, name := range []string{"zeta", "acme"} {
		if _, err := l.Pin(name, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Write(lockPath); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "lock.golden.json")
	if *update {
		writeFile(t, golden, string(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("lock file (-want +got):\n%s", diff)
	}

	back, err := LoadLock(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l.Providers, back.Providers); diff != "" {
		t.Errorf("pins after a round trip (-want +got):\n%s", diff)
	}
	if err := back.Verify("acme", filepath.Join(dir, "acme")); err != nil {
		t.Errorf("Verify of the pinned binary: %v", err)
	}
	if back.Providers["acme"].SHA256 != acmeHash {
		t.Errorf("acme pinned to %s, want %s", back.Providers["acme"].SHA256, acmeHash)
	}
	if string(back.Marshal()) != string(got) {
		t.Errorf("re-marshalling a loaded lock changed it")
	}
}

func TestLockVerifyRefuses(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "rackform-provider-acme")
	writeFile(t, bin, "acme binary\n", 0o755)
	lockPath := filepath.Join(dir, LockFile)
	l, _ := LoadLock(lockPath)
	want, err := l.Pin("acme", bin)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, bin, "acme binary, tampered\n", 0o755)
	got, _ := FileSHA256(bin)

	err = l.Verify("acme", bin)
	var mismatch *HashMismatchError
	if !errors.As(err, &mismatch) {
		t.Fatalf("Verify of a changed binary = %v, want a HashMismatchError", err)
	}
	for _, part := range []string{`"acme"`, bin, "SHA-256 " + got, want + " is pinned in " + lockPath} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not mention %q", err, part)
		}
	}

	err = l.Verify("other", bin)
	if !errors.Is(err, ErrNotPinned) || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("Verify of an unpinned provider = %v, want ErrNotPinned naming it", err)
	}
}

func TestLoadLockRejects(t *testing.T) {
	cases := []struct{ name, content, want string }{
		{"not json", `{`, "is not valid"},
		{"trailing data", `{"format_version": 1} {}`, "is not valid"},
		{"other major", `{"format_version": 2, "providers": {}}`, "format_version 2"},
		{"bad hash", `{"format_version": 1, "providers": {"acme": {"sha256": "abc"}}}`, `provider "acme": sha256 "abc" is not 64 lowercase hex digits`},
		{"bad name", `{"format_version": 1, "providers": {"Acme!": {"sha256": "` + acmeHash + `"}}}`, `provider name "Acme!" is not valid`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), LockFile)
			writeFile(t, path, c.content, 0o644)
			_, err := LoadLock(path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("LoadLock = %v, want an error naming %s and saying %q", err, path, c.want)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rackform-provider-zeta"), "z", 0o755)
	writeFile(t, filepath.Join(dir, "rackform-provider-acme"), "a", 0o755)
	writeFile(t, filepath.Join(dir, "rackform-provider-noexec"), "n", 0o644)
	writeFile(t, filepath.Join(dir, "rackform-provider-Bad"), "b", 0o755)
	writeFile(t, filepath.Join(dir, "terraform-provider-aws"), "t", 0o755)
	writeFile(t, filepath.Join(dir, "rackform-provider-dir", "x"), "d", 0o755)
	if err := os.Symlink(filepath.Join(dir, "rackform-provider-acme"), filepath.Join(dir, "rackform-provider-linked")); err != nil {
		t.Fatal(err)
	}
	got, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Binary{
		{Name: "acme", Path: filepath.Join(dir, "rackform-provider-acme")},
		{Name: "linked", Path: filepath.Join(dir, "rackform-provider-linked")},
		{Name: "zeta", Path: filepath.Join(dir, "rackform-provider-zeta")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Discover (-want +got):\n%s", diff)
	}
	if got, err := Discover(filepath.Join(dir, "missing")); err != nil || got != nil {
		t.Errorf("Discover of a missing directory = %v, %v; want nothing and no error", got, err)
	}
}

func TestDir(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvDir {
				return v
			}
			return ""
		}
	}
	cases := []struct{ flag, env, want string }{
		{"", "", DefaultDir},
		{"", "/opt/plugins", "/opt/plugins"},
		{"plugins", "/opt/plugins", "plugins"},
	}
	for _, c := range cases {
		if got := Dir(c.flag, env(c.env)); got != c.want {
			t.Errorf("Dir(%q) with %s=%q = %q, want %q", c.flag, EnvDir, c.env, got, c.want)
		}
	}
}

func TestBuiltin(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := BuiltinSpec("redfish")
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{Name: "redfish", Path: exe, Args: []string{"provider", "redfish"}, Argv0: os.Args[0]}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("BuiltinSpec (-want +got):\n%s", diff)
	}
	got, err := BuiltinSHA256()
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := FileSHA256(exe); got != sum || !isSHA256(got) {
		t.Errorf("BuiltinSHA256 = %q, want the running binary's hash %q", got, sum)
	}
}

// FuzzLoadLock feeds arbitrary bytes as a lock file: parsing must not
// panic, and whatever it accepts must marshal to a file it reads the same.
func FuzzLoadLock(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "lock.golden.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add([]byte(`{"format_version": 1}`))
	f.Add([]byte(`{"format_version": 1, "providers": {"a": {"sha256": "` + acmeHash + `"}}, "extra": true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := parseLock(data, LockFile)
		if err != nil {
			return
		}
		back, err := parseLock(l.Marshal(), LockFile)
		if err != nil {
			t.Fatalf("a written lock does not load: %v", err)
		}
		if diff := cmp.Diff(l.Providers, back.Providers); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	})
}
