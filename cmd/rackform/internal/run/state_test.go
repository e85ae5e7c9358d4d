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
