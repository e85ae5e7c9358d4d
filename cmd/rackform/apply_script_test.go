package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers/sim"
)

// Script commands for the apply scripts: background processes whose exact
// exit code can be checked, signals to them, waiting for a file to say
// something, the simulator's own counters, and plan edits that keep the
// checksum valid.

var (
	bgMu    sync.Mutex
	bgProcs = map[*testscript.TestScript]map[string]*bgProc{}
)

type bgProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// cmdBgStart runs PROGRAM in the background as NAME, its stdout and stderr
// going to $WORK/NAME.out and NAME.err: bgstart NAME PROGRAM [ARGS...].
func cmdBgStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: bgstart NAME PROGRAM [ARGS...]")
	}
	name := args[0]
	path, err := exec.LookPath(args[1])
	if err != nil {
		// LookPath uses the test process's PATH; the script's is in env.
		for _, dir := range strings.Split(ts.Getenv("PATH"), string(os.PathListSeparator)) {
			if p := dir + "/" + args[1]; fileExists(p) {
				path, err = p, nil
				break
			}
		}
	}
	ts.Check(err)
	cmd := exec.Command(path, args[2:]...)
	cmd.Args[0] = args[1]
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = scriptEnv(ts)
	out, err := os.Create(ts.MkAbs(name + ".out"))
	ts.Check(err)
	errf, err := os.Create(ts.MkAbs(name + ".err"))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = out, errf
	ts.Check(cmd.Start())
	p := &bgProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		errf.Close()
		close(p.done)
	}()
	bgMu.Lock()
	if bgProcs[ts] == nil {
		bgProcs[ts] = map[string]*bgProc{}
		ts.Defer(func() {
			bgMu.Lock()
			procs := bgProcs[ts]
			delete(bgProcs, ts)
			bgMu.Unlock()
			for _, p := range procs {
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		})
	}
	bgProcs[ts][name] = p
	bgMu.Unlock()
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// scriptEnv is the script's environment for a process started by hand.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range []string{"PATH", "HOME", "WORK", "TMPDIR", "NO_COLOR", "RACKFORM_SIM_PASSWORD", "RACKFORM_VAR_bmc_password", "RACKFORM_STATE_DIR", "RACKFORM_RUN_REGISTRY"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func bg(ts *testscript.TestScript, name string) *bgProc {
	bgMu.Lock()
	defer bgMu.Unlock()
	p := bgProcs[ts][name]
	if p == nil {
		ts.Fatalf("no background process %s", name)
	}
	return p
}

// cmdBgSignal sends a signal to a background process: bgsignal NAME INT|TERM|KILL.
func cmdBgSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: bgsignal NAME INT|TERM|KILL")
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL}[args[1]]
	if sig == 0 {
		ts.Fatalf("bgsignal: unknown signal %s", args[1])
	}
	ts.Check(bg(ts, args[0]).cmd.Process.Signal(sig))
}

// cmdBgWait waits (at most 60 s) for a background process and checks its
// exit code: bgwait NAME CODE.
func cmdBgWait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: bgwait NAME CODE")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	p := bg(ts, args[0])
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		ts.Fatalf("bgwait: %s did not exit within 60s", args[0])
	}
	got := p.cmd.ProcessState.ExitCode()
	if got != want {
		out, _ := os.ReadFile(ts.MkAbs(args[0] + ".out"))
		errb, _ := os.ReadFile(ts.MkAbs(args[0] + ".err"))
		ts.Logf("stdout:\n%s\nstderr:\n%s", out, errb)
		ts.Fatalf("%s exited with %d, want %d", args[0], got, want)
	}
}

// cmdWaitFor waits (at most 30 s) until FILE matches REGEX: waitfor FILE REGEX.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE REGEX")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(ts.MkAbs(args[0]))
		if re.Match(b) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor: %s does not match %q after 30s; it holds:\n%s", args[0], args[1], b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdSleep sleeps: sleep DURATION.
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	time.Sleep(d)
}

