package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

// PlanState records the state directory relative to the plan file, never
// a path of the planning machine the user did not give; StateDir finds it
// again from wherever apply runs.
func TestPlanStateAndStateDir(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "state")
	for _, tc := range []struct {
		out, stateDir string
		want          string // recorded Dir
		note          bool
	}{
		{"p.plan", "", ".rackform", false},
		{"p.plan", ".rackform", ".rackform", false},
		{"out/p.plan", "", "../.rackform", false},
		{"out/p.plan", "st/x", "../st/x", false},
		{"p.plan", abs, filepath.ToSlash(abs), false},
		{"", "", "", false},
		{"../elsewhere/p.plan", "", "", true},
		{filepath.Join(t.TempDir(), "p.plan"), "", "", true},
		{"p.plan", "../st", "", true},
	} {
		st, note, err := PlanState(nil, tc.out, tc.stateDir)
		if err != nil || st.Backend != plan.BackendLocal || st.Dir != tc.want || (note != "") != tc.note {
			t.Errorf("PlanState(%q, %q) = %+v, %q, %v; want dir %q, note %v", tc.out, tc.stateDir, st, note, err, tc.want, tc.note)
		}
		if strings.Contains(note, filepath.Dir(abs)) {
			t.Errorf("the note names a directory of this machine the user did not give: %s", note)
		}
	}
	st, _, _ := PlanState(&config.Backend{Type: config.BackendPostgres, LeaseDuration: 45 * time.Second}, "p.plan", "")
	if st.Backend != plan.BackendPostgres || st.Dir != "" || st.LeaseDuration != plan.Duration(45*time.Second) {
		t.Errorf("postgres: %+v", st)
	}

	p := &plan.Plan{State: &plan.State{Backend: plan.BackendLocal, Dir: ".rackform"}}
	for _, tc := range []struct {
		planFile, flag string
		set            bool
		want           string
	}{
		{"p.plan", "", false, ".rackform"},
		{filepath.Join("..", "A", "p.plan"), "", false, filepath.Join("..", "A", ".rackform")},
		{filepath.Join("..", "A", "p.plan"), "st", true, "st"},
	} {
		if got := StateDir(p, tc.planFile, tc.flag, tc.set); got != tc.want {
			t.Errorf("StateDir(%q, %q, %v) = %q, want %q", tc.planFile, tc.flag, tc.set, got, tc.want)
		}
	}
	if got := StateDir(&plan.Plan{}, filepath.Join("..", "A", "p.plan"), "", false); got != ".rackform" {
		t.Errorf("a plan recording no state (before 1.5): %q, want .rackform in the working directory", got)
	}
}

