package command

import (
	"context"
	"flag"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/executor/state"
)

// controlFlags name the run skip and status act on: the run of -plan's
// plan wherever its state is, else the one the state backend (the state
// directory, or PostgreSQL when RACKFORM_PG_CONN_STR is set) records.
type controlFlags struct {
	stateDir optionalString
	planFile string
	runID    string
}

// register adds -state-dir, -plan (planUsage) and -run to fs.
func (f *controlFlags) register(fs *flag.FlagSet, planUsage string) {
	f.stateDir = optionalString{value: state.DefaultDir}
	fs.Var(&f.stateDir, "state-dir", "The state `DIR` of the run (with -plan: default the state directory the plan records).")
	fs.StringVar(&f.planFile, "plan", "", planUsage)
	runFlag(fs, &f.runID)
}

// open opens the run the flags name, with an executor without providers
// that records requests and reads state (run.Run.Control). The caller
// closes it.
func (f *controlFlags) open(ctx context.Context, m *Meta) (*run.Run, error) {
	if f.planFile != "" {
		return run.OpenPlanForControl(ctx, m.runEnv(), f.planFile, f.stateDir.value, f.stateDir.set)
	}
	return run.OpenForControl(ctx, m.runEnv(), f.stateDir.value, f.runID)
}
