// Command rackform plans and applies firmware and runtime rollouts across
// bare-metal fleets. main only wires signals to command.Main.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
		// GOGC overrides.
		if os.Getenv("GOGC") == "" {
			collectByBudget(gcHeapBudget)
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

// gcHeapBudget is the heap the CLI lets grow to before it collects at
// 1.5× what is live (see collectByBudget): about its peak at 100,000
// servers, where 1.5× what is live when the plan is written is as much.
const gcHeapBudget = 448 << 20

// collectByBudget sets the collector's pace after each collection: the
// heap may grow to 2× what is live (Go's default) while that stays under
// budget, then up to budget, and to 1.5× what is live once that is more
// (GOGC 50, the CLI's pace before). The CLI holds a fleet's
// configuration, observations and plan while the plugin does the
// allocating, and it shares the machine's cores with the plugin and the
// BMCs it reads: at GOGC 50 throughout, the collector was a third of its
// CPU at 100,000 servers, mostly while what was live was well below its
// peak. The peak stays where 1.5× the live heap passes budget (a large
// fleet) or at 2× what is live (a small one).
func collectByBudget(budget uint64) {
	debug.SetGCPercent(50)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		// Unreachable at once: its cleanup runs after the next
		// collection, and arms the one after.
		runtime.AddCleanup(new(gcSentinel), func(struct{}) {
			metrics.Read(live)
			debug.SetGCPercent(gcPercent(live[0].Value.Uint64(), budget))
			arm()
		}, struct{}{})
	}
	arm()
}

// gcSentinel holds a pointer so it is an object of its own (the tiny
// allocator packs small pointer-free ones together).
type gcSentinel struct {
	_ *byte
	_ uint64
}

// gcPercent is the GOGC that lets a heap of live bytes grow to budget,
// from 50 (1.5× live) to 100 (2×).
func gcPercent(live, budget uint64) int {
	if live == 0 || live >= budget {
		return 50
	}
	return int(min(max((budget-live)*100/live, 50), 100))
}
