package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/rackform/rackform/providers/sim"
)

// TestFleetBench is the fleet benchmark: what a user runs, measured. It
// builds the real binary, serves N simulated HTTPS BMCs answering after L
// per request with M firmware members, runs `rackform plan -out` through
// the CLI and the redfish plugin process, then replays the same Redfish
// requests with a minimal client at unbounded concurrency (the floor) in
// the same run, and prints wall time, floor, ratio, sessions left open,
// TLS handshakes and requests per server, plan bytes per server and peak
// RSS. It is long, so it runs only with RACKFORM_BENCH_FLEET=1 (see `make
// bench-fleet`); knobs: RACKFORM_BENCH_N, _LATENCY, _MEMBERS, _EXPAND
// (both, on, off), _ARGS (extra plan flags), _BIN (a binary to measure
// instead of this tree's), _APPLY (measure apply of a BIOS upgrade
// instead: runApplyBench).
func TestFleetBench(t *testing.T) {
	if os.Getenv("RACKFORM_BENCH_FLEET") == "" {
		t.Skip("fleet benchmark: set RACKFORM_BENCH_FLEET=1 (make bench-fleet)")
	}
	n := envInt(t, "RACKFORM_BENCH_N", 1000)
	members := envInt(t, "RACKFORM_BENCH_MEMBERS", 24)
	latency := 200 * time.Millisecond
	if v := os.Getenv("RACKFORM_BENCH_LATENCY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("RACKFORM_BENCH_LATENCY: %v", err)
		}
		latency = d
	}
	// The simulated BMCs are served by child processes (simShards), each
	// with its own open-file limit; this process runs the floor client. Go
	// raises every process's soft open-file limit to the hard one at start,
	// and the CLI and plugin inherit it (their default concurrency follows it).
	modes := []bool{true, false}
	switch os.Getenv("RACKFORM_BENCH_EXPAND") {
	case "on":
		modes = []bool{true}
	case "off":
		modes = []bool{false}
	}
	dir := t.TempDir()
	bin := os.Getenv("RACKFORM_BENCH_BIN") // another build to compare, such as the last release
	if bin == "" {
		bin = filepath.Join(dir, "rackform")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	if os.Getenv("RACKFORM_BENCH_APPLY") != "" {
		t.Run("apply", func(t *testing.T) {
			r := runApplyBench(t, bin, n, latency, members)
			t.Log(r)
			fmt.Println(r)
		})
		return
	}
	for _, expand := range modes {
		name := "expand"
		if !expand {
			name = "no-expand"
		}
		t.Run(name, func(t *testing.T) {
			r := runFleetBench(t, bin, n, latency, members, expand)
			t.Log(r)
			fmt.Println(r)
		})
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s: want a positive whole number, got %q", name, v)
	}
	return n
}

type benchReq struct {
	Method string `json:"m"`
	URI    string `json:"u"`
}

// simShardEnv, when set in the environment of this test binary, makes it a
// shard of the benchmark's simulated fleet instead of running tests (see
// serveSimShard): its value is the shard's JSON simShardSpec.
const simShardEnv = "RACKFORM_BENCH_SIM_SHARD"

// bmcsPerShard bounds the BMCs one shard process serves: each costs a
// listener and up to four served connections (the floor's second client),
// under the 20,000 open files a process may hold on this machine.
const bmcsPerShard = 2500

func init() {
	// Before TestMain: a shard is not a test run (no PostgreSQL, no tests).
	if spec := os.Getenv(simShardEnv); spec != "" {
		os.Exit(serveSimShard(spec))
	}
}

// simShardSpec is what one shard serves: BMCs From..To-1 of the fleet.
type simShardSpec struct {
	Net, From, To, Members int
	Latency                time.Duration
	Speed                  float64
	Expand                 bool
	Password               string
}

