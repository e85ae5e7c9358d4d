package command

import (
	"context"
	"flag"
	"fmt"
)

// providerRedfishCommand is a placeholder until its issue lands; it says so instead of pretending.
type providerRedfishCommand struct{ *Meta }

func (c *providerRedfishCommand) Synopsis() string     { return "(not yet available)" }
func (c *providerRedfishCommand) Usage() string        { return "rackform provider" }
func (c *providerRedfishCommand) Description() string  { return "" }
func (c *providerRedfishCommand) Flags() *flag.FlagSet { return flag.NewFlagSet("provider", flag.ContinueOnError) }
func (c *providerRedfishCommand) Run(context.Context, []string) int {
	fmt.Fprintln(c.Stderr, "Error: rackform provider is not implemented yet")
	return ExitError
}
