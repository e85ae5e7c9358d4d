package command

import (
	"fmt"
	"slices"
	"strings"
)

// referenceOrder is the order docs/cli.md lists the commands in: a
// rollout's course (write, plan, review, rehearse, apply, operate), then
// the tools around it. Every visible command is in it (TestCLIReference).
var referenceOrder = []string{
	"validate", "fmt", "plan", "show", "rehearse",
	"apply", "continue", "approve", "status", "stop", "skip", "force-unlock",
	"keygen", "providers lock", "sim", "demo", "version",
}

// Reference renders docs/cli.md: every command's help, as "rackform
// COMMAND -help" prints it, generated from the commands' flag sets and
// descriptions so the page cannot drift from the binary.
func Reference() string {
	runners := (&Meta{}).commands()
	var b strings.Builder
	b.WriteString("# Command reference\n\n")
	b.WriteString("<!-- Generated from the commands' flag sets and help texts by\n")
	b.WriteString("     `go test ./cmd/rackform/internal/command -run TestCLIReference -update`; do not edit. -->\n\n")
	b.WriteString("Every command of `rackform`, with the help `rackform COMMAND -help` prints. How the commands\n")
	b.WriteString("fit together is in the [README](../README.md)'s tour and in [operating.md](operating.md).\n\n")
	for _, name := range referenceOrder {
		fmt.Fprintf(&b, "- [`rackform %s`](#%s): %s\n", name, anchor("rackform "+name), runners[name].Synopsis())
	}
	b.WriteString("\n## Global options\n\n```text\n")
	b.WriteString(strings.TrimPrefix(globalHelp, "\n"))
	b.WriteString("```\n")
	for _, name := range referenceOrder {
		r := runners[name]
		fmt.Fprintf(&b, "\n## rackform %s\n\n%s.\n\n```text\n%s```\n", name, r.Synopsis(), helpText(r))
	}
	return b.String()
}

// referenceMissing lists the visible commands referenceOrder leaves out,
// and the names in it that are no command.
func referenceMissing() (missing, unknown []string) {
	runners := (&Meta{}).commands()
	for name := range runners {
		if !slices.Contains(hiddenCommands, name) && !slices.Contains(referenceOrder, name) {
			missing = append(missing, name)
		}
	}
	for _, name := range referenceOrder {
		if runners[name] == nil {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(missing)
	return missing, unknown
}

// anchor is the fragment GitHub gives a heading.
func anchor(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), " ", "-")
}
