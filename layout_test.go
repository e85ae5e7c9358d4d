package rackform

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rackform/rackform"

// TestImportRules enforces docs/architecture.md: imports point one way. Each rule
// names packages (a trailing "/..." includes sub-packages) and the imports
// that none of their transitive dependencies may contain.
func TestImportRules(t *testing.T) {
	rules := []struct {
		pkgs      string
		forbidden []string
		why       string
	}{
		{"providers/...", []string{"config!", "config/", "planner", "executor", "cmd"}, "providers speak only the wire contract (and compare versions with config/version)"},
		{"executor/...", []string{"config!", "config/", "planner!", "providers/plugin", "providers/redfish", "providers/sim", "github.com/hashicorp/go-plugin", "cmd", "internal/vclock"}, "the executor needs only the plan and the provider contract (a virtual clock comes in through Options.Clock; only tests import internal/vclock)"},
		{"planner/...", []string{"executor", "providers/plugin", "providers/redfish", "providers/sim", "github.com/hashicorp/go-plugin", "github.com/stmcginnis/gofish", "cmd"}, "the planner gets provider factories injected"},
		{"planner/plan", []string{"config!", "config/", "planner!"}, "plans are pure data (they compare versions with config/version, the leaf every layer shares)"},
		{"config/...", []string{"planner", "executor", "providers/plugin", "providers/redfish", "providers/sim", "cmd"}, "config is source structure only"},
		{"providers/sim/...", []string{"providers/redfish", "github.com/stmcginnis/gofish"}, "the simulator is an independent implementation of Redfish"},
		{"providers", []string{"github.com/hashicorp/go-plugin", "google.golang.org/grpc"}, "the contract is plain data"},
		{"config/version", []string{"config!", "config/", "planner", "executor", "providers", "cmd"}, "version comparison is a leaf every layer may share"},
		{"rehearsal/...", []string{"config!", "config/", "planner!", "providers/plugin", "providers/redfish", "providers/sim", "github.com/hashicorp/go-plugin", "github.com/stmcginnis/gofish", "cmd"}, "a rehearsal runs the plan's own executor against its own simulated fleet: it needs the plan, the executor and the provider contract, never the configuration, the planner or a real provider"},
		{"rehearsal/schedule", []string{"executor", "planner", "providers", "config", "internal", "cmd"}, "the schedule is pure data, for any view to draw"},
		{"executor/rollout", []string{"executor!", "executor/state", "executor/postgres", "executor/history", "executor/executortest", "executor/backendtest", "rehearsal", "providers/plugin", "providers/redfish", "providers/sim", "config!", "config/", "planner!", "internal", "cmd"}, "the rollout rules are decisions over the plan's data and the clock, shared by the executor and rehearsal: they import only the plan (and what it imports)"},
	}
	for _, r := range rules {
		t.Run(r.pkgs, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "-test=false", "-f", "{{.ImportPath}}", "./"+r.pkgs).CombinedOutput()
			if err != nil {
				if strings.Contains(string(out), "matched no packages") || strings.Contains(string(out), "no Go files") {
					t.Skipf("no packages yet for %s", r.pkgs)
				}
				t.Fatalf("go list: %v\n%s", err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, f := range r.forbidden {
					if forbids(f, dep) {
						t.Errorf("%s depends on %s: forbidden (%s)", r.pkgs, dep, r.why)
					}
				}
			}
		})
	}
}

// forbids reports whether dep is matched by rule f: a path of this module
// (with its sub-packages, or exactly when f ends in "!"; only its
// sub-packages, except config/version, when f ends in "/") or an external
// module path prefix. config/version is the one package below config that
// every layer may import: the scheme-aware version comparison.
func forbids(f, dep string) bool {
	if strings.HasSuffix(f, "/") {
		f = module + "/" + f
		return strings.HasPrefix(dep, f) && dep != module+"/config/version"
	}
	exact := strings.HasSuffix(f, "!")
	f = strings.TrimSuffix(f, "!")
	if !strings.Contains(f, ".") { // a path inside this module
		f = module + "/" + f
	}
	if exact {
		return dep == f
	}
	return dep == f || strings.HasPrefix(dep, f+"/")
}

func TestForbids(t *testing.T) {
	cases := []struct {
		rule, dep string
		want      bool
	}{
		{"planner", module + "/planner", true},
		{"planner", module + "/planner/plan", true},
		{"planner!", module + "/planner/plan", false},
		{"planner!", module + "/planner", true},
		{"config", module + "/configx", false},
		{"github.com/hashicorp/go-plugin", "github.com/hashicorp/go-plugin/internal/grpcmux", true},
		{"config/", module + "/config/version", false},
		{"config/", module + "/config/other", true},
		{"config/", module + "/config", false},
		{"config!", module + "/config", true},
	}
	for _, c := range cases {
		if got := forbids(c.rule, c.dep); got != c.want {
			t.Errorf("forbids(%q, %q) = %v, want %v", c.rule, c.dep, got, c.want)
		}
	}
}
