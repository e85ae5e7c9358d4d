package rackform

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBuildsOnEveryPlatform checks that rackform builds for Windows,
// macOS and Linux on arm64: CI jobs and operators' laptops run it there,
// so nothing outside a build-tagged file may use a Unix-only call (flock,
// ioctl, rlimit). Every package is compiled (not linked) for each platform.
//
// With a cold build cache each platform compiles every dependency again
// (minutes on a 2-core machine), so the test runs only with
// RACKFORM_CROSS=1: `make cross`, which CI runs after `make test`. The
// three platforms cover what differs: the operating system's calls
// (windows, darwin) and the architecture's types (arm64 beside the host's
// amd64, which every other test builds).
func TestBuildsOnEveryPlatform(t *testing.T) {
	if os.Getenv("RACKFORM_CROSS") != "1" {
		t.Skip("cross-builds run with `make cross` (RACKFORM_CROSS=1)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go command in PATH")
	}
	for _, p := range []string{"windows/amd64", "darwin/arm64", "linux/arm64"} {
		goos, goarch, _ := strings.Cut(p, "/")
		t.Run(p, func(t *testing.T) {
			cmd := exec.Command(goBin, "build", "./...")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("rackform does not build for %s/%s: %v\n%s", goos, goarch, err, strings.TrimSpace(string(out)))
			}
		})
	}
}