// The registry of started runs: one state directory per plan; another is
// refused while the first holds a run of it or is being applied, and an
// entry whose state directory holds no run of the plan is replaced.
func TestRegistryClaim(t *testing.T) {
	work := t.TempDir()
	g := &registry{dir: filepath.Join(work, "runs")}
	if err := os.MkdirAll(g.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sha := strings.Repeat("ab", 32)
	a, b := filepath.Join(work, "A", ".rackform"), filepath.Join(work, "B", ".rackform")

	release, err := g.claim(sha, a)
	if err != nil {
		t.Fatal(err)
	}
	var started *AlreadyStartedError
	if _, err := g.claim(sha, b); !errors.As(err, &started) || !started.Running || canonical(started.StateDir) != canonical(a) {
		t.Fatalf("a second state directory while the first is applied: %v", err)
	}
	again, err := g.claim(sha, filepath.Join(work, "A", ".", ".rackform"))
	if err != nil {
		t.Fatalf("the same state directory reached another way: %v", err)
	}
	again()
	release()

	// A never started: the entry is stale and B takes it.
	release, err = g.claim(sha, b)
	if err != nil {
		t.Fatalf("an entry whose state directory holds no run: %v", err)
	}
	release()
	// B started its run: A is refused, by name.
	if err := os.MkdirAll(filepath.Join(b, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, "journal", sha+".jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = g.claim(sha, a)
	if !errors.As(err, &started) || started.Running || !strings.Contains(err.Error(), "was started on this machine with the state directory") {
		t.Fatalf("a second run after the first started: %v", err)
	}
	if got := g.lookup(sha); canonical(got) != canonical(b) {
		t.Errorf("lookup: %q, want %q", got, b)
	}
	// Its state directory removed: the run is gone, A may start.
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	release, err = g.claim(sha, a)
	if err != nil {
		t.Fatalf("after the first run's state directory was removed: %v", err)
	}
	release()
}

// The registry fails closed (rule 45): an entry that cannot be read or is
// damaged, or a registry that cannot be used, refuses a state directory
// holding no run of the plan, saying what to do; the state directory
// holding the run goes on (a damaged entry is written again).
func TestRegistryFailsClosed(t *testing.T) {
	work := t.TempDir()
	sha := strings.Repeat("cd", 32)
	a, b := filepath.Join(work, "A", ".rackform"), filepath.Join(work, "B", ".rackform")
	startRun(t, a, sha)
	var warnings []string
	opts := func(registry string) Options {
		return Options{Env: Env{
			Getenv: func(k string) string {
				if k == EnvRunRegistry {
					return registry
				}
				return ""
			},
			Warn: func(s string) { warnings = append(warnings, s) },
		}}
	}
	reg := filepath.Join(work, "runs")
	g := &registry{dir: reg}
	for _, tc := range []struct {
		name   string
		damage func(path string) error
	}{
		{"truncated", func(p string) error { return os.WriteFile(p, nil, 0o600) }},
		{"torn", func(p string) error { return os.WriteFile(p, []byte(`{"state_dir":"/x`), 0o600) }},
		{"replaced by anything", func(p string) error { return os.WriteFile(p, []byte("garbage\n"), 0o600) }},
		{"no absolute state directory", func(p string) error { return os.WriteFile(p, []byte(`{"state_dir":"st"}`), 0o600) }},
		{"unreadable (a directory)", func(p string) error { return os.Mkdir(p, 0o700) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			warnings = nil
			release, err := opts(reg).claim(sha, a)
			if err != nil {
				t.Fatal(err)
			}
			release()
			entry := g.path(sha)
			if err := os.RemoveAll(entry); err != nil {
				t.Fatal(err)
			}
			if err := tc.damage(entry); err != nil {
				t.Fatal(err)
			}
			var damaged *EntryError
			_, err = opts(reg).claim(sha, b)
			if !errors.As(err, &damaged) || !strings.Contains(err.Error(), "a second run would upgrade its servers again") || !strings.Contains(err.Error(), "remove "+entry+" and apply again") {
				t.Fatalf("another state directory with the entry damaged: %v, want a refusal saying what to do", err)
			}
			if _, err := os.Stat(b); err == nil {
				t.Error("the refused claim made its state directory")
			}
			// The state directory holding the run goes on.
			release, err = opts(reg).claim(sha, a)
			if err != nil {
				t.Fatalf("the run's own state directory with the entry damaged: %v", err)
			}
			release()
			if fi, err := os.Stat(entry); err == nil && !fi.IsDir() {
				if got := g.lookup(sha); canonical(got) != canonical(a) {
					t.Errorf("the entry was not written again: %q", got)
				}
			} else if len(warnings) != 1 || !strings.Contains(warnings[0], "the run of this plan in "+a+" goes on") {
				t.Errorf("an entry that cannot be written again: warnings %q", warnings)
			}
			if err := os.RemoveAll(entry); err != nil {
				t.Fatal(err)
			}
		})
	}

	// A registry that cannot be used at all.
	file := filepath.Join(work, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	warnings = nil
	var unusable *UnusableError
	_, err := opts(filepath.Join(file, "runs")).claim(sha, b)
	if !errors.As(err, &unusable) || !strings.Contains(err.Error(), "which has no run in this state directory, is not started here") || !strings.Contains(err.Error(), "set "+EnvRunRegistry) {
		t.Fatalf("an unusable registry, a run not started: %v, want a refusal", err)
	}
	release, err := opts(filepath.Join(file, "runs")).claim(sha, a)
	if err != nil || len(warnings) != 1 {
		t.Fatalf("an unusable registry, the run's own state directory: %v, warnings %q; want it to go on with a warning", err, warnings)
	}
	release()
}

// Without its registry entry (removed, another HOME), a second run is
// still refused when the state directory the plan records holds the run.
func TestStartedElsewhere(t *testing.T) {
	work := t.TempDir()
	sha := strings.Repeat("ef", 32)
	p := &plan.Plan{State: &plan.State{Backend: plan.BackendLocal, Dir: ".rackform"}}
	planFile := filepath.Join(work, "A", "p.plan")
	a, b := filepath.Join(work, "A", ".rackform"), filepath.Join(work, "B", "st")
	if err := startedElsewhere(p, planFile, sha, b); err != nil {
		t.Fatalf("before any run: %v", err)
	}
	startRun(t, a, sha)
	var started *AlreadyStartedError
	err := startedElsewhere(p, planFile, sha, b)
	if !errors.As(err, &started) || canonical(started.StateDir) != canonical(a) || !strings.Contains(err.Error(), "it is the state directory the plan records") {
		t.Fatalf("another state directory: %v", err)
	}
	if err := startedElsewhere(p, planFile, sha, filepath.Join(work, "A", ".", ".rackform")); err != nil {
		t.Errorf("the recorded state directory itself: %v", err)
	}
}

// startRun makes dir hold a started run of plan sha (a journal).
func startRun(t *testing.T, dir, sha string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "journal", sha+".jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
