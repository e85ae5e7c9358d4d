//go:build unix

package redfish

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// fileLimit is the process's open-file limit (Go raises the soft limit to
// the hard one at start), 0 when unknown.
func fileLimit() int {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}

// availableMemory is MemAvailable from /proc/meminfo in bytes, 0 when unknown.
func availableMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