// simShardReport is a shard's answer on stdout: first its BMCs and CA,
// then (after "collect" on stdin) its counters and the requests recorded.
type simShardReport struct {
	BMCs        []sim.BMCInfo         `json:"bmcs,omitempty"`
	CA          string                `json:"ca,omitempty"`
	Open        int64                 `json:"open"`
	Connections int64                 `json:"connections"`
	Requests    int64                 `json:"requests"`
	Recorded    map[string][]benchReq `json:"recorded,omitempty"`
}

// benchBMCSpec is the i-th BMC of the benchmark fleet, on loopback
// addresses 127.NET.x.y (NET chosen per run, so two runs on one machine
// do not collide; past 62,500 BMCs the fleet goes on in NET+1).
func benchBMCSpec(net, i int) sim.BMCSpec {
	return sim.BMCSpec{Name: fmt.Sprintf("s%05d", i), Addr: fmt.Sprintf("127.%d.%d.%d:8443", net+i/62500, 1+i/250%250, 1+i%250), PowerOn: true,
		Firmware: map[string]string{"BMC": "7.10.29", "BIOS": "2.19.0", "NIC": "22.31.5", "Runtime": "4.6.0"}}
}

// serveSimShard serves one shard until its stdin closes: it prints its BMCs
// and CA as one JSON line, and on the line "collect" stops recording and
// prints its counters and recorded requests as another; "record" starts
// recording again, counting from then (another round).
func serveSimShard(specJSON string) int {
	var sp simShardSpec
	if err := json.Unmarshal([]byte(specJSON), &sp); err != nil {
		fmt.Fprintln(os.Stderr, "sim shard:", err)
		return 2
	}
	var (
		mu  sync.Mutex
		on  = true
		rec = map[string][]benchReq{}
	)
	specs := make([]sim.BMCSpec, 0, sp.To-sp.From)
	for i := sp.From; i < sp.To; i++ {
		specs = append(specs, benchBMCSpec(sp.Net, i))
	}
	f, err := sim.New(sim.Options{TLS: true, Latency: sp.Latency, Speed: sp.Speed, Username: "admin", Password: sp.Password,
		InventoryMembers: sp.Members, NoExpand: !sp.Expand, OnRequest: func(bmc string, r *http.Request) {
			mu.Lock()
			if on {
				rec[bmc] = append(rec[bmc], benchReq{r.Method, r.URL.RequestURI()})
			}
			mu.Unlock()
		}}, specs)
	if err == nil {
		err = f.Start(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sim shard:", err)
		return 1
	}
	defer f.Close()
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(simShardReport{BMCs: f.BMCs(), CA: string(f.CACertPEM())}); err != nil {
		return 1
	}
	in := bufio.NewScanner(os.Stdin)
	var base simShardReport // the counters when recording last started
	for in.Scan() {
		switch in.Text() {
		case "record": // another round: record afresh, count from here
			mu.Lock()
			on, rec = true, map[string][]benchReq{}
			mu.Unlock()
			base = simShardReport{}
			for _, s := range f.AllStats() {
				base.Connections += s.Connections
				base.Requests += s.Requests
			}
		case "collect":
			mu.Lock()
			on = false
			r := simShardReport{Recorded: rec}
			mu.Unlock()
			for _, s := range f.AllStats() {
				r.Open += int64(s.SessionsOpen)
				r.Connections += s.Connections
				r.Requests += s.Requests
			}
			r.Connections -= base.Connections
			r.Requests -= base.Requests
			if err := out.Encode(r); err != nil {
				return 1
			}
		}
	}
	return 0
}

// simShard is a running shard process.
type simShard struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
}

// benchFleet is the benchmark's simulated fleet, served by shard processes.
type benchFleet struct {
	shards []*simShard
	bmcs   []sim.BMCInfo
	ca     []byte // every shard's CA, concatenated
}

func startBenchFleet(t *testing.T, n, members int, latency time.Duration, expand bool, password string, speed float64) *benchFleet {
	return startBenchShards(t, n, bmcsPerShard, members, latency, expand, password, speed)
}

