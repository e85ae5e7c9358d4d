//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rackform/rackform/rehearsal/schedule"
)

// Where the workers benchmark's wall time goes: the journal's timeline of
// the run against the rehearsed schedule of the same plan, the journal's
// append latency, the database's waits and the CPU of each kind of
// process.

// benchRec is a journal record as the timeline needs it, with when the
// transaction that wrote it began (written_at is the transaction's now()).
type benchRec struct {
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	ID      string    `json:"id"`
	State   string    `json:"state"`
	Server  string    `json:"server"`
	Op      string    `json:"op"`
	By      string    `json:"by"`
	written time.Time
}

func benchJournal(t *testing.T, conn string) []benchRec {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT record, written_at FROM rackform.journal ORDER BY pos`)
	if err != nil {
		t.Fatal(err)
	}
	// RACKFORM_BENCH_JOURNAL=FILE keeps the journal, one record a line
	// after the time its transaction began, to look at.
	var dump *os.File
	if f := os.Getenv("RACKFORM_BENCH_JOURNAL"); f != "" {
		if dump, err = os.Create(f); err != nil {
			t.Fatal(err)
		}
		defer dump.Close()
	}
	var out []benchRec
	for rows.Next() {
		var b []byte
		var r benchRec
		if err := rows.Scan(&b, &r.written); err != nil {
			t.Fatal(err)
		}
		if dump != nil {
			fmt.Fprintf(dump, "%s %s\n", r.written.UTC().Format("15:04:05.000000"), b)
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("journal record %q: %v", b, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tlServer is one server's timeline: when its first step started and its
// last ended, the time inside its steps, and the rehearsal's span of it.
type tlServer struct {
	// running: recorded running (its start decided); observed: its
	// pre-flight observation done.
	running, observed time.Time
	start, end        time.Time
	steps             time.Duration
	rStart, rEnd      time.Time
	rack, group       string
	cluster           string
}

// tlParts is a group's span cut into where the time went: from the
// stage's origin to its first step, the slowest server of each rack
// (inside its steps, between them, and how long after the rack's first
// server it started), and between its racks and clusters.
type tlParts struct {
	lead, steps, inServer, skew, racks, observe, clusters time.Duration
	nRacks                                                int
}

func (p tlParts) total() time.Duration {
	return p.lead + p.steps + p.inServer + p.skew + p.racks + p.observe + p.clusters
}

// benchTimeline reports where the wall time from the window's opening went
// on the critical path (the group that ended last in each stage), against
// the rehearsal of the same plan divided by the speed; every group's span
// against its rehearsed one; the mean step of each kind (in the
// simulator's time); and the journal's append latency.
func benchTimeline(recs []benchRec, kinds map[string]string, estimates map[string]time.Duration, sch *schedule.Schedule, opens, ended time.Time, speed float64) string {
	bars := map[string]schedule.Bar{}
	for _, b := range sch.Bars {
		bars[b.ID] = b
	}
	up := func(id, kind string) string {
		for b, ok := bars[id]; ok; b, ok = bars[b.Parent] {
			if b.Kind == kind || kind == "rack" && b.Scope == "rack" {
				return b.ID
			}
		}
		return ""
	}
	servers := map[string]*tlServer{}
	started := map[string]time.Time{}
	kindSum, kindN := map[string]time.Duration{}, map[string]int{}
	var lag []time.Duration
	for _, r := range recs {
		if !r.written.IsZero() && !r.Time.IsZero() {
			lag = append(lag, r.written.Sub(r.Time))
		}
		id := r.Server
		if r.Type == "state" && r.State == "running" && strings.Count(r.ID, "/") == 2 {
			id = r.ID
		}
		if id == "" {
			continue
		}
		s := servers[id]
		if s == nil {
			b := bars[id]
			s = &tlServer{rStart: b.Start, rEnd: b.End, rack: up(id, "rack"), group: up(id, "group"), cluster: up(id, "cluster")}
			servers[id] = s
		}
		switch {
		case r.Type == "state":
			if s.running.IsZero() {
				s.running = r.Time
			}
			continue
		case r.Type == "observed":
			if s.observed.IsZero() {
				s.observed = r.Time
			}
			continue
		case r.Type != "step_started" && r.Type != "step_done" && r.Type != "step_failed":
			continue
		}
		key := r.Server + " " + r.Op
		if r.Type == "step_started" {
			started[key] = r.Time
			if s.start.IsZero() || r.Time.Before(s.start) {
				s.start = r.Time
			}
			continue
		}
		if st, ok := started[key]; ok {
			d := r.Time.Sub(st)
			s.steps += d
			kindSum[kinds[key]] += d
			kindN[kinds[key]]++
			delete(started, key)
		}
		if r.Time.After(s.end) {
			s.end = r.Time
		}
	}
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) / speed) }

	// Groups by stage, and each group's servers.
	groups := map[string]*tlGroup{}
	for _, s := range servers {
		g := groups[s.group]
		if g == nil {
			g = &tlGroup{id: s.group, stage: up(s.group, "stage")}
			groups[s.group] = g
		}
		g.srv = append(g.srv, s)
	}
	// parts cuts group g's span from origin (actual, or rehearsed: then
	// the in-server split is unknown and counted as steps).
	parts := func(g *tlGroup, origin time.Time, rehearsed bool) tlParts {
		racks := map[string][]*tlServer{}
		var ids []string
		for _, s := range g.srv {
			if racks[s.rack] == nil {
				ids = append(ids, s.rack)
			}
			racks[s.rack] = append(racks[s.rack], s)
		}
		slices.SortFunc(ids, func(a, b string) int {
			x, _ := span(racks[a], rehearsed)
			y, _ := span(racks[b], rehearsed)
			return x.Compare(y)
		})
		var p tlParts
		p.nRacks = len(ids)
		var prevEnd time.Time
		prevCluster := ""
		for i, id := range ids {
			a, b := span(racks[id], rehearsed)
			if i == 0 {
				p.lead = a.Sub(origin)
			} else if cl := racks[id][0].cluster; cl == prevCluster && !rehearsed {
				// Deciding the rack (until its first server is recorded
				// running), then its pre-flight observations.
				var run time.Time
				for _, s := range racks[id] {
					if run.IsZero() || s.running.Before(run) {
						run = s.running
					}
				}
				p.racks += run.Sub(prevEnd)
				p.observe += a.Sub(run)
			} else if cl == prevCluster {
				p.racks += a.Sub(prevEnd)
			} else {
				p.clusters += a.Sub(prevEnd)
			}
			// The server that ended the rack.
			var last *tlServer
			for _, s := range racks[id] {
				if _, en := s.span(rehearsed); last == nil || en.After(lastEnd(last, rehearsed)) {
					last = s
				}
			}
			if rehearsed {
				p.skew += last.rStart.Sub(a)
				p.steps += last.rEnd.Sub(last.rStart)
			} else {
				p.skew += last.start.Sub(a)
				p.steps += last.steps
				p.inServer += last.end.Sub(last.start) - last.steps
			}
			prevEnd, prevCluster = b, racks[id][0].cluster
		}
		return p
	}

	var stages []string
	for _, g := range groups {
		if !slices.Contains(stages, g.stage) {
			stages = append(stages, g.stage)
		}
	}
	slices.SortFunc(stages, func(a, b string) int { return bars[a].Start.Compare(bars[b].Start) })
	var b strings.Builder
	fmt.Fprintf(&b, "where the wall time from the window's opening goes (critical path: the group that ended last in each stage; rehearsed = the rehearsal's time ÷ speed %.0f):\n", speed)
	row := func(what string, act, reh time.Duration) {
		fmt.Fprintf(&b, "  %-62s %9v %9v\n", what, act.Round(time.Millisecond), reh.Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "  %-62s %9s %9s\n", "", "actual", "rehearsed")
	origin, rOrigin := opens, opens
	var lastEnd, rLastEnd time.Time
	for i, st := range stages {
		var crit, rCrit *tlGroup
		var critEnd, rCritEnd time.Time
		var ratios []float64
		for _, g := range groups {
			if g.stage != st {
				continue
			}
			a, e := span(g.srv, false)
			ra, re := span(g.srv, true)
			if e.After(critEnd) {
				crit, critEnd = g, e
			}
			if re.After(rCritEnd) {
				rCrit, rCritEnd = g, re
			}
			ratios = append(ratios, e.Sub(a).Seconds()/scale(re.Sub(ra)).Seconds())
		}
		slices.Sort(ratios)
		name := strings.TrimPrefix(st, "stage.")
		if i > 0 {
			var ss []*tlServer
			for _, g := range groups {
				if g.stage == st {
					ss = append(ss, g.srv...)
				}
			}
			a, _ := span(ss, false)
			ra, _ := span(ss, true)
			row(fmt.Sprintf("between the stages (last %s step → first %s step)", strings.TrimPrefix(stages[i-1], "stage."), name),
				a.Sub(origin), scale(ra.Sub(rOrigin)))
			origin, rOrigin = a, ra
		}
		p, rp := parts(crit, origin, false), parts(crit, rOrigin, true)
		lbl := fmt.Sprintf("%s %s (%d servers, %d racks; rehearsed last: %s)", name, strings.TrimPrefix(crit.id, "group."), len(crit.srv), p.nRacks, strings.TrimPrefix(rCrit.id, "group."))
		fmt.Fprintf(&b, "  %s\n", lbl)
		row("  from the stage's origin to the group's first step", p.lead, scale(rp.lead))
		row("  in the steps of each rack's last server", p.steps, scale(rp.steps))
		row("  between those steps (the executor's turns)", p.inServer, 0)
		row("  that server's start after its rack's first", p.skew, scale(rp.skew))
		row("  between racks: deciding the next (→ its first server running)", p.racks, scale(rp.racks))
		row("  between racks: its pre-flight observations (→ its first step)", p.observe, 0)
		row("  between clusters", p.clusters, scale(rp.clusters))
		row("  the group", p.total(), scale(rp.total()))
		fmt.Fprintf(&b, "  %s groups: span ÷ rehearsed span min %.2f, median %.2f, max %.2f\n", name, ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1])
		origin = critEnd
		rOrigin = rCritEnd
		lastEnd, rLastEnd = critEnd, rCritEnd
	}
	row("after the last step (the run's end, the workers' exit)", ended.Sub(lastEnd), scale(sch.End.Sub(rLastEnd)))
	row("total", ended.Sub(opens), scale(sch.End.Sub(opens)))
	var ks []string
	for k := range kindSum {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	b.WriteString("  mean step by kind, wall (× speed; the plan's estimate, which the rehearsal takes):")
	for _, k := range ks {
		m := kindSum[k] / time.Duration(kindN[k])
		fmt.Fprintf(&b, " %s %v (%v; %v), n=%d;", k, m.Round(time.Millisecond), (time.Duration(float64(m) * speed)).Round(time.Second), estimates[k], kindN[k])
	}
	b.WriteString("\n")
	slices.Sort(lag)
	if len(lag) > 0 {
		q := func(f float64) time.Duration {
			return lag[min(len(lag)-1, int(f*float64(len(lag))))].Round(100 * time.Microsecond)
		}
		fmt.Fprintf(&b, "  journal: %d records; from a record's time to its transaction's start p50 %v, p90 %v, p99 %v, max %v\n", len(lag), q(0.5), q(0.9), q(0.99), lag[len(lag)-1].Round(time.Millisecond))
	}
	return b.String()
}

// tlGroup is a rollout group's servers.
type tlGroup struct {
	id, stage string
	srv       []*tlServer
}

func (s *tlServer) span(rehearsed bool) (time.Time, time.Time) {
	if rehearsed {
		return s.rStart, s.rEnd
	}
	return s.start, s.end
}

func lastEnd(s *tlServer, rehearsed bool) time.Time {
	_, e := s.span(rehearsed)
	return e
}

// span is when the first of ss started and the last ended.
func span(ss []*tlServer, rehearsed bool) (time.Time, time.Time) {
	var a, b time.Time
	for _, s := range ss {
		st, en := s.span(rehearsed)
		if a.IsZero() || st.Before(a) {
			a = st
		}
		if en.After(b) {
			b = en
		}
	}
	return a, b
}

// cpuTicks is the CPU time (user + system, in clock ticks) of pid, and its
// parent's pid.
func cpuTicks(pid int) (ticks int64, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s, ppid, true
}

// machineTicks is the machine's busy and total CPU ticks (/proc/stat).
func machineTicks() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

// benchProfile samples, with the benchSampler, the CPU time of each kind
// of process (the simulators, the applies with their plugins, PostgreSQL's
// server and backends) and what the run's database backends were doing
// (on CPU, waiting for a lock, for the WAL's flush…), from the window's
// opening on.
type benchProfile struct {
	opens    time.Time
	pg       int                      // the postmaster
	ticks    map[string]map[int]int64 // kind → pid → CPU ticks last seen
	atOpen   map[string]int64
	mBusy    [2]int64 // the machine's busy and total ticks at the opening
	opened   bool
	waits    map[string]int
	nSamples int
}

func (p *benchProfile) start(ctx context.Context, c *pgx.Conn) {
	p.ticks, p.waits = map[string]map[int]int64{}, map[string]int{}
	var backend int
	if err := c.QueryRow(ctx, `/* bench-sampler */ SELECT pg_backend_pid()`).Scan(&backend); err == nil {
		_, p.pg, _ = cpuTicks(backend)
	}
}

func (p *benchProfile) total(kind string) int64 {
	var n int64
	for _, t := range p.ticks[kind] {
		n += t
	}
	return n
}

// sample reads the CPU of every process under the named ones (kind: the
// name's first word) and PostgreSQL's, and after the opening, the
// database's active backends by what they wait for.
func (p *benchProfile) sample(ctx context.Context, c *pgx.Conn, pids map[string]int) {
	roots := map[int]string{}
	for name, pid := range pids {
		roots[pid], _, _ = strings.Cut(name, " ")
	}
	if p.pg != 0 {
		roots[p.pg] = "postgres"
	}
	type proc struct {
		ticks int64
		ppid  int
	}
	procs := map[int]proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if t, pp, ok := cpuTicks(pid); ok {
			procs[pid] = proc{t, pp}
		}
	}
	for pid, pr := range procs {
		for q, depth := pid, 0; q > 1 && depth < 4; q, depth = procs[q].ppid, depth+1 {
			if kind, ok := roots[q]; ok {
				if p.ticks[kind] == nil {
					p.ticks[kind] = map[int]int64{}
				}
				p.ticks[kind][pid] = pr.ticks
				break
			}
		}
	}
	if p.opens.IsZero() || time.Now().Before(p.opens) {
		return
	}
	if !p.opened {
		p.opened = true
		p.atOpen = map[string]int64{}
		for kind := range p.ticks {
			p.atOpen[kind] = p.total(kind)
		}
		p.mBusy[0], p.mBusy[1] = machineTicks()
	}
	rows, err := c.Query(ctx, `/* bench-sampler */ SELECT state || ' ' || coalesce(wait_event_type || ':' || wait_event, 'on CPU'), count(*)
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle' GROUP BY 1`)
	if err != nil {
		return
	}
	for rows.Next() {
		var what string
		var n int
		if rows.Scan(&what, &n) == nil {
			p.waits[what] += n
		}
	}
	rows.Close()
	p.nSamples++
}

