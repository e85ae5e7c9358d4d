package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackform/rackform/providers/redfish"
)

// envTestHost makes this test binary a host process (testHostMain) for
// TestPluginExitsWithHost; its value "watch" turns off Pdeathsig so the
// plugin's own parent watch is what ends it.
const envTestHost = "RACKFORM_TEST_PLUGIN_HOST"

// testHostMain starts the built-in provider (this binary re-executed as
// "rackform provider redfish"), prints the plugin's pid and waits to be
// killed.
func testHostMain() {
	if os.Getenv(envTestHost) == "watch" {
		pdeathsig = false
	}
	spec, err := BuiltinSpec(redfish.Name)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	spec.Argv0 = "rackform"
	spec.Env = []string{envTestHost + "="}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Start(ctx, spec, nil)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Printf("plugin pid %d\n", c.pc.ReattachConfig().Pid)
	select {}
}

// processGone reports whether pid no longer runs (a zombie nobody reaps
// counts as gone: it runs no code and holds no sessions).
func processGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) STATE ...: comm may hold spaces, so split after ')'.
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && strings.HasPrefix(strings.TrimSpace(string(stat[i+1:])), "Z")
}

// TestPluginExitsWithHost SIGKILLs a host process that started the
// built-in provider plugin and expects the plugin to be gone within a few
// seconds: by Pdeathsig (Linux) and, with that turned off, by the plugin's
// own watch of its parent.
func TestPluginExitsWithHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"pdeathsig", "watch"} {
		t.Run(mode, func(t *testing.T) {
			host := exec.Command(exe, "-test.run=^$")
			host.Env = append(os.Environ(), envTestHost+"="+mode)
			host.Stderr = os.Stderr
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = host.Process.Kill(); _ = host.Wait() }()
			line := make(chan string, 1)
			go func() {
				s := bufio.NewScanner(out)
				for s.Scan() {
					if strings.HasPrefix(s.Text(), "plugin pid ") || strings.HasPrefix(s.Text(), "error:") {
						line <- s.Text()
						return
					}
				}
				close(line)
			}()
			var pid int
			select {
			case l := <-line:
				pid, err = strconv.Atoi(strings.TrimPrefix(l, "plugin pid "))
				if err != nil || pid <= 0 {
					t.Fatalf("host: %q", l)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the host did not start the plugin")
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if processGone(pid) {
				t.Fatal("the plugin is not running before the host is killed")
			}
			if err := host.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = host.Wait()
			deadline := time.Now().Add(5 * time.Second)
			for !processGone(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("the plugin (pid %d) still runs 5s after its host was killed", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestWatchHost: the watch ends when the parent changes, not before.
func TestWatchHost(t *testing.T) {
	tick := make(chan time.Time)
	ppids := make(chan int) // what getppid answers, one per tick
	done := make(chan bool, 1)
	go func() { done <- watchHost(100, tick, func() int { return <-ppids }) }()
	for i := 0; i < 2; i++ {
		tick <- time.Time{}
		ppids <- 100
	}
	tick <- time.Time{}
	select {
	case <-done:
		t.Fatal("the watch ended while the parent is still there")
	case ppids <- 1: // re-parented to init: the host is gone
	}
	if !<-done {
		t.Fatal("the watch did not report the host gone")
	}
	close(tick)
	if watchHost(100, tick, func() int { return 1 }) {
		t.Error("a closed tick channel reported the host gone")
	}
}
