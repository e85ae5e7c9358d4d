package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers/plugin"
)

const snapConfig = `variable "bmc_password" {
  type      = string
  sensitive = true
}

variable "user" {
  type    = string
  default = "admin"
}

provider "redfish" {
  username = var.user
  password = var.bmc_password
}
`

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestCheckInputs(t *testing.T) {
	p := &plan.Plan{Inputs: plan.Inputs{
		Variables: map[string]any{"user": "ops"},
		Sensitive: []string{"bmc_password"},
		Env:       []string{"VAULT_TOKEN"},
	}}
	dir := t.TempDir()
	varFile := filepath.Join(dir, "secret.rfvars.hcl")
	if err := os.WriteFile(varFile, []byte(`bmc_password = "s3cret-value"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.rfvars.hcl")
	if err := os.WriteFile(broken, []byte(`bmc_password = "s3cret-value`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"VAULT_TOKEN": "t"}
	for _, tc := range []struct {
		name     string
		vars     []string
		varFiles []string
		env      map[string]string
		want     string // "" for accepted
	}{
		{"missing sensitive", nil, nil, env, "the sensitive variables bmc_password are not stored in the plan"},
		{"by -var", []string{"bmc_password=s3cret-value"}, nil, env, ""},
		{"by -var-file", nil, []string{varFile}, env, ""},
		{"unparsable -var-file", nil, []string{broken}, env, "the -var-file " + broken + " cannot be read or parsed: "},
		{"missing -var-file", nil, []string{filepath.Join(dir, "none.hcl")}, env, "cannot be read or parsed: Failed to read variables file"},
		{"by environment", nil, nil, map[string]string{"VAULT_TOKEN": "t", "RACKFORM_VAR_bmc_password": "x"}, ""},
		{"env() unset", []string{"bmc_password=x"}, nil, nil, "the configuration reads the environment variables VAULT_TOKEN"},
		{"non-sensitive -var", []string{"bmc_password=x", "user=root"}, nil, env, "-var user: the variable is not sensitive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckInputs(p, tc.vars, tc.varFiles, envOf(tc.env))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret-value") {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}

// TestLoadSnapshot: the configuration comes from the plan, not the working
// directory; the plan's non-sensitive values win over anything given now;
// the sensitive one comes from -var.
func TestLoadSnapshot(t *testing.T) {
	work := t.TempDir()
	// A working-directory copy that differs from what was reviewed.
	if err := os.WriteFile(filepath.Join(work, "main.rf.hcl"), []byte(strings.ReplaceAll(snapConfig, "var.user", `"changed"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{
		Config: plan.Snapshot{Dir: work, Files: []plan.File{{Name: "main.rf.hcl", Content: snapConfig}}},
		Inputs: plan.Inputs{Variables: map[string]any{"user": "ops"}, Sensitive: []string{"bmc_password"}},
	}
	cfg, loader, cleanup, diags := LoadSnapshot(p, []string{"bmc_password=pw-from-cli"}, nil, envOf(map[string]string{"RACKFORM_VAR_user": "env-user"}))
	defer cleanup()
	if diags.HasErrors() {
		t.Fatalf("%s", diags.Error())
	}
	_ = loader
	pr := cfg.Provider("redfish")
	if pr == nil {
		t.Fatal("no provider")
	}
	raw, err := ctyjson.Marshal(pr.Attrs, pr.Attrs.Type())
	if err != nil {
		t.Fatal(err)
	}
	got := string(raw)
	if !strings.Contains(got, `"username":"ops"`) || !strings.Contains(got, `"password":"pw-from-cli"`) {
		t.Fatalf("provider attributes %s: want the plan's user and the -var password", got)
	}
}

const snapDataConfig = `locals {
  inv = csvdecode(file("inventory.csv"))
}
release "r" {
  version = "4.6.1"
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bios.bin"
    match {
      id = "BIOS"
    }
  }
}
cluster "lab" {
  release = release.r
  rack "r1" {
    server "inv" {
      for_each = { for s in local.inv : s.name => s }
      bmc      = each.value.bmc
      role     = "control_plane"
    }
  }
}
`

const snapInventory = "name,bmc\ncp,https://127.0.0.1:18443\ncp2,https://127.0.0.2:18443\ncp3,https://127.0.0.3:18443\n"

// TestLoadSnapshotDataFiles: the inventory comes from the plan even when
// the plan's configuration directory holds another one, and a plan
// without it (format 1.0) fails naming it instead of reading the disk.
func TestLoadSnapshotDataFiles(t *testing.T) {
	work := t.TempDir()
	for name, src := range map[string]string{
		"main.rf.hcl":   snapDataConfig,
		"inventory.csv": "name,bmc\nother,https://127.0.0.9:18443\nother2,https://127.0.0.8:18443\nother3,https://127.0.0.7:18443\n",
	} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work) // the working directory too
	p := &plan.Plan{Config: plan.Snapshot{
		Dir:       work,
		Files:     []plan.File{plan.NewFile("main.rf.hcl", []byte(snapDataConfig))},
		DataFiles: []plan.File{plan.NewFile("inventory.csv", []byte(snapInventory))},
	}}
	cfg, _, cleanup, diags := LoadSnapshot(p, nil, nil, nil)
	defer cleanup()
	if diags.HasErrors() {
		t.Fatalf("%s", diags.Error())
	}
	var got []string
	for _, s := range cfg.Servers() {
		got = append(got, s.Name+" "+s.BMC)
	}
	if len(got) != 3 || got[0] != "cp https://127.0.0.1:18443" {
		t.Fatalf("servers %v, want the plan's inventory (cp)", got)
	}

	p.Config.DataFiles = nil
	_, _, cleanup2, diags := LoadSnapshot(p, nil, nil, nil)
	defer cleanup2()
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "inventory.csv is not in the plan's configuration snapshot") {
		t.Fatalf("diagnostics %v, want inventory.csv named as missing from the snapshot", diags)
	}

	// A snapshot file whose bytes do not match its hash is refused.
	bad := plan.NewFile("inventory.csv", []byte(snapInventory))
	bad.Content = strings.Replace(bad.Content, "cp", "xx", 1)
	p.Config.DataFiles = []plan.File{bad}
	_, _, cleanup3, diags := LoadSnapshot(p, nil, nil, nil)
	defer cleanup3()
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "does not hash to its sha256") {
		t.Fatalf("diagnostics %v, want the hash mismatch", diags)
	}
}

// TestPlanLock: external plugins are pinned to the plan's hashes, in
// memory: nothing is written that a killed apply would leave behind.
func TestPlanLock(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	p := &plan.Plan{Providers: []plan.Provider{
		{Name: "redfish", Source: "builtin", SHA256: "aa"},
		{Name: "acme", Source: "rackform-provider-acme", SHA256: strings.Repeat("b", 64)},
	}}
	lock := PlanLock(p)
	if len(lock.Providers) != 1 || lock.Providers["acme"].SHA256 != strings.Repeat("b", 64) {
		t.Errorf("pins %v, want acme only, at the plan's hash", lock.Providers)
	}
	spec, err := lock.Spec(plugin.Binary{Name: "acme", Path: "rackform-provider-acme"})
	if err != nil || spec.SHA256 != strings.Repeat("b", 64) {
		t.Errorf("Spec = %+v, %v; want acme at the plan's hash", spec, err)
	}
	if _, err := lock.Spec(plugin.Binary{Name: "other", Path: "rackform-provider-other"}); err == nil || !strings.Contains(err.Error(), "the plan") {
		t.Errorf("Spec of a provider the plan does not pin: %v, want a refusal naming the plan", err)
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("PlanLock left %d entries in the temporary directory", len(left))
	}
}
