package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
)

// planSecretCase writes main.rf.hcl (base3 edited by edit) and extra
// files, loads it with BMC_PASSWORD=password and plans it.
func planSecretCase(t *testing.T, password string, edit func(string) string, files map[string]string) hcl.Diagnostics {
	t.Helper()
	dir := writeTemp(t, edit(base3))
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: func(name string) string {
		if name == "BMC_PASSWORD" {
			return password
		}
		return ""
	}}).Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	_, diags = planWith(t, cfg, nil, nil)
	return diags
}

// TestSecretEqualToALiteralIsNotALeak: a password that happens to equal a
// value the configuration writes as its own (the user name "admin", a
// label, a name, an inventory cell) does not stop the plan: the plan holds
// that value because the configuration does, not the secret.
func TestSecretEqualToALiteralIsNotALeak(t *testing.T) {
	edit := func(src string) string {
		src = strings.Replace(src, `rack "a" {`, `rack "a" {
    labels = { team = "admin" }`, 1)
		return src + `
locals {
  inventory = csvdecode(file("inventory.csv"))
  settings  = jsondecode(file("settings.json"))
}
`
	}
	diags := planSecretCase(t, "admin", edit, map[string]string{
		"inventory.csv": "name,owner\ns1,admin\n",
		"settings.json": `{"operator": "admin"}`,
	})
	if diags.HasErrors() {
		t.Fatalf("password equal to the user name: %s", diags.Error())
	}
}

// TestSecretCopiedIntoTheConfigurationIsRefused: the secret's value
// written anywhere but as a value of its own is a copy of it, and the plan
// would hold it: refused, naming the file and line, never the value.
func TestSecretCopiedIntoTheConfigurationIsRefused(t *testing.T) {
	const pw = "hunter2-env-secret"
	tests := []struct {
		name  string
		edit  func(string) string
		files map[string]string
		where string
	}{
		{"in a comment", func(s string) string {
			return strings.Replace(s, `  password = env("BMC_PASSWORD")`, `  password = env("BMC_PASSWORD") # it is `+pw, 1)
		}, nil, "main.rf.hcl line 4"},
		{"inside a longer string", func(s string) string {
			return strings.Replace(s, `rack "a" {`, `rack "a" {
    labels = { note = "login admin/`+pw+`" }`, 1)
		}, nil, "main.rf.hcl line 20"},
		{"in a heredoc", func(s string) string {
			return s + "locals {\n  notes = <<EOT\n" + pw + "\nEOT\n}\n"
		}, nil, "main.rf.hcl line 36"},
		{"in a data file's text", func(s string) string {
			return s + "locals {\n  notes = file(\"notes.txt\")\n}\n"
		}, map[string]string{"notes.txt": "BMC login\npassword: " + pw + "\n"}, "notes.txt line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diags := planSecretCase(t, pw, tt.edit, tt.files)
			if diff := cmp.Diff([]string{"Secret in the configuration text"}, errorSummaries(diags)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%s", diff, diags.Error())
			}
			d := diags[len(diags)-1]
			for _, want := range []string{`The value of attribute password of provider "redfish" appears in ` + tt.where + "."} {
				if !strings.Contains(d.Detail, want) {
					t.Errorf("detail %q lacks %q", d.Detail, want)
				}
			}
			if strings.Contains(diags.Error(), pw) || d.Subject != nil {
				t.Errorf("the error shows the secret or a snippet of it: %s", diags.Error())
			}
		})
	}
}

// TestSensitiveDefaultIsALeakEvenAsAWholeLiteral: the default of a
// sensitive variable is where the secret is defined, so its literal is
// the secret, not a value that happens to equal it.
func TestSensitiveDefaultIsALeakEvenAsAWholeLiteral(t *testing.T) {
	diags := planSecretCase(t, "admin", func(s string) string {
		return s + "variable \"token\" {\n  type      = string\n  sensitive = true\n  default   = \"root-token\"\n}\n"
	}, nil)
	if got := errorSummaries(diags); len(got) != 1 || !strings.Contains(diags.Error(), "sensitive variable token appears in main.rf.hcl line 37") {
		t.Errorf("errors %v: %s", got, diags.Error())
	}
}
