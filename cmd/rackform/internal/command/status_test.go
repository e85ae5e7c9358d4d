package command

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/executor"
)

// TestStatusListsWorkers: with several applies on one run (apply -join),
// status names each worker and the rollout groups it holds; a lone apply
// adds nothing to the lock line.
func TestStatusListsWorkers(t *testing.T) {
	at := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	var b strings.Builder
	writeWorkers(&b, []executor.WorkerStatus{{ID: "w1", Who: "ci@a", PID: 1, Since: at, LeaseExpires: at.Add(30 * time.Second)}})
	if b.Len() != 0 {
		t.Fatalf("one worker: %q, want nothing", b.String())
	}
	writeWorkers(&b, []executor.WorkerStatus{
		{ID: "w1", Who: "ci@a", PID: 11, Since: at, LeaseExpires: at.Add(30 * time.Second), Units: []string{"stage.prod.group.east", "stage.prod.group.west"}},
		{ID: "w2", Who: "ci@b", PID: 22, Since: at.Add(time.Minute), LeaseExpires: at.Add(90 * time.Second)},
	})
	want := "Workers on this run: 2 applies share its rollout groups.\n" +
		"  ci@a (pid 11, worker ID w1, since 2026-11-26T04:00:00Z, lease until 2026-11-26T04:00:30Z): holds stage.prod.group.east, stage.prod.group.west\n" +
		"  ci@b (pid 22, worker ID w2, since 2026-11-26T04:01:00Z, lease until 2026-11-26T04:01:30Z): no group held now\n"
	if b.String() != want {
		t.Errorf("status workers:\n%s\nwant:\n%s", b.String(), want)
	}
}

// A run whose journal has no record has nothing a rehearsal can take over:
// status draws the plan's estimate, and says why.
func TestStatusRemainderNeedsAJournal(t *testing.T) {
	_, _, err := rehearseRemainder(context.Background(), nil, "", nil, time.Now(), 0)
	if err == nil || err.Error() != "its journal has no record yet" {
		t.Errorf("rehearseRemainder without a journal: %v", err)
	}
}
