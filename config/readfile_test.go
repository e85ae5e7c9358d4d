package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// A FIFO or a device named by file(), templatefile(), -var-file or as the
// configuration itself is refused at once with an error naming it, instead
// of blocking the load (a FIFO's open waits for a writer) or reading
// forever (/dev/zero).
func TestSpecialFilesRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "inventory.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFifo := filepath.Join(dir, "fifo.rf.hcl")
	if err := syscall.Mkfifo(cfgFifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		src   string
		opts  LoadOptions
		path  string
		want  string
		files map[string]string
	}{
		{name: "file() of a FIFO", src: `locals { x = file("` + fifo + `") }`, want: fifo + " is a named pipe (FIFO), not a regular file"},
		{name: "file() of /dev/zero", src: `locals { x = file("/dev/zero") }`, want: "/dev/zero is a character device, not a regular file"},
		{name: "templatefile() of a FIFO", src: `locals { x = templatefile("` + fifo + `", {}) }`, want: "is a named pipe (FIFO), not a regular file"},
		{name: "a -var-file FIFO", src: `variable "v" {}`, opts: LoadOptions{VarFiles: []string{fifo}}, want: "Cannot read the -var-file " + fifo + ": " + fifo + " is a named pipe (FIFO)"},
		{name: "the configuration a FIFO", path: cfgFifo, want: "is a named pipe (FIFO), not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "."
			if tc.path != "" {
				path = tc.path
			} else {
				writeConfig(t, map[string]string{"main.rf.hcl": tc.src})
			}
			done := make(chan string, 1)
			go func() {
				_, diags := NewLoader(tc.opts).Load(path)
				done <- diags.Error()
			}()
			select {
			case got := <-done:
				if !strings.Contains(got, tc.want) {
					t.Errorf("diagnostics %q, want %q", got, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the load blocked on a special file")
			}
		})
	}
}

// A UTF-8 byte order mark (spreadsheet exports write one) is not part of
// the first column's name.
func TestCSVDecodeStripsBOM(t *testing.T) {
	v, diags := evalFn(t, `csvdecode("\ufeffname,role\nr01-s01,compute\n")`)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	row := v.Index(cty.NumberIntVal(0))
	if !row.Type().HasAttribute("name") || row.GetAttr("name").AsString() != "r01-s01" {
		t.Fatalf("row %#v: want a name column", row)
	}

	// End to end: the nexus-lab example with its inventory saved with a BOM
	// loads like the original.
	src, err := os.ReadFile(filepath.Join("..", "examples", "nexus-lab", "inventory.csv"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	entries, _ := os.ReadDir(filepath.Join("..", "examples", "nexus-lab"))
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join("..", "examples", "nexus-lab", e.Name()))
		os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "inventory.csv"), append([]byte("\ufeff"), src...), 0o644)
	cfg, diags := NewLoader(LoadOptions{}).Load(dir)
	if diags.HasErrors() {
		t.Fatalf("with a BOM: %s", diags.Error())
	}
	if n := len(cfg.Servers()); n != 40 {
		t.Errorf("%d servers, want 40", n)
	}
}
