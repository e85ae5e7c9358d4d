package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		if e.IsDir() {
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
				if s.Cluster == nil || s.Rack == nil || s.Cluster.Release == nil || s.Cluster.Strategy == nil {
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
