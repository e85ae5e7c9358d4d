package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dataConfig reads an inventory twice (once as "./inventory.csv"), a
// template that itself reads a file, and a JSON file in a subdirectory.
const dataConfig = `locals {
  inv  = csvdecode(file("inventory.csv"))
  again = file("./inventory.csv")
  tpl  = templatefile("greet.tpl", { name = "rack" })
  meta = jsondecode(file("data/meta.json"))
}
release "r1" {
  version = "4.5.0"
  component "bios" {
    match {
      software_id = "BIOS"
    }
    version = "1.2.3"
    scheme  = "dotted"
    image   = "https://127.0.0.1/${local.meta.image}"
  }
}
cluster "c1" {
  release = release.r1
  rack "a" {
    server "inv" {
      for_each = { for s in local.inv : s.name => s }
      bmc  = each.value.bmc
      role = "control_plane"
    }
  }
  labels = { greeting = local.tpl, size = tostring(length(local.again)) }
}
`

var dataFilesWant = map[string]string{
	"inventory.csv":  "name,bmc\na1,https://127.0.0.1:8443\na2,https://127.0.0.2:8443\na3,https://127.0.0.3:8443\n",
	"greet.tpl":      "hello ${upper(name)} ${file(\"motd.txt\")}",
	"motd.txt":       "motd \xff\x00 bytes", // not UTF-8: recorded byte for byte
	"data/meta.json": `{"image": "bios.bin"}`,
}

func dataFileMap(files []SourceFile) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		out[f.Name] = string(f.Bytes)
	}
	return out
}

// TestDataFilesRecorded: every file a function reads is on the Config once,
// by its name relative to the configuration directory, byte for byte,
// sorted; the configuration files stay in Files only.
func TestDataFilesRecorded(t *testing.T) {
	files := map[string]string{"main.rf.hcl": dataConfig}
	for k, v := range dataFilesWant {
		files[k] = v
	}
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := NewLoader(LoadOptions{})
	cfg, diags := l.Load(dir)
	if diags.HasErrors() {
		t.Fatalf("diagnostics:\n%s", renderDiags(l, diags))
	}
	if diff := cmp.Diff(dataFilesWant, dataFileMap(cfg.DataFiles)); diff != "" {
		t.Errorf("DataFiles (-want +got):\n%s", diff)
	}
	var names []string
	for _, f := range cfg.DataFiles {
		names = append(names, f.Name)
	}
	if want := []string{"data/meta.json", "greet.tpl", "inventory.csv", "motd.txt"}; !cmp.Equal(want, names) {
		t.Errorf("DataFiles names %v, want %v (sorted, each once)", names, want)
	}
	if len(cfg.Files) != 1 || filepath.Base(cfg.Files[0].Name) != "main.rf.hcl" {
		t.Errorf("Files = %v, want only main.rf.hcl", cfg.Files)
	}
	if cfg.SensitiveDataReads != 0 {
		t.Errorf("SensitiveDataReads = %d", cfg.SensitiveDataReads)
	}
}

// TestLoadFromMemFS: a configuration loads from an in-memory file set with
// the same result as from the disk, and file() never looks at the disk,
// even when the working directory holds a different inventory.
func TestLoadFromMemFS(t *testing.T) {
	mem := MemFS{"main.rf.hcl": []byte(dataConfig)}
	for k, v := range dataFilesWant {
		mem[k] = []byte(v)
	}
	// A working directory with other files of the same names.
	writeConfig(t, map[string]string{
		"main.rf.hcl":   dataConfig,
		"inventory.csv": "name,bmc\nzz,https://127.9.9.9:8443\n",
		"greet.tpl":     "changed",
		"motd.txt":      "changed",
	})
	l := NewLoader(LoadOptions{FS: mem})
	cfg, diags := l.Load(".")
	if diags.HasErrors() {
		t.Fatalf("diagnostics:\n%s", renderDiags(l, diags))
	}
	var got []string
	for _, s := range cfg.Servers() {
		got = append(got, s.Name+"="+s.BMC)
	}
	want := []string{"a1=https://127.0.0.1:8443", "a2=https://127.0.0.2:8443", "a3=https://127.0.0.3:8443"}
	if !cmp.Equal(want, got) {
		t.Errorf("servers %v, want %v (from the in-memory inventory)", got, want)
	}
	if g := cfg.Cluster("c1").Labels["greeting"]; g != "hello RACK motd \ufffd\x00 bytes" && !strings.HasPrefix(g, "hello RACK motd ") {
		t.Errorf("greeting label %q, want the in-memory template", g)
	}
	if diff := cmp.Diff(dataFilesWant, dataFileMap(cfg.DataFiles)); diff != "" {
		t.Errorf("DataFiles (-want +got):\n%s", diff)
	}
	if len(cfg.Files) != 1 || cfg.Files[0].Name != "main.rf.hcl" || string(cfg.Files[0].Bytes) != dataConfig {
		t.Errorf("Files = %v", cfg.Files)
	}
}

