//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// workersConfig is a fast variant of examples/fleet: a canary stage of one
// cluster, then a production stage of two groups (east, west) that the
// strategy lets run in parallel, each cluster two racks of two servers
// (a control-plane server and a compute server in the first rack, the spare
// and a compute server in the second). Servers s1..s12 are on bmc-0001..12.
func workersConfig(octet int, lease string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rackform {\n  backend \"postgres\" {\n    lease_duration = %q\n  }\n}\n\n", lease)
	b.WriteString(e2eRelease)
	n := 0
	for _, c := range []string{"canary", "east", "west"} {
		fmt.Fprintf(&b, "\ncluster %q {\n  release  = release.r\n  strategy = strategy.fast\n", c)
		for r := 1; r <= 2; r++ {
			fmt.Fprintf(&b, "  rack \"%s%d\" {\n", c[:1], r)
			for s := 0; s < 2; s++ {
				n++
				role := "compute"
				if s == 0 && r == 1 {
					role = "control_plane"
				} else if s == 0 {
					role = "control_plane_spare"
				}
				fmt.Fprintf(&b, "    server \"s%d\" {\n      bmc  = \"http://127.77.%d.%d:18443\"\n      role = %q\n    }\n", n, octet, n, role)
			}
			b.WriteString("  }\n")
		}
		b.WriteString("}\n")
	}
	b.WriteString(`
rollout "q3" {
  stage "canary" {
    group "lab" {
      clusters = [cluster.canary]
    }
  }
  stage "prod" {
    group "east" {
      clusters = [cluster.east]
    }
    group "west" {
      clusters = [cluster.west]
    }
  }
}
`)
	return b.String()
}

// workersFleet starts twelve simulated BMCs and writes workersConfig.
func workersFleet(t *testing.T, first int, speed float64, lease string) (*e2eFleet, string) {
	t.Helper()
	f, conn := pgFleet(t, freeOctet(t, first, 12), 6, 2, speed, lease, false)
	octet := f1Octet(t, f)
	if err := os.WriteFile(filepath.Join(f.dir, "main.rf.hcl"), []byte(workersConfig(octet, lease)), 0o644); err != nil {
		t.Fatal(err)
	}
	return f, conn
}

type worker struct {
	cmd    *exec.Cmd
	out    interface{ String() string }
	exited chan struct{}
}

func startWorker(t *testing.T, r *pgRunner, args ...string) *worker {
	t.Helper()
	cmd, out := r.start(t, append([]string{"apply", "-allow-unsigned"}, args...)...)
	w := &worker{cmd: cmd, out: out, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(w.exited) }()
	return w
}

// twoRunners serves a fast variant of examples/fleet (first: its first
// loopback octet) with PostgreSQL state and returns two runners (two
// machines) holding the same plan, made by a.
func twoRunners(t *testing.T, first int) (*e2eFleet, string, *pgRunner, *pgRunner) {
	t.Helper()
	f, conn := workersFleet(t, first, 300, "3s")
	bin := rackformBin(t)
	a := newPGRunner(t, bin, conn)
	if code, out := a.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	b := newPGRunner(t, bin, conn)
	if err := os.WriteFile(filepath.Join(b.work, "plan.json"), mustRead(t, filepath.Join(a.work, "plan.json")), 0o644); err != nil {
		t.Fatal(err)
	}
	return f, conn, a, b
}

// startPair starts a's apply, waits until it has started the run, then
// starts b's apply -join of the same plan.
func startPair(t *testing.T, conn string, a, b *pgRunner) (*worker, *worker) {
	t.Helper()
	wa := startWorker(t, a, "plan.json")
	waitRecords(t, conn, "run_started", 1, wa.cmd, wa.exited)
	return wa, startWorker(t, b, "-join", "plan.json")
}

