//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/internal/pgtest"
)

// TestPostgresOutageSaysWhatIsLeftAndHowToResume: the database stops for
// longer than the lease while a server is powered off mid-flight. Apply
// ends with an error (no record lost), and its output lists every server
// it leaves out of service with what brings it back, and the command that
// resumes; once the database is back, continue completes the run with no
// server flashed twice.
func TestPostgresOutageSaysWhatIsLeftAndHowToResume(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), PostgreSQL server and work directory
	// Its own server: stopped and started below, which would cut off the
	// tests sharing the package's.
	srv := pgtest.Own(t)
	f, conn := pgFleetOn(t, srv, freeOctet(t, 107, 4), 2, 2, 300, "3s", false)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	cmd, aout := a.start(t, "apply", "-allow-unsigned", "plan.json")
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for !poweredOff(t, conn) {
		select {
		case <-exited:
			t.Fatalf("apply ended before a server was powered off:\n%s", aout.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no server was powered off within 60s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := srv.StopServer(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = srv.StartServer()
		}
	}()
	select {
	case <-exited:
	case <-time.After(90 * time.Second):
		t.Fatal("apply did not end with the database down past its lease")
	}
	out := aout.String()
	t.Logf("apply with the database down:\n%s", lastLines(out, 6))
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out, "Error: ") {
		t.Fatalf("apply with the database down: exit %d, want 1 with an error\n%s", code, out)
	}
	if !regexp.MustCompile(`(?m)^Left out of service \(\d+\):$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  lab/r\d/s\d \([^)]*\): [^;]*powered off[^;]*; to bring it back: `).MatchString(out) {
		t.Errorf("the output does not list the server left powered off:\n%s", out)
	}
	if !strings.Contains(out, "To resume, run: rackform apply -allow-unsigned plan.json (or: rackform continue -allow-unsigned)\n") {
		t.Errorf("the output does not say how to resume:\n%s", out)
	}
	if err := srv.StartServer(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	b := newPGRunner(t, bin, conn)
	for i := 0; ; i++ {
		code, out := b.run(t, "continue", "-allow-unsigned", "-lock-timeout", "30s")
		if code == 0 {
			break
		}
		if i == 2 {
			t.Fatalf("continue after the outage: exit %d\n%s", code, out)
		}
	}
	f.checkFleet(t)
	checkStepsOnce(t, conn)
	if _, err := os.Stat(filepath.Join(a.work, ".rackform")); err == nil {
		t.Error("apply with the postgres backend wrote a local state directory")
	}
}

// poweredOff reports whether the journal records a completed shutdown.
func poweredOff(t *testing.T, conn string) bool {
	shutdown := map[string]bool{}
	for _, r := range journal(t, conn) {
		key := fmt.Sprint(r["server"], " ", r["op"])
		switch {
		case r["type"] == "step_started" && r["kind"] == "shutdown":
			shutdown[key] = true
		case r["type"] == "step_done" && shutdown[key]:
			return true
		}
	}
	return false
}
