package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers/plugin"
)

// PluginSHA256 hashes the binary that would serve provider pp: the
// rackform binary for the built-in one, else the plugin in the plugins
// directory.
func PluginSHA256(pp plan.Provider, getenv func(string) string) (string, error) {
	if pp.Source == "builtin" {
		return plugin.BuiltinSHA256()
	}
	bin, err := FindPlugin(pp.Name, getenv)
	if err != nil {
		return "", err
	}
	return plugin.FileSHA256(bin.Path)
}

// FindPlugin is the binary in the plugins directory (plugin.Dir) that
// serves the provider name.
func FindPlugin(name string, getenv func(string) string) (*plugin.Binary, error) {
	dir := plugin.Dir("", getenv)
	bins, err := plugin.Discover(dir)
	if err != nil {
		return nil, err
	}
	for i := range bins {
		if bins[i].Name == name {
			return &bins[i], nil
		}
	}
	return nil, fmt.Errorf("no plugin binary %s%s in %s", plugin.BinaryPrefix, name, dir)
}

// CheckInputs refuses to go on when a sensitive variable of the plan is not
// supplied again, or an environment variable the configuration reads is
// unset. Values are never read into messages.
func CheckInputs(p *plan.Plan, vars, varFiles []string, getenv func(string) string) error {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	given := map[string]bool{}
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		given[strings.TrimSpace(name)] = true
	}
	for _, path := range varFiles {
		names, diags := config.VarFileNames(path)
		for _, d := range diags {
			if d.Severity == hcl.DiagError {
				// The summary only: a detail may quote the file, and it
				// may hold a secret.
				return fmt.Errorf("the -var-file %s cannot be read or parsed: %s", path, d.Summary)
			}
		}
		for _, n := range names {
			given[n] = true
		}
	}
	var missing []string
	for _, n := range p.Inputs.Sensitive {
		if !given[n] && getenv(config.EnvVarPrefix+n) == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the sensitive variables %s are not stored in the plan and must be given again: use -var NAME=VALUE, -var-file or %sNAME", strings.Join(missing, ", "), config.EnvVarPrefix)
	}
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		name = strings.TrimSpace(name)
		if _, inPlan := p.Inputs.Variables[name]; inPlan && !slices.Contains(p.Inputs.Sensitive, name) {
			return fmt.Errorf("-var %s: the variable is not sensitive, so its value is in the plan; apply uses exactly what was reviewed (plan again to change it)", name)
		}
	}
	var unset []string
	for _, n := range p.Inputs.Env {
		if getenv(n) == "" {
			unset = append(unset, n)
		}
	}
	if len(unset) > 0 {
		return fmt.Errorf("the configuration reads the environment variables %s (credentials), which are not set", strings.Join(unset, ", "))
	}
	return nil
}

// SnapshotName says where the configuration comes from at apply, in errors
// ("inventory.csv is not in the plan's configuration snapshot").
const SnapshotName = "the plan's configuration snapshot"

// LoadSnapshot loads the configuration recorded in the plan, from the
// plan's snapshot alone, in memory: its *.rf.hcl files and the files the
// configuration read with file() or templatefile() when the plan was made.
// Nothing is read from the plan's configuration directory or the working
// directory, so apply evaluates exactly what was reviewed; a file the
// configuration reads that is not in the snapshot (a plan of format 1.0
// made before data files were recorded) is an error naming it. The plan's
// non-sensitive variable values win over anything given now; the sensitive
// ones are given again (-var, -var-file, RACKFORM_VAR_).
func LoadSnapshot(p *plan.Plan, vars, varFiles []string, getenv func(string) string) (*config.Config, *config.Loader, func(), hcl.Diagnostics) {
	loader := config.NewLoader(config.LoadOptions{Vars: vars, VarFiles: varFiles, Getenv: getenv})
	fail := func(cleanup func(), summary string, err error) (*config.Config, *config.Loader, func(), hcl.Diagnostics) {
		return nil, loader, cleanup, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: err.Error()}}
	}
	mem, err := snapshotFS(p.Config)
	if err != nil {
		return fail(func() {}, "Unusable configuration snapshot", err)
	}
	files := append([]string(nil), varFiles...)
	cleanup := func() {}
	if len(p.Inputs.Variables) > 0 {
		// The plan's values as one more -var-file, last so they win: a
		// private temporary file written from the plan only.
		tmp, err := os.MkdirTemp("", "rackform-apply-")
		if err != nil {
			return fail(cleanup, "Cannot create a temporary directory", err)
		}
		cleanup = func() { os.RemoveAll(tmp) }
		b, err := json.Marshal(p.Inputs.Variables)
		if err != nil {
			return fail(cleanup, "Cannot encode the plan's variables", err)
		}
		path := filepath.Join(tmp, "plan-inputs.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return fail(cleanup, "Cannot write the plan's variables", err)
		}
		files = append(files, path)
	}
	// Only sensitive variables come from -var: the others are the plan's.
	var keep []string
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		if slices.Contains(p.Inputs.Sensitive, strings.TrimSpace(name)) {
			keep = append(keep, v)
		}
	}
	loader = config.NewLoader(config.LoadOptions{Vars: keep, VarFiles: files, Getenv: getenv, FS: mem, FSName: SnapshotName})
	cfg, diags := loader.Load(".")
	return cfg, loader, cleanup, diags
}

// snapshotFS is the plan's configuration snapshot as an in-memory file set
// rooted at the configuration directory: data files by the names the
// configuration read them by, configuration files at the root. Every
// file's bytes are checked against its recorded SHA-256.
func snapshotFS(snap plan.Snapshot) (config.MemFS, error) {
	mem := config.MemFS{}
	for _, f := range snap.DataFiles {
		b, err := f.Bytes()
		if err != nil {
			return nil, err
		}
		mem[f.Name] = b
	}
	for _, f := range snap.Files {
		b, err := f.Bytes()
		if err != nil {
			return nil, err
		}
		name := path.Clean(filepath.ToSlash(f.Name))
		if !fs.ValidPath(name) || strings.Contains(name, "/") {
			name = path.Base(name)
		}
		mem[name] = b
	}
	if len(snap.Files) == 0 {
		return nil, errors.New("the plan holds no configuration files")
	}
	return mem, nil
}

// PlanLock pins every external provider to the SHA-256 the plan was made
// with, for pluginStarter: apply starts only the plugins the plan names,
// whatever lock file the working directory holds now. The pins stay in
// memory: an apply that is killed leaves nothing behind.
func PlanLock(p *plan.Plan) *plugin.Lock {
	pins := map[string]plugin.Pin{}
	for _, pp := range p.Providers {
		if pp.Source != "builtin" {
			pins[pp.Name] = plugin.Pin{SHA256: pp.SHA256}
		}
	}
	return plugin.NewLock(pins, "the plan")
}