// cmdSimCheck reads the simulator's counters from its admin API and checks
// them: simcheck ADMIN [-untouched NAME,...] [-max-flashes N] COMPONENT=VERSION...
//
// Every BMC not named by -untouched must report each COMPONENT at VERSION
// and have flashed each component and reimaged at most -max-flashes times
// (default 1); the -untouched ones must have no update, flash or reimage at
// all. The counters are printed on stdout for later stdout checks.
func cmdSimCheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: simcheck ADMIN [-untouched NAMES] [-max-flashes N] COMPONENT=VERSION...")
	}
	admin := args[0]
	untouched, failed, ignore := map[string]bool{}, map[string]bool{}, map[string]bool{}
	maxFlashes := 1
	want := map[string]string{}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-untouched":
			i++
			for _, n := range strings.Split(args[i], ",") {
				untouched[n] = true
			}
		case "-ignore":
			i++
			for _, n := range strings.Split(args[i], ",") {
				ignore[n] = true
			}
		case "-failed":
			i++
			for _, n := range strings.Split(args[i], ",") {
				failed[n] = true
			}
		case "-max-flashes":
			i++
			n, err := strconv.Atoi(args[i])
			ts.Check(err)
			maxFlashes = n
		default:
			k, v, ok := strings.Cut(args[i], "=")
			if !ok {
				ts.Fatalf("simcheck: %q is not COMPONENT=VERSION", args[i])
			}
			want[k] = v
		}
	}
	stats := simStats(ts, admin)
	names := make([]string, 0, len(stats))
	for n := range stats {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	var problems []string
	for _, n := range names {
		s := stats[n]
		fmt.Fprintf(&b, "%s flashes=%v reimages=%d updates=%d power=%s health=%s versions=%v\n", n, s.Flashes, s.Reimages, s.Updates, s.PowerState, s.Health, s.Versions)
		if ignore[n] {
			continue
		}
		if untouched[n] {
			if s.Updates != 0 || len(s.Flashes) != 0 || s.Reimages != 0 {
				problems = append(problems, fmt.Sprintf("%s was touched: %d updates, flashes %v, %d reimages", n, s.Updates, s.Flashes, s.Reimages))
			}
			continue
		}
		if failed[n] {
			if len(s.Flashes) != 0 || s.Reimages != 0 {
				problems = append(problems, fmt.Sprintf("%s should have failed before any flash: flashes %v, %d reimages", n, s.Flashes, s.Reimages))
			}
			continue
		}
		for comp, f := range s.Flashes {
			if f > maxFlashes {
				problems = append(problems, fmt.Sprintf("%s flashed %s %d times", n, comp, f))
			}
		}
		if s.Reimages > maxFlashes {
			problems = append(problems, fmt.Sprintf("%s reimaged %d times", n, s.Reimages))
		}
		for comp, v := range want {
			if s.Versions[comp] != v {
				problems = append(problems, fmt.Sprintf("%s reports %s %s, want %s", n, comp, s.Versions[comp], v))
			}
		}
	}
	fmt.Fprint(ts.Stdout(), b.String())
	if len(problems) > 0 {
		ts.Fatalf("simcheck:\n%s\ncounters:\n%s", strings.Join(problems, "\n"), b.String())
	}
}

func simStats(ts *testscript.TestScript, admin string) map[string]sim.Stats {
	resp, err := http.Get("http://" + admin + "/stats")
	ts.Check(err)
	defer resp.Body.Close()
	var body struct {
		BMCs map[string]sim.Stats `json:"bmcs"`
	}
	ts.Check(json.NewDecoder(resp.Body).Decode(&body))
	return body.BMCs
}