func (w *worker) wait(t *testing.T, name string) int {
	t.Helper()
	select {
	case <-w.exited:
	case <-time.After(150 * time.Second):
		t.Fatalf("%s did not finish:\n%s", name, w.out.String())
	}
	return w.cmd.ProcessState.ExitCode()
}

// runStep is one step as the journal shows it.
type runStep struct {
	by             string
	started, ended int // journal indexes
}

// journalSteps reads every server's steps from the journal: who started
// each (server, op) and how often.
func journalSteps(t *testing.T, conn string) (steps map[string][]runStep, states []map[string]any) {
	t.Helper()
	steps = map[string][]runStep{}
	for i, r := range journal(t, conn) {
		key := fmt.Sprint(r["server"], " ", r["op"])
		switch r["type"] {
		case "step_started":
			steps[key] = append(steps[key], runStep{by: fmt.Sprint(r["by"]), started: i, ended: -1})
		case "step_done", "step_failed":
			if s := steps[key]; len(s) > 0 {
				s[len(s)-1].ended = i
			}
		case "state":
			r["_i"] = i
			states = append(states, r)
		}
	}
	return steps, states
}

// checkOrder checks the journal against the rollout's rules: the canary
// stage ends before any production server starts (stages one after
// another); in each cluster the control-plane servers go one at a time and
// before the compute phase; the second rack of a cluster starts after the
// first has a server done (racks one at a time); every group is driven by
// one worker.
func checkOrder(t *testing.T, conn string, oneWorkerPerGroup bool) {
	t.Helper()
	steps, states := journalSteps(t, conn)
	// When each server first ran and ended (its state records).
	first, done := map[string]int{}, map[string]int{}
	for _, r := range states {
		id, i := fmt.Sprint(r["id"]), r["_i"].(int)
		if strings.Count(id, "/") != 2 {
			continue // not a server
		}
		switch r["state"] {
		case "running":
			if _, ok := first[id]; !ok {
				first[id] = i
			}
		case "completed":
			done[id] = i
		}
	}
	srv := func(c string, k int) string { return fmt.Sprintf("%s/%s%d/s%d", c, c[:1], (k-1)%4/2+1, k) }
	for c, base := range map[string]int{"canary": 1, "east": 5, "west": 9} {
		cp, cpSpare, c1, c2 := srv(c, base), srv(c, base+2), srv(c, base+1), srv(c, base+3)
		for _, s := range []string{cp, cpSpare, c1, c2} {
			if _, ok := done[s]; !ok {
				t.Fatalf("journal: %s never completed", s)
			}
		}
		// Control plane: the spare first, one at a time, before compute.
		if first[cp] < done[cpSpare] {
			t.Errorf("journal: %s started (at %d) before %s was done (at %d): two control-plane servers down at once", cp, first[cp], cpSpare, done[cpSpare])
		}
		for _, s := range []string{c1, c2} {
			if first[s] < done[cp] || first[s] < done[cpSpare] {
				t.Errorf("journal: compute server %s started before the control plane of %s was done", s, c)
			}
		}
		if first[c2] < done[c1] {
			t.Errorf("journal: %s of the second rack started (at %d) before %s of the first was done (at %d)", c2, first[c2], c1, done[c1])
		}
		if c != "canary" {
			for _, s := range []string{cp, cpSpare, c1, c2} {
				for _, k := range []int{1, 2, 3, 4} {
					if first[s] < done[srv("canary", k)] {
						t.Errorf("journal: production server %s started before the canary stage's %s was done", s, srv("canary", k))
					}
				}
			}
		}
	}
	if !oneWorkerPerGroup {
		return
	}
	// One worker per group.
	byGroup := map[string]map[string]bool{}
	for key, ss := range steps {
		c := key[:strings.IndexByte(key, '/')]
		for _, s := range ss {
			if byGroup[c] == nil {
				byGroup[c] = map[string]bool{}
			}
			byGroup[c][s.by] = true
		}
	}
	for c, by := range byGroup {
		if len(by) != 1 {
			t.Errorf("journal: cluster %s was driven by %d workers (%v); a group is claimed by one", c, len(by), by)
		}
	}
}