// startBenchShards serves n BMCs from shard processes of perShard each.
func startBenchShards(t *testing.T, n, perShard, members int, latency time.Duration, expand bool, password string, speed float64) *benchFleet {
	f := &benchFleet{}
	t.Cleanup(f.close)
	net := 100 + os.Getpid()%150
	for from := 0; from < n; from += perShard {
		spec, _ := json.Marshal(simShardSpec{Net: net, From: from, To: min(n, from+perShard), Members: members, Latency: latency, Speed: speed, Expand: expand, Password: password})
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), simShardEnv+"="+string(spec))
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s := &simShard{cmd: cmd, in: in, out: json.NewDecoder(bufio.NewReader(out))}
		f.shards = append(f.shards, s)
		var r simShardReport
		if err := s.out.Decode(&r); err != nil {
			t.Fatalf("sim shard from BMC %d: %v", from, err)
		}
		f.bmcs = append(f.bmcs, r.BMCs...)
		f.ca = append(f.ca, r.CA...)
	}
	return f
}

// record has every shard record and count afresh (a benchmark's next round).
func (f *benchFleet) record(t *testing.T) {
	for _, s := range f.shards {
		if _, err := io.WriteString(s.in, "record\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// collect stops recording and sums every shard's counters and requests.
func (f *benchFleet) collect(t *testing.T) simShardReport {
	sum := simShardReport{Recorded: map[string][]benchReq{}}
	for _, s := range f.shards {
		if _, err := io.WriteString(s.in, "collect\n"); err != nil {
			t.Fatal(err)
		}
		var r simShardReport
		if err := s.out.Decode(&r); err != nil {
			t.Fatalf("sim shard: %v", err)
		}
		sum.Open += r.Open
		sum.Connections += r.Connections
		sum.Requests += r.Requests
		for k, v := range r.Recorded {
			sum.Recorded[k] = v
		}
	}
	return sum
}

// cpu is the user and system CPU the shard processes have used so far
// (0 where /proc cannot be read): what serving a command's requests cost
// the simulators, which share the machine with it.
func (f *benchFleet) cpu() time.Duration {
	var total time.Duration
	for _, s := range f.shards {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
		if err != nil {
			return 0
		}
		// Fields 14 and 15 (utime, stime, in clock ticks of 1/100 s on
		// Linux) follow the command name, which ends at the last ')'.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) < 13 {
			return 0
		}
		for _, x := range fields[11:13] {
			ticks, _ := strconv.ParseInt(x, 10, 64)
			total += time.Duration(ticks) * 10 * time.Millisecond
		}
	}
	return total
}

func (f *benchFleet) close() {
	for _, s := range f.shards {
		s.in.Close()
	}
	for _, s := range f.shards {
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	}
	f.shards = nil
}

func runFleetBench(t *testing.T, bin string, n int, latency time.Duration, members int, expand bool) string {
	const password = "bench-password"
	f := startBenchFleet(t, n, members, latency, expand, password, 0)
	defer f.close()

	cfg := t.TempDir()
	writeBenchConfig(t, cfg, f)
	// Rounds (RACKFORM_BENCH_ROUNDS) repeat rackform and the floor against
	// the same fleet, each ratio from its own round, and report the median:
	// on a shared machine one round's ratio can be a tenth off.
	rounds := envInt(t, "RACKFORM_BENCH_ROUNDS", 1)
	var lines []string
	var ratios []float64
	floor4Wins := true // measured in the first round; later, only if it came within 1.5x of the other
	for round := range rounds {
		if round > 0 {
			f.record(t)
		}
		line, ratio, floor1, floor4 := fleetBenchRound(t, f, cfg, bin, password, n, latency, members, expand, floor4Wins)
		if round == 0 {
			floor4Wins = float64(floor4) < 1.5*float64(floor1)
		}
		if rounds > 1 {
			line = fmt.Sprintf("round %d of %d: %s", round+1, rounds, line)
			t.Log(line)
		}
		lines = append(lines, line)
		ratios = append(ratios, ratio)
	}
	if rounds == 1 {
		return lines[0]
	}
	sorted := slices.Clone(ratios)
	slices.Sort(sorted)
	return strings.Join(lines, "\n") + fmt.Sprintf("\nmedian ratio of %d rounds: %.2f (each: %.2f)", rounds, sorted[len(sorted)/2], ratios)
}

// fleetBenchRound runs rackform plan once against f, then the floor, and
// returns the report line, the ratio and the one- and four-connection
// floors (the latter zero when not measured).
func fleetBenchRound(t *testing.T, f *benchFleet, cfg, bin, password string, n int, latency time.Duration, members int, expand, withFloor4 bool) (string, float64, time.Duration, time.Duration) {
	planFile := filepath.Join(t.TempDir(), "plan.json")
	args := []string{"plan", "-no-color", "-out", planFile}
	if extra := strings.Fields(os.Getenv("RACKFORM_BENCH_ARGS")); len(extra) > 0 {
		args = append(args, extra...)
	}
	args = append(args, cfg)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "RACKFORM_BMC_PASSWORD="+password)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopRSS := make(chan struct{})
	rss := make(chan treeRSS, 1)
	go func() { rss <- watchTreeRSS(cmd.Process.Pid, stopRSS) }()
	err := cmd.Wait()
	wall := time.Since(start)
	close(stopRSS)
	peak := <-rss
	if err != nil {
		t.Fatalf("rackform plan: %v\n%s", err, tail(out.String(), 3000))
	}
	got := f.collect(t)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() // with the plugin's, once reaped
	st, err := os.Stat(planFile)
	if err != nil {
		t.Fatal(err)
	}

	// The floor is the faster of two minimal clients: one connection per
	// BMC (fewest handshakes) and four (most requests at once).
	t.Logf("rackform plan %s (N=%d): %d sessions open, %d TLS handshakes, %d requests; floor next", wall.Round(10*time.Millisecond), n, got.Open, got.Connections, got.Requests)
	floor1 := benchFloor(t, f, got.Recorded, password, 1)
	floor, floor4, f4 := floor1, time.Duration(0), "not measured: it was far slower in the first round"
	if withFloor4 {
		floor4 = benchFloor(t, f, got.Recorded, password, 4)
		floor, f4 = min(floor1, floor4), floor4.Round(10*time.Millisecond).String()
	}
	load, _ := os.ReadFile("/proc/loadavg")
	ratio := wall.Seconds() / floor.Seconds()
	return fmt.Sprintf("%s: fleet N=%d L=%s M=%d expand=%v: rackform plan %s, floor %s (1 conn/BMC %s, 4 conns/BMC %s), ratio %.2f; CPU of CLI and plugin %s; sessions left open %d; per server: %.1f TLS handshakes, %.1f requests, %d plan bytes; peak RSS CLI %d MB, plugin %d MB (of which the binary's pages %d MB, %d MB), sum of the two %d MB, both at one instant %d MB (sampled every 100 ms); args %q; load %s",
		filepath.Base(bin), n, latency, members, expand, wall.Round(10*time.Millisecond), floor.Round(10*time.Millisecond), floor1.Round(10*time.Millisecond), f4, ratio, cpu.Round(10*time.Millisecond), got.Open,
		float64(got.Connections)/float64(n), float64(got.Requests)/float64(n), st.Size()/int64(n), peak.cli>>20, peak.plugin>>20, peak.cliFile>>20, peak.pluginFile>>20, peak.sum>>20, peak.total>>20, os.Getenv("RACKFORM_BENCH_ARGS"), strings.TrimSpace(string(load))), ratio, floor1, floor4
}

// cliRun is one measured run of the CLI (and its plugin).
type cliRun struct {
	wall, cpu time.Duration
	rss       treeRSS
	out       string
}

// runCLI runs bin with args and the bench password, measuring wall time,
// CPU (with the plugin's, once reaped) and peak RSS of CLI and plugin.
func runCLI(t *testing.T, bin, password string, args ...string) cliRun {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "RACKFORM_BMC_PASSWORD="+password)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopRSS := make(chan struct{})
	rss := make(chan treeRSS, 1)
	go func() { rss <- watchTreeRSS(cmd.Process.Pid, stopRSS) }()
	err := cmd.Wait()
	r := cliRun{wall: time.Since(start), out: out.String()}
	close(stopRSS)
	r.rss = <-rss
	if err != nil {
		t.Fatalf("rackform %s: %v\n%s", args[0], err, tail(out.String(), 3000))
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r
}

// runApplyBench plans and applies a BIOS upgrade of N servers (racks of 40,
// all compute, no waits between racks, the simulator's flash and reboot
// 60,000 times faster than real) and reports apply's wall time, CPU,
// sessions left open, handshakes and requests per server and peak RSS.
func runApplyBench(t *testing.T, bin string, n int, latency time.Duration, members int) string {
	const password = "bench-password"
	f := startBenchFleet(t, n, members, latency, true, password, 60000)
	defer f.close()
	cfg := t.TempDir()
	writeApplyConfig(t, cfg, f)
	work := t.TempDir()
	planFile := filepath.Join(work, "plan.json")
	pr := runCLI(t, bin, password, "plan", "-no-color", "-out", planFile, cfg)
	before := f.collect(t)
	ar := runCLI(t, bin, password, "apply", "-no-color", "-allow-unsigned", "-state-dir", filepath.Join(work, "state"), planFile)
	after := f.collect(t)
	load, _ := os.ReadFile("/proc/loadavg")
	return fmt.Sprintf("%s: fleet apply N=%d L=%s M=%d: plan %s; apply %s, CPU of CLI and plugin %s; sessions left open %d; per server: %.1f TLS handshakes, %.1f requests; peak RSS CLI %d MB, plugin %d MB, sum of the two %d MB, both at one instant %d MB (plan: sum %d MB, at one instant %d MB); load %s",
		filepath.Base(bin), n, latency, members, pr.wall.Round(10*time.Millisecond), ar.wall.Round(10*time.Millisecond), ar.cpu.Round(10*time.Millisecond), after.Open,
		float64(after.Connections-before.Connections)/float64(n), float64(after.Requests-before.Requests)/float64(n),
		ar.rss.cli>>20, ar.rss.plugin>>20, ar.rss.sum>>20, ar.rss.total>>20, pr.rss.sum>>20, pr.rss.total>>20, strings.TrimSpace(string(load)))
}

// writeApplyConfig writes a fleet of racks of 40 compute servers, one
// BIOS upgrade each, a strategy without waits and a provider polling fast.
func writeApplyConfig(t *testing.T, dir string, f *benchFleet) {
	var inv strings.Builder
	inv.WriteString("name,rack,bmc\n")
	for i, b := range f.bmcs {
		fmt.Fprintf(&inv, "%s,r%03d,%s\n", b.Name, i/40+1, b.URL)
	}
	main := `provider "redfish" {
  username         = "admin"
  password         = env("RACKFORM_BMC_PASSWORD")
  ca_bundle        = "CA_PATH"
  poll_interval    = "10ms"
  retry_base_delay = "5ms"
  retry_max_delay  = "50ms"
}

release "r" {
  version = "4.6.1"
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "https://127.0.0.1:9/bios-2.80.bin"
    match {
      id = "BIOS"
    }
  }
}

strategy "bench" {
  verify_timeout   = "1m"
  drain_timeout    = "5s"
  shutdown_timeout = "30s"
  compute {
    max_unavailable = "100%"
    wait_after_rack = "0s"
  }
}

locals {
  inventory = csvdecode(file("inventory.csv"))
  racks     = distinct([for s in local.inventory : s.rack])
}

cluster "fleet" {
  strategy = strategy.bench
  release  = release.r
  provider = provider.redfish

  rack "inventory" {
    for_each = toset(local.racks)
    server "inventory" {
      for_each = [for s in local.inventory : s if s.rack == each.key]
      bmc      = each.value.bmc
      role     = "compute"
    }
  }
}
`
	main = strings.Replace(main, "CA_PATH", filepath.Join(dir, "ca.pem"), 1)
	for name, body := range map[string][]byte{"main.rf.hcl": []byte(main), "inventory.csv": []byte(inv.String()), "ca.pem": f.ca} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// floorBMCs, when set, bounds the BMCs benchFloor asks at once.
var floorBMCs int

// benchFloor replays, per BMC, the requests rackform made: the service
// root, a session, every other request at once, and the logout, every BMC
// at once, over at most conns connections per BMC (one per request would
// run the process out of file descriptors, since it also serves the BMCs).
// It returns the wall time.
func benchFloor(t *testing.T, f *benchFleet, reqs map[string][]benchReq, password string, conns int) time.Duration {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca)
	tlsConfig := &tls.Config{RootCAs: pool}
	// Each BMC gets its own pool, closed once its requests are done, so
	// finished BMCs hold no connection.
	get := func(client *http.Client, base, token, method, uri string, body []byte) (*http.Response, error) {
		req, err := http.NewRequest(method, base+uri, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil && method == http.MethodGet {
			// A connection the overloaded machine dropped: a minimal
			// client asks again too.
			req, _ = http.NewRequest(method, base+uri, nil)
			if token != "" {
				req.Header.Set("X-Auth-Token", token)
			}
			resp, err = client.Do(req)
		}
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, nil
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	fail := func(s string) {
		mu.Lock()
		errs = append(errs, s)
		mu.Unlock()
	}
	// Every BMC at once, as far as this process's open files allow (the
	// BMCs are served by other processes).
	bmcs := f.bmcs
	slots := len(bmcs)
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
		slots = max(1, min(slots, (int(rl.Cur)-1024)/conns))
	}
	if floorBMCs > 0 {
		// At 100,000 BMCs, 19,000 handshakes at once on two cores
		// outlast the simulator's handshake timeout.
		slots = min(slots, floorBMCs)
	}
	sem := make(chan struct{}, slots)
	start := time.Now()
	for _, b := range bmcs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			tr := &http.Transport{TLSClientConfig: tlsConfig, MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns, ForceAttemptHTTP2: true}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 5 * time.Minute}
			get := func(base, token, method, uri string, body []byte) (*http.Response, error) {
				return get(client, base, token, method, uri, body)
			}
			if _, err := get(b.URL, "", "GET", "/redfish/v1", nil); err != nil {
				fail(err.Error())
				return
			}
			body, _ := json.Marshal(map[string]string{"UserName": "admin", "Password": password})
			resp, err := get(b.URL, "", "POST", "/redfish/v1/SessionService/Sessions", body)
			if err != nil || resp.StatusCode != http.StatusCreated {
				fail(fmt.Sprintf("%s: login: %v", b.Name, err))
				return
			}
			token, loc := resp.Header.Get("X-Auth-Token"), resp.Header.Get("Location")
			var inner sync.WaitGroup
			for _, r := range reqs[b.Name] {
				if r.Method != "GET" || r.URI == "/redfish/v1" || r.URI == "/redfish/v1/" {
					continue
				}
				inner.Add(1)
				go func() {
					defer inner.Done()
					if _, err := get(b.URL, token, "GET", r.URI, nil); err != nil {
						fail(err.Error())
					}
				}()
			}
			inner.Wait()
			if u := strings.Index(loc, "/redfish/"); u >= 0 {
				loc = loc[u:]
			}
			if _, err := get(b.URL, token, "DELETE", loc, nil); err != nil {
				fail(err.Error())
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if len(errs) > 0 {
		t.Fatalf("floor client: %d errors, first: %s", len(errs), errs[0])
	}
	return d
}

// writeBenchConfig writes a nexus-lab shaped configuration: one cluster,
// racks of 10 servers (N ≥ 40) from one inventory filtered per rack with `for`.
func writeBenchConfig(t *testing.T, dir string, f *benchFleet) {
	var inv strings.Builder
	inv.WriteString("name,rack,bmc,role,node_name\n")
	for i, b := range f.bmcs {
		rack, slot := i/10+1, i%10+1
		role := "compute"
		switch {
		case slot == 1 && rack <= 3:
			role = "control_plane"
		case slot == 1 && rack == 4:
			role = "control_plane_spare"
		case slot == 2:
			role = "management"
		}
		fmt.Fprintf(&inv, "%s,r%03d,%s,%s,node-%s\n", b.Name, rack, b.URL, role, b.Name)
	}
	for _, name := range []string{"release.rf.hcl", "strategy.rf.hcl", "variables.rf.hcl"} {
		b, err := os.ReadFile(filepath.Join(examplesDir, "nexus-lab", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	main := `variable "bmc_username" {
  type    = string
  default = "admin"
}

provider "redfish" {
  username  = var.bmc_username
  password  = env("RACKFORM_BMC_PASSWORD")
  ca_bundle = "CA_PATH"
}

locals {
  inventory = csvdecode(file("inventory.csv"))
  racks     = distinct([for s in local.inventory : s.rack])
}

cluster "fleet" {
  strategy = strategy.nexus
  release  = release.r4_6_1
  provider = provider.redfish

  rack "inventory" {
    for_each = toset(local.racks)
    server "inventory" {
      for_each  = [for s in local.inventory : s if s.rack == each.key]
      bmc       = each.value.bmc
      role      = each.value.role
      node_name = each.value.node_name
    }
  }
}
`
	main = strings.Replace(main, "CA_PATH", filepath.Join(dir, "ca.pem"), 1)
	for name, body := range map[string][]byte{"main.rf.hcl": []byte(main), "inventory.csv": []byte(inv.String()), "ca.pem": f.ca} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// treeRSS is the peak resident set (VmHWM) of the CLI and of its children
// (the provider plugin); sum is the sum of those two peaks (an upper bound:
// they need not happen at once, and each counts the pages of the rackform
// binary that both map), and total the largest memory the processes held at
// one sample: their anonymous pages plus the largest file-backed share of
// one of them (the CLI and plugin are one executable, whose pages the
// kernel keeps once). pluginCPU is the CPU time the children had used at
// the last sample (user and system; within 100 ms of their end).
type treeRSS struct {
	cli, plugin, sum, total, cliFile, pluginFile int64
	pluginCPU                                    time.Duration
}

// watchTreeRSS samples the resident memory of pid and its child processes
// every 100 ms until stop.
func watchTreeRSS(pid int, stop <-chan struct{}) treeRSS {
	peaks := map[int]int64{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var best treeRSS
	for {
		pids := []int{pid}
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
			// pid (comm) state ppid ...
			if i := bytes.LastIndexByte(b, ')'); i > 0 {
				f := strings.Fields(string(b[i+1:]))
				if len(f) > 1 && f[1] == strconv.Itoa(pid) {
					pids = append(pids, p)
				}
			}
		}
		var anon, file int64
		var childCPU time.Duration
		for _, p := range pids[1:] {
			childCPU += procCPU(p)
		}
		best.pluginCPU = max(best.pluginCPU, childCPU)
		for _, p := range pids {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
			st := statusKB(b)
			peaks[p] = max(peaks[p], st["VmHWM"])
			if p == pid {
				best.cliFile = max(best.cliFile, st["RssFile"])
			} else {
				best.pluginFile = max(best.pluginFile, st["RssFile"])
			}
			anon += st["RssAnon"] + st["RssShmem"]
			file = max(file, st["RssFile"])
		}
		best.total = max(best.total, anon+file)
		var sum int64
		for p, v := range peaks {
			sum += v
			if p == pid {
				best.cli = max(best.cli, v)
			} else {
				best.plugin = max(best.plugin, v)
			}
		}
		best.sum = max(best.sum, sum)
		select {
		case <-stop:
			return best
		case <-tick.C:
		}
	}
}

// procCPU is the user and system CPU time process p has used, 0 when it is
// gone (/proc/PID/stat fields 14 and 15, in clock ticks of 1/100 s).
func procCPU(p int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// statusKB reads the "Name: N kB" lines of /proc/PID/status, in bytes.
func statusKB(b []byte) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v, ok = strings.CutSuffix(strings.TrimSpace(v), " kB")
		if !ok {
			continue
		}
		if kb, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[name] = kb * 1024
		}
	}
	return out
}