// cmdPlanEdit changes a plan file and re-encodes it with a valid checksum,
// as an attacker with write access to the plan, or a plan made by other
// provider code, would. The signature fields are kept as they were (so a
// signed plan's signature no longer matches), except with unsign and sign:
//
//	planedit FILE provider-sha256 NAME HEX
//	planedit FILE format-version V
//	planedit FILE step-version SERVER INDEX VERSION
//	planedit FILE insert-step SERVER INDEX VERSION  (a copy of step INDEX flashing VERSION, before it; steps numbered again)
//	planedit FILE drain-hook ARGV...        (every cluster)
//	planedit FILE not-after RFC3339
//	planedit FILE bmc SERVER URL
//	planedit FILE unsign
//	planedit FILE sign KEYFILE              (PKCS#8 PEM private key)
func cmdPlanEdit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: planedit FILE EDIT ARGS...")
	}
	file := ts.MkAbs(args[0])
	b, err := os.ReadFile(file)
	ts.Check(err)
	p, err := plan.Decode(b)
	ts.Check(err)
	want := func(n int) {
		if len(args) != n {
			ts.Fatalf("planedit %s: wrong number of arguments", args[1])
		}
	}
	server := func(addr string) *plan.Server {
		for i := range p.Servers {
			if p.Servers[i].Address == addr {
				return &p.Servers[i]
			}
		}
		ts.Fatalf("planedit: the plan has no server %s", addr)
		return nil
	}
	encode := plan.Encode
	switch args[1] {
	case "format-version":
		want(3)
		p.FormatVersion = args[2]
	case "provider-sha256":
		want(4)
		found := false
		for i := range p.Providers {
			if p.Providers[i].Name == args[2] {
				p.Providers[i].SHA256 = args[3]
				found = true
			}
		}
		if !found {
			ts.Fatalf("planedit: the plan has no provider %s", args[2])
		}
	case "step-version":
		want(5)
		s := server(args[2])
		idx, err := strconv.Atoi(args[3])
		ts.Check(err)
		found := false
		s.Steps = slices.Clone(s.Steps) // shared with servers planned alike
		for i := range s.Steps {
			if s.Steps[i].Index == idx {
				s.Steps[i].Target.Version = args[4]
				found = true
			}
		}
		if !found {
			ts.Fatalf("planedit: server %s has no step %d", args[2], idx)
		}
	case "insert-step":
		want(5)
		s := server(args[2])
		idx, err := strconv.Atoi(args[3])
		ts.Check(err)
		i := slices.IndexFunc(s.Steps, func(st plan.Step) bool { return st.Index == idx })
		if i < 0 {
			ts.Fatalf("planedit: server %s has no step %d", args[2], idx)
		}
		st := s.Steps[i]
		st.Target.Version = args[4]
		s.Steps = slices.Insert(s.Steps, i, st)
		for j := range s.Steps {
			s.Steps[j].Index = j + 1
		}
	case "drain-hook":
		if len(args) < 3 {
			ts.Fatalf("planedit drain-hook: no command")
		}
		for si := range p.Run.Stages {
			for gi := range p.Run.Stages[si].Groups {
				for ci := range p.Run.Stages[si].Groups[gi].Clusters {
					p.Run.Stages[si].Groups[gi].Clusters[ci].Settings.DrainHook = args[2:]
				}
			}
		}
	case "not-after":
		want(3)
		t, err := time.Parse(time.RFC3339, args[2])
		ts.Check(err)
		p.NotAfter = t
	case "bmc":
		want(4)
		server(args[2]).BMC = args[3]
	case "unsign":
		want(2)
		p.SignedBy, p.Signature = "", ""
	case "sign":
		want(3)
		pemBytes, err := os.ReadFile(ts.MkAbs(args[2]))
		ts.Check(err)
		key, err := plan.ParsePrivateKey(pemBytes)
		ts.Check(err)
		encode = func(p *plan.Plan) ([]byte, error) { return plan.EncodeSigned(p, key) }
	default:
		ts.Fatalf("planedit: unknown edit %s", args[1])
	}
	out, err := encode(p)
	ts.Check(err)
	ts.Check(os.WriteFile(file, out, 0o644))
}

// cmdSimRequests writes the number of HTTP requests the simulator's BMCs
// have received so far to FILE, so a script can show with cmp that a
// refused command sent none: simrequests ADMIN FILE.
func cmdSimRequests(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: simrequests ADMIN FILE")
	}
	var n int64
	for _, s := range simStats(ts, args[0]) {
		n += s.Requests
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strconv.FormatInt(n, 10)+"\n"), 0o644))
}

// cmdNoSecret fails when SECRET occurs in any file under the PATHs (files
// or directories, walked recursively): nosecret SECRET PATH...
func cmdNoSecret(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: nosecret SECRET PATH...")
	}
	n := 0
	for _, root := range args[1:] {
		ts.Check(filepath.WalkDir(ts.MkAbs(root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n++
			if strings.Contains(string(b), args[0]) {
				ts.Fatalf("nosecret: %s holds the secret", path)
			}
			return nil
		}))
	}
	if n == 0 {
		ts.Fatalf("nosecret: no file under %v", args[1:])
	}
}

// cmdPlanHash sets VAR to the SHA-256 of a plan file, as plan prints it, so
// a script can apply with -expect-sha256 $VAR: planhash FILE VAR.
func cmdPlanHash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: planhash FILE VAR")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Setenv(args[1], plan.SHA256(b))
}