// TestPostgresTwoWorkersShareTheRun: two applies of one plan on two
// runners, the second with -join, drive the run together through the
// database: each claims one of the production groups, which run in
// parallel; the journal shows every step started exactly once, both
// workers having run steps, and the order the rollout rules ask for
// (stages, control plane one at a time, racks one after another); every
// server is at target, none flashed or reimaged twice.
func TestPostgresTwoWorkersShareTheRun(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f, conn, a, b := twoRunners(t, 111)
	start := time.Now()
	wa, wb := startPair(t, conn, a, b)
	// While both run, status lists both workers and the groups each holds.
	var listed string
	for listed == "" {
		select {
		case <-wa.exited:
		case <-wb.exited:
		case <-time.After(300 * time.Millisecond):
			if _, out := a.run(t, "status"); strings.Contains(out, "Workers on this run: 2 applies") {
				listed = out
				// status -json says the same, in its schema.
				_, js := a.run(t, "status", "-json")
				var st struct {
					Workers []struct{ ID string } `json:"workers"`
				}
				if err := json.Unmarshal([]byte(js), &st); err != nil || len(st.Workers) != 2 {
					t.Errorf("status -json while both ran: %d workers (%v), want 2\n%s", len(st.Workers), err, tail(js, 2000))
				} else if err := validateOutput("status", []byte(js)); err != nil {
					t.Errorf("status -json while both ran: %v", err)
				}
			}
			continue
		}
		break
	}
	codeA, codeB := wa.wait(t, "worker A"), wb.wait(t, "worker B")
	elapsed := time.Since(start)
	if listed == "" {
		t.Error("status never listed the two workers while both ran")
	} else if strings.Count(listed, ": holds stage.") < 1 {
		t.Errorf("status while both ran lists no worker holding a group:\n%s", listed)
	} else {
		t.Logf("status while both ran:\n%s", listed)
	}
	if codeA != 0 || codeB != 0 {
		t.Fatalf("worker A exit %d, worker B exit %d\nA:\n%s\nB:\n%s", codeA, codeB, wa.out.String(), wb.out.String())
	}
	f.checkFleet(t)
	steps, _ := journalSteps(t, conn)
	workers := map[string]int{}
	for key, ss := range steps {
		if len(ss) != 1 {
			t.Errorf("journal: %s started %d times", key, len(ss))
		}
		for _, s := range ss {
			workers[s.by]++
		}
	}
	if len(workers) != 2 {
		t.Errorf("journal: steps were run by %d workers, want both: %v", len(workers), workers)
	}
	checkOrder(t, conn, true)
	if code, out := b.run(t, "status"); code != 0 || !strings.Contains(out, "run completed") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
	t.Logf("two workers: %s; steps by worker: %v", elapsed.Round(10*time.Millisecond), workers)
	if os.Getenv("RACKFORM_MEASURE_WORKERS") != "" {
		g, conn1 := workersFleet(t, 141, 300, "3s")
		c := newPGRunner(t, rackformBin(t), conn1)
		if code, out := c.run(t, "plan", "-no-color", "-out", "plan.json", g.dir); code != 0 {
			t.Fatalf("plan: exit %d\n%s", code, out)
		}
		start := time.Now()
		if code, out := c.run(t, "apply", "-allow-unsigned", "plan.json"); code != 0 {
			t.Fatalf("one worker: exit %d\n%s", code, out)
		}
		t.Logf("one worker: %s", time.Since(start).Round(10*time.Millisecond))
	}
}

