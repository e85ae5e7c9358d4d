package command

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
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
		{"by environment", nil, nil, map[string]string{"VAULT_TOKEN": "t", "RACKFORM_VAR_bmc_password": "x"}, ""},
		{"env() unset", []string{"bmc_password=x"}, nil, nil, "the configuration reads the environment variables VAULT_TOKEN"},
		{"non-sensitive -var", []string{"bmc_password=x", "user=root"}, nil, env, "-var user: the variable is not sensitive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkInputs(p, tc.vars, tc.varFiles, envOf(tc.env))
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
	cfg, loader, cleanup, diags := loadSnapshot(p, []string{"bmc_password=pw-from-cli"}, nil, envOf(map[string]string{"RACKFORM_VAR_user": "env-user"}))
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

// fakeProv records the targets it is given.
type fakeProv struct {
	providers.Provider
	got []providers.Target
}

func (f *fakeProv) Apply(_ context.Context, req *providers.ApplyRequest, _ func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	f.got = append(f.got, req.Target)
	return &providers.ApplyResult{}, nil
}

func (f *fakeProv) Task(_ context.Context, req *providers.TaskRequest) (*providers.TaskStatus, providers.Diagnostics) {
	f.got = append(f.got, req.Target)
	return &providers.TaskStatus{}, nil
}

func (f *fakeProv) Observe(_ context.Context, req *providers.ObserveRequest, _ func(*providers.Observation) error) providers.Diagnostics {
	f.got = append(f.got, req.Targets...)
	return nil
}

// TestCredentialed: the executor knows servers by plan address and BMC
// only; the wrapper adds each server's credentials from the configuration.
func TestCredentialed(t *testing.T) {
	f := &fakeProv{}
	creds := &providers.Credentials{Username: "u", Password: "p"}
	c := &credentialed{Provider: f, targets: map[string]providers.Target{"c/r/s1": {Name: "c/r/s1", Credentials: creds}}}
	ctx := context.Background()
	c.Apply(ctx, &providers.ApplyRequest{Target: providers.Target{Name: "c/r/s1", Endpoint: "http://x"}}, nil)
	c.Task(ctx, &providers.TaskRequest{Target: providers.Target{Name: "c/r/s1"}})
	c.Observe(ctx, &providers.ObserveRequest{Targets: []providers.Target{{Name: "c/r/s1"}, {Name: "c/r/other"}}}, nil)
	if len(f.got) != 4 {
		t.Fatalf("%d calls", len(f.got))
	}
	for i, tg := range f.got[:3] {
		if tg.Credentials != creds {
			t.Errorf("call %d: credentials not added: %+v", i, tg)
		}
	}
	if f.got[0].Endpoint != "http://x" {
		t.Errorf("endpoint changed: %q", f.got[0].Endpoint)
	}
	if f.got[3].Credentials != nil {
		t.Errorf("a server without its own credentials got some")
	}
}

func TestNextCommand(t *testing.T) {
	for _, tc := range []struct{ dir, plan, in, want string }{
		{".rackform", "plan.json", "rackform continue", "rackform continue"},
		{"st", "plan.json", "rackform continue", "rackform continue -state-dir st"},
		{"st", "", "rackform approve stage.a.gate.b", "rackform approve -state-dir st stage.a.gate.b"},
		{"st", "p.json", "rackform apply PLANFILE", "rackform apply -state-dir st p.json"},
		{".rackform", "-allow-unsigned p.json", "rackform apply PLANFILE", "rackform apply -allow-unsigned p.json"},
		{".rackform", "", "rackform apply PLANFILE", "rackform continue"},
		{"st", "", "rackform skip x", "rackform skip x"},
		{"st", "p.json", "resume the run: rackform apply PLANFILE", "resume the run: rackform apply -state-dir st p.json"},
		{".rackform", "", "resume the run: rackform apply PLANFILE", "resume the run: rackform continue"},
		{"st", "", "again: rackform plan -target a -out r.plan && rackform apply r.plan", "again: rackform plan -target a -out r.plan && rackform apply -state-dir st r.plan"},
	} {
		if got := nextCommand(tc.dir, tc.plan)(tc.in); got != tc.want {
			t.Errorf("nextCommand(%q, %q)(%q) = %q, want %q", tc.dir, tc.plan, tc.in, got, tc.want)
		}
	}
}
