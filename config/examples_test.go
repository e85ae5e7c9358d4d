package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// exampleDirs lists every example directory.
func exampleDirs(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		// A configuration has *.rf.hcl files: examples/ci holds CI
		// pipelines and examples/policy a Rego policy, not configurations.
		hcl, _ := filepath.Glob(filepath.Join("..", "examples", e.Name(), "*.rf.hcl"))
		if e.IsDir() && len(hcl) > 0 {
			dirs = append(dirs, filepath.Join("..", "examples", e.Name()))
		}
	}
	if len(dirs) < 3 {
		t.Fatalf("found %d example directories, want at least 3", len(dirs))
	}
	return dirs
}

func TestExamples(t *testing.T) {
	for _, dir := range exampleDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			l := NewLoader(LoadOptions{Getenv: func(string) string { return "" }})
			cfg, diags := l.Load(dir)
			if len(diags) > 0 {
				t.Fatalf("want no diagnostics, got:\n%s", renderDiags(l, diags))
			}
			if len(cfg.Clusters) == 0 || len(cfg.Servers()) == 0 {
				t.Fatalf("example declares no clusters or servers")
			}
			for _, s := range cfg.Servers() {
				// A cluster in a channel rollout has no release: the
				// channel chooses it from the catalog at plan.
				if s.Cluster == nil || s.Rack == nil || s.Cluster.Release == nil && !inChannelRollout(cfg, s.Cluster) || s.Cluster.Strategy == nil {
					t.Fatalf("server %s has unresolved references", s.Name)
				}
			}
		})
	}
}

// TestReadmeSnippets parses every hcl snippet of examples/README.md, so the
// language reference cannot show syntax that does not parse.
func TestReadmeSnippets(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "examples", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(src), "```hcl\n")
	if len(parts) < 8 {
		t.Fatalf("found %d hcl snippets, want at least 7", len(parts)-1)
	}
	for i, p := range parts[1:] {
		snippet, _, ok := strings.Cut(p, "```")
		if !ok {
			t.Fatalf("snippet %d is not closed", i+1)
		}
		if _, diags := hclsyntax.ParseConfig([]byte(snippet), fmt.Sprintf("README snippet %d", i+1), hcl.InitialPos); diags.HasErrors() {
			t.Errorf("snippet %d does not parse: %s\n%s", i+1, diags.Error(), snippet)
		}
	}
}

func TestLoadPaths(t *testing.T) {
	writeConfig(t, map[string]string{"a.rf.hcl": base, "notes.hcl": "x = 1\n", "b.rf.hcl": "locals {\n  x = 1\n}\n"})
	if err := os.Mkdir("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("sub", "c.rf.hcl"), []byte("garbage {"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path      string
		wantFiles []string
		want      []diag
	}{
		{".", []string{"a.rf.hcl", "b.rf.hcl"}, nil},
		{"a.rf.hcl", []string{"a.rf.hcl"}, nil},
		{"notes.hcl", nil, []diag{{"error", "Not a configuration file", "notes.hcl does not end in .rf.hcl; rackform reads only *.rf.hcl files.", ""}}},
		{"missing", nil, []diag{{"error", "Configuration not found", "Cannot read missing: stat missing: no such file or directory.", ""}}},
		{"sub", []string{filepath.Join("sub", "c.rf.hcl")}, []diag{{"error", "Unclosed configuration block", "There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.", "sub/c.rf.hcl:1,9-1,10"}}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			cfg, diags := NewLoader(LoadOptions{}).Load(tt.path)
			if diff := cmp.Diff(tt.want, flatten(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			var names []string
			for _, f := range cfg.Files {
				names = append(names, f.Name)
				if len(f.Bytes) == 0 {
					t.Errorf("%s: no bytes kept", f.Name)
				}
			}
			if diff := cmp.Diff(tt.wantFiles, names); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func inChannelRollout(cfg *Config, c *Cluster) bool {
	for _, ro := range cfg.Rollouts {
		for _, st := range ro.Stages {
			for _, g := range st.Groups {
				if ro.Channel != "" && slices.Contains(g.Clusters, c) {
					return true
				}
			}
		}
	}
	return false
}
