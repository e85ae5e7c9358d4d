package main

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	planrun "github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/internal/pgtest"
)

var update = flag.Bool("update", false, "rewrite the cmp files of testdata/script/*.txtar with the actual output")

// examplesDir is the repository's examples, relative to this package.
var examplesDir = filepath.Join("..", "..", "examples")

// TestMain lets scripts run the real binary: the test binary re-executes
// itself as "rackform" through the same run() that main uses.
//
// The tests of the postgres state backend share one PostgreSQL server,
// started here for the package (internal/pgtest); each gets a database.
func TestMain(m *testing.M) {
	testscript.Main(withPostgres{m}, map[string]func(){
		"rackform": func() { os.Exit(run()) },
	})
}

// e2eParallel is how many tests of this package run at once by default.
const e2eParallel = 4

// pgServer is the package's PostgreSQL server; nil without binaries.
var pgServer *pgtest.Server

type withPostgres struct{ m *testing.M }

func (w withPostgres) Run() int {
	// The end-to-end tests wait on simulated BMCs, leases and PostgreSQL
	// far more than they compute: run e2eParallel of them at once (each
	// on its own addresses, database and directories), unless -parallel
	// says otherwise.
	if !slices.ContainsFunc(os.Args[1:], func(a string) bool { return strings.HasPrefix(a, "-test.parallel") }) {
		_ = flag.Set("test.parallel", strconv.Itoa(e2eParallel))
	}
	// The registry of started runs of every rackform the tests start is a
	// directory of the test's, never the user's (scripts get their own).
	if dir, err := os.MkdirTemp("", "rackform-runs-"); err == nil {
		os.Setenv(planrun.EnvRunRegistry, dir)
		defer os.RemoveAll(dir)
	}
	return pgtest.Main(w.m, &pgServer)
}

// TestScripts runs testdata/script/*.txtar end to end. Each script starts in
// its own $WORK holding a copy of examples/ (as $WORK/examples), so scripts
// can break a copy and diagnostics show short, stable paths.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup:               setupScript,
		Cmds:                scriptCmds(),
	})
}

// scriptSlots bounds how many scripts run at once to what they ran with
// before the package's other end-to-end tests ran in parallel (the
// machine's two cores): several scripts, such as demo at -speed 3000, time
// real processes (a hook, a shell) against a clock that runs thousands of
// times faster, and more of them at once slow those past their deadlines.
var scriptSlots = make(chan struct{}, 2)

func setupScript(env *testscript.Env) error {
	scriptSlots <- struct{}{}
	env.Defer(func() { <-scriptSlots })
	// NO_COLOR is part of the contract; scripts test colour choices
	// explicitly, so start from a known state.
	env.Setenv("NO_COLOR", "")
	// Each script's own registry of started runs.
	env.Setenv(planrun.EnvRunRegistry, filepath.Join(env.WorkDir, ".runs"))
	if _, err := os.Stat(examplesDir); err != nil {
		// No examples in this tree: scripts that need them fail on their
		// own with "no such file", which says what is missing.
		return nil
	}
	return copyDir(examplesDir, filepath.Join(env.WorkDir, "examples"))
}

// scriptCmds are the commands scripts get beyond testscript's built-ins.
// Later commands (sim, plan, apply) add theirs here.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"exitcode":    cmdExitcode,
		"replace":     cmdReplace,
		"waitport":    cmdWaitPort,
		"bgstart":     cmdBgStart,
		"bgsignal":    cmdBgSignal,
		"bgwait":      cmdBgWait,
		"waitfor":     cmdWaitFor,
		"sleep":       cmdSleep,
		"simcheck":    cmdSimCheck,
		"planedit":    cmdPlanEdit,
		"nosecret":    cmdNoSecret,
		"planhash":    cmdPlanHash,
		"simrequests": cmdSimRequests,
		"simfault":    cmdSimFault,
		"schema":      cmdSchema,
		"policy":      cmdPolicy,
	}
}

// cmdExitcode runs a program like exec but pins its exit status, which
// matters to CI: exitcode 3 rackform fmt -check. Its stdout and stderr are
// kept for the stdout, stderr and cmp commands that follow.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode (the code says what is expected)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = exit.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// cmdReplace edits a file in $WORK: replace FILE OLD NEW replaces the only
// occurrence of OLD with NEW, so a script can break one example on purpose
// without a shell or sed. The escapes \n, \t and \" in OLD and NEW are
// interpreted.
func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! replace")
	}
	if len(args) != 3 {
		ts.Fatalf("usage: replace FILE OLD NEW")
	}
	unescape := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\"`, `"`)
	file := ts.MkAbs(args[0])
	old, repl := unescape.Replace(args[1]), unescape.Replace(args[2])
	data, err := os.ReadFile(file)
	ts.Check(err)
	if n := strings.Count(string(data), old); n != 1 {
		ts.Fatalf("replace: %q occurs %d times in %s, want exactly once", old, n, args[0])
	}
	ts.Check(os.WriteFile(file, []byte(strings.Replace(string(data), old, repl, 1)), 0o644))
}

// copyDir copies the regular files under src into dst.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
