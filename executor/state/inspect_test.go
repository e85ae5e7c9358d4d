package state_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/executor/state"
)

// Inspect reads a state directory an apply wrote, lists its runs newest
// first, and creates nothing where there is none.
func TestInspectAndRuns(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "st")
	if _, err := state.Inspect(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Inspect of a missing directory: %v, want not exist", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Inspect created %s", dir)
	}
	d, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const older, newer = "0123456789abcdef", "fedcba9876543210"
	for _, s := range []string{older, newer} {
		if err := d.SavePlan(ctx, s, []byte("plan "+s)); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Append(ctx, s, []byte(`{"v":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	// Not journals: the appends' lock files, a stray file, a bad name.
	for _, name := range []string{"notes.txt", "NOT-A-SHA.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, "journal", name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(filepath.Join(dir, "journal", older+".jsonl"), base, base)
	os.Chtimes(filepath.Join(dir, "journal", newer+".jsonl"), base.Add(time.Hour), base.Add(time.Hour))

	r, err := state.Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := r.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, run := range runs {
		got = append(got, run.PlanSHA256+" "+run.LastAppendAt.UTC().Format(time.RFC3339))
	}
	want := []string{newer + " 2026-01-02T04:04:05Z", older + " 2026-01-02T03:04:05Z"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if b, err := r.LoadPlan(ctx, older); err != nil || string(b) != "plan "+older {
		t.Errorf("LoadPlan: %q %v", b, err)
	}
	if e, err := r.Read(ctx, newer, -1); err != nil || len(e) != 1 {
		t.Errorf("Read: %v %v", e, err)
	}
}
