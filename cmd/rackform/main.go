// Command rackform plans and applies firmware and runtime rollouts across
// bare-metal fleets. main only wires signals to command.Main.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/cmd/rackform/internal/command"
	"github.com/rackform/rackform/internal/profiling"
	"github.com/rackform/rackform/providers/plugin"
)

func main() {
	os.Exit(run())
}

func run() int {
	// The first SIGINT/SIGTERM cancels ctx (graceful: nothing new starts);
	// command.Main decides what a second one means for the running command.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Profiles of the CLI process where it runs (benchmarks); a provider
	// plugin (this binary, started by the CLI with its environment) has its
	// own: RACKFORM_PLUGIN_CPUPROFILE, RACKFORM_PLUGIN_HEAPPROFILE.
	if !plugin.IsPluginProcess(os.Getenv) {
		// The CLI holds the fleet's observations and plan while the plugin
		// does the allocating: collecting at 1.5× what is live instead of
		// 2× costs it little CPU (it uses ~7% of a plan's) and takes its
		// peak at 10,000 servers from ~230 MB to ~190 MB. GOGC overrides.
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(50)
		}
		log := hclog.New(&hclog.LoggerOptions{Name: "rackform", Output: os.Stderr})
		if done := profiling.Start(os.Getenv("RACKFORM_CPUPROFILE"), os.Getenv("RACKFORM_HEAPPROFILE"), log); done != nil {
			defer done()
		}
	}
	return command.Main(ctx, os.Args[1:], command.Streams{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
	})
}
