package command

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
)

// Usage errors say what was wrong first, then what was probably meant,
// then where the options or commands are listed, in a few lines: the whole
// help printed under an error scrolls the error away.

// optionsPointer is the line after a usage error of command: where its
// options are listed.
func optionsPointer(command string) string {
	return fmt.Sprintf("Run \"rackform %s -help\" to list its options.", command)
}

// usage reports a usage error (bad options or arguments) on stderr and
// returns ExitUsage.
func (m *Meta) usage(format string, args ...any) int {
	fmt.Fprintf(m.Stderr, "Error: %s\n", fmt.Sprintf(format, args...))
	return ExitUsage
}

// usageFor is usage followed by where command's options are listed.
func (m *Meta) usageFor(command, format string, args ...any) int {
	m.usage(format, args...)
	fmt.Fprintf(m.Stderr, "\n%s\n", optionsPointer(command))
	return ExitUsage
}

// terraformFlags are Terraform options rackform users type out of habit
// that rackform does not need, with what to do instead.
var terraformFlags = map[string]string{
	"auto-approve": "rackform apply asks no question: the saved plan file is what was approved, as with \"terraform apply PLANFILE\". Outside a terminal, give -expect-sha256 HASH (or a trusted signature) instead.",
}

// terraformCommands are Terraform commands rackform does not have, with
// what to do instead.
var terraformCommands = map[string]string{
	"init": "rackform needs no init: the redfish provider is built in, and external provider plugins are found in .rackform/plugins (\"rackform providers lock\" pins them). Start with \"rackform validate\", then \"rackform plan\".",
}

// flagHint says what an unknown flag was probably meant to be, or "".
func flagHint(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	name = strings.TrimPrefix(name, "-")
	if hint, ok := terraformFlags[name]; ok {
		return hint
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := nearest(name, names); len(near) > 0 {
		return "Did you mean " + orQuoted(near, "-") + "?"
	}
	return ""
}

// nearest returns the names closest to typed: those within two edits,
// or that typed is a prefix of, the closest first (at most three).
func nearest(typed string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	for _, n := range names {
		d := levenshtein.Distance(typed, n, nil)
		switch {
		case len(typed) >= 2 && strings.HasPrefix(n, typed):
			d = 0
		case d > 2 || d >= len(n):
			continue
		}
		cands = append(cands, cand{n, d})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].d != cands[j].d {
			return cands[i].d < cands[j].d
		}
		return cands[i].name < cands[j].name
	})
	var out []string
	for _, c := range cands {
		if len(out) == 3 || len(out) > 0 && c.d > cands[0].d {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// orQuoted quotes names, each after prefix, joined with "or": "-a",
// "-a" or "-b", "-a", "-b" or "-c".
func orQuoted(names []string, prefix string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", prefix+n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// errNoCommand is a command line naming no command rackform has.
var errNoCommand = errors.New("no such command")

// lookupCommand finds the command args start with: the longest name of
// runners its words spell ("providers lock"). An unknown command is
// reported on stderr in words (with what was probably meant) and
// errNoCommand returned.
func (m *Meta) lookupCommand(runners map[string]runner, args []string) (string, error) {
	for k := len(args); k > 0; k-- {
		if name := strings.Join(args[:k], " "); runners[name] != nil {
			return name, nil
		}
	}
	// A parent of nested commands ("providers"): its children are the
	// candidates, else the top-level commands are.
	parent, typed := "", args[0]
	var candidates []string
	for name := range runners {
		if slices.Contains(hiddenCommands, name) {
			continue
		}
		if rest, ok := strings.CutPrefix(name, args[0]+" "); ok {
			parent = args[0]
			candidates = append(candidates, strings.Fields(rest)[0])
		}
	}
	if parent != "" {
		sort.Strings(candidates)
		if len(args) == 1 {
			fmt.Fprintf(m.Stderr, "Error: \"rackform %s\" needs a subcommand: %s.\n\nRun \"rackform -help\" to list the commands.\n", parent, orQuoted(prefixAll("rackform "+parent+" ", candidates), ""))
			return "", errNoCommand
		}
		typed = args[1]
	} else {
		seen := map[string]bool{}
		for name := range runners {
			if first := strings.Fields(name)[0]; !slices.Contains(hiddenCommands, name) && !seen[first] {
				seen[first] = true
				candidates = append(candidates, first)
			}
		}
	}
	where := "rackform"
	if parent != "" {
		where += " " + parent
	}
	fmt.Fprintf(m.Stderr, "Error: %q is not a %s command.\n", typed, where)
	if hint, ok := terraformCommands[typed]; ok && parent == "" {
		fmt.Fprintf(m.Stderr, "\n%s", wrap(hint, "", helpWidth))
	} else if near := nearest(typed, candidates); len(near) > 0 {
		fmt.Fprintf(m.Stderr, "\nDid you mean %s?\n", orQuoted(prefixAll(where+" ", near), ""))
	}
	fmt.Fprintf(m.Stderr, "\nRun \"rackform -help\" to list the commands.\n")
	return "", errNoCommand
}

func prefixAll(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
