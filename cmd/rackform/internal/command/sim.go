package command

import (
	"context"
	"flag"
	"fmt"
)

// simCommand is a placeholder until its issue lands; it says so instead of pretending.
type simCommand struct{ *Meta }

func (c *simCommand) Synopsis() string     { return "(not yet available)" }
func (c *simCommand) Usage() string        { return "rackform sim" }
func (c *simCommand) Description() string  { return "" }
func (c *simCommand) Flags() *flag.FlagSet { return flag.NewFlagSet("sim", flag.ContinueOnError) }
func (c *simCommand) Run(context.Context, []string) int {
	fmt.Fprintln(c.Stderr, "Error: rackform sim is not implemented yet")
	return ExitError
}
