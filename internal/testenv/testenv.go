// Package testenv finds what a test needs from outside the repository: the
// real components other tools are checked against (Chromium, redfishtool,
// python3-sushy, PostgreSQL, openssl) and the public Redfish captures in
// ../shared/redfish-mockups. Where one is absent the test skips, and the
// skip is reported in one line naming what to install (`make test` prints
// those lines at the end), so a green run never hides what did not run.
//
// Two environment variables, set by the Makefile and by .ci/run:
//
//   - RACKFORM_TEST_REPORT: a directory; every skip for a missing component
//     appends one line to its "skipped" file and every component found one
//     line to its "used" file.
//   - RACKFORM_TEST_REQUIRE: component names (space or comma separated, or
//     "all"): a test that needs one of them fails instead of skipping. CI
//     requires every component it installs.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Component is something a test needs that the repository does not hold.
type Component struct {
	// Name is the key of RACKFORM_TEST_REQUIRE and of the report.
	Name string
	// What names the thing for a person ("headless Chromium").
	What string
	// Install says how to get it on Debian/Ubuntu.
	Install string
}

// The components the tests use. README's Quick start and .ci/run install
// the same list (TestInstallListsAgree holds them together).
var (
	Chromium    = Component{"chromium", "Chromium (headless, for the HTML pages)", "apt-get install chromium"}
	Redfishtool = Component{"redfishtool", "redfishtool (an independent Redfish client)", "apt-get install redfishtool"}
	Sushy       = Component{"sushy", "python3-sushy (OpenStack's Redfish library, for Debian's /usr/bin/python3)", "apt-get install python3-sushy"}
	Sushycli    = Component{"sushycli", "sushycli (python3-sushy-cli)", "apt-get install python3-sushy-cli"}
	PostgreSQL  = Component{"postgresql", "PostgreSQL server binaries (initdb, pg_ctl)", "apt-get install postgresql"}
	OpenSSL     = Component{"openssl", "openssl (checks plan keys and signatures)", "apt-get install openssl"}
	Mockups     = Component{"mockups", "the Redfish captures in ../shared/redfish-mockups", "clone the shared folder beside the repository, or set RACKFORM_MOCKUPS to it"}
)

// Components lists every component, in the order the report prints them.
func Components() []Component {
	return []Component{Chromium, Redfishtool, Sushy, Sushycli, PostgreSQL, OpenSSL, Mockups}
}

// Required reports whether RACKFORM_TEST_REQUIRE names c (or "all").
func Required(c Component) bool {
	for _, f := range strings.FieldsFunc(os.Getenv("RACKFORM_TEST_REQUIRE"), func(r rune) bool { return r == ',' || r == ' ' }) {
		if f == c.Name || f == "all" {
			return true
		}
	}
	return false
}

// Missing skips t because c is absent (why says what was looked for), or
// fails it when c is required. It records the skip for the report.
func Missing(t testing.TB, c Component, why string) {
	t.Helper()
	// One line per top-level test: its subtests skip for the same reason,
	// and `make test` prints identical lines once.
	name, _, _ := strings.Cut(t.Name(), "/")
	line := fmt.Sprintf("%s %s: %s not found (%s); to run it: %s", pkgDir(), name, c.What, why, c.Install)
	if Required(c) {
		t.Fatalf("%s is required here (RACKFORM_TEST_REQUIRE) but %s", c.What, line)
	}
	report("skipped", line)
	t.Skip(line)
}

// Used records that c was found, for the report CI checks.
func Used(c Component) { report("used", c.Name) }

// Binary returns the path of the first of names on PATH (or at an absolute
// name), or skips t as Missing.
func Binary(t testing.TB, c Component, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			Used(c)
			return p
		}
	}
	Missing(t, c, "no "+strings.Join(names, ", ")+" on PATH")
	return ""
}

// MockupsDir returns ../shared/redfish-mockups resolved from the module
// root (or RACKFORM_MOCKUPS), or skips t as Missing. The captures are
// third-party data: tests read them there and the repository holds none.
func MockupsDir(t testing.TB) string {
	t.Helper()
	dir, why := mockupsDir()
	if dir == "" {
		Missing(t, Mockups, why)
	}
	Used(Mockups)
	return dir
}

// Mockup returns one capture's directory below MockupsDir ("dell/R750"),
// failing t when the shared folder is there but the capture is not.
func Mockup(t testing.TB, rel string) string {
	t.Helper()
	d := filepath.Join(MockupsDir(t), filepath.FromSlash(rel))
	if _, err := os.Stat(filepath.Join(d, "redfish", "v1", "index.json")); err != nil {
		if _, err2 := os.Stat(d); err2 != nil {
			t.Fatalf("capture %s: %v", rel, err2)
		}
	}
	return d
}

func mockupsDir() (string, string) {
	if d := os.Getenv("RACKFORM_MOCKUPS"); d != "" {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d, ""
		}
		return "", "RACKFORM_MOCKUPS=" + d + " is not a directory"
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err.Error()
	}
	d := filepath.Join(filepath.Dir(root), "shared", "redfish-mockups")
	if fi, err := os.Stat(d); err == nil && fi.IsDir() {
		return d, ""
	}
	return "", "no " + filepath.Join("..", "shared", "redfish-mockups") + " beside the repository"
}

// ModuleRoot is the directory of this module's go.mod, found from this
// source file (tests run in their package's directory, but a test binary
// may run elsewhere).
func ModuleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if ok {
		// internal/testenv/testenv.go → the root.
		root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/rackform/rackform\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of github.com/rackform/rackform above %s", wd)
		}
	}
}

// pkgDir is the test's package directory relative to the module root
// (tests run in their package's directory), "." when unknown.
func pkgDir() string {
	wd, err := os.Getwd()
	root, err2 := ModuleRoot()
	if err != nil || err2 != nil {
		return "."
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "."
	}
	return "./" + filepath.ToSlash(rel)
}

var reportMu sync.Mutex

// report appends one line to RACKFORM_TEST_REPORT/kind. Test binaries of
// several packages append at once: each write is one short line with
// O_APPEND, so lines do not interleave.
func report(kind, line string) {
	dir := os.Getenv("RACKFORM_TEST_REPORT")
	if dir == "" {
		return
	}
	reportMu.Lock()
	defer reportMu.Unlock()
	f, err := os.OpenFile(filepath.Join(dir, kind), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(strings.ReplaceAll(line, "\n", " ") + "\n")
}