// TestPostgresKilledWorkerIsAdopted: worker B (apply -join) is killed with
// SIGKILL while its production group's update step polls its BMC task.
// Once B's lease expires, worker A adopts the group and resumes that
// server from the journal: the task is polled, the update is not started
// again (one step_started for it in the journal, the BIOS flashed once),
// and A completes the run.
func TestPostgresKilledWorkerIsAdopted(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f, conn, a, b := twoRunners(t, 171)
	wa, wb := startPair(t, conn, a, b)
	// B only drives a production group (A leads and has the canary):
	// wait for the task of an update B started, as the journal shows it.
	server, op := waitTaskOfAnotherWorker(t, conn, wb)
	_ = syscall.Kill(-wb.cmd.Process.Pid, syscall.SIGKILL)
	<-wb.exited
	if code := wa.wait(t, "worker A"); code != 0 {
		t.Fatalf("worker A: exit %d\n%s", code, wa.out.String())
	}
	f.checkFleet(t)
	checkStepsOnce(t, conn)
	steps, _ := journalSteps(t, conn)
	if n := len(steps[server+" "+op]); n != 1 {
		t.Errorf("journal: %s %s (its BMC task was being polled when its worker was killed) started %d times, want once: polled, not flashed again", server, op, n)
	}
	for key, ss := range steps {
		if len(ss) != 1 {
			t.Errorf("journal: %s started %d times", key, len(ss))
		}
	}
	killed := steps[server+" "+op][0].by
	adopted := false
	for key, ss := range steps {
		if strings.HasPrefix(key, server+" ") && ss[0].started > steps[server+" "+op][0].started && ss[0].by != killed {
			adopted = true
		}
	}
	if !adopted {
		t.Errorf("journal: no step of %s after %s was started by another worker than the killed one (%s): the server was not adopted", server, op, killed)
	}
	if steps[server+" "+op][0].ended < 0 {
		t.Errorf("journal: %s %s never ended: its task was not polled to the end", server, op)
	}
	checkOrder(t, conn, false)
}

// waitTaskOfAnotherWorker waits until the journal holds the BMC task of a
// step started by another worker than the one that started the first step
// (worker A), and returns that step.
func waitTaskOfAnotherWorker(t *testing.T, conn string, w *worker) (server, op string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var first string
		by := map[string]string{}
		for _, r := range journal(t, conn) {
			key := fmt.Sprint(r["server"], " ", r["op"])
			switch r["type"] {
			case "step_started":
				if first == "" {
					first = fmt.Sprint(r["by"])
				}
				by[key] = fmt.Sprint(r["by"])
			case "task_uri":
				if by[key] != first {
					return fmt.Sprint(r["server"]), fmt.Sprint(r["op"])
				}
			}
		}
		select {
		case <-w.exited:
			t.Fatalf("worker B exited before it journaled a BMC task:\n%s", w.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker B journaled no BMC task in 90s:\n%s", w.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPostgresKilledLeaderIsReplaced: worker A, the leader (it holds the
// state lock and steps the run, its stages and gates), is killed with
// SIGKILL while worker B (apply -join) drives a production group. Once A's
// leases expire, B takes the lock, adopts A's group and completes the run:
// every step started once in the journal, every server at target, the
// rollout order kept.
func TestPostgresKilledLeaderIsReplaced(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	f, conn, a, b := twoRunners(t, 211)
	wa, wb := startPair(t, conn, a, b)
	waitTaskOfAnotherWorker(t, conn, wb) // B is under way in a production group
	_ = syscall.Kill(-wa.cmd.Process.Pid, syscall.SIGKILL)
	<-wa.exited
	// Only a leader records the stages' and the run's ends: B finishing
	// at all shows it took the lock once A's lease expired.
	if code := wb.wait(t, "worker B"); code != 0 {
		t.Fatalf("worker B, after the leader was killed: exit %d\n%s", code, wb.out.String())
	}
	f.checkFleet(t)
	checkStepsOnce(t, conn)
	checkOrder(t, conn, false)
	if code, out := b.run(t, "status"); code != 0 || !strings.Contains(out, "run completed") {
		t.Errorf("status after B finished: exit %d\n%s", code, out)
	}
}
