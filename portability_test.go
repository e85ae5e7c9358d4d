package rackform

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBuildsOnEveryPlatform checks that rackform builds for linux, darwin
// and windows on amd64 and arm64: CI jobs and operators' laptops run it
// there, so nothing outside a build-tagged file may use a Unix-only call
// (flock, ioctl, rlimit). Every package is compiled (not linked) for each
// platform; the build cache keeps a second run fast.
func TestBuildsOnEveryPlatform(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, goarch := range []string{"amd64", "arm64"} {
			t.Run(goos+"/"+goarch, func(t *testing.T) {
				// One compile at a time, at low priority: the other test
				// packages run beside this one, some of them timing real
				// processes.
				args := []string{goBin, "build", "-p", "1", "./..."}
				if nice, err := exec.LookPath("nice"); err == nil {
					args = append([]string{nice, "-n", "19"}, args...)
				}
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("rackform does not build for %s/%s: %v\n%s", goos, goarch, err, strings.TrimSpace(string(out)))
				}
			})
		}
	}
}
