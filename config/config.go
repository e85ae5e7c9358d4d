// Package config loads a rackform configuration (a directory of *.rf.hcl
// files) into a typed model, with hcl.Diagnostics carrying source ranges.
// It is source structure only: no I/O against BMCs, no planning.
package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
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
}

// Loader loads configurations and keeps the parsed files, so diagnostics
// can be rendered with source snippets even when loading failed.
type Loader struct {
	opts   LoadOptions
	parser *hclparse.Parser
}

// NewLoader returns a Loader with opts.
func NewLoader(opts LoadOptions) *Loader {
	return &Loader{opts: opts, parser: hclparse.NewParser()}
}

// Files returns every file parsed so far, by the filename used in diagnostics.
func (l *Loader) Files() map[string]*hcl.File { return l.parser.Files() }

// Config is a loaded configuration.
type Config struct {
	// Path is the directory or file that was loaded.
	Path string
}

// Load reads path, a directory of *.rf.hcl files or one file.
func (l *Loader) Load(path string) (*Config, hcl.Diagnostics) {
	return &Config{Path: path}, nil
}
