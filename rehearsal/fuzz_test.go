package rehearsal

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseScenario: a scenario file, whatever its bytes, parses to
// diagnostics or a scenario, never a panic, and resolving it against a
// plan's servers does neither.
func FuzzParseScenario(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "scenarios", "*.hcl"))
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte(`fault "slow" { servers = ["canary/c01/c01-s01"] }`))
	f.Add([]byte("random {\n  fail = { update = 0.5 }\n}\n"))
	targets := PlanTargets(fleetPlan())
	f.Fuzz(func(t *testing.T, src []byte) {
		sc, diags := ParseScenario(src, "fuzz.hcl")
		if sc == nil {
			t.Fatalf("no scenario (diagnostics %v)", diags)
		}
		faults, _ := sc.Resolve(targets, start)
		if faults == nil {
			t.Fatal("no faults")
		}
	})
}
