// Package version reports rackform's version, set at link time by the
// Makefile and falling back to the module's build information.
package version

import "runtime/debug"

// Version is overridden with -ldflags "-X github.com/rackform/rackform/internal/version.Version=v1.2.3".
var Version = "0.1.0-dev"

// String returns the version, with the VCS revision when the binary has one.
func String() string {
	v := Version
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
	}
	return v
}
