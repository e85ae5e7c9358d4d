package command

import (
	"context"
	"flag"
	"fmt"
)

// fmtCommand is a placeholder until its issue lands; it says so instead of pretending.
type fmtCommand struct{ *Meta }

func (c *fmtCommand) Synopsis() string     { return "(not yet available)" }
func (c *fmtCommand) Usage() string        { return "rackform fmt" }
func (c *fmtCommand) Description() string  { return "" }
func (c *fmtCommand) Flags() *flag.FlagSet { return flag.NewFlagSet("fmt", flag.ContinueOnError) }
func (c *fmtCommand) Run(context.Context, []string) int {
	fmt.Fprintln(c.Stderr, "Error: rackform fmt is not implemented yet")
	return ExitError
}
