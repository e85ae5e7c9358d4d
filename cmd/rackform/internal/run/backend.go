package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/executor/postgres"
	"github.com/rackform/rackform/executor/state"
	"github.com/rackform/rackform/planner/plan"
)

// EnvPGSchema names the PostgreSQL schema of the postgres backend's tables
// (default "rackform"); like the connection string, every job of a run
// sets the same.
const EnvPGSchema = "RACKFORM_PG_SCHEMA"

// Env is what the run's commands take from the process: the environment,
// and where notes and warnings for the operator go (one sentence each;
// the command adds "Note: " or "Warning: ").
type Env struct {
	Getenv func(string) string
	Note   func(string)
	Warn   func(string)
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

func (e Env) note(s string) {
	if e.Note != nil {
		e.Note(s)
	}
}

func (e Env) warn(s string) {
	if e.Warn != nil {
		e.Warn(s)
	}
}

// PGConnStr is RACKFORM_PG_CONN_STR, "" when unset.
func (e Env) PGConnStr() string { return strings.TrimSpace(e.getenv(config.EnvPGConnStr)) }

// Backend is an open state backend: a local state directory or
// PostgreSQL.
type Backend struct {
	executor.Backend
	close func() error
	// Where names it in messages: "the state directory st", "the
	// PostgreSQL state backend (database … as user …)".
	Where string
	// Dir is the local state directory ("" for postgres): commands printed
	// to go on name it.
	Dir string
	// PG is the PostgreSQL backend, nil for a state directory.
	PG *postgres.Backend
}

// Close releases the backend.
func (b *Backend) Close() error { return b.close() }

// OpenStateDir opens (creating) the local state directory dir.
func OpenStateDir(dir string) (*state.Dir, error) {
	b, err := state.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the state directory %s: %w", dir, err)
	}
	return b, nil
}

// OpenLocal opens the state directory dir as a Backend.
func OpenLocal(dir string) (*Backend, error) {
	d, err := OpenStateDir(dir)
	if err != nil {
		return nil, err
	}
	return &Backend{Backend: d, close: d.Close, Where: "the state directory " + dir, Dir: dir}, nil
}

// OpenPostgres opens the PostgreSQL state backend RACKFORM_PG_CONN_STR
// names (plan reads earlier runs there to learn estimates).
func OpenPostgres(ctx context.Context, env Env) (*Backend, error) {
	b, err := postgres.Open(ctx, postgres.Options{
		ConnString: env.PGConnStr(),
		Schema:     strings.TrimSpace(env.getenv(EnvPGSchema)),
		Warn:       env.warn,
	})
	if err != nil {
		return nil, err
	}
	return &Backend{Backend: b, close: b.Close, Where: b.Where(), PG: b}, nil
}

// OpenControl opens the backend of the commands that run without a
// configuration (continue, approve, skip, stop, status, force-unlock):
// PostgreSQL when RACKFORM_PG_CONN_STR is set, else the state directory
// dir.
func OpenControl(ctx context.Context, env Env, dir string) (*Backend, error) {
	if env.PGConnStr() != "" {
		return OpenPostgres(ctx, env)
	}
	// Nothing was applied where there is no state directory: say so
	// rather than make an empty one.
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the state directory %s holds no plan (there is no such directory); run rackform apply PLANFILE first, or name the directory the run uses with -state-dir", dir)
	}
	return OpenLocal(dir)
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

// OpenForPlan opens the backend of p's run: the one the plan records
// (format 1.5), or in older plans the one its configuration selects (its
// rackform settings block, read again from the snapshot); dir is the
// state directory of the local one.
func OpenForPlan(ctx context.Context, env Env, p *plan.Plan, dir string) (*Backend, error) {
	pg, lease, where, err := planStore(p)
	if err != nil {
		return nil, err
	}
	if pg {
		if env.PGConnStr() == "" {
			return nil, fmt.Errorf("the plan's configuration keeps the state in PostgreSQL (%s), but %s is not set: set it to the database's connection string (a libpq URL or key=value string)", where, config.EnvPGConnStr)
		}
		sb, err := OpenPostgres(ctx, env)
		if err != nil {
			return nil, err
		}
		sb.PG.SetLease(lease)
		return sb, nil
	}
	if env.PGConnStr() != "" {
		env.note(fmt.Sprintf("%s is set, but the plan's configuration selects no postgres backend (rackform { backend \"postgres\" {} }): the state is kept in the state directory %s.", config.EnvPGConnStr, dir))
	}
	return OpenLocal(dir)
}

// planStore says whether p's run keeps its state in PostgreSQL, with
// the lease and, for messages, what selected it: as the plan records it
// (format 1.5), or in older plans as the configuration in its snapshot
// selects (its rackform settings block).
func planStore(p *plan.Plan) (pg bool, lease time.Duration, where string, err error) {
	if p.State != nil {
		return p.State.Backend == plan.BackendPostgres, time.Duration(p.State.LeaseDuration), "its configuration's backend \"postgres\"", nil
	}
	be, err := planBackend(p)
	if err != nil || be == nil || be.Type != config.BackendPostgres {
		return false, 0, "", err
	}
	return true, be.LeaseDuration, "backend \"postgres\" at " + be.Range.String(), nil
}

