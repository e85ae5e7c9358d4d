package command

import (
	"context"
	"flag"
	"fmt"

	"github.com/rackform/rackform/providers/plugin"
	"github.com/rackform/rackform/providers/redfish"
)

// providerRedfishCommand serves the built-in Redfish provider as a go-plugin
// plugin. rackform starts it by re-executing its own binary, so one binary
// carries both the host and the built-in provider.
type providerRedfishCommand struct{ *Meta }

func (c *providerRedfishCommand) Synopsis() string {
	return "Serve the built-in Redfish provider (started by rackform itself)"
}
func (c *providerRedfishCommand) Usage() string { return "rackform provider redfish" }

func (c *providerRedfishCommand) Description() string {
	return `Plumbing: rackform runs its built-in Redfish provider out of process by
starting "rackform provider redfish" and speaking the provider protocol to it
over go-plugin's gRPC transport with mutual TLS. The plugin logs to stderr
only; stdout carries the plugin handshake. It is not meant to be run by hand.`
}

func (c *providerRedfishCommand) Flags() *flag.FlagSet {
	return flag.NewFlagSet("provider redfish", flag.ContinueOnError)
}

func (c *providerRedfishCommand) Run(_ context.Context, args []string) int {
	_, code, ok := c.operands(c, args, 0, 0, "takes no arguments, got %d")
	if !ok {
		return code
	}
	if !plugin.IsPluginProcess(c.Getenv) {
		fmt.Fprintln(c.Stderr, "Error: rackform provider redfish serves the built-in Redfish provider to a running rackform, which starts it itself; it is not meant to be run by hand.")
		return ExitUsage
	}
	// The host ends the plugin; the signal context is not used, because an
	// interrupt is for the host to handle (it lets BMC operations finish).
	logger := plugin.NewLogger(redfish.Name, c.Stderr, c.Getenv)
	plugin.Serve(redfish.New(redfish.Options{Logger: logger}), logger)
	return ExitOK
}
