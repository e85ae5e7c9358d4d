package redfish

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/sim"
)

// settableClock is the simulator's clock, moved by the test.
type settableClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *settableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *settableClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestTaskPollOfARestartingBMCSaysNoAnswer: one poll of a task monitor
// while the BMC restarts in the middle of the update (connections
// refused or reset) is marked SummaryNoAnswer, so the executor polling a
// task it resumed polls again instead of failing the update; once the
// BMC is back its answer (the task gone: 404) is a status, and an error
// the BMC answers (500) is never marked.
func TestTaskPollOfARestartingBMCSaysNoAnswer(t *testing.T) {
	clk := &settableClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	env := startSim(t, sim.Options{Now: clk.Now, Speed: 1}, []sim.BMCSpec{{Name: "s1", PowerOn: true, Firmware: map[string]string{"NIC": "1.0"}}}, nil, Options{})
	if err := env.fleet.SetFault("s1", sim.Fault{Kind: sim.FaultBMCRestartDuringUpdate}); err != nil {
		t.Fatal(err)
	}
	target := env.targets["s1"]
	ctx := context.Background()
	var monitor string
	_, d := env.p.Apply(ctx, &providers.ApplyRequest{Target: target, Step: providers.Step{Kind: providers.StepUpdate, Component: "nic",
		ImageURI: "http://127.0.0.1:9/nic-3.1.bin", ApplyTime: "Immediate", Method: providers.MethodSimpleUpdate}}, func(p *providers.Progress) error {
		if p.TaskURI != "" && monitor == "" {
			monitor = p.TaskURI
			// The apply is given up here, as by a provider that died
			// with the task recorded: the executor resumes by polling.
			return context.Canceled
		}
		return nil
	})
	if monitor == "" {
		t.Fatalf("the update reported no task monitor: %v", d.Err())
	}
	clk.Advance(6 * time.Minute) // halfway through the 10-minute flash: the BMC restarts
	st, d := env.p.Task(ctx, &providers.TaskRequest{Target: target, TaskURI: monitor})
	if !d.NoAnswer() {
		t.Fatalf("poll while the BMC restarts: %+v, %v; want a diagnostic marked %q", st, d, providers.SummaryNoAnswer)
	}
	if msg := d.Err().Error(); !strings.Contains(msg, "BMC "+strings.TrimSuffix(target.Endpoint, "/")) {
		t.Errorf("the diagnostic does not name the BMC: %s", msg)
	}
	clk.Advance(3 * time.Minute) // the reset is over
	st, d = env.p.Task(ctx, &providers.TaskRequest{Target: target, TaskURI: monitor})
	if d.HasErrors() || st.State != providers.TaskGone {
		t.Fatalf("poll once the BMC is back: %+v, %v; want the task gone (404)", st, d)
	}
	if err := env.fleet.SetFault("s1", sim.Fault{Kind: sim.FaultError, Count: 20}); err != nil {
		t.Fatal(err)
	}
	if _, d := env.p.Task(ctx, &providers.TaskRequest{Target: target, TaskURI: monitor}); !d.HasErrors() || d.NoAnswer() {
		t.Errorf("a BMC answering 500: %v; want an error not marked %q", d, providers.SummaryNoAnswer)
	}
}