// TestMemFSMissingFile: a file the configuration reads that is not in the
// file set is an error naming it, even though the disk has it.
func TestMemFSMissingFile(t *testing.T) {
	mem := MemFS{"main.rf.hcl": []byte(dataConfig)}
	for k, v := range dataFilesWant {
		if k != "inventory.csv" {
			mem[k] = []byte(v)
		}
	}
	writeConfig(t, map[string]string{"main.rf.hcl": dataConfig, "inventory.csv": dataFilesWant["inventory.csv"]})
	l := NewLoader(LoadOptions{FS: mem, FSName: "the plan's configuration snapshot"})
	_, diags := l.Load(".")
	if !diags.HasErrors() {
		t.Fatal("loaded without inventory.csv in the file set")
	}
	if !strings.Contains(diags.Error(), "inventory.csv is not in the plan's configuration snapshot") {
		t.Errorf("diagnostics %s\nwant one naming inventory.csv", diags.Error())
	}
}

// TestMemFSOutsidePaths: names leaving the configuration directory are
// recorded with their ../ and found again in a MemFS.
func TestMemFSOutsidePaths(t *testing.T) {
	src := `locals {
  x = file("../shared/inv.csv")
}
`
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "cfg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "cfg", "main.rf.hcl"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(root, "shared", "inv.csv"), []byte("a,b\n"), 0o644)
	cfg, diags := NewLoader(LoadOptions{}).Load(filepath.Join(root, "cfg"))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := dataFileMap(cfg.DataFiles); !cmp.Equal(got, map[string]string{"../shared/inv.csv": "a,b\n"}) {
		t.Fatalf("DataFiles %v", got)
	}
	mem := MemFS{"main.rf.hcl": []byte(src), "../shared/inv.csv": []byte("a,b\n")}
	cfg2, diags := NewLoader(LoadOptions{FS: mem}).Load(".")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if !cmp.Equal(cfg.DataFiles, cfg2.DataFiles) {
		t.Errorf("in memory %v, on disk %v", cfg2.DataFiles, cfg.DataFiles)
	}
}

// TestSensitivePathNotRecorded: a file whose path comes from a sensitive
// value is read but neither its name nor its contents are recorded; from a
// snapshot it cannot load, and the error does not name it.
func TestSensitivePathNotRecorded(t *testing.T) {
	src := `locals {
  pw = file(env("PW_FILE"))
}
`
	dir := t.TempDir()
	secretPath := filepath.Join(dir, "hunter2-path")
	os.WriteFile(secretPath, []byte("hunter2-secret"), 0o600)
	os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(src), 0o644)
	getenv := func(n string) string {
		if n == "PW_FILE" {
			return secretPath
		}
		return ""
	}
	cfg, diags := NewLoader(LoadOptions{Getenv: getenv}).Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(cfg.DataFiles) != 0 || cfg.SensitiveDataReads != 1 {
		t.Errorf("DataFiles %v, SensitiveDataReads %d; want none recorded, one counted", cfg.DataFiles, cfg.SensitiveDataReads)
	}
	mem := MemFS{"main.rf.hcl": []byte(src), dataName(secretPath): []byte("hunter2-secret")}
	_, diags = NewLoader(LoadOptions{Getenv: getenv, FS: mem}).Load(".")
	if !diags.HasErrors() {
		t.Fatal("a sensitive path loaded from a snapshot")
	}
	if strings.Contains(diags.Error(), "hunter2") {
		t.Errorf("the error names the secret: %s", diags.Error())
	}
}
