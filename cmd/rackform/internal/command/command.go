// Package command implements rackform's subcommands: it parses arguments,
// wires the concrete config, planner, executor and providers together, and
// maps results to documented exit codes.
package command

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/hcl/v2"
	"github.com/mattn/go-isatty"
	"github.com/posener/complete"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
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
	ctx    context.Context
	r      runner
	stderr io.Writer
}

func (a adapter) Synopsis() string      { return a.r.Synopsis() }
func (a adapter) Help() string          { return helpText(a.r) }
func (a adapter) Run(args []string) int { return runBounded(a.ctx, a.r, args, a.stderr) }

// AutocompleteArgs and AutocompleteFlags make shell completion complete
// the command's arguments and flags (completion.go).
func (a adapter) AutocompleteArgs() complete.Predictor { return argsPredictor(a.r) }
func (a adapter) AutocompleteFlags() complete.Flags    { return flagPredictors(a.r) }

// helpWidth is the width help text is wrapped at: a terminal's 80 columns.
const helpWidth = 80

func helpText(r runner) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n", r.Usage())
	if d := strings.TrimSpace(r.Description()); d != "" {
		b.WriteString(wrap(d, "  ", helpWidth))
		b.WriteString("\n")
	}
	fs := r.Flags()
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		b.WriteString("Options:\n\n")
		fs.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			head := "  -" + f.Name
			if name != "" {
				head += " " + name
			}
			b.WriteString(head + "\n")
			if !zeroDefault(f) {
				// One word to wrap: "(default" never ends a line.
				usage += " " + strings.ReplaceAll(fmt.Sprintf("(default %s)", quotedDefault(f)), " ", "\x00")
			}
			b.WriteString(strings.ReplaceAll(wrap(usage, "      ", helpWidth), "\x00", " "))
		})
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// zeroDefault reports whether a flag's default is its type's zero value,
// which help does not print (as the flag package's PrintDefaults).
func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s":
		return true
	}
	return false
}

// quotedDefault is a flag's default as help prints it: strings quoted.
func quotedDefault(f *flag.Flag) string {
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return fmt.Sprintf("%q", f.DefValue)
		}
	}
	return f.DefValue
}

// wrap fills text's paragraphs to width columns, each line after indent;
// a line of text that already fits is kept as written (the descriptions
// are wrapped by hand), a longer one is broken at spaces, its own leading
// spaces kept on the lines it continues on.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			b.WriteString("\n")
			continue
		}
		if cols(indent+line) <= width {
			b.WriteString(indent + line + "\n")
			continue
		}
		lead := indent + line[:len(line)-len(strings.TrimLeft(line, " "))]
		words := strings.Fields(line)
		cur := lead + words[0]
		for _, w := range words[1:] {
			if cols(cur)+1+cols(w) > width {
				b.WriteString(cur + "\n")
				cur = lead + w
				continue
			}
			cur += " " + w
		}
		b.WriteString(cur + "\n")
	}
	return b.String()
}

// cols is how many columns s takes: one per rune ("→" is one).
func cols(s string) int { return utf8.RuneCountInString(s) }

// parseFlags parses args with the runner's flag set, reporting errors on
// stderr in the command's own words: the error, what was probably meant,
// and where the options are listed (not the whole help: the error would
// scroll away above it). ok is false when the command must exit with the
// returned code.
func (m *Meta) parseFlags(r runner, args []string) (rest []string, code int, ok bool) {
	fs := r.Flags()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(m.Stdout, helpText(r))
			return nil, ExitOK, false
		}
		fmt.Fprintf(m.Stderr, "Error: %s\n", err)
		if hint := flagHint(fs, err); hint != "" {
			fmt.Fprintf(m.Stderr, "\n%s", wrap(hint, "", helpWidth))
		}
		fmt.Fprintf(m.Stderr, "\n%s\n", optionsPointer(fs.Name()))
		return nil, ExitUsage, false
	}
	return fs.Args(), 0, true
}

// operands is parseFlags, then a check that min to max operands are left:
// otherwise the error is the command's name, what it takes (takes,
// formatted with how many it got) and where its options are listed.
func (m *Meta) operands(r runner, args []string, min, max int, takes string) (rest []string, code int, ok bool) {
	name := r.Flags().Name() // before parsing: Flags binds fresh storage
	rest, code, ok = m.parseFlags(r, args)
	if ok && (len(rest) < min || len(rest) > max) {
		return nil, m.usageFor(name, "%s %s", name, fmt.Sprintf(takes, len(rest))), false
	}
	return rest, code, ok
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
				return m.usage("-%s takes no arguments", opt)
			}
			return m.installCompletion(opt == "install-autocomplete")
		}
	}
	runners := m.commands()
	if len(args) > 0 && args[0] == "help" {
		return m.help(runners, args[1:])
	}
	if len(args) > 0 {
		switch args[0] {
		case "-v", "-version", "--version":
			// The same words as the version command, options and all.
			return runners["version"].Run(ctx, args[1:])
		}
	}
	// A command rackform does not have is said to be one, before any
	// help. Not while the shell asks for completions: it calls rackform
	// with its own arguments then (COMP_LINE says the command line).
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && m.Getenv("COMP_LINE") == "" {
		if _, err := m.lookupCommand(runners, args); err != nil {
			return ExitUsage
		}
	}
	factories := make(map[string]cli.CommandFactory, len(runners))
	for name, r := range runners {
		r := r
		factories[name] = func() (cli.Command, error) { return adapter{ctx: ctx, r: r, stderr: m.Stderr}, nil }
	}
	c := &cli.CLI{
		Name:           "rackform",
		Version:        strings.TrimSuffix(versionText(), "\n"),
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
		return m.fail("%s", err)
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
		for name := range cmds {
			if _, ok := runners[name]; ok {
				names = append(names, name)
				width = max(width, len(name))
				continue
			}
			// A parent of nested commands ("providers"): list its visible
			// children, since the parent does nothing itself.
			for child := range runners {
				if strings.HasPrefix(child, name+" ") && !slices.Contains(hiddenCommands, child) {
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
			// A synopsis too long for the line goes on under itself.
			hang := strings.Repeat(" ", 2+width+2)
			line := wrap(runners[name].Synopsis(), hang, helpWidth)
			fmt.Fprintf(&b, "  %-*s  %s", width, name, strings.TrimPrefix(line, hang))
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
