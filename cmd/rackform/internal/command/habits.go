package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/internal/version"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers/plugin"
)

// Terraform habits our users have: -chdir, -input=false,
// -compact-warnings, auto-loaded variable files, help COMMAND, version
// -json with a format version, a log-level environment variable.

// EnvLog is the log level of rackform and its provider plugins
// (trace, debug, info, warn, error, off), like Terraform's TF_LOG.
const EnvLog = "RACKFORM_LOG"

// AutoVarFile and AutoVarSuffix name the variable files plan and validate
// load from the configuration's directory without -var-file, as Terraform
// loads terraform.tfvars and *.auto.tfvars: first rackform.rfvars, then
// the *.auto.rfvars files in name order, then the -var-file files.
const (
	AutoVarFile   = "rackform.rfvars"
	AutoVarSuffix = ".auto.rfvars"
)

// VersionFormat is the format version of `version -json`.
const VersionFormat = "1.0"

// habitFlags adds -input and -compact-warnings to a command's flags.
func (m *Meta) habitFlags(fs *flag.FlagSet) {
	m.input = true
	m.compactWarnings = false
	fs.BoolVar(&m.input, "input", true, "With -input=false, never treat the session as interactive (as in CI): rackform never prompts, and apply at a terminal then needs a trusted signature, -expect-sha256 or -allow-unsigned as outside one.")
	fs.BoolVar(&m.compactWarnings, "compact-warnings", false, "Show warnings as one line each (summary and place), errors in full.")
}

// autoVarFiles are the variable files loaded from the configuration
// directory dir (a *.rf.hcl file stands for its directory) before the
// -var-file ones.
func autoVarFiles(dir string) []string {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	var out []string
	if fi, err := os.Stat(filepath.Join(dir, AutoVarFile)); err == nil && fi.Mode().IsRegular() {
		out = append(out, filepath.Join(dir, AutoVarFile))
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*"+AutoVarSuffix))
	sort.Strings(matches)
	for _, f := range matches {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			out = append(out, f)
		}
	}
	return out
}

// withAutoVarFiles puts the auto-loaded files of the configuration at
// path before the explicit ones (later files win).
func withAutoVarFiles(path string, explicit []string) []string {
	return append(autoVarFiles(path), explicit...)
}

// globalOptions handles the options given before the command:
// -chdir=DIR switches to DIR first, as Terraform's does. rest are the
// arguments left; ok is false when rackform must exit with code.
func (m *Meta) globalOptions(args []string) (rest []string, code int, ok bool) {
	for len(args) > 0 {
		a := args[0]
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "chdir" {
			break
		}
		args = args[1:]
		if !hasVal {
			if len(args) == 0 {
				fmt.Fprintf(m.Stderr, "Error: -chdir needs a directory: -chdir=DIR before the command\n")
				return nil, ExitUsage, false
			}
			val, args = args[0], args[1:]
		}
		if val == "" {
			fmt.Fprintf(m.Stderr, "Error: -chdir needs a directory: -chdir=DIR before the command\n")
			return nil, ExitUsage, false
		}
		if err := os.Chdir(val); err != nil {
			fmt.Fprintf(m.Stderr, "Error: -chdir=%s: cannot switch to the directory: %s\n", val, pathErr(err))
			return nil, ExitError, false
		}
	}
	return args, 0, true
}

func pathErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// help runs `rackform help [COMMAND...]`: the top-level help, or a
// command's own (`rackform help providers lock`).
func (m *Meta) help(runners map[string]runner, args []string) int {
	if len(args) == 0 {
		names := map[string]cli.CommandFactory{}
		for name := range runners {
			names[name] = nil
		}
		for _, h := range hiddenCommands {
			delete(names, h)
		}
		fmt.Fprint(m.Stdout, m.helpFunc(runners)(names))
		return ExitOK
	}
	name := strings.Join(args, " ")
	r, ok := runners[name]
	if !ok {
		return m.usage("no command %q; \"rackform help\" lists them", name)
	}
	// As "rackform COMMAND -help" prints it (through hashicorp/cli).
	fmt.Fprintln(m.Stdout, helpText(r))
	return ExitOK
}

// globalHelp lists the options given before the command.
const globalHelp = `
Global options (before the command):
  -chdir=DIR                Switch to DIR before running the command.
  -version                  The same as the version command.
  -help                     This help; "rackform help COMMAND" for a command.
  -install-autocomplete     Install shell completion for rackform.
  -uninstall-autocomplete   Remove it.

Environment:
  RACKFORM_LOG=LEVEL        Log at LEVEL (trace, debug, info, warn, error, off)
                            from rackform and its provider plugins, on stderr.
`

// logLevel is the log level of rackform's host log and its plugins:
// RACKFORM_LOG, else the plugin log level variable, else def.
func logLevel(getenv func(string) string, def hclog.Level) hclog.Level {
	for _, name := range []string{EnvLog, plugin.EnvLogLevel} {
		if l := hclog.LevelFromString(strings.ToLower(strings.TrimSpace(getenv(name)))); l != hclog.NoLevel {
			return l
		}
	}
	return def
}

// versionJSON is `version -json`: versioned so scripts can rely on it.
func versionJSON(w io.Writer) error {
	out, err := json.MarshalIndent(struct {
		FormatVersion   string `json:"format_version"`
		RackformVersion string `json:"rackform_version"`
		GoVersion       string `json:"go_version"`
		Platform        string `json:"platform"`
		PlanFormat      string `json:"plan_format_version"`
	}{VersionFormat, version.String(), runtime.Version(), runtime.GOOS + "_" + runtime.GOARCH, plan.FormatVersion}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(out))
	return err
}

// writeDiagnostics renders diags as validate does, but with
// -compact-warnings each warning as one line (summary and place) after the
// errors, as Terraform does.
func (m *Meta) writeDiagnostics(w io.Writer, diags []*views.Diagnostic, color bool) error {
	if !m.compactWarnings {
		return views.WriteDiagnostics(w, diags, color)
	}
	var errs, warns []*views.Diagnostic
	for _, d := range diags {
		if d.Severity == views.SeverityWarning {
			warns = append(warns, d)
		} else {
			errs = append(errs, d)
		}
	}
	if err := views.WriteDiagnostics(w, errs, color); err != nil {
		return err
	}
	if len(warns) == 0 {
		return nil
	}
	var b strings.Builder
	if len(errs) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("Warnings:\n\n")
	for _, d := range warns {
		fmt.Fprintf(&b, "- %s\n", d.Summary)
		if d.Range != nil {
			fmt.Fprintf(&b, "  on %s line %d\n", d.Range.Filename, d.Range.Start.Line)
		}
	}
	b.WriteString("\nTo see the full warning notes, run again without -compact-warnings.\n")
	_, err := io.WriteString(w, b.String())
	return err
}
