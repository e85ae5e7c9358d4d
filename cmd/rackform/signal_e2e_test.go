//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowConfig takes minutes of CPU to evaluate (a million regex scans of a
// 900 KB string), in little memory: a stand-in for a slow load.
const slowConfig = `locals {
  big  = format("%0900000d", 0)
  r    = range(1000)
  slow = [for i in local.r : [for j in local.r : length(regexall("1", local.big))]]
}
`

// TestCommandsStopOnSignal starts the real binary on a configuration that
// takes minutes to load, sends SIGTERM or SIGINT as a CI runner's timeout
// or an operator would, and measures that validate and plan exit within 2 s
// with 130.
func TestCommandsStopOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary")
	}
	bin := rackformBin(t)
	dir := filepath.Join(t.TempDir(), "slow")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(slowConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
		want string
	}{
		{[]string{"validate", dir}, syscall.SIGTERM, "Interrupted: validate stopped."},
		{[]string{"validate", dir}, syscall.SIGINT, "Interrupted: validate stopped."},
		{[]string{"plan", "-no-color", "-out", "never.json", dir}, syscall.SIGTERM, "Interrupted: plan stopped."},
		{[]string{"plan", "-no-color", dir}, syscall.SIGINT, "Interrupted: plan stopped."},
	} {
		t.Run(tc.args[0]+" "+tc.sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.Dir = t.TempDir()
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			time.Sleep(300 * time.Millisecond) // well into the load
			sent := time.Now()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("still running 2 s after %s:\n%s", tc.sig, out.String())
			}
			t.Logf("exited %v after %s", time.Since(sent).Round(time.Millisecond), tc.sig)
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d, want 130:\n%s", code, out.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out.String())
			}
			if _, err := os.Stat(filepath.Join(cmd.Dir, "never.json")); err == nil {
				t.Error("an interrupted plan wrote a plan file")
			}
		})
	}
}

// TestPlanStopsOnSignalWhileObserving: plan waits on a BMC that never
// answers (each request held until the provider's 2 s timeout, retried);
// SIGTERM stops it within 2 s with 130 and no plan file.
func TestPlanStopsOnSignalWhileObserving(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary")
	}
	f := startE2EFleet(t, freeOctet(t, 150, 4), 2, 2, 3000, map[string]string{"bmc-0002": "timeout:2m"})
	e := newE2EEnv(t)
	cmd := exec.Command(e.bin, "plan", "-no-color", "-out", "never.json", f.dir)
	cmd.Dir, cmd.Env = e.work, e.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	time.Sleep(700 * time.Millisecond) // observing; bmc-0002 holds its request
	select {
	case <-done:
		t.Fatalf("plan finished before the signal:\n%s", out.String())
	default:
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running 2 s after SIGTERM:\n%s", out.String())
	}
	t.Logf("exited %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(out.String(), "Interrupted: plan stopped.") {
		t.Errorf("exit %d, want 130:\n%s", code, out.String())
	}
	if _, err := os.Stat(filepath.Join(e.work, "never.json")); err == nil {
		t.Error("an interrupted plan wrote a plan file")
	}
}

// TestFIFORefused is the CI case: "timeout 5 rackform validate" on a
// configuration that reads a FIFO ends long before the timeout, with an
// error naming the file, and so do plan, show (a FIFO as the plan file)
// and a -var-file FIFO.
func TestFIFORefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary")
	}
	timeout, err := exec.LookPath("timeout")
	if err != nil {
		t.Skip("no timeout(1)")
	}
	bin := rackformBin(t)
	work := t.TempDir()
	dir := filepath.Join(work, "cfg")
	os.MkdirAll(dir, 0o755)
	fifo := filepath.Join(dir, "inventory.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	planFifo := filepath.Join(work, "plan.json")
	if err := syscall.Mkfifo(planFifo, 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(`locals {
  inventory = csvdecode(file("inventory.csv"))
}
`), 0o644)
	plain := filepath.Join(work, "plain")
	os.MkdirAll(plain, 0o755)
	os.WriteFile(filepath.Join(plain, "main.rf.hcl"), []byte(`variable "site" {
  default = "lab"
}
`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", dir}, fifo + " is a named pipe (FIFO), not a regular file"},
		{[]string{"plan", "-no-color", dir}, fifo + " is a named pipe (FIFO), not a regular file"},
		{[]string{"validate", "-var-file", fifo, plain}, "Cannot read the -var-file " + fifo + ": " + fifo + " is a named pipe (FIFO)"},
		{[]string{"show", planFifo}, "Error: cannot read the plan file: " + planFifo + " is a named pipe (FIFO), not a regular file"},
		{[]string{"apply", "-allow-unsigned", planFifo}, "Error: cannot read the plan file: " + planFifo + " is a named pipe (FIFO), not a regular file"},
		{[]string{"validate", "-var-file", "/dev/zero", plain}, "/dev/zero is a character device, not a regular file"},
	} {
		t.Run(strings.Join(tc.args[:1], " "), func(t *testing.T) {
			cmd := exec.Command(timeout, append([]string{"5", bin}, tc.args...)...)
			cmd.Dir = work
			start := time.Now()
			out, _ := cmd.CombinedOutput()
			took := time.Since(start)
			if took > 7*time.Second {
				t.Fatalf("took %s", took)
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit %d, want 1 (an error, not the timeout's 124):\n%s", code, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}
