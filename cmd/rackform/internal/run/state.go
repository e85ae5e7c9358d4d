package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
)

// PlanState is where the run of a plan written to out keeps its state,
// for plan to record (format 1.5): the backend the configuration selects,
// and for the local one the state directory stateDir (plan's -state-dir;
// default .rackform in plan's working directory) relative to the plan
// file's directory, so apply finds it from any working directory however
// the plan file is named. An absolute stateDir is recorded as given. A
// relative one is recorded only when the plan file and the state
// directory are both inside plan's working directory: the path between
// them then names only directories the user named, never the planning
// machine's own (a plan is archived and reviewed). Otherwise the plan
// records none (note says so) and apply uses .rackform where it runs.
func PlanState(be *config.Backend, out, stateDir string) (st *plan.State, note string, err error) {
	if be != nil && be.Type == config.BackendPostgres {
		return &plan.State{Backend: plan.BackendPostgres, LeaseDuration: plan.Duration(be.LeaseDuration)}, "", nil
	}
	st = &plan.State{Backend: plan.BackendLocal}
	if stateDir == "" {
		stateDir = state.DefaultDir
	}
	if filepath.IsAbs(stateDir) {
		st.Dir = filepath.ToSlash(filepath.Clean(stateDir))
		return st, "", nil
	}
	if out == "" {
		return st, "", nil
	}
	planDir := filepath.Dir(out)
	if !local(planDir) || !local(stateDir) {
		return st, fmt.Sprintf("the plan does not record where its run's state is, because the plan file %s or the state directory %s is outside this directory (the path between them would name this machine's directories): apply it from this directory, or give apply -state-dir", out, stateDir), nil
	}
	rel, err := filepath.Rel(filepath.Clean(planDir), filepath.Clean(stateDir))
	if err != nil {
		return nil, "", err
	}
	st.Dir = filepath.ToSlash(rel)
	return st, "", nil
}

// local reports whether the relative path p stays inside the working
// directory.
func local(p string) bool {
	return filepath.Clean(p) == "." || filepath.IsLocal(p)
}

// StateDir is the local state directory of the run of p, read from the
// plan file planFile: flagDir when -state-dir was given (flagSet), else
// the directory the plan records (format 1.5), relative to the plan
// file's own directory; else .rackform in the working directory.
func StateDir(p *plan.Plan, planFile, flagDir string, flagSet bool) string {
	switch {
	case flagSet:
		return flagDir
	case p.State == nil || p.State.Backend != plan.BackendLocal || p.State.Dir == "":
		return state.DefaultDir
	}
	d := filepath.FromSlash(p.State.Dir)
	if filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	return filepath.Join(filepath.Dir(planFile), d)
}

// selectsPostgres reports whether the plan's run keeps its state in
// PostgreSQL: the plan says so (format 1.5), or, in older plans, the
// configuration in its snapshot does.
func selectsPostgres(p *plan.Plan) bool {
	pg, _, _, err := planStore(p)
	return err == nil && pg
}

// displayDir is dir as the operator would type it from the working
// directory: relative when it is inside the working directory's parent,
// else absolute.
func displayDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil || strings.HasPrefix(filepath.ToSlash(rel), "../../") || rel == filepath.Join("..", "..") {
		return abs
	}
	return rel
}
