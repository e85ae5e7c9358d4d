package plugin

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rackform/rackform/internal/process"
)

// socketDirPrefix begins the name of each plugin's socket directory in the
// temporary directory; the host's process id follows, then a random part.
// It is short on purpose: a Unix socket's path is limited to 108 bytes,
// and a long TMPDIR (macOS's, a CI job's work directory) leaves little
// room; with a 7-digit process id the name is no longer than the one it
// replaced ("rackform-plugin-" and the random part).
const socketDirPrefix = "rfplug-"

// newSocketDir makes the directory of one plugin's gRPC socket, named for
// this host process, after removing those of hosts no longer running.
func newSocketDir() (string, error) {
	sweepSockets(os.TempDir())
	return os.MkdirTemp("", socketDirPrefix+strconv.Itoa(os.Getpid())+"-")
}

// sweepSockets removes from dir the socket directories of rackform hosts
// that are gone. A host killed outright (SIGKILL, the OOM killer, a CI job
// cancelled) cannot remove its plugin's directory, and its plugin dies
// with it; without the sweep one would be left in the temporary directory
// for every such kill. Only a directory named for a process that no
// longer runs, whose socket no longer answers, is removed: not one of this
// process, of a live process, of an unknown name or older form, nor
// anything but a directory (a link named like one is left as it is); and,
// in a shared temporary directory, not another user's, which the sticky
// bit protects.
func sweepSockets(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), socketDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		digits, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue // the form without a process id: whose is unknown
		}
		pid, err := strconv.Atoi(digits)
		if err != nil || pid <= 0 || pid == os.Getpid() || process.Running(pid) {
			continue
		}
		if path := filepath.Join(dir, e.Name()); !listening(path) {
			_ = os.RemoveAll(path)
		}
	}
}

// listening reports whether a socket in dir accepts connections: a
// process id that does not run here may be a host in another PID
// namespace sharing this temporary directory, whose plugin still serves.
func listening(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return true // unreadable: not ours to judge
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSocket == 0 {
			continue
		}
		if c, err := net.DialTimeout("unix", filepath.Join(dir, e.Name()), time.Second); err == nil {
			c.Close()
			return true
		}
	}
	return false
}
