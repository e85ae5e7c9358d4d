package examples

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/config"
)

// TestNexusLabLoads checks that the embedded nexus-lab, written out the way
// `rackform demo` does, loads with no diagnostics at all.
func TestNexusLabLoads(t *testing.T) {
	dir := t.TempDir()
	if err := WriteNexusLab(dir); err != nil {
		t.Fatal(err)
	}
	l := config.NewLoader(config.LoadOptions{Getenv: func(string) string { return "" }})
	cfg, diags := l.Load(dir)
	for _, d := range diags {
		t.Errorf("diagnostic: %s: %s: %s", d.Subject, d.Summary, d.Detail)
	}
	if cfg == nil {
		t.Fatal("no configuration")
	}
	if got := len(cfg.Servers()); got != 40 {
		t.Errorf("%d servers, want the 40 rows of inventory.csv", got)
	}
}

// TestNexusLabEmbedsEveryFile checks that the binary carries the same
// files as the directory (a file added to the example is not forgotten).
func TestNexusLabEmbedsEveryFile(t *testing.T) {
	entries, err := os.ReadDir("nexus-lab")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		want, err := os.ReadFile(filepath.Join("nexus-lab", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := fs.ReadFile(NexusLab(), e.Name())
		if err != nil {
			t.Errorf("%s is not embedded: %v", e.Name(), err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from the embedded copy", e.Name())
		}
	}
}
