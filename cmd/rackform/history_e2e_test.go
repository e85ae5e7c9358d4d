package main

import (
	"strings"
	"testing"
)

// With the state in PostgreSQL, plan learns from the runs kept there: a
// CI job with no state directory of its own plans another fleet of the
// same servers with what an earlier apply (another job) took. Without the
// connection string it says it cannot read them and plans with the
// defaults.
func TestPostgresPlanLearnsFromEarlierRuns(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f1, conn := pgFleet(t, freeOctet(t, 120, 9), 3, 3, 3000, "30s", false)
	f2 := pgFleetIn(t, freeOctet(t, f1Octet(t, f1)+1, 9), 3, 3, 3000, "30s", false)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f1.dir); code != 0 || strings.Contains(out, "estimates") {
		t.Fatalf("first plan: exit %d, want 0 and no history\n%s", code, out)
	}
	if code, out := a.run(t, "apply", "-allow-unsigned", "plan.json"); code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	b := newPGRunner(t, bin, conn)
	code, out := b.run(t, "plan", "-no-color", f2.dir)
	if code != 0 || !strings.Contains(out, "  estimates learned from 1 earlier run") ||
		!strings.Contains(out, "    update bios on Contoso 3500: median ") {
		t.Fatalf("plan from another job: exit %d, want estimates learned from the run in PostgreSQL\n%s", code, out)
	}
	c := newPGRunner(t, bin, "")
	c.env = c.env[:len(c.env)-1] // no RACKFORM_PG_CONN_STR at all
	code, out = c.run(t, "plan", "-no-color", f2.dir)
	if code != 0 || strings.Contains(out, "estimates learned") ||
		!strings.Contains(out, "Warning: estimates: the configuration keeps its state in PostgreSQL, but RACKFORM_PG_CONN_STR is not set, so no earlier run there is read") {
		t.Errorf("plan without the connection string: exit %d, want 0, a warning and the defaults\n%s", code, out)
	}
}
