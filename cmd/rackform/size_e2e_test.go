//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// largePlan is an encoded plan of n servers of one cluster, 40 a rack,
// each with four updates: what plan writes for a large fleet (about
// 0.8 KB a server).
func largePlan(t *testing.T, n int) []byte {
	t.Helper()
	at := time.Now().UTC().Truncate(time.Second)
	comps := []providers.Component{{ID: "BIOS", Version: "2.70", Updateable: true}, {ID: "BMC", Version: "7.10", Updateable: true}}
	changes := []plan.Change{{Component: "bios", Kind: "firmware", From: "2.70", To: "2.80", Reboot: true}, {Component: "bmc", Kind: "firmware", From: "7.10", To: "7.20"}}
	steps := []plan.Step{
		{Index: 1, Kind: plan.StepDrain, Timeout: plan.Duration(20 * time.Minute)},
		{Index: 2, Kind: plan.StepShutdown, Timeout: plan.Duration(10 * time.Minute)},
		{Index: 3, Kind: plan.StepUpdate, Component: "bios", Match: &providers.Match{ID: "BIOS"}, Target: version.Target{Version: "2.80"}, Image: "http://127.0.0.1:9/bios.bin", Method: providers.MethodSimpleUpdate},
		{Index: 4, Kind: plan.StepUpdate, Component: "bmc", Match: &providers.Match{ID: "BMC"}, Target: version.Target{Version: "7.20"}, Image: "http://127.0.0.1:9/bmc.bin", Method: providers.MethodSimpleUpdate},
		{Index: 5, Kind: plan.StepWaitReady, Timeout: plan.Duration(time.Hour)},
		{Index: 6, Kind: plan.StepUncordon},
	}
	p := &plan.Plan{
		RackformVersion: "test", CreatedAt: at, NotAfter: at.Add(72 * time.Hour),
		Config:    plan.Snapshot{Dir: "fleet", Files: []plan.File{plan.NewFile("main.rf.hcl", []byte("# generated\n"))}},
		Providers: []plan.Provider{{Name: "redfish", Source: "builtin", SHA256: "00"}},
	}
	phase := plan.Phase{ID: "cluster.lab.compute", Kind: plan.PhaseCompute}
	p.Servers = make([]plan.Server, n)
	for i := range p.Servers {
		rack := fmt.Sprintf("r%04d", i/40)
		addr := fmt.Sprintf("lab/%s/s%06d", rack, i)
		p.Servers[i] = plan.Server{
			Address: addr, Name: fmt.Sprintf("s%06d", i), Cluster: "lab", Rack: rack, Role: "compute",
			BMC: fmt.Sprintf("https://10.%d.%d.%d", i>>16&255, i>>8&255, i&255), Provider: "redfish",
			Observed: plan.Observed{Reachable: true, PowerState: "On", Health: "OK", Components: comps}, Outcome: providers.OutcomeObserved,
			Identity:    providers.Identity{UUID: fmt.Sprintf("00000000-0000-0000-0000-%012d", i), SerialNumber: fmt.Sprintf("SN%08d", i)},
			Fingerprint: fmt.Sprintf("sha256:%064x", i), Action: plan.ActionUpgrade, Changes: changes, Steps: steps, Reboots: 1,
			Estimate: plan.Duration(40 * time.Minute),
		}
		if i%40 == 0 {
			phase.Scopes = append(phase.Scopes, plan.Scope{ID: "cluster.lab.compute.rack." + rack, Kind: "rack", Name: rack, Rack: rack,
				Threshold: plan.Threshold{Type: "percent", Value: 90}, MaxUnavailable: 4, OnBreach: "pause"})
		}
		sc := &phase.Scopes[len(phase.Scopes)-1]
		sc.Servers = append(sc.Servers, addr)
		sc.Eligible++
		sc.Required++
	}
	p.Run = plan.Run{Name: "default", Scope: "full", Stages: []plan.Stage{{ID: "stage.default", Name: "default", OnBreach: "pause",
		Groups: []plan.Group{{ID: "stage.default.group.default", Name: "default", Clusters: []plan.Cluster{{ID: "cluster.lab", Name: "lab", WindowPriority: "none", Phases: []plan.Phase{phase}}}}}}}}
	p.Summary = plan.Summary{Upgrade: n, Racks: len(phase.Scopes), Estimate: plan.Duration(time.Duration(n) * time.Minute)}
	b, err := plan.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostilePlanSizes: a file larger than any real fleet's plan is
// refused before it is read, by every command that reads a plan, naming
// the file and the limit, without reading it; and SIGTERM during a long
// show -json ends it within 2 s with 130.
func TestHostilePlanSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary on large files")
	}
	bin := rackformBin(t)
	work := t.TempDir()
	run := func(args ...string) (int, string, time.Duration, int64) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "NO_COLOR=1"}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		_ = cmd.Run()
		rss := int64(0)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss << 10
		}
		return cmd.ProcessState.ExitCode(), out.String(), time.Since(start), rss
	}

	// 300 MB that take no room: a sparse file.
	huge := filepath.Join(work, "huge.plan")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(300 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, args := range [][]string{
		{"show", "-json", "huge.plan"},
		{"apply", "-allow-unsigned", "huge.plan"},
		{"apply", "-expect-sha256", strings.Repeat("0", 64), "huge.plan"},
		{"skip", "-plan", "huge.plan", "lab/r1/s1"},
		{"status", "-plan", "huge.plan"},
		{"rehearse", "huge.plan"},
	} {
		code, out, took, rss := run(args...)
		t.Logf("%s: exit %d in %s, max RSS %d MB", strings.Join(args[:len(args)-1], " "), code, took.Round(time.Millisecond), rss>>20)
		if code != 1 || !strings.Contains(out, "Error: huge.plan is 300 MiB, larger than the 256 MiB rackform reads") {
			t.Errorf("rackform %s: exit %d, want 1 naming the file and the limit:\n%s", strings.Join(args, " "), code, out)
		}
		if rss > 100<<20 {
			t.Errorf("rackform %s used %d MB: the file was read", args[0], rss>>20)
		}
	}

	// A large plan (8 MB) with the wrong hash: refused, saying so (that
	// the hash is compared before decoding is pinned by apply_refusals:
	// a file that is no plan gets the hash's refusal, not the decoder's).
	large := largePlan(t, 15000)
	if err := os.WriteFile(filepath.Join(work, "large.plan"), large, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, took, _ := run("apply", "-expect-sha256", strings.Repeat("0", 64), "large.plan")
	t.Logf("apply -expect-sha256 WRONG of a 15,000-server plan (%d MB): exit %d in %s", len(large)>>20, code, took.Round(time.Millisecond))
	if code != 1 || !strings.Contains(out, "large.plan has SHA-256 ") || !strings.Contains(out, "it is not the plan that was reviewed") {
		t.Fatalf("apply -expect-sha256 WRONG: exit %d:\n%s", code, out)
	}

	// SIGTERM while show -json renders: exit within 2 s. Its output goes
	// to a pipe read only for its first byte (as `show -json | less` that
	// is not read on), so the signal reaches it mid-render however fast
	// rendering gets: writing blocks once the pipe is full.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "show", "-json", "large.plan")
		cmd.Dir = work
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = pw, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		if _, err := pr.Read(make([]byte, 1)); err != nil { // decoded, rendering
			t.Fatalf("show -json wrote nothing: %v\n%s", err, stderr.String())
		}
		time.Sleep(200 * time.Millisecond) // the pipe fills
		select {
		case <-done:
			t.Fatalf("show -json of 15,000 servers ended before the signal: its output fits a pipe")
		default:
		}
		sent := time.Now()
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("show -json still running 2 s after %s", sig)
		}
		pr.Close()
		t.Logf("show -json exited %s after %s", time.Since(sent).Round(time.Millisecond), sig)
		if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "Interrupted: show stopped.") {
			t.Errorf("show -json after %s: exit %d, want 130:\n%s", sig, code, stderr.String())
		}
	}
}
