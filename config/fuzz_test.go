package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad loads arbitrary bytes as a configuration file: whatever the
// input, Load must return diagnostics, never panic. Seeds are the examples,
// file by file and whole.
func FuzzLoad(f *testing.F) {
	inventory, err := os.ReadFile(filepath.Join("..", "examples", "nexus-lab", "inventory.csv"))
	if err != nil {
		f.Fatal(err)
	}
	for _, dir := range exampleDirs(f) {
		names, _ := filepath.Glob(filepath.Join(dir, "*"+FileSuffix))
		var all strings.Builder
		for _, name := range names {
			src, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
			all.Write(src)
			all.WriteString("\n")
		}
		f.Add([]byte(all.String()))
	}
	f.Add([]byte(base))
	// One directory per worker process, rewritten for each input: inputs
	// run one at a time in a worker, and a fresh TempDir per input costs
	// more than loading does.
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "inventory.csv"), inventory, 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if err := os.WriteFile(filepath.Join(dir, "main"+FileSuffix), src, 0o644); err != nil {
			t.Fatal(err)
		}
		l := NewLoader(LoadOptions{Getenv: func(string) string { return "fuzz-secret" }})
		cfg, diags := l.Load(dir)
		if cfg == nil {
			t.Fatal("Load returned a nil Config")
		}
		// The secret may appear only when the input spells it out itself
		// (scrubbing replaces whole tokens, not parts of longer words).
		spelled := bytes.Contains(bytes.ToLower(src), []byte("secret"))
		for _, d := range diags {
			if !spelled && strings.Contains(d.Summary+d.Detail, "fuzz-secret") {
				t.Fatalf("diagnostic leaks a sensitive value: %s: %s", d.Summary, d.Detail)
			}
		}
		// Exercise the model accessors the planner will use.
		_ = cfg.Servers()
		_, _ = cfg.EffectiveRollout("")
		_ = cfg.InputValues()
	})
}
