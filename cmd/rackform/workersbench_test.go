//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rackform/rackform/internal/pgtest"
	"github.com/rackform/rackform/providers/sim"
	"github.com/rackform/rackform/rehearsal"
)

// TestWorkersBench is the benchmark of several workers on one run: a
// generated fleet of RACKFORM_BENCH_N servers (default 20,000; clusters of
// 10 racks of 25 compute servers, one BIOS update each) served by `rackform
// sim -config` processes of at most RACKFORM_BENCH_PER_SIM BMCs each
// (default 5,000: a process may hold 20,000 open files here), planned by
// `rackform plan`, then applied on one PostgreSQL by
// RACKFORM_BENCH_APPLIES `rackform apply` processes (default 4): the first
// alone, the others with -join RACKFORM_BENCH_LATE after it (default 10s).
// The canary stage's clusters (one group each, as many as workers) wait
// for a maintenance window opening RACKFORM_BENCH_WINDOW after the
// benchmark starts (default 4m: the simulators start and the plan is made
// meanwhile): the first worker claims them all, and the others, joining
// before it opens, get theirs by rebalancing. The production stage has
// four groups per worker. The simulator runs RACKFORM_BENCH_SPEED times
// faster than real time (default 3000).
//
// It reports the simulator's counters (every server's BIOS flashed exactly
// once, at the target), steps started twice in the journal (none; after a
// kill, the steps cut off on the killed worker that the adopter started
// again are counted apart, by kind: an update among them was checked first
// and had not taken effect, as the flash counters show), who
// drove each group, the wall time against the rehearsed schedule of the
// same plan (divided by the speed), PostgreSQL's statements
// (pg_stat_statements) and transactions (pg_stat_database) per step, and
// the most files each process held open; then where the wall time from
// the window's opening went (workersbench_timeline_test.go: the critical
// group of each stage from the journal against the rehearsal, the mean
// step by kind, the journal's latency, the CPU of each kind of process and
// PostgreSQL's waits; RACKFORM_BENCH_JOURNAL=FILE keeps the journal). It
// runs only with
// RACKFORM_BENCH_WORKERS=1 (make bench-workers). RACKFORM_BENCH_KILL=D kills
// the last worker (SIGKILL) D after the window opened and reports how long
// its groups took to be adopted against the lease (15s).
func TestWorkersBench(t *testing.T) {
	if os.Getenv("RACKFORM_BENCH_WORKERS") == "" {
		t.Skip("workers benchmark: set RACKFORM_BENCH_WORKERS=1 (make bench-workers)")
	}
	pgtest.Need(t, pgServer)
	n := envInt(t, "RACKFORM_BENCH_N", 20000)
	perSim := envInt(t, "RACKFORM_BENCH_PER_SIM", 5000)
	applies := envInt(t, "RACKFORM_BENCH_APPLIES", 4)
	speed := envFloat(t, "RACKFORM_BENCH_SPEED", 3000)
	window := envDuration(t, "RACKFORM_BENCH_WINDOW", 4*time.Minute)
	late := envDuration(t, "RACKFORM_BENCH_LATE", 10*time.Second)
	kill := envDuration(t, "RACKFORM_BENCH_KILL", 0)
	const perCluster = 250
	if n%perCluster != 0 || n/perCluster < 2*applies || perSim%perCluster != 0 {
		t.Fatalf("RACKFORM_BENCH_N=%d, _PER_SIM=%d: want multiples of %d, N at least %d (two clusters per worker)", n, perSim, perCluster, 2*applies*perCluster)
	}
	ctx := context.Background()
	stmts := enableStatements(t)

	// The fleet, its shards and the simulators.
	work := t.TempDir()
	octet := 150 + os.Getpid()%50
	port := 19443
	clusters := n / perCluster
	opens := time.Now().Add(window).Truncate(time.Second)
	fleet := filepath.Join(work, "fleet")
	writeWorkersBenchConfig(t, fleet, octet, port, 0, clusters, applies, opens, true)
	var sims []*exec.Cmd
	var admins []string
	bin := rackformBin(t)
	began := time.Now()
	for from := 0; from < clusters; from += perSim / perCluster {
		dir := filepath.Join(work, fmt.Sprintf("shard-%d", from))
		to := min(clusters, from+perSim/perCluster)
		writeWorkersBenchConfig(t, dir, octet, port, from, to, applies, opens, false)
		cmd, admin := startBenchSim(t, bin, dir, speed)
		sims = append(sims, cmd)
		admins = append(admins, admin)
	}
	t.Logf("%d simulators serving %d BMCs (127.%d.x.y:%d) up in %v", len(sims), n, octet, port, time.Since(began).Round(100*time.Millisecond))

	db, err := pgServer.NewDatabase(ctx, "workersbench")
	if err != nil {
		t.Fatal(err)
	}
	conn := pgServer.TCPConn(db)
	runners := make([]*pgRunner, applies)
	for i := range runners {
		runners[i] = newPGRunner(t, bin, conn)
	}
	began = time.Now()
	if code, out := runners[0].run(t, "plan", "-no-color", "-out", "plan.json", fleet); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, tail(out, 3000))
	}
	planned := time.Since(began)
	planBytes := mustRead(t, filepath.Join(runners[0].work, "plan.json"))
	for _, r := range runners[1:] {
		if err := os.WriteFile(filepath.Join(r.work, "plan.json"), planBytes, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("planned %d servers in %v; the canary window opens at %s, in %v", n, planned.Round(100*time.Millisecond), opens.Format(time.TimeOnly), time.Until(opens).Round(time.Second))
	if time.Until(opens) < late+10*time.Second {
		t.Logf("planning took longer than RACKFORM_BENCH_WINDOW allowed for: the late workers join after the window opened, so the canary groups are not rebalanced (raise RACKFORM_BENCH_WINDOW)")
	}

	// The database's counters before, and a sampler of claims and files.
	before := dbCounters(t, conn, db, stmts)
	smp := &benchSampler{conn: conn, peakFD: map[string]int{}, pids: map[string]int{}}
	smp.prof.opens = opens
	for i, s := range sims {
		smp.pids[fmt.Sprintf("sim %d", i+1)] = s.Process.Pid
	}
	stop := smp.run(t)
	start := time.Now()
	ws := make([]*worker, applies)
	ws[0] = startWorker(t, runners[0], "-no-color", "plan.json")
	smp.add("apply 1", ws[0].cmd.Process.Pid)
	waitRecords(t, conn, "run_started", 1, ws[0].cmd, ws[0].exited)
	time.Sleep(late)
	for i := 1; i < applies; i++ {
		ws[i] = startWorker(t, runners[i], "-no-color", "-join", "plan.json")
		smp.add(fmt.Sprintf("apply %d", i+1), ws[i].cmd.Process.Pid)
	}
	joined := time.Since(start)
	if time.Now().After(opens) {
		t.Logf("the late workers joined %v after the canary window opened: its groups had started on the first worker, so they are not rebalanced (raise RACKFORM_BENCH_WINDOW)", time.Since(opens).Round(time.Second))
	}
	killed, killedID := "", ""
	if kill > 0 {
		killed, killedID = killWorker(t, conn, ws[applies-1], opens, kill, smp)
	}
	for i, w := range ws {
		select {
		case <-w.exited:
		case <-time.After(60 * time.Minute):
			t.Fatalf("apply %d did not finish:\n%s", i+1, tail(w.out.String(), 3000))
		}
		if kill > 0 && i == applies-1 {
			continue // killed
		}
		if code := w.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("apply %d: exit %d\n%s", i+1, code, tail(w.out.String(), 3000))
		}
	}
	wall := time.Since(start)
	fromOpen := time.Since(opens)
	ended := time.Now()
	stop()
	cpu := smp.prof.line(fromOpen)
	time.Sleep(2 * time.Second) // the backends' statistics reach the counters
	after := dbCounters(t, conn, db, stmts)

	// The simulators' counters: every server's BIOS flashed once.
	flashed := map[int]int{}
	behind := 0
	for _, admin := range admins {
		for name, s := range benchSimStats(t, admin) {
			flashed[s.Flashes["BIOS"]]++
			if s.Versions["BIOS"] != "2.80" {
				behind++
				if behind <= 5 {
					t.Errorf("%s: BIOS %s, want 2.80", name, s.Versions["BIOS"])
				}
			}
		}
	}
	if flashed[1] != n || behind > 0 {
		t.Errorf("simulator: servers by BIOS flashes %v (want all %d once), %d not at the target", flashed, n, behind)
	}

	// The journal: steps started twice, who drove each cluster.
	p := readPlan(t, filepath.Join(runners[0].work, "plan.json"))
	kinds := map[string]string{} // "server step:N" → the step's kind
	estimates := map[string]time.Duration{}
	for _, sv := range p.Servers {
		for _, st := range sv.Steps {
			kinds[fmt.Sprintf("%s step:%d", sv.Address, st.Index)] = string(st.Kind)
			estimates[string(st.Kind)] = time.Duration(st.Estimate)
		}
	}
	steps, _ := journalSteps(t, conn)
	twice, total := 0, 0
	rerun := map[string]int{} // steps cut off on the killed worker, started again by another, by kind
	byWorker := map[string]int{}
	driver := map[string]map[string]bool{}
	dead := func(by string) bool { return killedID != "" && strings.HasSuffix(by, " worker "+killedID) }
	for key, ss := range steps {
		total += len(ss)
		if len(ss) == 2 && dead(ss[0].by) && ss[0].ended < 0 && !dead(ss[1].by) {
			// Cut off by the kill, resumed by the worker that adopted it:
			// an idempotent step (power, wait_ready) is run again, an
			// update only once a check found it had not taken effect (a
			// recorded task is polled instead): the simulators' flash
			// counters above say whether any was flashed twice.
			rerun[kinds[key]]++
		} else if len(ss) != 1 {
			twice++
			if twice <= 5 {
				t.Errorf("journal: %s (%s) started %d times: %+v", key, kinds[key], len(ss), ss)
			}
		}
		c := key[:strings.IndexByte(key, '/')]
		for _, s := range ss {
			byWorker[s.by]++
			if driver[c] == nil {
				driver[c] = map[string]bool{}
			}
			driver[c][s.by] = true
		}
	}
	canaryBy := map[string]bool{}
	for c := 1; c <= applies; c++ {
		for by := range driver[fmt.Sprintf("c%03d", c)] {
			canaryBy[by] = true
		}
	}
	var perWorker []int
	for _, k := range byWorker {
		perWorker = append(perWorker, k)
	}
	slices.Sort(perWorker)
	if len(byWorker) != applies && kill == 0 {
		t.Errorf("journal: steps by %d workers, want %d", len(byWorker), applies)
	}

	// The rehearsed schedule of the same plan, from the window's opening.
	began = time.Now()
	res, err := rehearsal.Run(ctx, rehearsal.Options{Plan: p, PlanSHA256: "bench", Start: opens})
	if err != nil {
		t.Fatal(err)
	}
	rehearsed := time.Duration(res.Schedule.Total)
	t.Logf("rehearsed in %v: %v, / speed %.0f = %v", time.Since(began).Round(100*time.Millisecond), rehearsed, speed, time.Duration(float64(rehearsed)/speed).Round(10*time.Millisecond))

	xacts := after.commits - before.commits - smp.queries.Load()
	line := fmt.Sprintf("workers bench: N=%d servers, %d clusters, %d sims (≤%d BMCs each), %d applies, speed %.0f; plan %v; "+
		"apply wall %v from the first start (late workers joined after %v), %v from the canary window's opening; rehearsed %v / speed = %v (wall ÷ rehearsed %.2f); "+
		"steps %d (started twice: %d; cut off on the killed worker and started again by the adopter, by kind: %v), steps by worker %v, canary groups driven by %d workers (max held by the first before the others joined: %d); %s; "+
		"%sBIOS flashes per server %v; PostgreSQL: %d transactions committed (%.2f per step), %s; peak open files %v; load %s",
		n, clusters, len(sims), perSim, applies, speed, planned.Round(100*time.Millisecond),
		wall.Round(100*time.Millisecond), joined.Round(100*time.Millisecond), fromOpen.Round(100*time.Millisecond), rehearsed, time.Duration(float64(rehearsed)/speed).Round(10*time.Millisecond), fromOpen.Seconds()/(rehearsed.Seconds()/speed),
		total, twice, rerun, perWorker, len(canaryBy), smp.firstMax, smp.balance.line(),
		killed, flashed, xacts, float64(xacts)/float64(total), statementsLine(before, after, total), smp.peaks(), loadavg())
	t.Log(line)
	fmt.Println(line)
	tl := benchTimeline(benchJournal(t, conn), kinds, estimates, res.Schedule, opens, ended, speed) + "  " + cpu + "; load " + loadavg()
	t.Log(tl)
	fmt.Println(tl)
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		t.Fatalf("%s: want a duration such as 90s, got %q", name, v)
	}
	return d
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