// setPlanLease gives a postgres backend opened without a configuration
// the lease the plan records (or its configuration names).
func (b *Backend) setPlanLease(p *plan.Plan) {
	if b.PG == nil {
		return
	}
	if pg, lease, _, err := planStore(p); err == nil && pg {
		b.PG.SetLease(lease)
	}
}

// Stored is a plan the backend stores, verified like a plan file.
type Stored struct {
	Plan   *plan.Plan
	SHA256 string
	Bytes  []byte
}

// loadStored loads the plan sha the backend stores: at most MaxPlanSize
// bytes that hash to sha, then decoded.
func (b *Backend) loadStored(ctx context.Context, sha string) (*Stored, error) {
	file, err := b.LoadPlan(ctx, sha)
	if err != nil {
		return nil, fmt.Errorf("loading plan %s from %s: %w", plan.ShortSHA(sha), b.Where, err)
	}
	if len(file) > MaxPlanSize {
		return nil, tooLarge(fmt.Sprintf("the stored plan %s in %s", plan.ShortSHA(sha), b.Where), int64(len(file)))
	}
	if got := plan.SHA256(file); got != sha {
		return nil, fmt.Errorf("the stored plan %s in %s does not hash to its name (%s); it was modified", plan.ShortSHA(sha), b.Where, plan.ShortSHA(got))
	}
	p, err := plan.Decode(file)
	if err != nil {
		return nil, fmt.Errorf("the stored plan %s is not usable: %w", plan.ShortSHA(sha), err)
	}
	return &Stored{Plan: p, SHA256: sha, Bytes: file}, nil
}

// Choose picks the run a command without a plan file acts on. In the
// local state directory: the plan applied last (runID must be empty or
// match it). In PostgreSQL, which several rollouts may share: the run
// whose plan SHA-256 starts with runID; without one, the only unfinished
// run (or, with none unfinished, the plan applied last); several
// unfinished runs are listed and -run is required.
func (b *Backend) Choose(ctx context.Context, runID string) (*Stored, error) {
	runID = typedSHA256(runID)
	current := func() (*Stored, error) {
		sha, err := b.CurrentPlan(ctx)
		if errors.Is(err, executor.ErrNotFound) {
			return nil, fmt.Errorf("%s holds no plan; run rackform apply PLANFILE first", b.Where)
		}
		if err != nil {
			return nil, err
		}
		if runID != "" && !strings.HasPrefix(sha, runID) {
			return nil, fmt.Errorf("%s holds the run of plan %s, not %s", b.Where, plan.ShortSHA(sha), runID)
		}
		return b.loadStored(ctx, sha)
	}
	if b.PG == nil {
		return current()
	}
	runs, err := b.PG.Runs(ctx)
	if err != nil {
		return nil, err
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
			return nil, fmt.Errorf("%s has no run of a plan whose SHA-256 starts with %q; %s", b.Where, runID, b.listRuns(ctx, runs))
		case 1:
			return b.loadStored(ctx, match[0])
		default:
			return nil, fmt.Errorf("-run %s matches %d runs; give more of the plan's SHA-256: %s", runID, len(match), b.listRuns(ctx, runs))
		}
	}
	type open struct {
		s     *Stored
		state string
	}
	var unfinished []open
	for _, r := range runs {
		s, err := b.loadStored(ctx, r.PlanSHA256)
		if err != nil {
			continue
		}
		st, err := runState(ctx, b, s.Plan, s.SHA256)
		if err != nil {
			return nil, err
		}
		switch st.Name {
		case executor.Completed, executor.Skipped, executor.Failed:
			continue
		}
		unfinished = append(unfinished, open{s, st.String()})
	}
	switch len(unfinished) {
	case 0:
		return current()
	case 1:
		return unfinished[0].s, nil
	}
	var lines []string
	for _, u := range unfinished {
		lines = append(lines, fmt.Sprintf("  -run %s  %s", plan.ShortSHA(u.s.SHA256), u.state))
	}
	return nil, fmt.Errorf("%s holds %d unfinished runs; choose one with -run ID (the start of its plan's SHA-256):\n%s", b.Where, len(unfinished), strings.Join(lines, "\n"))
}

// Control is an executor without providers for the run of p on b: it
// records control requests and reads the run's state.
func Control(b executor.Backend, p *plan.Plan, sha string) (*executor.Executor, error) {
	return executor.New(executor.Options{Plan: p, PlanSHA256: sha, Backend: b})
}

func runState(ctx context.Context, b executor.Backend, p *plan.Plan, sha string) (executor.State, error) {
	e, err := Control(b, p, sha)
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
func (b *Backend) listRuns(ctx context.Context, runs []postgres.Run) string {
	if len(runs) == 0 {
		return "it holds no run"
	}
	var parts []string
	for _, r := range runs {
		s := plan.ShortSHA(r.PlanSHA256)
		if st, err := b.loadStored(ctx, r.PlanSHA256); err == nil {
			if rs, err := runState(ctx, b, st.Plan, r.PlanSHA256); err == nil {
				s += " (" + rs.String() + ")"
			}
		}
		parts = append(parts, s)
	}
	return "the runs are: " + strings.Join(parts, ", ")
}
