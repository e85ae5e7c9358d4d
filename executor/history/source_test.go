package history_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor/history"
	"github.com/rackform/rackform/planner/plan"
)

// runFiles makes one run of a server whose bios update took update: its
// plan file and journal lines.
func runFiles(t *testing.T, name string, update time.Duration, at time.Time) ([]byte, *journal) {
	servers := []fleetServer{{addr: "c/r1/" + name, vendor: "Contoso", model: "R640", shutdown: minutes(1), update: update, reset: minutes(1), waitReady: minutes(5)}}
	file, _ := planFile(t, name, servers)
	j := &journal{t: t, at: at}
	j.run(servers)
	return file, j
}

func journalBytes(j *journal) []byte {
	var b []byte
	for _, r := range j.recs {
		b = append(append(b, r...), '\n')
	}
	return b
}

// An archive is a state directory, a directory of them, or journal files
// beside their plans (found by SHA-256 under any name), or a mix.
func TestOpenArchiveLayouts(t *testing.T) {
	root := t.TempDir()
	fileA, jA := runFiles(t, "a", minutes(10), epoch)
	fileB, jB := runFiles(t, "b", minutes(20), epoch.Add(time.Hour))
	fileC, jC := runFiles(t, "c", minutes(30), epoch.Add(2*time.Hour))
	fileD, jD := runFiles(t, "d", minutes(40), epoch.Add(3*time.Hour))

	single := filepath.Join(root, "single")
	store(t, single, fileA, jA)

	nested := filepath.Join(root, "jobs")
	store(t, filepath.Join(nested, "job-1", ".rackform"), fileA, jA)
	store(t, filepath.Join(nested, "job-3", "deeper", "st"), fileD, jD) // not looked for
	store(t, filepath.Join(nested, "job-2"), fileB, jB)
	// Loose files beside the state directories: the plan as CI archived it.
	shaC := plan.SHA256(fileC)
	torn := append(journalBytes(jC), []byte(`{"v":1,"type":"step_st`)...)
	for name, b := range map[string][]byte{shaC + ".jsonl": torn, "rollout.plan": fileC, "notes.txt": []byte("not a plan")} {
		if err := os.WriteFile(filepath.Join(nested, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		path    string
		sources int
		runs    int
		median  time.Duration
	}{
		{single, 1, 1, minutes(10)},
		{nested, 3, 3, minutes(20)}, // job-1's .rackform, job-2 and the loose run
	} {
		srcs, err := history.OpenArchive(tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if len(srcs) != tc.sources {
			t.Errorf("%s: %d sources, want %d: %v", tc.path, len(srcs), tc.sources, srcs)
		}
		e, err := history.Load(context.Background(), srcs, history.Options{MinSamples: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := e.Lookup(key(plan.StepUpdate, "bios", "Contoso", "R640"))
		if e.Runs() != tc.runs || got.Samples != tc.runs || time.Duration(got.Median) != tc.median || len(e.Skipped()) > 0 {
			t.Errorf("%s: %d runs, learned %+v, skipped %v; want %d runs, median %s", tc.path, e.Runs(), got, e.Skipped(), tc.runs, tc.median)
		}
	}

	// A journal whose plan is not there is skipped, saying so.
	lonely := filepath.Join(root, "lonely")
	os.MkdirAll(lonely, 0o755)
	os.WriteFile(filepath.Join(lonely, shaC+".jsonl"), journalBytes(jC), 0o644)
	srcs, err := history.OpenArchive(lonely)
	if err != nil {
		t.Fatal(err)
	}
	e, err := history.Load(context.Background(), srcs, history.Options{})
	if err != nil || e.Runs() != 0 || len(e.Skipped()) != 1 || !strings.Contains(e.Skipped()[0], "no plan file in "+lonely+" has SHA-256 "+shaC[:12]) {
		t.Errorf("a journal without its plan: %v, skipped %q", err, e.Skipped())
	}

	empty := filepath.Join(root, "empty")
	os.MkdirAll(empty, 0o755)
	if _, err := history.OpenArchive(empty); err == nil || !strings.Contains(err.Error(), empty+" holds no journals: give a state directory") {
		t.Errorf("an empty archive: %v", err)
	}
	if _, err := history.OpenArchive(filepath.Join(root, "missing")); err == nil {
		t.Error("a missing archive opened")
	}
}
