//go:build unix

package plugin

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// deadPID is the id of a process that ran and was reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestSweepSocketsRemovesOnlyTheDeadHosts: only the socket directory of a
// host that no longer runs goes; this process's, a live process's, the
// older form's, a file and a link named like one stay, and so does what
// the link points to.
func TestSweepSocketsRemovesOnlyTheDeadHosts(t *testing.T) {
	dir := t.TempDir()
	dead := strconv.Itoa(deadPID(t))
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "plugin123"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := mk(socketDirPrefix + dead + "-111")
	stay := []string{
		mk(socketDirPrefix + strconv.Itoa(os.Getpid()) + "-222"),
		mk(socketDirPrefix + strconv.Itoa(os.Getppid()) + "-333"),
		mk(socketDirPrefix + "444"),
		mk(socketDirPrefix + "x-555"),
		mk("elsewhere"),
	}
	file := filepath.Join(dir, socketDirPrefix+dead+"-666")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, socketDirPrefix+dead+"-777")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	stay = append(stay, file, link, filepath.Join(dir, "elsewhere", "plugin123"))
	// A process id that does not run here, but a socket that answers: a
	// host in another PID namespace sharing the temporary directory.
	serving := filepath.Join(dir, socketDirPrefix+dead+"-888")
	if err := os.Mkdir(serving, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(serving, "plugin1"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	stay = append(stay, serving)

	sweepSockets(dir)
	if _, err := os.Lstat(gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directory of a host that is gone is still there (%v)", err)
	}
	for _, p := range stay {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v, want it left as it was", filepath.Base(p), err)
		}
	}
}

// TestStartSweepsTheSocketsOfKilledHosts: a host killed with its plugin
// leaves the plugin's socket directory; the next plugin started anywhere
// removes it, and its own directory is named for its host.
func TestStartSweepsTheSocketsOfKilledHosts(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	left := filepath.Join(tmp, socketDirPrefix+strconv.Itoa(deadPID(t))+"-1")
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "plugin1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := startFake(t)
	if _, err := os.Stat(left); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket directory a killed host left is still there after a plugin started (%v)", err)
	}
	if want := socketDirPrefix + strconv.Itoa(os.Getpid()) + "-"; filepath.Dir(c.sockets) != tmp || !strings.HasPrefix(filepath.Base(c.sockets), want) {
		t.Errorf("the plugin's socket directory is %s, want %s… in %s", c.sockets, want, tmp)
	}
}
