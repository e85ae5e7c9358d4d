package main

import (
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
// instead of this tree's).
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
	// This process serves every BMC (a listener and a connection each) and
	// runs the floor client: raise its open-file limit where allowed. The
	// CLI and plugin inherit it (their default concurrency follows it).
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
		if want := uint64(4*n + 4096); rl.Cur < want {
			raised := syscall.Rlimit{Cur: want, Max: max(rl.Max, want)}
			if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) != nil {
				t.Logf("open-file limit stays %d (wanted %d): a large N may run out", rl.Cur, want)
			}
		}
	}
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

type benchReq struct{ method, uri string }

type benchRecorder struct {
	mu   sync.Mutex
	on   bool
	reqs map[string][]benchReq
}

func (r *benchRecorder) record(bmc string, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		r.reqs[bmc] = append(r.reqs[bmc], benchReq{req.Method, req.URL.RequestURI()})
	}
}

func runFleetBench(t *testing.T, bin string, n int, latency time.Duration, members int, expand bool) string {
	rec := &benchRecorder{on: true, reqs: map[string][]benchReq{}}
	const password = "bench-password"
	specs := make([]sim.BMCSpec, n)
	for i := range specs {
		specs[i] = sim.BMCSpec{Name: fmt.Sprintf("s%05d", i), Addr: fmt.Sprintf("127.91.%d.%d:8443", 1+i/250, 1+i%250), PowerOn: true,
			Firmware: map[string]string{"BMC": "7.10.29", "BIOS": "2.19.0", "NIC": "22.31.5", "Runtime": "4.6.0"}}
	}
	f, err := sim.New(sim.Options{TLS: true, Latency: latency, Username: "admin", Password: password,
		InventoryMembers: members, NoExpand: !expand, OnRequest: rec.record}, specs)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	cfg := t.TempDir()
	writeBenchConfig(t, cfg, f)
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
	rss := make(chan int64, 1)
	go func() { rss <- watchTreeRSS(cmd.Process.Pid, stopRSS) }()
	err = cmd.Wait()
	wall := time.Since(start)
	close(stopRSS)
	treeRSS := <-rss
	if err != nil {
		t.Fatalf("rackform plan: %v\n%s", err, tail(out.String(), 3000))
	}
	rec.mu.Lock()
	rec.on = false
	rec.mu.Unlock()
	// wait4's peak is the largest of the CLI and the plugin it waited for.
	cliRSS := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() // with the plugin's, once reaped

	var open, conns, reqs int64
	for _, s := range f.AllStats() {
		open += int64(s.SessionsOpen)
		conns += s.Connections
		reqs += s.Requests
	}
	st, err := os.Stat(planFile)
	if err != nil {
		t.Fatal(err)
	}

	// The floor is the faster of two minimal clients: one connection per
	// BMC (fewest handshakes) and four (most requests at once).
	t.Logf("rackform plan %s (N=%d): %d sessions open, %d TLS handshakes, %d requests; floor next", wall.Round(10*time.Millisecond), n, open, conns, reqs)
	floor1 := benchFloor(t, f, rec.reqs, password, 1)
	floor4 := benchFloor(t, f, rec.reqs, password, 4)
	floor := min(floor1, floor4)
	load, _ := os.ReadFile("/proc/loadavg")
	return fmt.Sprintf("%s: fleet N=%d L=%s M=%d expand=%v: rackform plan %s, floor %s (1 conn/BMC %s, 4 conns/BMC %s), ratio %.2f; CPU of CLI and plugin %s; sessions left open %d; per server: %.1f TLS handshakes, %.1f requests, %d plan bytes; peak RSS %d MB (CLI and plugin summed, sampled every 100 ms; largest process %d MB); args %q; load %s",
		filepath.Base(bin), n, latency, members, expand, wall.Round(10*time.Millisecond), floor.Round(10*time.Millisecond), floor1.Round(10*time.Millisecond), floor4.Round(10*time.Millisecond), wall.Seconds()/floor.Seconds(), cpu.Round(10*time.Millisecond), open,
		float64(conns)/float64(n), float64(reqs)/float64(n), st.Size()/int64(n), max(treeRSS, cliRSS)>>20, cliRSS>>20, os.Getenv("RACKFORM_BENCH_ARGS"), strings.TrimSpace(string(load)))
}

// benchFloor replays, per BMC, the requests rackform made: the service
// root, a session, every other request at once, and the logout, every BMC
// at once, over at most conns connections per BMC (one per request would
// run the process out of file descriptors, since it also serves the BMCs).
// It returns the wall time.
func benchFloor(t *testing.T, f *sim.Fleet, reqs map[string][]benchReq, password string, conns int) time.Duration {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.CACertPEM())
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
	// Every BMC at once, as far as this process's open files allow: each
	// connection costs two here (client and served end), each BMC a listener.
	bmcs := f.BMCs()
	slots := len(bmcs)
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
		slots = max(1, min(slots, (int(rl.Cur)-len(bmcs)-1024)/(2*conns)))
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
				if r.method != "GET" || r.uri == "/redfish/v1" || r.uri == "/redfish/v1/" {
					continue
				}
				inner.Add(1)
				go func() {
					defer inner.Done()
					if _, err := get(b.URL, token, "GET", r.uri, nil); err != nil {
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
func writeBenchConfig(t *testing.T, dir string, f *sim.Fleet) {
	var inv strings.Builder
	inv.WriteString("name,rack,bmc,role,node_name\n")
	for i, b := range f.BMCs() {
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
	for name, body := range map[string][]byte{"main.rf.hcl": []byte(main), "inventory.csv": []byte(inv.String()), "ca.pem": f.CACertPEM()} {
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

// watchTreeRSS samples the peak resident set (VmHWM) of pid and its child
// processes (the provider plugin) until stop, and returns the largest sum.
func watchTreeRSS(pid int, stop <-chan struct{}) int64 {
	peaks := map[int]int64{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var best int64
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
		var sum int64
		for _, p := range pids {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
					peaks[p] = max(peaks[p], kb*1024)
				}
			}
		}
		for _, v := range peaks {
			sum += v
		}
		best = max(best, sum)
		select {
		case <-stop:
			return best
		case <-tick.C:
		}
	}
}
