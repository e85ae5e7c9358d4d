package command

import (
	"context"
	"flag"
	"fmt"
)

// validateCommand is a placeholder until its issue lands; it says so instead of pretending.
type validateCommand struct{ *Meta }

func (c *validateCommand) Synopsis() string     { return "(not yet available)" }
func (c *validateCommand) Usage() string        { return "rackform validate" }
func (c *validateCommand) Description() string  { return "" }
func (c *validateCommand) Flags() *flag.FlagSet { return flag.NewFlagSet("validate", flag.ContinueOnError) }
func (c *validateCommand) Run(context.Context, []string) int {
	fmt.Fprintln(c.Stderr, "Error: rackform validate is not implemented yet")
	return ExitError
}
