package command

import (
	"context"
	"flag"
	"fmt"
	"runtime"

	"github.com/rackform/rackform/internal/version"
)

type versionCommand struct {
	*Meta
	json bool
}

func (c *versionCommand) Synopsis() string { return "Show the rackform version" }
func (c *versionCommand) Usage() string    { return "rackform version [-json]" }
func (c *versionCommand) Description() string {
	return "Prints the rackform version and the Go runtime it was built with."
}

func (c *versionCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.BoolVar(&c.json, "json", false, "Print the version as a JSON object with a format_version.")
	return fs
}

func (c *versionCommand) Run(_ context.Context, args []string) int {
	_, code, ok := c.operands(c, args, 0, 0, "takes no arguments, got %d")
	if !ok {
		return code
	}
	if c.json {
		if err := versionJSON(c.Stdout); err != nil {
			return c.fail("writing the version: %s", err)
		}
		return ExitOK
	}
	fmt.Fprint(c.Stdout, versionText())
	return ExitOK
}

// versionText is what `rackform version` and `rackform -version` print.
func versionText() string {
	return fmt.Sprintf("rackform v%s\non %s_%s (%s)\n", version.String(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}
