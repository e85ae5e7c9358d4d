package run

import (
	"context"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/providers"
)

// StartPinned starts the providers the run's configuration cfg uses
// (StartProviders with start), refuses a plugin whose binary is not the
// one the plan pinned (CheckPinned), puts each under a supervisor that
// restarts it from that binary when it dies (Providers.Supervise; note
// tells the operator) and gives the targets the executor passes their
// credentials (WithCredentials): provs are the providers for Drive. The
// caller closes running, also when diags has errors or err is set.
func (r *Run) StartPinned(ctx context.Context, cfg *config.Config, start ProviderStarter, note func(string)) (running *Providers, provs map[string]providers.Provider, diags hcl.Diagnostics, err error) {
	running, diags = StartProviders(ctx, cfg, start)
	if diags.HasErrors() {
		return running, nil, diags, nil
	}
	for _, info := range running.Info {
		if err := r.CheckPinned(info); err != nil {
			return running, nil, diags, err
		}
	}
	running.Supervise(start, r.PinnedSHA256, note)
	return running, WithCredentials(running.ByName, cfg), diags, nil
}

// Drive is what a command wired for the run's executor: the providers
// (started, supervised, credentialed: Supervise, WithCredentials), where
// its events go and who runs it.
type Drive struct {
	Providers map[string]providers.Provider
	Events    executor.Sink
	// Holder names this process in the lock and the journal; "" is
	// user@host.
	Holder string
	// Poll is how often control records from other processes (stop, skip,
	// approve) are read; 0 is every second.
	Poll time.Duration
}

// Executor is the executor that drives r with d, as r was opened: its
// clock, -lock-timeout, apply -join (a worker beside the apply holding
// the lock, postgres only) and, for continue (Options.Recheck), the
// pending clusters whose release is now available (AvailableNow; why the
// others stay pending goes to the operator as notes).
func (r *Run) Executor(d Drive) (*executor.Executor, error) {
	var available map[string]string
	if r.o.Recheck {
		var notes []string
		available, notes = AvailableNow(r.Plan)
		for _, n := range notes {
			r.o.note(n)
		}
	}
	poll := d.Poll
	if poll <= 0 {
		poll = time.Second
	}
	return executor.New(executor.Options{
		Plan: r.Plan, PlanSHA256: r.SHA256, PlanFile: r.File,
		Providers: d.Providers, Backend: r.Backend.Backend, Clock: r.o.Clock,
		Events:      d.Events,
		Holder:      d.Holder,
		LockTimeout: r.o.LockTimeout,
		Join:        r.o.Join && r.Backend.PG != nil,
		// Control records from other processes (stop, skip, approve) are
		// noticed within a second.
		PollInterval: poll,
		Available:    available,
	})
}

// Clock is the clock the run is judged and driven by.
func (r *Run) Clock() executor.Clock { return r.o.Clock }
