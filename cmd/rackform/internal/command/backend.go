package command

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/postgres"
	"github.com/rackform/rackform/planner/plan"
)

// EnvPGSchema names the PostgreSQL schema of the postgres backend's tables
// (default "rackform"); like the connection string, every job of a run
// sets the same.
const EnvPGSchema = "RACKFORM_PG_SCHEMA"

// stateBackend is an open state backend: the local state directory or
// PostgreSQL.
type stateBackend struct {
	executor.Backend
	close func() error
	// where names it in messages: "the state directory st", "the
	// PostgreSQL state backend (database … as user …)".
	where string
	// dir is the local state directory ("" for postgres): commands printed
	// to go on name it.
	dir string
	pg  *postgres.Backend
}

func (b *stateBackend) Close() error { return b.close() }

func openLocal(dir string) (*stateBackend, error) {
	d, err := openState(dir)
	if err != nil {
		return nil, err
	}
	return &stateBackend{Backend: d, close: d.Close, where: "the state directory " + dir, dir: dir}, nil
}

func (m *Meta) pgConnStr() string {
	if m.Getenv == nil {
		return ""
	}
	return strings.TrimSpace(m.Getenv(config.EnvPGConnStr))
}

func openPostgres(ctx context.Context, m *Meta) (*stateBackend, error) {
	b, err := postgres.Open(ctx, postgres.Options{
		ConnString: m.pgConnStr(),
		Schema:     strings.TrimSpace(m.Getenv(EnvPGSchema)),
		Warn:       func(s string) { fmt.Fprintf(m.Stderr, "Warning: %s\n", s) },
	})
	if err != nil {
		return nil, err
	}
	return &stateBackend{Backend: b, close: b.Close, where: b.Where(), pg: b}, nil
}

// openControlBackend opens the backend of the commands that run without a
// configuration (continue, approve, skip, stop, status, force-unlock):
// PostgreSQL when RACKFORM_PG_CONN_STR is set, else the state directory.
func openControlBackend(ctx context.Context, m *Meta, dir string) (*stateBackend, error) {
	if m.pgConnStr() != "" {
		return openPostgres(ctx, m)
	}
	return openLocal(dir)
}

// planBackend is the backend the plan's configuration selects (its
// rackform settings block, in the plan's snapshot); nil: the local one.
func planBackend(p *plan.Plan) (*config.Backend, error) {
	files := map[string][]byte{}
	for _, f := range p.Config.Files {
		b, err := f.Bytes()
		if err != nil {
			return nil, err
		}
		files[f.Name] = b
	}
	be, diags := config.ParseBackend(files)
	if diags.HasErrors() {
		return nil, fmt.Errorf("the plan's backend settings: %s", diags.Error())
	}
	return be, nil
}

// openPlanBackend opens the backend apply uses for p: the one its
// configuration selects.
func openPlanBackend(ctx context.Context, m *Meta, p *plan.Plan, dir string) (*stateBackend, error) {
	be, err := planBackend(p)
	if err != nil {
		return nil, err
	}
	if be != nil && be.Type == config.BackendPostgres {
		if m.pgConnStr() == "" {
			return nil, fmt.Errorf("the plan's configuration keeps the state in PostgreSQL (backend \"postgres\" at %s), but %s is not set: set it to the database's connection string (a libpq URL or key=value string)", be.Range.String(), config.EnvPGConnStr)
		}
		sb, err := openPostgres(ctx, m)
		if err != nil {
			return nil, err
		}
		sb.pg.SetLease(be.LeaseDuration)
		return sb, nil
	}
	if m.pgConnStr() != "" {
		fmt.Fprintf(m.Stderr, "Note: %s is set, but the plan's configuration selects no postgres backend (rackform { backend \"postgres\" {} }): the state is kept in the state directory %s.\n", config.EnvPGConnStr, dir)
	}
	return openLocal(dir)
}

// setPlanLease gives a postgres backend opened without a configuration
// the lease the plan's configuration names.
func (b *stateBackend) setPlanLease(p *plan.Plan) {
	if b.pg == nil {
		return
	}
	if be, err := planBackend(p); err == nil && be != nil && be.Type == config.BackendPostgres {
		b.pg.SetLease(be.LeaseDuration)
	}
}

// loadStoredPlan loads a plan the backend stores, verified like a plan
// file.
func loadStoredPlan(ctx context.Context, b *stateBackend, sha string) (*plan.Plan, []byte, error) {
	file, err := b.LoadPlan(ctx, sha)
	if err != nil {
		return nil, nil, fmt.Errorf("loading plan %s from %s: %w", shortSHA(sha), b.where, err)
	}
	if got := plan.SHA256(file); got != sha {
		return nil, nil, fmt.Errorf("the stored plan %s in %s does not hash to its name (%s); it was modified", shortSHA(sha), b.where, shortSHA(got))
	}
	p, err := plan.Decode(file)
	if err != nil {
		return nil, nil, fmt.Errorf("the stored plan %s is not usable: %w", shortSHA(sha), err)
	}
	return p, file, nil
}