// line says the CPU each kind used from the opening to now (in cores, of
// the machine's) and the backends' average count by wait.
func (p *benchProfile) line(wall time.Duration) string {
	if !p.opened {
		return "CPU not sampled after the window opened"
	}
	const hz = 100 // USER_HZ
	busy, total := machineTicks()
	cores := float64(total-p.mBusy[1]) / hz / wall.Seconds()
	var kinds []string
	for k := range p.ticks {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var parts []string
	var ours float64
	for _, k := range kinds {
		used := float64(p.total(k)-p.atOpen[k]) / hz / wall.Seconds()
		ours += used
		parts = append(parts, fmt.Sprintf("%s %.2f", k, used))
	}
	out := fmt.Sprintf("CPU from the window's opening, in cores of %.0f: %s (these %.2f); the whole machine busy %.2f",
		cores, strings.Join(parts, ", "), ours, float64(busy-p.mBusy[0])/hz/wall.Seconds())
	var ws []string
	for w := range p.waits {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b string) int { return p.waits[b] - p.waits[a] })
	var wp []string
	for _, w := range ws[:min(6, len(ws))] {
		wp = append(wp, fmt.Sprintf("%s %.2f", w, float64(p.waits[w])/float64(max(1, p.nSamples))))
	}
	return out + fmt.Sprintf("; the run's backends not idle, on average (%d samples): %s", p.nSamples, strings.Join(wp, ", "))
}

// benchBalance watches the groups each live worker holds (one sample a
// half second) before the canary window opens, while no group has started
// and every claim may move: how often a worker held none while another
// held more than the fair share of what was held (the held ÷ live workers,
// rounded up), and the longest such stretch (how long rebalancing took).
type benchBalance struct {
	samples, idle, streak, longest int
}

func (b *benchBalance) sample(held []int64) {
	if len(held) < 2 {
		return
	}
	b.samples++
	var sum, most int64
	least := held[0]
	for _, h := range held {
		sum += h
		most, least = max(most, h), min(least, h)
	}
	share := (sum + int64(len(held)) - 1) / int64(len(held))
	if least == 0 && most > share {
		b.idle++
		b.streak++
		b.longest = max(b.longest, b.streak)
		return
	}
	b.streak = 0
}

func (b *benchBalance) line() string {
	return fmt.Sprintf("before the window opened, a live worker idle while another held more than its share: %d of %d samples (longest %v)",
		b.idle, b.samples, time.Duration(b.longest)*500*time.Millisecond)
}
