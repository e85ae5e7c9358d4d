//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBMCRestartDuringUpdateResumed: the provider plugin dies while the
// BMC restarts in the middle of an update (the BMC refuses connections
// for its reset time). Apply restarts the plugin and resumes the step by
// polling the recorded task: a BMC that does not answer yet is a BMC
// still restarting, not a failed update; once it is back the task is
// gone (404), the version is read, and the update that did not take is
// sent again and takes.
func TestBMCRestartDuringUpdateResumed(t *testing.T) {
	t.Parallel() // its own fleet (freeOctet), database and work directory
	if testing.Short() {
		t.Skip("kills the real plugin process in a real apply")
	}
	octet := freeOctet(t, 175, 1)
	// 60× real time: the flash takes 10 s, the BMC restarts at 5 s and
	// is away 3 s: time to kill the plugin while it is.
	f := startE2EFleetWith(t, octet, 1, 1, 60, nil, nil, map[string]string{"NIC": "1.0"})
	if err := os.WriteFile(filepath.Join(f.dir, "main.rf.hcl"), []byte(fmt.Sprintf(restartRelease, octet)), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newE2EEnv(t)
	if code, out := e.run(t, "plan", "-no-color", "-out", "plan.json", f.dir); code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	f.injectFault(t, "bmc-0001", "bmc-restart-during-update:lost:1")
	events := filepath.Join(e.work, "ev.jsonl")
	cmd := exec.Command(e.bin, "apply", "-allow-unsigned", "-no-color", "-json-into", events, "plan.json")
	cmd.Dir, cmd.Env = e.work, e.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()
	waitEvent(t, events, regexp.MustCompile(`"type":"step_task","server":"lab/r1/s1","op":"step:1"`), exited)
	// The provider's polls run the simulator's clock: the restart shows
	// in the counters once it happened.
	deadline := time.Now().Add(30 * time.Second)
	for f.stats(t)["bmc-0001"].BMCResets == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the BMC did not restart within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	killed := killPlugin(t, cmd.Process.Pid)
	select {
	case <-exited:
	case <-time.After(120 * time.Second):
		t.Fatalf("apply did not finish after the plugin (pid %d) was killed:\n%s", killed, out.String())
	}
	ev, _ := os.ReadFile(events)
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("apply exited %d, want 0, after the plugin (pid %d) was killed while the BMC restarted:\n%s\nevents:\n%s", code, killed, out.String(), ev)
	}
	if !bytes.Contains(ev, []byte("the BMC does not answer (as while it restarts)")) {
		t.Errorf("the resumed poll never met the restarting BMC (nothing checked):\n%s", ev)
	}
	if !strings.Contains(out.String(), "sending the update again: it did not take effect: nic reads 1.0, expected 3.1") {
		t.Errorf("the update was not sent again for the reason it needed:\n%s", out.String())
	}
	st := f.stats(t)["bmc-0001"]
	if st.Updates != 2 || st.UpdatesLost != 1 || st.Flashes["NIC"] != 1 || st.Versions["NIC"] != "3.1" || st.Reimages != 0 {
		t.Errorf("updates sent %d, lost %d, NIC flashed %d, at %s, reimages %d; want 2, 1, 1, 3.1, 0", st.Updates, st.UpdatesLost, st.Flashes["NIC"], st.Versions["NIC"], st.Reimages)
	}
}
