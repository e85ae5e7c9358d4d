package config

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// FileSuffix is the suffix of configuration files in a directory.
const FileSuffix = ".rf.hcl"

// LoadOptions are the inputs besides the files themselves.
type LoadOptions struct {
	// Vars are -var NAME=VALUE arguments, in command-line order.
	Vars []string
	// VarFiles are -var-file paths, in command-line order.
	VarFiles []string
	// Getenv reads RACKFORM_VAR_name inputs and env(); nil means no environment.
	Getenv func(string) string

	// FS, when set, is where the configuration is read from instead of the
	// disk: the path given to Load names a directory (or a *.rf.hcl file)
	// inside FS, and file() and templatefile() read from FS only, relative
	// to that directory (names as in Config.DataFiles: a MemFS also holds
	// names leaving the directory or absolute ones). A file that is not in
	// FS is an error naming it. Apply uses it to load the plan's snapshot
	// without touching the working directory. (-var-file paths are still
	// read from the disk: they are inputs, not configuration.)
	FS fs.FS
	// UnsetVariablesUnknown makes a required variable without a value an
	// unknown value instead of an error, as terraform validate checks a
	// configuration whatever its inputs (validate sets it; plan never).
	UnsetVariablesUnknown bool

	// FSName says what FS is in errors ("inventory.csv is not in FSNAME");
	// default "the configuration snapshot".
	FSName string
}

// Loader loads configurations and keeps the parsed files, so diagnostics
// can be rendered with source snippets even when loading failed.
type Loader struct {
	opts   LoadOptions
	parser *hclparse.Parser
	// maxInstances overrides the expansion cap in tests (0: the default).
	maxInstances int
}

// NewLoader returns a Loader with opts.
func NewLoader(opts LoadOptions) *Loader {
	return &Loader{opts: opts, parser: hclparse.NewParser()}
}

// Files returns every file parsed so far, by the filename used in diagnostics.
func (l *Loader) Files() map[string]*hcl.File { return l.parser.Files() }

// Config is a loaded configuration. Slices keep declared order (files in
// name order, blocks in file order); lookups by name are methods.
type Config struct {
	// Path is the directory or file that was loaded.
	Path string
	// Dir is the configuration directory: file() and templatefile() paths
	// are relative to it.
	Dir string
	// Files are the configuration files, byte for byte, sorted by name.
	Files []SourceFile
	// DataFiles are the other files the configuration read through
	// functions (file, templatefile), each once, byte for byte as read,
	// sorted by name; names are relative to Dir as written in the call
	// (see SourceFile.Name). Together with Files they are everything the
	// configuration's value depends on besides its inputs. A file whose
	// path is derived from a sensitive value is not here (its name and
	// contents are secrets): SensitiveDataReads counts those reads.
	DataFiles          []SourceFile
	SensitiveDataReads int

	Variables          []*Variable
	Providers          []*Provider
	Releases           []*Release
	Catalog            *Catalog
	Strategies         []*Strategy
	MaintenanceWindows []*MaintenanceWindow
	Clusters           []*Cluster
	Rollouts           []*Rollout
	// Backend is the state backend of the rackform settings block; nil:
	// the local state directory.
	Backend *Backend

	// EnvReferences are the environment variables named by env() calls,
	// sorted; MissingEnv are those that were unset or empty. Loading does
	// not fail on them (validate needs no credentials), but anything that
	// talks to a BMC must refuse to run while MissingEnv is not empty.
	EnvReferences []string
	MissingEnv    []string

	// DefaultStrategy is used by clusters without a strategy attribute.
	DefaultStrategy *Strategy

	// SensitiveSources are the source ranges whose text defines a
	// sensitive value: the defaults of sensitive variables, var-file
	// entries setting them, literal passwords. A secret's value written
	// there is the secret itself, not a literal that happens to equal it.
	SensitiveSources []hcl.Range
}

// Variable returns the variable named name, or nil.
func (c *Config) Variable(name string) *Variable {
	return find(c.Variables, name, func(v *Variable) string { return v.Name })
}

