package redfish

import (
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/sim"
)

// TestWaitReadyAcceptsCritical: against a simulated BMC reporting health
// Critical, wait_ready waits (and times out saying so) unless the step
// accepts Critical, as it does for a server upgraded although Critical
// (rule 50); then it is ready, its observation carrying the health.
func TestWaitReadyAcceptsCritical(t *testing.T) {
	env := startSim(t, sim.Options{}, []sim.BMCSpec{{Name: "s1", PowerOn: true, Health: "Critical", Firmware: map[string]string{"BIOS": "2.0"}}}, nil, Options{})
	step := providers.Step{Kind: providers.StepWaitReady, Timeout: 200 * time.Millisecond,
		Expect: []providers.Expectation{{Component: "bios", Match: providers.Match{SoftwareID: "BIOS"}, Target: version.Target{Version: "2.0"}}}}
	_, d, _ := env.apply(t, "s1", step)
	if !d.HasErrors() || !strings.Contains(d.Err().Error(), "health is Critical") {
		t.Errorf("wait_ready of a Critical server: %v, want it not ready for its health", d.Err())
	}
	step.AcceptCritical = true
	res := env.mustApply(t, "s1", step)
	if res.Observation == nil || res.Observation.Health != "Critical" {
		t.Fatalf("result %+v, want an observation with health Critical", res)
	}
	// Still the versions: a Critical server at the wrong version is not ready.
	step.Expect[0].Target.Version = "3.0"
	if _, d, _ := env.apply(t, "s1", step); !d.HasErrors() || !strings.Contains(d.Err().Error(), "not at 3.0") {
		t.Errorf("wait_ready accepting Critical, BIOS not at target: %v", d.Err())
	}
}