// writeWorkersBenchConfig writes clusters c[from+1]..c[to] (10 racks of 25
// compute servers, at 127.NET.x.y:PORT by server index), their release,
// strategy and provider; the first `canary` clusters of the fleet wait for
// a window opening at opens. With rollout (the configuration planned, not
// a simulator's shard), the PostgreSQL backend and the rollout: a canary
// stage of those clusters, one group each, then a production stage of the
// others in four groups per worker.
func writeWorkersBenchConfig(t *testing.T, dir string, net, port, from, to, canary int, opens time.Time, rollout bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if rollout {
		b.WriteString("rackform {\n  backend \"postgres\" {\n    lease_duration = \"15s\"\n  }\n}\n\n")
	}
	fmt.Fprintf(&b, `provider "redfish" {
  username         = "admin"
  password         = env("RACKFORM_SIM_PASSWORD")
  timeout          = "20s"
  poll_interval    = "100ms"
  retry_base_delay = "20ms"
  retry_max_delay  = "1s"
  allow_http       = true
}

release "r" {
  version = "4.6.1"
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bios-2.80.bin"
    match {
      id = "BIOS"
    }
  }
}

strategy "fast" {
  verify_timeout   = "5m"
  drain_timeout    = "5s"
  shutdown_timeout = "1m"
  compute {
    max_unavailable = "100%%"
    wait_after_rack = "0s"
  }
}

maintenance_window "canary" {
  start    = %q
  duration = "24h"
}
`, opens.UTC().Format(time.RFC3339))
	for c := from; c < to; c++ {
		name := fmt.Sprintf("c%03d", c+1)
		fmt.Fprintf(&b, "\ncluster %q {\n  release  = release.r\n  strategy = strategy.fast\n", name)
		if c < canary {
			b.WriteString("  maintenance_window = maintenance_window.canary\n")
		}
		for r := 0; r < 10; r++ {
			fmt.Fprintf(&b, "  rack \"r%02d\" {\n", r+1)
			for s := 0; s < 25; s++ {
				i := c*250 + r*25 + s
				fmt.Fprintf(&b, "    server \"%s-r%02d-s%02d\" {\n      bmc  = \"http://127.%d.%d.%d:%d\"\n      role = \"compute\"\n    }\n", name, r+1, s+1, net, 1+i/250, 1+i%250, port)
			}
			b.WriteString("  }\n")
		}
		b.WriteString("}\n")
	}
	if rollout {
		b.WriteString("\nrollout \"bench\" {\n  stage \"canary\" {\n")
		for c := 0; c < canary; c++ {
			fmt.Fprintf(&b, "    group \"c%03d\" {\n      clusters = [cluster.c%03d]\n    }\n", c+1, c+1)
		}
		b.WriteString("  }\n  stage \"prod\" {\n")
		groups := make([][]string, min(4*canary, to-canary))
		for c := canary; c < to; c++ {
			g := (c - canary) % len(groups)
			groups[g] = append(groups[g], fmt.Sprintf("cluster.c%03d", c+1))
		}
		for i, g := range groups {
			fmt.Fprintf(&b, "    group \"g%02d\" {\n      clusters = [%s]\n    }\n", i+1, strings.Join(g, ", "))
		}
		b.WriteString("  }\n}\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startBenchSim starts `rackform sim -config dir` with its admin API on a
// free loopback port, waits until it serves, and returns it and the admin
// address.
func startBenchSim(t *testing.T, bin, dir string, speed float64) (*exec.Cmd, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	admin := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "sim", "-config", dir, "-speed", strconv.FormatFloat(speed, 'f', -1, 64), "-admin", admin)
	cmd.Env = append(os.Environ(), "RACKFORM_SIM_PASSWORD="+e2ePassword, "NO_COLOR=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if !sent && strings.Contains(sc.Text(), ": ready: ") {
				ready <- true
				sent = true
			}
		}
		if !sent {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("rackform sim -config %s exited before it served", dir)
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("rackform sim -config %s: not ready in 5 minutes", dir)
	}
	return cmd, admin
}

func benchSimStats(t *testing.T, admin string) map[string]sim.Stats {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		BMCs map[string]sim.Stats `json:"bmcs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.BMCs
}

// enableStatements loads pg_stat_statements into the test server (a
// restart) and reports whether it is there; without it the benchmark
// counts transactions only.
func enableStatements(t *testing.T) bool {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, pgServer.SocketConn("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, `ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`)
	c.Close(ctx)
	if err == nil {
		if err = pgServer.StopServer(); err == nil {
			err = pgServer.StartServer()
		}
	}
	if err != nil {
		t.Logf("pg_stat_statements: %v; counting transactions only", err)
		return false
	}
	return true
}

// benchDB is what the database counted for one database.
type benchDB struct {
	commits, rollbacks int64
	calls              map[string]int64   // statements by normalized text
	ms                 map[string]float64 // their total execution time (lock waits included)
}

func dbCounters(t *testing.T, conn, db string, stmts bool) benchDB {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var d benchDB
	if _, err := c.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, `SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = $1`, db).Scan(&d.commits, &d.rollbacks); err != nil {
		t.Fatal(err)
	}
	if !stmts {
		return d
	}
	if _, err := c.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		t.Logf("pg_stat_statements: %v", err)
		return d
	}
	rows, err := c.Query(ctx, `SELECT query, calls, total_exec_time FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = $1 AND query NOT LIKE '%bench-sampler%' AND query NOT LIKE '%pg_stat%'`, db)
	if err != nil {
		t.Fatal(err)
	}
	d.calls, d.ms = map[string]int64{}, map[string]float64{}
	for rows.Next() {
		var q string
		var n int64
		var ms float64
		if err := rows.Scan(&q, &n, &ms); err != nil {
			t.Fatal(err)
		}
		d.calls[q] += n
		d.ms[q] += ms
	}
	return d
}

// statementsLine sums the statements run between two counts, per step,
// and names the commonest.
func statementsLine(before, after benchDB, steps int) string {
	if after.calls == nil {
		return "statements not counted (no pg_stat_statements)"
	}
	type q struct {
		text string
		n    int64
		ms   float64
	}
	var qs []q
	var sum int64
	for text, n := range after.calls {
		d := n - before.calls[text]
		if d > 0 {
			qs = append(qs, q{text, d, after.ms[text] - before.ms[text]})
			sum += d
		}
	}
	slices.SortFunc(qs, func(a, b q) int { return int(b.n - a.n) })
	var top []string
	for _, x := range qs[:min(5, len(qs))] {
		s := strings.Join(strings.Fields(x.text), " ")
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		top = append(top, fmt.Sprintf("%.2f/step %q (mean %.3f ms, %.1f s in all)", float64(x.n)/float64(steps), s, x.ms/float64(x.n), x.ms/1000))
	}
	return fmt.Sprintf("%d statements (%.2f per step; most: %s)", sum, float64(sum)/float64(steps), strings.Join(top, ", "))
}

// benchSampler watches, every half second, how many groups each worker
// holds (the most the first one held before another held any) and the
// open files of each process and its children.
type benchSampler struct {
	conn     string
	mu       sync.Mutex
	pids     map[string]int
	peakFD   map[string]int
	firstMax int
	balance  benchBalance
	queries  countInt
	prof     benchProfile
}

type countInt struct {
	mu sync.Mutex
	n  int64
}

func (c *countInt) add()        { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *countInt) Load() int64 { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

func (s *benchSampler) add(name string, pid int) {
	s.mu.Lock()
	s.pids[name] = pid
	s.mu.Unlock()
}

func (s *benchSampler) run(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := pgx.Connect(ctx, s.conn)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(context.Background())
		s.prof.start(ctx, c)
		s.queries.add()
		others := false
		for ctx.Err() == nil {
			rows, err := c.Query(ctx, `/* bench-sampler */ SELECT count(c.unit) FROM rackform.workers w LEFT JOIN rackform.claims c ON c.worker = w.id
				WHERE w.lease_expires > now() GROUP BY w.id ORDER BY min(w.since)`)
			s.queries.add()
			if err == nil {
				held, _ := pgx.CollectRows(rows, pgx.RowTo[int64])
				for _, h := range held[min(1, len(held)):] {
					others = others || h > 0
				}
				if !others && len(held) > 0 {
					s.firstMax = max(s.firstMax, int(held[0]))
				}
				if time.Now().Before(s.prof.opens) {
					s.balance.sample(held) // nothing started yet: every group may move
				}
			}
			s.mu.Lock()
			for name, pid := range s.pids {
				s.peakFD[name] = max(s.peakFD[name], openFiles(pid))
			}
			s.prof.sample(ctx, c, s.pids)
			s.mu.Unlock()
			s.queries.add()
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (s *benchSampler) peaks() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for n := range s.peakFD {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("%s %d", n, s.peakFD[n]))
	}
	return strings.Join(out, ", ")
}

// openFiles counts the open files of pid, or of its largest child (an
// apply's provider plugin holds the BMC connections): the most of one
// process, which the limit is about.
func openFiles(pid int) int {
	count := func(p int) int {
		ents, _ := os.ReadDir("/proc/" + strconv.Itoa(p) + "/fd")
		return len(ents)
	}
	most := count(pid)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 {
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 1 && f[1] == strconv.Itoa(pid) {
				most = max(most, count(p))
			}
		}
	}
	return most
}

// killWorker kills w's process group with SIGKILL `after` the window
// opens, then waits until no group is claimed by its worker any more (the
// others adopted them once its lease expired), and says how long that
// took, of how many groups.
func killWorker(t *testing.T, conn string, w *worker, opens time.Time, after time.Duration, smp *benchSampler) (string, string) {
	t.Helper()
	time.Sleep(time.Until(opens.Add(after)))
	ctx := context.Background()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	count := func() int {
		var n int
		smp.queries.add()
		if err := c.QueryRow(ctx, `/* bench-sampler */ SELECT count(*) FROM rackform.claims c JOIN rackform.workers w ON w.id = c.worker WHERE w.pid = $1`, w.cmd.Process.Pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	held := count()
	var id string
	smp.queries.add()
	if err := c.QueryRow(ctx, `/* bench-sampler */ SELECT id FROM rackform.workers WHERE pid = $1`, w.cmd.Process.Pid).Scan(&id); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	killedAt := time.Now()
	<-w.exited
	for count() > 0 {
		if time.Since(killedAt) > 10*time.Minute {
			t.Fatalf("the killed worker's %d groups were not adopted in 10 minutes", held)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Sprintf("the last worker killed (SIGKILL) %v after the window opened holding %d groups, all adopted %v later (lease 15s); ",
		after, held, time.Since(killedAt).Round(100*time.Millisecond)), id
}
