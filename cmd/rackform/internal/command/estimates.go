package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"strings"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/executor/history"
	"github.com/rackform/rackform/executor/postgres"
	"github.com/rackform/rackform/planner"
)

// historyFlags say where plan learns step estimates from.
type historyFlags struct {
	// archives are -history DIR values; "off" or "false" switches
	// learning off.
	archives stringList
	// stateDir is the local state directory apply keeps runs in: plan's
	// -state-dir, set before learnedEstimates reads it.
	stateDir string
}

func (h *historyFlags) register(fs *flag.FlagSet) {
	h.archives = nil
	fs.Var(&h.archives, "history", "Also learn step estimates from the archived runs in `DIR`: a state directory, a directory of them, or journal files <plan sha256>.jsonl beside the plan files they ran. Repeatable. -history=off learns nothing: every step gets its kind's default.")
}

// off reports whether -history switches learning off, or says why the
// values contradict each other.
func (h *historyFlags) off() (bool, error) {
	off := false
	for _, a := range h.archives {
		if a == "off" || a == "false" {
			off = true
		}
	}
	if off && len(h.archives) > 1 {
		return false, fmt.Errorf("-history=off learns nothing, so it cannot be given with -history %s; use one or the other (a directory named off is -history ./off)", strings.Join(h.archives, ", -history "))
	}
	return off, nil
}

// learnedEstimates reads the step durations of earlier runs for the
// planner: from the configuration's state backend (PostgreSQL when its
// settings select it, else the local state directory, when there is one)
// and from every -history archive. A -history archive that cannot be
// opened is an error; a state backend that cannot be read, and runs that
// cannot be, are warnings, and plan goes on with what it could read. nil
// when learning is off or no earlier run was found: every step then keeps
// its kind's default and the plan says nothing of a history.
func (m *Meta) learnedEstimates(ctx context.Context, cfg *config.Config, h historyFlags) (planner.Estimator, error) {
	off, err := h.off()
	if err != nil || off {
		return nil, err
	}
	warn := func(format string, args ...any) {
		fmt.Fprintf(m.Stderr, "Warning: estimates: "+format+"\n", args...)
	}
	sources, err := openArchives(h.archives)
	if err != nil {
		return nil, err
	}
	if cfg.Backend != nil && cfg.Backend.Type == config.BackendPostgres {
		if m.runEnv().PGConnStr() == "" {
			warn("the configuration keeps its state in PostgreSQL, but %s is not set, so no earlier run there is read", config.EnvPGConnStr)
		} else if b, err := run.OpenPostgres(ctx, m.runEnv()); err != nil {
			warn("earlier runs in PostgreSQL are not read: %s", err)
		} else {
			defer b.Close()
			sources = append(sources, history.FromBackend(b.Where, b, pgRuns(b.PG)))
		}
	} else if src, err := history.OpenStateDir(h.stateDir); err == nil {
		sources = append(sources, src)
	} else if !errors.Is(err, fs.ErrNotExist) {
		warn("earlier runs in %s are not read: %s", h.stateDir, err)
	}
	if len(sources) == 0 {
		return nil, nil
	}
	est, err := history.Load(ctx, sources, history.Options{})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil // interrupted: plan reports it
		}
		warn("%s; every step gets its kind's default", err)
		return nil, nil
	}
	for _, s := range est.Skipped() {
		warn("%s", s)
	}
	if est.Runs() == 0 {
		return nil, nil
	}
	return est, nil
}

// pgRuns lists a PostgreSQL backend's runs for history.
func pgRuns(b *postgres.Backend) func(context.Context) ([]history.Run, error) {
	return func(ctx context.Context) ([]history.Run, error) {
		runs, err := b.Runs(ctx)
		out := make([]history.Run, len(runs))
		for i, r := range runs {
			out[i] = history.Run{PlanSHA256: r.PlanSHA256, LastAppendAt: r.LastAppendAt}
		}
		return out, err
	}
}

// openArchives opens the archives -history names (history.OpenArchive).
func openArchives(dirs []string) ([]history.Source, error) {
	var sources []history.Source
	for _, dir := range dirs {
		srcs, err := history.OpenArchive(dir)
		if err != nil {
			return nil, fmt.Errorf("-history %s: %w", dir, err)
		}
		sources = append(sources, srcs...)
	}
	return sources, nil
}
