package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// bootTimes boots each of n BMCs' hosts twice and returns how long every
// boot took on the simulated clock, to the second.
func bootTimes(t *testing.T, timings Timings, n int) []time.Duration {
	t.Helper()
	clk := newClock()
	var specs []BMCSpec
	for i := range n {
		specs = append(specs, BMCSpec{Name: fmt.Sprintf("s%d", i)})
	}
	f := start(t, Options{Now: clk.Now, Timings: timings}, specs...)
	var out []time.Duration
	for round := range 2 {
		for _, b := range f.BMCs() {
			if round > 0 {
				call(t, "POST", b.URL+"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"}, true)
			}
			call(t, "POST", b.URL+"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, true)
			var took time.Duration
			for ; took < 10*timings.Boot; took += time.Second {
				if p, _ := f.PowerState(b.Name); p == "On" {
					break
				}
				clk.Advance(time.Second)
			}
			out = append(out, took)
		}
	}
	return out
}

// Jitter spreads each operation within its bounds, differently per BMC and
// per operation, and the same seed gives the same times.
func TestTimingsJitter(t *testing.T) {
	const boot = 100 * time.Second
	jittered := Timings{Boot: boot, Jitter: 0.3, JitterSeed: 7}
	got := bootTimes(t, jittered, 8)
	distinct := map[time.Duration]bool{}
	for _, d := range got {
		distinct[d] = true
		if d < 70*time.Second || d > 131*time.Second {
			t.Errorf("a boot took %s, outside 100s ± 30%%", d)
		}
	}
	if len(distinct) < 5 {
		t.Errorf("16 jittered boots took only %d distinct times: %v", len(distinct), got)
	}
	if again := bootTimes(t, jittered, 8); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("the same seed gave other times:\n%v\n%v", got, again)
	}
	other := jittered
	other.JitterSeed = 8
	if differ := bootTimes(t, other, 8); fmt.Sprint(differ) == fmt.Sprint(got) {
		t.Errorf("another seed gave the same times: %v", got)
	}
	for _, d := range bootTimes(t, Timings{Boot: boot}, 2) {
		if d != boot {
			t.Errorf("without jitter a boot took %s, want %s", d, boot)
		}
	}
}

func TestTimingsJitterRefused(t *testing.T) {
	for _, j := range []float64{-0.1, 0.95, 2} {
		_, err := New(Options{Timings: Timings{Jitter: j}}, []BMCSpec{{Name: "s1", Addr: "127.0.0.1:0"}})
		if err == nil || !strings.Contains(err.Error(), "want a fraction from 0 to 0.9") {
			t.Errorf("jitter %v: %v", j, err)
		}
	}
}
