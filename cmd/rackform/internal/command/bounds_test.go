//go:build unix

package command

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackform/rackform/planner/plan"
)

// deepHCL is an attribute nested levels deep: 100,000 levels (200 KB)
// overflowed HCL's parser's stack, a crash rather than an error.
func deepHCL(prefix string, levels int, suffix string) string {
	return prefix + strings.Repeat("[", levels) + strings.Repeat("]", levels) + suffix
}

// runWithin runs the command in-process and fails the test when it does
// not end within limit: a FIFO without a writer used to block it.
func runWithin(t *testing.T, limit time.Duration, args ...string) (int, string) {
	t.Helper()
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := runCommand(t, false, args...)
		done <- result{code, stderr}
	}()
	select {
	case r := <-done:
		return r.code, r.stderr
	case <-time.After(limit):
		t.Fatalf("rackform %s did not end within %s", strings.Join(args, " "), limit)
	}
	return 0, ""
}

// validate and fmt of a configuration nested 100,000 levels deep, and fmt
// of a FIFO or a device, end at once in an error naming the file and the
// bound.
func TestConfigurationBounds(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "main.rf.hcl")
	if err := os.WriteFile(deep, []byte(deepHCL("locals {\n  a = ", 100_000, "\n}\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo.rf.hcl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tooDeep := deep + " nests brackets, braces, parentheses or strings more than 256 levels deep (at line 2, column 262)"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"validate deep", []string{"validate", "-no-color", dir}, tooDeep},
		{"fmt deep", []string{"fmt", "-no-color", deep}, tooDeep},
		{"fmt fifo", []string{"fmt", "-no-color", fifo}, fifo + " is a named pipe (FIFO), not a regular file"},
		{"fmt device", []string{"fmt", "-no-color", "/dev/zero"}, "/dev/zero is a character device, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runWithin(t, 20*time.Second, tc.args...)
			if code != ExitError || !strings.Contains(stderr, tc.want) {
				t.Errorf("rackform %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, stderr, ExitError, tc.want)
			}
		})
	}
}

// fmt - of a deep or endless stdin is refused, naming the bound.
func TestFmtStdinBounds(t *testing.T) {
	for name, tc := range map[string]struct {
		stdin string
		want  string
	}{
		"deep":  {deepHCL("a = ", 100_000, "\n"), "Error: reading stdin: <stdin> nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 261)"},
		"large": {strings.Repeat("# a comment line\n", (16<<20)/17+1), "Error: reading stdin: <stdin> is larger than the 16 MiB a configuration or variables file may be"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errb strings.Builder
			m := &Meta{Streams: Streams{Stdin: strings.NewReader(tc.stdin), Stdout: &out, Stderr: &errb}, Getenv: func(string) string { return "" }}
			if code := m.run(t.Context(), []string{"fmt", "-"}); code != ExitError || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), ExitError, tc.want)
			}
		})
	}
}

// rehearse -scenario and sim -scenario of a FIFO, /dev/zero or a scenario
// nested 100,000 levels deep end at once in an error naming the file: the
// FIFO blocked both (sim ignoring SIGTERM meanwhile), /dev/zero grew to
// gigabytes in seconds, the nesting overflowed the stack.
func TestScenarioFileBounds(t *testing.T) {
	dir := t.TempDir()
	file, err := plan.Encode(examplePlan(t, "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, file, 0o644); err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(dir, "fleet")
	if err := os.Mkdir(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "main.rf.hcl"), []byte(simConfigFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.hcl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(dir, "deep.hcl")
	if err := os.WriteFile(deep, []byte(deepHCL(`fault "slow" { servers = `, 100_000, " }\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ scenario, want string }{
		{fifo, "The scenario file " + fifo + " cannot be read: " + fifo + " is a named pipe (FIFO), not a regular file."},
		{"/dev/zero", "The scenario file /dev/zero cannot be read: /dev/zero is a character device, not a regular file."},
		{deep, deep + " nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 281)"},
	} {
		for _, args := range [][]string{
			{"rehearse", "-no-color", "-scenario", tc.scenario, planFile},
			{"sim", "-config", cfgDir, "-scenario", tc.scenario},
		} {
			t.Run(args[0]+" "+filepath.Base(tc.scenario), func(t *testing.T) {
				code, stderr := runWithin(t, 20*time.Second, args...)
				if code != ExitError || !strings.Contains(stderr, tc.want) {
					t.Errorf("rackform %s: exit %d, stderr %q; want exit %d and %q", strings.Join(args, " "), code, stderr, ExitError, tc.want)
				}
			})
		}
	}
}

// show and rehearse of a plan file nested 100,000 levels deep end at once
// in an error naming the file and the bound.
func TestPlanNestingBound(t *testing.T) {
	deep := filepath.Join(t.TempDir(), "deep.plan")
	if err := os.WriteFile(deep, []byte(deepHCL(`{"format_version":"1.5","x":`, 100_000, "}")), 0o644); err != nil {
		t.Fatal(err)
	}
	want := deep + " is not a usable plan: " + deep + " nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 284)"
	for _, cmd := range []string{"show", "rehearse"} {
		code, stderr := runWithin(t, 20*time.Second, cmd, "-no-color", deep)
		if code != ExitError || !strings.Contains(stderr, want) {
			t.Errorf("rackform %s: exit %d, stderr %q; want exit %d and %q", cmd, code, stderr, ExitError, want)
		}
	}
}

// validate reports the first 100 of a configuration's 300 mistakes and
// counts the rest (300,000 of them, each rendered with a scan of the
// file, ran for minutes in gigabytes), and so does rehearse -scenario.
func TestDiagnosticsBounded(t *testing.T) {
	dir := t.TempDir()
	src := "locals {\n  a = [" + strings.Repeat("x, ", 300) + "]\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runCommand(t, false, "validate", "-json", dir)
	if code != ExitError || strings.Count(stdout, `"severity": "error"`) != 101 || !strings.Contains(stdout, "200 more problems are not shown; fix the ones above and run again.") {
		t.Errorf("validate -json: exit %d, %d errors in %s", code, strings.Count(stdout, `"severity": "error"`), stdout[max(0, len(stdout)-600):])
	}

	file, err := plan.Encode(examplePlan(t, "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plan.json")
	scenario := filepath.Join(dir, "many.hcl")
	if err := os.WriteFile(planFile, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scenario, []byte("fault \"never_ready\" {\n  servers = ["+strings.Repeat("1, ", 500)+"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCommand(t, false, "rehearse", "-no-color", "-scenario", scenario, planFile)
	if code != ExitError || strings.Count(stderr, "Error: ") != 101 || !strings.Contains(stderr, "400 more problems are not shown; fix the ones above and run again.") {
		t.Errorf("rehearse -scenario: exit %d, %d errors, ending %q", code, strings.Count(stderr, "Error: "), stderr[max(0, len(stderr)-300):])
	}
}
