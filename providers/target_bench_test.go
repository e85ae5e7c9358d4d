package providers

import (
	"fmt"
	"testing"

	"github.com/rackform/rackform/config/version"
)

// BenchmarkStepAtTarget: the executor's check of an update step with a
// pattern scheme against eight GPUs, as it runs on every check: the
// step's target was parsed, its pattern compiled, once when the plan was
// read, and each check reads only the reported versions.
func BenchmarkStepAtTarget(b *testing.B) {
	const hpe = `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)(?: \(.*\))?`
	tg, err := version.ParseTarget("U30 v2.54", version.Pattern, hpe)
	if err != nil {
		b.Fatal(err)
	}
	st := Step{Kind: StepUpdate, Match: Match{SoftwareID: "gpu", Count: 8}, Target: tg}
	var cs []Component
	for i := range 8 {
		cs = append(cs, Component{ID: fmt.Sprintf("GPU%d", i), SoftwareID: "gpu", Version: "U30 v2.54 (03/01/2023)", Updateable: true})
	}
	b.ReportAllocs()
	for b.Loop() {
		at, _, err := st.Match.AtTarget(st.Target, cs)
		if !at || err != nil {
			b.Fatal(at, err)
		}
	}
}
