package planner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
)

// TestPlanSnapshotsDataFiles: the plan of examples/nexus-lab holds
// inventory.csv, which its configuration reads with file(), byte for byte;
// the configuration loaded back from the plan's snapshot alone has the
// same servers; the env() password is nowhere in the plan file.
func TestPlanSnapshotsDataFiles(t *testing.T) {
	const password = "lab-bmc-password-xyzzy"
	getenv := func(n string) string {
		if n == "RACKFORM_BMC_PASSWORD" {
			return password
		}
		return ""
	}
	dir := filepath.Join("..", "examples", "nexus-lab")
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: getenv}).Load(dir)
	if diags.HasErrors() {
		t.Fatalf("loading %s: %s", dir, diags.Error())
	}
	p := mustPlan(t, cfg, nil, nil)
	want, err := os.ReadFile(filepath.Join(dir, "inventory.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var inv *plan.File
	for i, f := range p.Config.DataFiles {
		names = append(names, f.Name)
		if f.Name == "inventory.csv" {
			inv = &p.Config.DataFiles[i]
		}
	}
	if inv == nil {
		t.Fatalf("the plan's data files are %v, want inventory.csv among them", names)
	}
	got, err := inv.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || inv.Encoding != "" {
		t.Errorf("inventory.csv in the plan (encoding %q) differs from the file", inv.Encoding)
	}
	for _, f := range p.Config.Files {
		if f.Name == "inventory.csv" {
			t.Errorf("inventory.csv is among the configuration files")
		}
	}

	file, err := plan.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(file, []byte(password)) {
		t.Fatal("the plan file holds the env() password")
	}
	decoded, err := plan.Decode(file)
	if err != nil {
		t.Fatal(err)
	}
	mem := config.MemFS{}
	for _, f := range append(decoded.Config.Files, decoded.Config.DataFiles...) {
		b, err := f.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		mem[f.Name] = b
	}
	cfg2, diags := config.NewLoader(config.LoadOptions{Getenv: getenv, FS: mem}).Load(".")
	if diags.HasErrors() {
		t.Fatalf("loading the snapshot: %s", diags.Error())
	}
	s1, s2 := cfg.Servers(), cfg2.Servers()
	if len(s1) != 40 || len(s1) != len(s2) {
		t.Fatalf("%d servers from the directory, %d from the snapshot; want 40", len(s1), len(s2))
	}
	for i := range s1 {
		if s1[i].Name != s2[i].Name || s1[i].BMC != s2[i].BMC || s1[i].Role != s2[i].Role {
			t.Errorf("server %d: %s %s from the directory, %s %s from the snapshot", i, s1[i].Name, s1[i].BMC, s2[i].Name, s2[i].BMC)
		}
	}
}

// TestDataFileSnapshotEncoding: text stays text, other bytes are base64
// and decode to exactly what was read; entries are sorted.
func TestDataFileSnapshotEncoding(t *testing.T) {
	dir := writeTemp(t, base3+`
locals {
  a = file("z.txt")
  b = file("bin.dat")
  c = file("./z.txt")
}
`)
	bin := []byte{0xff, 0xfe, 0x00, 'x'}
	os.WriteFile(filepath.Join(dir, "z.txt"), []byte("zed\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bin.dat"), bin, 0o644)
	p := mustPlan(t, loadDir(t, dir), nil, nil)
	if len(p.Config.DataFiles) != 2 || p.Config.DataFiles[0].Name != "bin.dat" || p.Config.DataFiles[1].Name != "z.txt" {
		t.Fatalf("data files %+v, want bin.dat then z.txt, once each", p.Config.DataFiles)
	}
	b := p.Config.DataFiles[0]
	if b.Encoding != plan.EncodingBase64 {
		t.Errorf("binary file encoding %q", b.Encoding)
	}
	if got, err := b.Bytes(); err != nil || !bytes.Equal(got, bin) {
		t.Errorf("binary file decodes to %q, %v", got, err)
	}
	if z := p.Config.DataFiles[1]; z.Encoding != "" || z.Content != "zed\n" {
		t.Errorf("text file %+v", z)
	}
	file, err := plan.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := plan.Encode(mustPlan(t, loadDir(t, dir), nil, nil))
	if err != nil || !bytes.Equal(file, again) {
		t.Errorf("two plans of the same inputs differ (%v)", err)
	}
}

// TestSecretInDataFileRefused: a data file holding a sensitive value is
// refused like configuration text holding one; a file read through a
// sensitive path is refused without naming it.
func TestSecretInDataFileRefused(t *testing.T) {
	dir := writeTemp(t, base3+`
variable "ipmi_secret" {
  type      = string
  sensitive = true
}
locals {
  notes = file("notes.txt")
}
`)
	// The sensitive variable's value (testEnv) written in a data file.
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ipmi: s3cret-variable-value\n"), 0o644)
	cfg := loadDir(t, dir)
	_, diags := planWith(t, cfg, nil, nil)
	if got := errorSummaries(diags); len(got) != 1 || got[0] != "Secret in the configuration text" || !strings.Contains(diags.Error(), "notes.txt") {
		t.Errorf("errors %v (%s), want the sensitive variable in notes.txt refused", got, diags.Error())
	}

	// The env() password of the provider, written in a data file.
	dir = writeTemp(t, base3+`
locals {
  notes = file("notes.txt")
}
`)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("pw hunter2-env-secret\n"), 0o644)
	_, diags = planWith(t, loadDir(t, dir), nil, nil)
	if got := errorSummaries(diags); len(got) != 1 || got[0] != "Secret in the configuration text" || strings.Contains(diags.Error(), "hunter2") {
		t.Errorf("errors %v (%s), want the env() value in notes.txt refused, unnamed", got, diags.Error())
	}

	dir = writeTemp(t, base3+`
locals {
  x = file(env("BMC_PASSWORD"))
}
`)
	os.WriteFile(filepath.Join(dir, "hunter2-env-secret"), []byte("x"), 0o600)
	t.Chdir(dir) // env's value is a relative path
	cfg = loadDir(t, ".")
	_, diags = planWith(t, cfg, nil, nil)
	if got := errorSummaries(diags); len(got) != 1 || got[0] != "File read through a sensitive path" {
		t.Errorf("errors %v, want the sensitive path refused", got)
	}
	if strings.Contains(diags.Error(), "hunter2") {
		t.Errorf("the error names the secret path")
	}
}

// base3 is one cluster of one rack of three control-plane servers.
const base3 = `
provider "redfish" {
  username = "admin"
  password = env("BMC_PASSWORD")
}
release "r1" {
  version = "4.5.0"
  component "bios" {
    match {
      software_id = "BIOS"
    }
    version = "1.2.3"
    scheme  = "dotted"
    image   = "https://127.0.0.1/bios.bin"
  }
}
cluster "c1" {
  release = release.r1
  rack "a" {
    server "s1" {
      bmc  = "https://127.0.0.1:8443"
      role = "control_plane"
    }
    server "s2" {
      bmc  = "https://127.0.0.2:8443"
      role = "control_plane"
    }
    server "s3" {
      bmc  = "https://127.0.0.3:8443"
      role = "control_plane"
    }
  }
}
`
