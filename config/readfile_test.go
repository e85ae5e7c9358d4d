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

// A configuration, variables file or template nested deeper than HCL's
// parser can take is refused before it is parsed, naming the file and
// where (it used to overflow the stack: a crash, not an error), and a file
// over its size bound is refused before it is read.
func TestBoundsBeforeParsing(t *testing.T) {
	deep := func(prefix string, n int, suffix string) string {
		return prefix + strings.Repeat("[", n) + strings.Repeat("]", n) + suffix
	}
	sparse := func(t *testing.T, name string, size int64) {
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		large map[string]int64
		opts  LoadOptions
		want  string
	}{
		{name: "a configuration nested 100,000 levels", files: map[string]string{"main.rf.hcl": deep("locals {\n  a = ", 100_000, "\n}\n")},
			want: "main.rf.hcl nests brackets, braces, parentheses or strings more than 256 levels deep (at line 2, column 262)"},
		{name: "a -var-file nested 100,000 levels", files: map[string]string{"main.rf.hcl": `variable "v" {}`, "deep.rfvars": deep("v = ", 100_000, "\n")},
			opts: LoadOptions{VarFiles: []string{"deep.rfvars"}},
			want: "Cannot read the -var-file deep.rfvars: deep.rfvars nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 261)"},
		{name: "a JSON -var-file nested 100,000 levels", files: map[string]string{"main.rf.hcl": `variable "v" {}`, "deep.json": deep(`{"v": `, 100_000, "}")},
			opts: LoadOptions{VarFiles: []string{"deep.json"}},
			want: "deep.json nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 262)"},
		{name: "a template nested 100,000 levels", files: map[string]string{"main.rf.hcl": `locals { x = templatefile("t.tmpl", {}) }`, "t.tmpl": deep("${", 100_000, "}")},
			want: "t.tmpl nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 258)"},
		{name: "a configuration over 16 MiB", files: map[string]string{"main.rf.hcl": ""}, large: map[string]int64{"big.rf.hcl": 17 << 20},
			want: "big.rf.hcl is 17 MiB, over the 16 MiB a configuration or variables file may be"},
		{name: "a data file over 64 MiB", files: map[string]string{"main.rf.hcl": `locals { x = file("inventory.csv") }`}, large: map[string]int64{"inventory.csv": 65 << 20},
			want: "inventory.csv is 65 MiB, over the 64 MiB a file the configuration reads may be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeConfig(t, tc.files)
			for name, size := range tc.large {
				sparse(t, name, size)
			}
			_, diags := NewLoader(tc.opts).Load(".")
			if !strings.Contains(diags.Error(), tc.want) {
				t.Errorf("diagnostics %q, want %q", diags.Error(), tc.want)
			}
		})
	}
}

// A -var or environment value nested 60,000 levels deep (a 120 KB
// argument) is refused before it is parsed, without showing it: it
// overflowed the parser's stack.
func TestDeepInputRefused(t *testing.T) {
	deep := strings.Repeat("[", 60_000) + strings.Repeat("]", 60_000)
	for name, opts := range map[string]LoadOptions{
		"-var": {Vars: []string{"v=" + deep}},
		"env":  {Getenv: func(k string) string { return map[string]string{EnvVarPrefix + "v": deep}[k] }},
	} {
		t.Run(name, func(t *testing.T) {
			writeConfig(t, map[string]string{"main.rf.hcl": `variable "v" { type = list(any) }`})
			_, diags := NewLoader(opts).Load(".")
			want := "nests brackets, braces, parentheses or strings more than 256 levels deep; rackform refuses it rather than parse it."
			if !strings.Contains(diags.Error(), want) || strings.Contains(diags.Error(), "[[[") {
				t.Errorf("diagnostics %q, want %q", diags.Error(), want)
			}
		})
	}
}

// A catalog nested 2,000,000 levels deep (4 MB) is refused before it is
// parsed, naming it: it overflowed HCL's JSON parser's stack.
func TestDeepCatalogRefused(t *testing.T) {
	deep := `{"release": {"4.4.2": {"minor": ` + strings.Repeat("[", 2_000_000) + strings.Repeat("]", 2_000_000) + "}}}"
	writeConfig(t, map[string]string{"main.rf.hcl": "catalog {\n  source = \"catalog.json\"\n}\n", "catalog.json": deep})
	_, diags := NewLoader(LoadOptions{}).Load(".")
	want := "catalog.json nests brackets, braces, parentheses or strings more than 256 levels deep (at line 1, column 286)"
	if !strings.Contains(diags.Error(), want) {
		t.Errorf("diagnostics %q, want %q", diags.Error(), want)
	}
}
