package command

import (
	"context"
	"flag"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views"
	"github.com/rackform/rackform/config"
)

// validateCommand loads a configuration and reports every problem at once.
type validateCommand struct {
	*Meta
	json     bool
	noColor  bool
	vars     stringList
	varFiles stringList
}

func (c *validateCommand) Synopsis() string { return "Check whether the configuration is valid" }
func (c *validateCommand) Usage() string {
	return "rackform validate [options] [DIR]"
}

func (c *validateCommand) Description() string {
	return `Loads the configuration in DIR (default: the current directory; a single
*.rf.hcl file also works) and checks it: syntax, types, references, and the
rules on servers, racks, releases, strategies and rollouts. Every error is
reported at once, with its file, line and a source snippet. No BMC is
contacted.

Input variables come from -var, -var-file and RACKFORM_VAR_name environment
variables, with Terraform's precedence.

Files are read only when they are regular files: a FIFO or a device named
by file(), templatefile(), -var-file or as the configuration is an error
naming it. SIGINT or SIGTERM stops validate at once (exit 130).

Exit status: 0 when the configuration is valid (warnings allowed), 1 when it
is not, 2 on bad arguments, 130 when interrupted.`
}

func (c *validateCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	c.json, c.noColor, c.vars, c.varFiles = false, false, nil, nil
	fs.BoolVar(&c.json, "json", false, "Print the result as JSON, in the schema of terraform validate -json.")
	fs.BoolVar(&c.noColor, "no-color", false, "Never colour the output (also: the NO_COLOR environment variable).")
	fs.Var(&c.vars, "var", "Set input variable `NAME=VALUE`. Repeatable; later values win.")
	fs.Var(&c.varFiles, "var-file", "Read input variables from `FILE`. Repeatable; later files win.")
	c.habitFlags(fs)
	return fs
}

func (c *validateCommand) Run(ctx context.Context, args []string) int {
	rest, code, ok := c.operands(c, args, 0, 1, "takes at most one directory, got %d arguments")
	if !ok {
		return code
	}
	path := "."
	if len(rest) == 1 {
		path = rest[0]
	}

	loader := config.NewLoader(config.LoadOptions{Vars: c.vars, VarFiles: withAutoVarFiles(path, c.varFiles), Getenv: c.Getenv, UnsetVariablesUnknown: true})
	diags, ok := untilDone(ctx, func() hcl.Diagnostics {
		_, diags := loader.Load(path)
		return diags
	})
	if !ok {
		return c.interrupted("validate")
	}
	result := views.NewValidate(views.NewDiagnostics(diags, loader.Files()))

	var err error
	if c.json {
		err = result.WriteJSON(c.Stdout)
	} else {
		err = result.WriteTextWith(c.Stdout, c.Stderr, c.Color && !c.noColor, c.writeDiagnostics)
	}
	if err != nil {
		return c.fail("writing the result: %s", err)
	}
	if !result.Valid {
		return ExitError
	}
	return ExitOK
}
