package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rackform/rackform/executor/state"
)

// continue (Options.Recheck) reads the catalog again when it makes the
// run's executor and tells the operator why a pending cluster stays
// pending; apply does not read it.
func TestExecutorRechecksPendingReleasesForContinue(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalogWith(`["east"]`, "https://127.0.0.1/os.iso")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, recheck := range []bool{true, false} {
		var notes []string
		o := Options{Recheck: recheck, Env: Env{Note: func(s string) { notes = append(notes, s) }}}.withDefaults()
		p := pendingPlan(dir, "catalog.json", "")
		p.Run.Stages[0].ID, p.Run.Stages[0].Name = "stage.main", "main"
		p.Run.Stages[0].Groups[0].ID, p.Run.Stages[0].Groups[0].Name = "group.all", "all"
		r := &Run{Plan: p, SHA256: "0011", Backend: &Backend{Backend: state.NewMemory()}, o: o}
		if _, err := r.Executor(Drive{}); err != nil {
			t.Fatalf("recheck %v: %v", recheck, err)
		}
		want := 0
		if recheck {
			want = 1
		}
		if len(notes) != want {
			t.Errorf("recheck %v: notes %q, want %d", recheck, notes, want)
		}
	}
}
