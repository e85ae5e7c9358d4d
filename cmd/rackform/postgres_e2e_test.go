//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rackform/rackform/internal/pgtest"
)

// pgRunner is one CI job: its own empty working directory and only the
// environment a job has (PATH, the BMC password, the database's connection
// string), no state directory, no plan file unless it made one.
type pgRunner struct {
	bin, work string
	env       []string
}

func newPGRunner(t *testing.T, bin, conn string) *pgRunner {
	t.Helper()
	work := t.TempDir()
	return &pgRunner{bin: bin, work: work, env: []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + work,
		"TMPDIR=" + os.TempDir(),
		"NO_COLOR=1",
		"RACKFORM_SIM_PASSWORD=" + e2ePassword,
		"RACKFORM_PG_CONN_STR=" + conn,
	}}
}

func (r *pgRunner) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(r.bin, args...)
	cmd.Dir, cmd.Env = r.work, r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	if strings.Contains(out.String(), pgtest.Password) {
		t.Fatalf("rackform %s printed the database password:\n%s", strings.Join(args, " "), out.String())
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

func (r *pgRunner) start(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(r.bin, args...)
	cmd.Dir, cmd.Env = r.work, r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	return cmd, &out
}

// pgFleet is a simulated fleet whose configuration keeps its state in
// PostgreSQL (rackform { backend "postgres" }), with a database of its own.
func pgFleet(t *testing.T, octet, racks, perRack int, speed float64, lease string, pause bool) (*e2eFleet, string) {
	t.Helper()
	pgtest.Need(t, pgServer)
	return pgFleetOn(t, pgServer, octet, racks, perRack, speed, lease, pause)
}

// pgFleetOn is pgFleet with a database on srv: a test that stops its
// server has one of its own (pgtest.Own), as the others run beside it.
func pgFleetOn(t *testing.T, srv *pgtest.Server, octet, racks, perRack int, speed float64, lease string, pause bool) (*e2eFleet, string) {
	t.Helper()
	db, err := srv.NewDatabase(context.Background(), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return pgFleetIn(t, octet, racks, perRack, speed, lease, pause), srv.TCPConn(db)
}

// pgFleetIn is pgFleet without a database of its own.
func pgFleetIn(t *testing.T, octet, racks, perRack int, speed float64, lease string, pause bool) *e2eFleet {
	t.Helper()
	f := startE2EFleet(t, octet, racks, perRack, speed, nil)
	path := filepath.Join(f.dir, "main.rf.hcl")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("rackform {\n  backend \"postgres\" {\n    lease_duration = %q\n  }\n}\n\n", lease) + string(src)
	if pause {
		cfg = strings.Replace(cfg, `wait_after_rack = "0s"`, "wait_after_rack = \"0s\"\n    pause_after_rack = true", 1)
	}
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// journalTypes returns the types of the journal records of every plan, in
// order, read straight from the database.
func journal(t *testing.T, conn string) []map[string]any {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT record FROM rackform.journal ORDER BY pos`)
	if err != nil && strings.Contains(err.Error(), "42P01") {
		return nil // no schema yet: nothing was written
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("journal record %q: %v", b, err)
		}
		out = append(out, m)
	}
	return out
}

// countRecords counts journal records of a type.
func countRecords(t *testing.T, conn, typ string) int {
	n := 0
	for _, r := range journal(t, conn) {
		if r["type"] == typ {
			n++
		}
	}
	return n
}

// checkStepsOnce asserts from the journal that no step of a server was
// started again after it completed.
func checkStepsOnce(t *testing.T, conn string) {
	t.Helper()
	done := map[string]bool{}
	for _, r := range journal(t, conn) {
		key := fmt.Sprint(r["server"], " ", r["op"])
		switch r["type"] {
		case "step_done":
			done[key] = true
		case "step_started":
			if done[key] {
				t.Errorf("journal: %s started again after it was done", key)
			}
		}
	}
}

// TestPostgresContinueFromAnotherRunner: runner A plans and applies; the
// run pauses after a rack (exit 3). Runner B, a second empty directory with
// only RACKFORM_PG_CONN_STR and the BMC password, sees the paused run in
// status and continues it to the end, rack by rack, from the database
// alone. No state directory is written anywhere, the plan holds neither the
// connection string nor its password, and no output shows the password.
func TestPostgresContinueFromAnotherRunner(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f, conn := pgFleet(t, freeOctet(t, 61, 9), 3, 3, 3000, "30s", true)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	planFile, err := os.ReadFile(filepath.Join(a.work, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(planFile, []byte(pgtest.Password)) || bytes.Contains(planFile, []byte("127.0.0.1:"+fmt.Sprint(pgServer.Port()))) {
		t.Fatal("the plan holds the database connection string")
	}
	if !bytes.Contains(planFile, []byte(`backend \"postgres\"`)) {
		t.Error("the plan does not record the postgres backend of its configuration")
	}
	code, out := a.run(t, "apply", "-allow-unsigned", "plan.json")
	if code != 3 || !strings.Contains(out, "To continue, run: rackform continue -allow-unsigned\n") {
		t.Fatalf("apply on runner A: exit %d, want 3 (paused after the first rack) naming rackform continue\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(a.work, ".rackform")); err == nil {
		t.Error("apply with the postgres backend wrote a local state directory")
	}

	b := newPGRunner(t, bin, conn)
	code, out = b.run(t, "status")
	if code != 0 || !regexp.MustCompile(`(?m)^Plan [0-9a-f]{12}: run paused\(after_rack\)$`).MatchString(out) {
		t.Fatalf("status on runner B: exit %d\n%s", code, out)
	}
	for i := 0; ; i++ {
		code, out = b.run(t, "continue", "-allow-unsigned")
		t.Logf("continue %d on runner B: exit %d", i+1, code)
		if code == 0 {
			break
		}
		if code != 3 || i == 3 {
			t.Fatalf("continue on runner B: exit %d\n%s", code, out)
		}
	}
	if !strings.Contains(out, "Apply complete: 9 servers upgraded, 0 failed, 0 skipped") {
		t.Fatalf("the last continue did not complete the run:\n%s", out)
	}
	f.checkFleet(t)
	checkStepsOnce(t, conn)
	if n := countRecords(t, conn, "continue"); n != 2 {
		t.Errorf("%d continue records in the journal, want 2 (one per pause)", n)
	}
	for _, dir := range []string{a.work, b.work} {
		if _, err := os.Stat(filepath.Join(dir, ".rackform")); err == nil {
			t.Errorf("%s has a local state directory", dir)
		}
	}
	if code, out := b.run(t, "continue", "-allow-unsigned"); code != 1 || !strings.Contains(out, "already been applied completely") {
		t.Errorf("continue of a completed run: exit %d\n%s", code, out)
	}
}

// TestPostgresConnectionErrors: a database that refuses the connection, or
// the credentials, stops apply and continue before anything is done: a
// clear error naming the database, exit 1, no BMC touched, no state
// written, and never the password of the connection string.
func TestPostgresConnectionErrors(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f, conn := pgFleet(t, freeOctet(t, 67, 4), 2, 2, 3000, "30s", false)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	before := f.stats(t)
	const secret = "Not-The-Pass-4x"
	for _, tc := range []struct {
		name, conn string
		want       string
	}{
		{"connection refused", "postgres://rackform:" + secret + "@127.0.0.1:1/state?sslmode=disable", "connect: connection refused"},
		{"bad credentials", strings.Replace(conn, pgtest.Password, secret, 1), "password authentication failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newPGRunner(t, bin, tc.conn)
			if err := os.WriteFile(filepath.Join(r.work, "plan.json"), mustRead(t, filepath.Join(a.work, "plan.json")), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"apply", "-allow-unsigned", "plan.json"}, {"continue"}, {"status"}, {"force-unlock", "abc"}} {
				code, out := r.run(t, args...)
				if code != 1 || !strings.Contains(out, "Error: cannot connect to the PostgreSQL state backend") || !strings.Contains(out, tc.want) {
					t.Errorf("rackform %s: exit %d, want 1 with a clear connection error\n%s", args[0], code, out)
				}
				if strings.Contains(out, secret) {
					t.Errorf("rackform %s printed the password:\n%s", args[0], out)
				}
			}
			if _, err := os.Stat(filepath.Join(r.work, ".rackform")); err == nil {
				t.Error("a local state directory was written")
			}
		})
	}
	after := f.stats(t)
	for n, s := range after {
		if s.Updates != before[n].Updates || s.Reimages != before[n].Reimages {
			t.Errorf("%s was changed by an apply that could not reach its state backend", n)
		}
	}
	if n := len(journal(t, conn)); n != 0 {
		t.Errorf("the database holds %d journal records", n)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitRecords waits until the journal holds at least n records of typ, or
// the apply exits.
func waitRecords(t *testing.T, conn, typ string, n int, cmd *exec.Cmd, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for countRecords(t, conn, typ) < n {
		select {
		case <-exited:
			t.Fatalf("apply exited before %d %s records", n, typ)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %d %s records after 60s", n, typ)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgresKilledApplyResumes: apply is killed with SIGKILL in the
// middle of the rollout; its lease stops being renewed, and the next apply
// (with -lock-timeout, on any machine) takes the lock over once the lease
// expired, resumes from the journal, and completes without starting a
// finished step again and without flashing a server twice.
func TestPostgresKilledApplyResumes(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f, conn := pgFleet(t, freeOctet(t, 71, 6), 3, 2, 300, "3s", false)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	cmd, _ := a.start(t, "apply", "-allow-unsigned", "plan.json")
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	waitRecords(t, conn, "step_done", 2, cmd, exited)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	doneBefore := countRecords(t, conn, "step_done")

	b := newPGRunner(t, bin, conn)
	if err := os.WriteFile(filepath.Join(b.work, "plan.json"), mustRead(t, filepath.Join(a.work, "plan.json")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := b.run(t, "apply", "-allow-unsigned", "-lock-timeout", "60s", "plan.json")
	if code != 0 {
		t.Fatalf("apply after the kill: exit %d\n%s", code, out)
	}
	f.checkFleet(t)
	checkStepsOnce(t, conn)
	var tookOver bool
	for _, r := range journal(t, conn) {
		if r["type"] == "run_started" && strings.Contains(fmt.Sprint(r["message"]), "lease expired") {
			tookOver = true
		}
	}
	if !tookOver {
		t.Error("the journal does not record the takeover of the dead apply's expired lease")
	}
	t.Logf("%d steps were done before the kill, %d in all", doneBefore, countRecords(t, conn, "step_done"))
}

var lockIDInStatus = regexp.MustCompile(`lock ID ([0-9a-f]+)`)

// TestPostgresForceUnlockStealsTheLease: while apply runs on runner A, an
// operator on runner B force-unlocks its lock by the ID status shows. A can
// no longer journal (its lease is fenced), so it stops with an error
// saying the lease was lost, acting no further; B's continue then drives
// the run to the end from the journal, with no server flashed twice.
func TestPostgresForceUnlockStealsTheLease(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f, conn := pgFleet(t, freeOctet(t, 77, 6), 3, 2, 300, "30s", false)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	cmd, aout := a.start(t, "apply", "-allow-unsigned", "plan.json")
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	waitRecords(t, conn, "step_started", 1, cmd, exited)

	b := newPGRunner(t, bin, conn)
	code, out := b.run(t, "status")
	m := lockIDInStatus.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("status on runner B does not show the lock: exit %d\n%s", code, out)
	}
	if code, out := b.run(t, "force-unlock", m[1]); code != 0 {
		t.Fatalf("force-unlock on runner B: exit %d\n%s", code, out)
	}
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("apply on runner A went on after its lease was removed")
	}
	if code := cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(aout.String(), "lease") {
		t.Fatalf("apply on runner A: exit %d, want a failure saying its lease was lost\n%s", code, aout.String())
	}
	t.Logf("runner A: %s", lastLines(aout.String(), 2))
	for i := 0; ; i++ {
		code, out = b.run(t, "continue", "-allow-unsigned")
		if code == 0 {
			break
		}
		if i == 2 {
			t.Fatalf("continue on runner B: exit %d\n%s", code, out)
		}
	}
	f.checkFleet(t)
	checkStepsOnce(t, conn)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// TestPostgresDatabaseRestartDuringApply: the database stops (immediate
// shutdown, as a crash) and starts again while apply runs. Apply waits and
// retries (journal writes, reads, the lease's heartbeat) and completes the
// run; every server is upgraded once and no step is repeated.
func TestPostgresDatabaseRestartDuringApply(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), PostgreSQL server and work directory
	// Its own server: stopped and started below, which would cut off the
	// tests sharing the package's.
	srv := pgtest.Own(t)
	f, conn := pgFleetOn(t, srv, freeOctet(t, 83, 6), 3, 2, 300, "60s", false)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	cmd, aout := a.start(t, "apply", "-allow-unsigned", "plan.json")
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	waitRecords(t, conn, "step_started", 1, cmd, exited)
	if err := srv.StopServer(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := srv.StartServer(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(120 * time.Second):
		t.Fatal("apply did not end after the database came back")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("apply across a database restart: exit %d\n%s", code, aout.String())
	}
	if !strings.Contains(aout.String(), "Warning: the PostgreSQL state backend is unreachable") {
		t.Errorf("apply did not say it was waiting for the database:\n%s", aout.String())
	}
	f.checkFleet(t)
	checkStepsOnce(t, conn)
}

var planSHARe = regexp.MustCompile(`Plan SHA-256: ([0-9a-f]{64})`)

// TestPostgresSeveralRuns: two rollouts paused in one database. The
// commands without a plan file do not guess: they list both unfinished
// runs and ask for -run ID; with -run they act on that run only.
func TestPostgresSeveralRuns(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f1, conn := pgFleet(t, freeOctet(t, 89, 9), 3, 3, 3000, "30s", true)
	f2 := pgFleetIn(t, freeOctet(t, f1Octet(t, f1)+1, 9), 3, 3, 3000, "30s", true)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	var shas []string
	for i, f := range []*e2eFleet{f1, f2} {
		name := fmt.Sprintf("plan%d.json", i+1)
		code, out := a.run(t, "plan", "-no-color", "-out", name, f.dir)
		m := planSHARe.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("plan %d: exit %d\n%s", i+1, code, out)
		}
		shas = append(shas, m[1])
		if code, out := a.run(t, "apply", "-allow-unsigned", name); code != 3 {
			t.Fatalf("apply %d: exit %d, want 3 (paused)\n%s", i+1, code, out)
		}
	}
	b := newPGRunner(t, bin, conn)
	for _, args := range [][]string{{"continue"}, {"status"}, {"stop"}} {
		code, out := b.run(t, args...)
		if code != 1 || !strings.Contains(out, "holds 2 unfinished runs; choose one with -run ID") ||
			!strings.Contains(out, "-run "+shas[0][:12]) || !strings.Contains(out, "-run "+shas[1][:12]) {
			t.Errorf("rackform %s with two unfinished runs: exit %d, want 1 listing both\n%s", args[0], code, out)
		}
	}
	code, out := b.run(t, "status", "-run", shas[1][:10])
	if code != 0 || !strings.Contains(out, "Plan "+shas[1][:12]+": run paused(after_rack)") {
		t.Fatalf("status -run: exit %d\n%s", code, out)
	}
	if code, out := b.run(t, "status", "-run", "ffff"); code != 1 || !strings.Contains(out, "has no run of a plan whose SHA-256 starts with") {
		t.Errorf("status -run of no run: exit %d\n%s", code, out)
	}
	for i := 0; ; i++ {
		code, out = b.run(t, "continue", "-allow-unsigned", "-run", shas[0][:12])
		if code == 0 {
			break
		}
		if code != 3 || i == 3 {
			t.Fatalf("continue -run: exit %d\n%s", code, out)
		}
	}
	f1.checkFleet(t)
	// The other run is untouched and now the only unfinished one.
	code, out = b.run(t, "status")
	if code != 0 || !strings.Contains(out, "Plan "+shas[1][:12]+": run paused(after_rack)") {
		t.Fatalf("status with one unfinished run left: exit %d\n%s", code, out)
	}
}

// f1Octet is the third octet of a fleet's BMC addresses.
func f1Octet(t *testing.T, f *e2eFleet) int {
	t.Helper()
	src := string(mustRead(t, filepath.Join(f.dir, "main.rf.hcl")))
	var o int
	i := strings.Index(src, "http://127.77.")
	if i < 0 {
		t.Fatal("no BMC address in the fleet's configuration")
	}
	fmt.Sscanf(src[i+len("http://127.77."):], "%d", &o)
	return o
}

// TestPostgresStandbyWorkerTakesOver: a second apply of the same plan on
// another runner, started while the first one runs, waits (-lock-timeout)
// instead of driving the run beside it; when the first is killed, the
// standby takes the lock over once the lease expired and completes the run
// from the journal, no step started twice and no server flashed twice.
// (Active/standby, the default; apply -join makes the second apply a
// co-worker instead: postgres_workers_e2e_test.go.)
func TestPostgresStandbyWorkerTakesOver(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f, conn := pgFleet(t, freeOctet(t, 95, 6), 3, 2, 300, "3s", false)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	acmd, _ := a.start(t, "apply", "-allow-unsigned", "plan.json")
	aexited := make(chan struct{})
	go func() { _ = acmd.Wait(); close(aexited) }()
	waitRecords(t, conn, "step_started", 1, acmd, aexited)

	b := newPGRunner(t, bin, conn)
	if err := os.WriteFile(filepath.Join(b.work, "plan.json"), mustRead(t, filepath.Join(a.work, "plan.json")), 0o644); err != nil {
		t.Fatal(err)
	}
	bcmd, bout := b.start(t, "apply", "-allow-unsigned", "-lock-timeout", "120s", "plan.json")
	bexited := make(chan struct{})
	go func() { _ = bcmd.Wait(); close(bexited) }()
	waitRecords(t, conn, "step_done", 3, acmd, aexited)
	if n := countRecords(t, conn, "run_started"); n != 1 {
		t.Fatalf("%d run_started records while the first apply runs: the standby did not wait", n)
	}
	_ = syscall.Kill(-acmd.Process.Pid, syscall.SIGKILL)
	<-aexited
	select {
	case <-bexited:
	case <-time.After(120 * time.Second):
		t.Fatalf("the standby did not finish:\n%s", bout.String())
	}
	if code := bcmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("standby apply: exit %d\n%s", code, bout.String())
	}
	f.checkFleet(t)
	checkStepsOnce(t, conn)
	var takeover string
	for _, r := range journal(t, conn) {
		if r["type"] == "run_started" {
			takeover = fmt.Sprint(r["message"])
		}
	}
	if !strings.Contains(takeover, "lease expired") {
		t.Errorf("the standby's run_started does not record the takeover of the expired lease: %q", takeover)
	}
}

// TestPostgresStopAndSkipFromAnotherRunner: while apply runs on runner A,
// runner B (no plan file, no state directory) skips a server that has not
// started and stops the run; A obeys both records through the database
// and exits 3 (stopped); B's continue then finishes the run, the skipped
// server untouched.
func TestPostgresStopAndSkipFromAnotherRunner(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f, conn := pgFleet(t, freeOctet(t, 101, 6), 3, 2, 300, "30s", false)
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	cmd, aout := a.start(t, "apply", "-allow-unsigned", "plan.json")
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	waitRecords(t, conn, "step_started", 1, cmd, exited)

	b := newPGRunner(t, bin, conn)
	// s4 is rack r2's compute server: the control plane goes first, so it has
	// not started this early.
	if code, out := b.run(t, "skip", "lab/r2/s4"); code != 0 {
		t.Fatalf("skip on runner B: exit %d\n%s", code, out)
	}
	if code, out := b.run(t, "stop"); code != 0 || !strings.Contains(out, "Stop recorded") {
		t.Fatalf("stop on runner B: exit %d\n%s", code, out)
	}
	select {
	case <-exited:
	case <-time.After(90 * time.Second):
		t.Fatal("apply on runner A did not obey the stop")
	}
	if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(aout.String(), "Apply stopped") {
		t.Fatalf("apply on runner A: exit %d, want 3 (stopped)\n%s", code, aout.String())
	}
	code, out := b.run(t, "continue", "-allow-unsigned")
	if code != 0 || !strings.Contains(out, "1 skipped") {
		t.Fatalf("continue on runner B: exit %d, want 0 with the skipped server\n%s", code, out)
	}
	st := f.stats(t)["bmc-0004"]
	if st.Updates != 0 || st.Reimages != 0 {
		t.Errorf("the skipped server bmc-0004 was changed: %d updates, %d reimages", st.Updates, st.Reimages)
	}
	checkStepsOnce(t, conn)
}