// Provider returns the provider named name, or nil.
func (c *Config) Provider(name string) *Provider {
	return find(c.Providers, name, func(v *Provider) string { return v.Name })
}

// Release returns the release named name, or nil.
func (c *Config) Release(name string) *Release {
	return find(c.Releases, name, func(v *Release) string { return v.Name })
}

// Strategy returns the strategy named name, or nil.
func (c *Config) Strategy(name string) *Strategy {
	return find(c.Strategies, name, func(v *Strategy) string { return v.Name })
}

// MaintenanceWindow returns the window named name, or nil.
func (c *Config) MaintenanceWindow(name string) *MaintenanceWindow {
	return find(c.MaintenanceWindows, name, func(v *MaintenanceWindow) string { return v.Name })
}

// Cluster returns the cluster named name, or nil.
func (c *Config) Cluster(name string) *Cluster {
	return find(c.Clusters, name, func(v *Cluster) string { return v.Name })
}

// Rollout returns the rollout named name, or nil.
func (c *Config) Rollout(name string) *Rollout {
	return find(c.Rollouts, name, func(v *Rollout) string { return v.Name })
}

// Server returns the server named name (server names are unique across
// the configuration), or nil.
func (c *Config) Server(name string) *Server {
	for _, cl := range c.Clusters {
		for _, r := range cl.Racks {
			for _, s := range r.Servers {
				if s.Name == name {
					return s
				}
			}
		}
	}
	return nil
}

// Servers returns every server in declared order: clusters, racks, servers.
func (c *Config) Servers() []*Server {
	var out []*Server
	for _, cl := range c.Clusters {
		out = append(out, cl.Servers()...)
	}
	return out
}

// InputValues returns the resolved values of the non-sensitive variables,
// unmarked, by name: what a plan file may record.
func (c *Config) InputValues() map[string]cty.Value {
	out := map[string]cty.Value{}
	for _, v := range c.Variables {
		if !v.Sensitive && v.Value != cty.NilVal {
			out[v.Name] = v.Value
		}
	}
	return out
}

// SensitiveVariables returns the names of the sensitive variables, sorted:
// a plan records these names and apply must be given the values again.
func (c *Config) SensitiveVariables() []string {
	var out []string
	for _, v := range c.Variables {
		if v.Sensitive {
			out = append(out, v.Name)
		}
	}
	sort.Strings(out)
	return out
}

// EffectiveRollout returns the rollout to run. With name "" it is the only
// rollout declared, or, when none is, an implicit rollout of one stage and
// one group holding every cluster in declared order (docs/rollout-rules.md, the tree).
func (c *Config) EffectiveRollout(name string) (*Rollout, error) {
	if name != "" {
		if r := c.Rollout(name); r != nil {
			return r, nil
		}
		return nil, fmt.Errorf("no rollout named %q", name)
	}
	switch len(c.Rollouts) {
	case 0:
		return &Rollout{
			Name:     "default",
			Implicit: true,
			Scope:    ScopeFull,
			Stages: []*Stage{{
				Name:   "default",
				Groups: []*Group{{Name: "default", Clusters: append([]*Cluster(nil), c.Clusters...)}},
			}},
		}, nil
	case 1:
		return c.Rollouts[0], nil
	default:
		names := make([]string, len(c.Rollouts))
		for i, r := range c.Rollouts {
			names[i] = r.Name
		}
		return nil, fmt.Errorf("the configuration declares %d rollouts (%s): name the one to run", len(names), strings.Join(names, ", "))
	}
}

func find[T any](list []T, name string, key func(T) string) T {
	for _, v := range list {
		if key(v) == name {
			return v
		}
	}
	var zero T
	return zero
}

