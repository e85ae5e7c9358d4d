package command

import (
	"os"
	"testing"
)

// TestMain keeps the registry of started runs (internal/run) of the runs
// these tests drive out of the user's configuration directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rackform-command-test-")
	if err == nil {
		os.Setenv("XDG_CONFIG_HOME", dir)
		os.Setenv("HOME", dir)
	}
	code := m.Run()
	if err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
