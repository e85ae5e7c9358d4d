// Package command implements rackform's subcommands: it parses arguments,
// wires the concrete config, planner, executor and providers together, and
// maps results to documented exit codes.
package command

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/hcl/v2"
	"github.com/mattn/go-isatty"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/internal/version"
)

// cliNoSuchCommand is what hashicorp/cli returns for a missing or unknown
// subcommand; no rackform command returns it.
const cliNoSuchCommand = 127

// Streams are the process's standard streams, injected so tests can capture them.
type Streams struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Meta is what every command shares: streams, environment and presentation.
type Meta struct {
	Streams
	// Color is true when stdout and stderr are terminals and NO_COLOR is
	// unset: diagnostics go to stderr, results to stdout, and neither may
	// write escapes into a redirected file.
	Color bool
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string

	// input is false with -input=false: the session is never treated as
	// interactive. compactWarnings is -compact-warnings.
	input           bool
	compactWarnings bool
}

// runner is rackform's own command shape: like cli.Command but Run takes a
// context, so cancellation reaches every command without globals.
type runner interface {
	Synopsis() string
	// Flags returns the command's flag set, bound to fresh option storage.
	// Help text is generated from it.
	Flags() *flag.FlagSet
	// Usage is the one-line usage, e.g. "rackform validate [options] [DIR]".
	Usage() string
	// Description is the paragraph printed under the usage line.
	Description() string
	Run(ctx context.Context, args []string) int
}

// adapter turns a runner into a cli.Command. It is the one place a context is
// held in a struct: hashicorp/cli's Run has no context parameter.
type adapter struct {
	ctx context.Context
	r   runner
}

func (a adapter) Synopsis() string       { return a.r.Synopsis() }
func (a adapter) Help() string           { return helpText(a.r) }
func (a adapter) Run(args []string) int  { return a.r.Run(a.ctx, args) }
func (a adapter) AutocompleteArgs() any  { return nil }
func (a adapter) AutocompleteFlags() any { return nil }

func helpText(r runner) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Usage: %s\n\n", r.Usage())
	if d := strings.TrimSpace(r.Description()); d != "" {
		fmt.Fprintf(&b, "  %s\n\n", strings.ReplaceAll(d, "\n", "\n  "))
	}
	fs := r.Flags()
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		b.WriteString("Options:\n\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n") + "\n"
}

// parseFlags parses args with the runner's flag set, reporting errors on
// stderr in the command's own words. ok is false when the command must exit
// with the returned code.
func (m *Meta) parseFlags(fs *flag.FlagSet, args []string, r runner) (rest []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(m.Stdout, helpText(r))
			return nil, ExitOK, false
		}
		fmt.Fprintf(m.Stderr, "Error: %s\n\n%s\n", err, helpText(r))
		return nil, ExitUsage, false
	}
	return fs.Args(), 0, true
}

// Main runs rackform with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, streams Streams) int {
	meta := &Meta{Streams: streams, Getenv: os.Getenv, input: true}
	meta.Color = isTerminal(streams.Stdout) && isTerminal(streams.Stderr) && os.Getenv("NO_COLOR") == ""
	return meta.run(ctx, args)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

func (m *Meta) run(ctx context.Context, args []string) int {
	args, code, ok := m.globalOptions(args)
	if !ok {
		return code
	}
	if len(args) > 0 {
		if opt := strings.TrimLeft(args[0], "-"); opt == "install-autocomplete" || opt == "uninstall-autocomplete" {
			if len(args) > 1 {
				fmt.Fprintf(m.Stderr, "Error: -%s takes no arguments\n", opt)
				return ExitUsage
			}
			return m.installCompletion(opt == "install-autocomplete")
		}
	}
	runners := m.commands()
	if len(args) > 0 && args[0] == "help" {
		return m.help(runners, args[1:])
	}
	factories := make(map[string]cli.CommandFactory, len(runners))
	for name, r := range runners {
		r := r
		factories[name] = func() (cli.Command, error) { return adapter{ctx: ctx, r: r}, nil }
	}
	c := &cli.CLI{
		Name:           "rackform",
		Version:        version.String(),
		Args:           args,
		Commands:       factories,
		HiddenCommands: hiddenCommands,
		HelpFunc:       m.helpFunc(runners),
		HelpWriter:     m.Stdout,
		ErrorWriter:    m.Stderr,

		Autocomplete:          true,
		AutocompleteInstall:   "install-autocomplete",
		AutocompleteUninstall: "uninstall-autocomplete",
	}
	code, err := c.Run()
	if err != nil {
		fmt.Fprintf(m.Stderr, "Error: %s\n", err)
		return ExitError
	}
	if code == cliNoSuchCommand {
		return ExitUsage // help was printed to stderr
	}
	return code
}

func (m *Meta) helpFunc(runners map[string]runner) cli.HelpFunc {
	return func(cmds map[string]cli.CommandFactory) string {
		names := make([]string, 0, len(cmds))
		width := 0
		hidden := map[string]bool{}
		for _, h := range hiddenCommands {
			hidden[h] = true
		}
		for name := range cmds {
			if _, ok := runners[name]; ok {
				names = append(names, name)
				width = max(width, len(name))
				continue
			}
			// A parent of nested commands ("providers"): list its visible
			// children, since the parent does nothing itself.
			for child := range runners {
				if strings.HasPrefix(child, name+" ") && !hidden[child] {
					names = append(names, child)
					width = max(width, len(child))
				}
			}
		}
		sort.Strings(names)
		var b strings.Builder
		b.WriteString("Usage: rackform [--version] [--help] <command> [args]\n\n")
		b.WriteString("rackform plans and applies firmware and runtime rollouts across bare-metal\nfleets, rack by rack.\n\nCommands:\n")
		for _, name := range names {
			fmt.Fprintf(&b, "    %-*s  %s\n", width, name, runners[name].Synopsis())
		}
		b.WriteString(globalHelp)
		return b.String()
	}
}

// stringList is a repeatable flag, such as -var and -var-file, that keeps
// its values in command-line order (later ones win, as in Terraform).
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ", ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// showDiagnostics renders diags on stderr the way validate does, with
// source snippets from files (the parsed files by filename). Commands call
// it for any user-input problem so every command reports errors alike.
func (m *Meta) showDiagnostics(diags hcl.Diagnostics, files map[string]*hcl.File, color bool) {
	// A failed write to stderr leaves nothing better to report it on.
	_ = m.writeDiagnostics(m.Stderr, views.NewDiagnostics(diags, files), color)
}