// Load reads path, a directory of *.rf.hcl files or one file. It always
// returns a Config (possibly partial) so callers can still inspect what
// loaded; the diagnostics hold every problem found, with source ranges.
func (l *Loader) Load(path string) (*Config, hcl.Diagnostics) {
	cfg := &Config{Path: path}
	names, dir, diags := l.configFiles(path)
	cfg.Dir = dir
	if diags.HasErrors() {
		return cfg, diags
	}
	s := newLoadState(l, cfg)
	var files []*hcl.File
	for _, name := range names {
		src, err := l.readConfigFile(name)
		if err != nil {
			diags = append(diags, plainError("Failed to read configuration file", "Cannot read %s: %v.", name, err))
			continue
		}
		cfg.Files = append(cfg.Files, SourceFile{Name: name, Bytes: src})
		f, pd := l.parser.ParseHCL(src, name)
		diags = append(diags, pd...)
		if f != nil {
			files = append(files, f)
		}
	}
	if diags.HasErrors() {
		// A syntax error makes every later diagnostic a guess; stop here
		// like HCL tools do.
		return cfg, diags
	}
	diags = append(diags, s.load(files)...)
	s.collectDataFiles()
	cfg.SensitiveSources = append([]hcl.Range(nil), s.secrets.sensitiveSrc...)
	return cfg, s.secrets.scrub(oncePerPlace(s.origins.missingColumns(diags)))
}

func (l *Loader) readConfigFile(name string) ([]byte, error) {
	if l.opts.FS != nil {
		return fs.ReadFile(l.opts.FS, name)
	}
	return ReadSource(name)
}

// configFiles lists the files of p in name order and the configuration
// directory, from the disk or from LoadOptions.FS.
func (l *Loader) configFiles(p string) ([]string, string, hcl.Diagnostics) {
	// in names where the files are read in errors: nothing for the disk.
	stat, readDir, join, dir, in := os.Stat, os.ReadDir, filepath.Join, filepath.Dir, ""
	if fsys := l.opts.FS; fsys != nil {
		p = path.Clean(filepath.ToSlash(p))
		stat = func(name string) (fs.FileInfo, error) { return fs.Stat(fsys, name) }
		readDir = func(name string) ([]fs.DirEntry, error) { return fs.ReadDir(fsys, name) }
		join, dir, in = path.Join, path.Dir, " in "+l.fsName()
	}
	info, err := stat(p)
	if err != nil {
		return nil, "", hcl.Diagnostics{plainError("Configuration not found", "Cannot read %s%s: %v.", p, in, err)}
	}
	if !info.IsDir() {
		if !strings.HasSuffix(p, FileSuffix) {
			return nil, "", hcl.Diagnostics{plainError("Not a configuration file", "%s does not end in %s; rackform reads only *%s files.", p, FileSuffix, FileSuffix)}
		}
		return []string{p}, dir(p), nil
	}
	entries, err := readDir(p)
	if err != nil {
		return nil, p, hcl.Diagnostics{plainError("Cannot read configuration directory", "Cannot list %s%s: %v.", p, in, err)}
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), FileSuffix) {
			names = append(names, join(p, e.Name()))
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		where := "The directory " + p
		if in != "" {
			where = p + in
		}
		return nil, p, hcl.Diagnostics{plainError("No configuration files", "%s contains no *%s files.", where, FileSuffix)}
	}
	return names, p, nil
}

func (l *Loader) fsName() string {
	if l.opts.FSName != "" {
		return l.opts.FSName
	}
	return "the configuration snapshot"
}

// MemFS is an in-memory file set for LoadOptions.FS, by slash-separated
// name relative to its root. Besides what fs.FS allows, ReadFile also
// finds names that leave the root ("../shared/inventory.csv") or are
// absolute, as Config.DataFiles may name them; Open sees only the others.
type MemFS map[string][]byte

// Open implements fs.FS over the entries with valid fs.FS names.
func (m MemFS) Open(name string) (fs.File, error) {
	mf := fstest.MapFS{}
	for k, b := range m {
		if fs.ValidPath(k) {
			mf[k] = &fstest.MapFile{Data: b, Mode: 0o444}
		}
	}
	return mf.Open(name)
}

// ReadFile returns a copy of the file named exactly name.
func (m MemFS) ReadFile(name string) ([]byte, error) {
	b, ok := m[name]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return append([]byte(nil), b...), nil
}