// chooseRun picks the run a command without a plan file acts on. In the
// local state directory: the plan applied last (-run must be empty or
// match it). In PostgreSQL, which several rollouts may share: the run
// whose plan SHA-256 starts with runID; without one, the only unfinished
// run (or, with none unfinished, the plan applied last); several
// unfinished runs are listed and -run is required.
func chooseRun(ctx context.Context, b *stateBackend, runID string) (*plan.Plan, string, []byte, error) {
	runID = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(runID), "sha256:"))
	current := func() (*plan.Plan, string, []byte, error) {
		sha, err := b.CurrentPlan(ctx)
		if errors.Is(err, executor.ErrNotFound) {
			return nil, "", nil, fmt.Errorf("%s holds no plan; run rackform apply PLANFILE first", b.where)
		}
		if err != nil {
			return nil, "", nil, err
		}
		if runID != "" && !strings.HasPrefix(sha, runID) {
			return nil, "", nil, fmt.Errorf("%s holds the run of plan %s, not %s", b.where, shortSHA(sha), runID)
		}
		p, file, err := loadStoredPlan(ctx, b, sha)
		return p, sha, file, err
	}
	if b.pg == nil {
		return current()
	}
	runs, err := b.pg.Runs(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	if runID != "" {
		var match []string
		for _, r := range runs {
			if strings.HasPrefix(r.PlanSHA256, runID) {
				match = append(match, r.PlanSHA256)
			}
		}
		switch len(match) {
		case 0:
			return nil, "", nil, fmt.Errorf("%s has no run of a plan whose SHA-256 starts with %q; %s", b.where, runID, listRuns(ctx, b, runs))
		case 1:
			p, file, err := loadStoredPlan(ctx, b, match[0])
			return p, match[0], file, err
		default:
			return nil, "", nil, fmt.Errorf("-run %s matches %d runs; give more of the plan's SHA-256: %s", runID, len(match), listRuns(ctx, b, runs))
		}
	}
	type open struct {
		sha, state string
		p          *plan.Plan
		file       []byte
	}
	var unfinished []open
	for _, r := range runs {
		p, file, err := loadStoredPlan(ctx, b, r.PlanSHA256)
		if err != nil {
			continue
		}
		st, err := runState(ctx, b, p, r.PlanSHA256)
		if err != nil {
			return nil, "", nil, err
		}
		switch st.Name {
		case executor.Completed, executor.Skipped, executor.Failed:
			continue
		}
		unfinished = append(unfinished, open{r.PlanSHA256, st.String(), p, file})
	}
	switch len(unfinished) {
	case 0:
		return current()
	case 1:
		u := unfinished[0]
		return u.p, u.sha, u.file, nil
	}
	var lines []string
	for _, u := range unfinished {
		lines = append(lines, fmt.Sprintf("  -run %s  %s", shortSHA(u.sha), u.state))
	}
	return nil, "", nil, fmt.Errorf("%s holds %d unfinished runs; choose one with -run ID (the start of its plan's SHA-256):\n%s", b.where, len(unfinished), strings.Join(lines, "\n"))
}

func runState(ctx context.Context, b executor.Backend, p *plan.Plan, sha string) (executor.State, error) {
	e, err := controlExecutor(b, p, sha)
	if err != nil {
		return executor.State{}, err
	}
	st, err := e.Status(ctx)
	if err != nil {
		return executor.State{}, err
	}
	return st.Run.State, nil
}

// listRuns says which runs exist, for a -run that matched none or several.
func listRuns(ctx context.Context, b *stateBackend, runs []postgres.Run) string {
	if len(runs) == 0 {
		return "it holds no run"
	}
	var parts []string
	for _, r := range runs {
		s := shortSHA(r.PlanSHA256)
		if p, _, err := loadStoredPlan(ctx, b, r.PlanSHA256); err == nil {
			if st, err := runState(ctx, b, p, r.PlanSHA256); err == nil {
				s += " (" + st.String() + ")"
			}
		}
		parts = append(parts, s)
	}
	return "the runs are: " + strings.Join(parts, ", ")
}

// openBackend opens the backend a run command uses: for apply, the one the
// plan's configuration selects; for continue and approve (fromEnv), the
// one the environment selects, with the plan's lease.
func (o *runOpts) openBackend(ctx context.Context, m *Meta, p *plan.Plan) (*stateBackend, error) {
	if o.fromEnv {
		b, err := openControlBackend(ctx, m, o.stateDir)
		if err != nil {
			return nil, err
		}
		b.setPlanLease(p)
		return b, nil
	}
	return openPlanBackend(ctx, m, p, o.stateDir)
}

// postgresSelected reports whether the run's state is in PostgreSQL.
func (o *runOpts) postgresSelected(m *Meta, p *plan.Plan) bool {
	if o.fromEnv {
		return m.pgConnStr() != ""
	}
	be, err := planBackend(p)
	return err == nil && be != nil && be.Type == config.BackendPostgres
}
