package plugin

import (
	"context"

	"github.com/rackform/rackform/providers"
)

// Profiling a plugin process where it runs (benchmarks): the host passes its
// environment on, so `RACKFORM_PLUGIN_CPUPROFILE=cpu.out rackform plan ...`
// profiles the provider plugin.
const (
	EnvCPUProfile  = "RACKFORM_PLUGIN_CPUPROFILE"
	EnvHeapProfile = "RACKFORM_PLUGIN_HEAPPROFILE"
)

// profiled writes the profiles when the host stops the provider.
type profiled struct {
	providers.Provider
	stop func()
}

func (p *profiled) Stop(ctx context.Context) providers.Diagnostics {
	d := p.Provider.Stop(ctx)
	p.stop()
	return d
}
