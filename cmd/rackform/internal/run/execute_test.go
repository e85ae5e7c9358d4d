package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/providertest"
)

// continue (Options.Recheck) reads the catalog again when it makes the
// run's executor and tells the operator why a pending cluster stays
// pending; apply does not read it.
func TestExecutorRechecksPendingReleasesForContinue(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalogWith(`["east"]`, "https://127.0.0.1/os.iso")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, recheck := range []bool{true, false} {
		var notes []string
		o := Options{Recheck: recheck, Env: Env{Note: func(s string) { notes = append(notes, s) }}}.withDefaults()
		p := pendingPlan(dir, "catalog.json", "")
		p.Run.Stages[0].ID, p.Run.Stages[0].Name = "stage.main", "main"
		p.Run.Stages[0].Groups[0].ID, p.Run.Stages[0].Groups[0].Name = "group.all", "all"
		r := &Run{Plan: p, SHA256: "0011", Backend: &Backend{Backend: state.NewMemory()}, o: o}
		if _, err := r.Executor(Drive{}); err != nil {
			t.Fatalf("recheck %v: %v", recheck, err)
		}
		want := 0
		if recheck {
			want = 1
		}
		if len(notes) != want {
			t.Errorf("recheck %v: notes %q, want %d", recheck, notes, want)
		}
	}
}

const pinnedConfig = `provider "redfish" {
  username = "u"
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
    server "s1" {
      bmc  = "https://127.9.1.1:8443"
      role = "compute"
      credentials {
        username = "u"
        password = env("RF_TEST_PW")
      }
    }
  }
}
`

// recorder is a provider that records the targets it is asked to apply
// to.
type recorder struct {
	providers.Provider
	got []providers.Target
}

func (f *recorder) Apply(_ context.Context, req *providers.ApplyRequest, _ func(*providers.Progress) error) (*providers.ApplyResult, providers.Diagnostics) {
	f.got = append(f.got, req.Target)
	return &providers.ApplyResult{}, nil
}

// The providers a run is driven with are those the plan pinned, under a
// supervisor, and give each target its credentials; a plugin started from
// another binary is refused.
func TestStartPinned(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(pinnedConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.NewLoader(config.LoadOptions{Getenv: envOf(map[string]string{"RF_TEST_PW": "secret-pw"})}).Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	pin := strings.Repeat("a", 64)
	r := &Run{Plan: &plan.Plan{Providers: []plan.Provider{{Name: "redfish", Source: "builtin", SHA256: pin}}}}
	var rec *recorder
	hash := pin
	start := func(context.Context, *config.Provider) (providers.Provider, plan.Provider, func(), error) {
		rec = &recorder{Provider: providertest.NewFake()}
		return rec, plan.Provider{Name: "redfish", Source: "builtin", SHA256: hash}, func() {}, nil
	}
	ctx := context.Background()
	running, provs, diags, err := r.StartPinned(ctx, cfg, start, func(string) {})
	defer running.Close()
	if diags.HasErrors() || err != nil {
		t.Fatalf("the pinned plugin: %v %v", diags, err)
	}
	if _, ok := running.ByName["redfish"].(*Supervised); !ok {
		t.Errorf("the provider is not supervised: %T", running.ByName["redfish"])
	}
	if _, d := provs["redfish"].Apply(ctx, &providers.ApplyRequest{Target: providers.Target{Name: "lab/r1/s1"}}, nil); d.HasErrors() {
		t.Fatal(d.Err())
	}
	if len(rec.got) != 1 || rec.got[0].Credentials == nil || rec.got[0].Credentials.Password != "secret-pw" {
		t.Errorf("the target reached the provider without its credentials: %+v", rec.got)
	}

	hash = strings.Repeat("b", 64)
	running2, _, _, err := r.StartPinned(ctx, cfg, start, func(string) {})
	defer running2.Close()
	if err == nil || !strings.Contains(err.Error(), `provider "redfish": the started plugin hashes to bbbbbbbbbbbb, but the plan was made with aaaaaaaaaaaa`) {
		t.Errorf("another binary: %v", err)
	}
}
