package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStrategyOnUnreachable(t *testing.T) {
	cases := []struct {
		name, attr, want, wantErr string
	}{
		{"default", "", OnUnreachableSkip, ""},
		{"block", `on_unreachable = "block"`, OnUnreachableBlock, ""},
		{"skip", `on_unreachable = "skip"`, OnUnreachableSkip, ""},
		{"invalid", `on_unreachable = "sometimes"`, "", "sometimes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := `
strategy "s" {
  ` + c.attr + `
}
`
			if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, diags := NewLoader(LoadOptions{}).Load(dir)
			if c.wantErr != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), c.wantErr) || !strings.Contains(diags.Error(), "main.rf.hcl:3") {
					t.Fatalf("want an error at main.rf.hcl:3 naming %q, got %v", c.wantErr, diags)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if got := cfg.Strategy("s").OnUnreachable; got != c.want {
				t.Errorf("OnUnreachable = %q, want %q", got, c.want)
			}
		})
	}
}
