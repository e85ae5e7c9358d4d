// Command fakeplugin serves providertest.Fake as a provider plugin, for the
// out-of-process tests of package plugin. Environment variables make it
// misbehave in the ways a real plugin can.
package main

import (
	"context"
	"os"
	"strconv"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/plugin"
	"github.com/rackform/rackform/providers/providertest"
)

// logged wraps the Fake to log a line per call (so tests can see plugin logs
// reach the host) and to crash mid-Observe when asked.
type logged struct {
	*providertest.Fake
	logger hclog.Logger
	crash  bool
}

func (p *logged) Configure(ctx context.Context, req *providers.ConfigureRequest) providers.Diagnostics {
	p.logger.Info("configure called", "bytes", len(req.Config))
	return p.Fake.Configure(ctx, req)
}

func (p *logged) Observe(ctx context.Context, req *providers.ObserveRequest, fn func(*providers.Observation) error) providers.Diagnostics {
	p.logger.Debug("observe called", "targets", len(req.Targets))
	if !p.crash {
		return p.Fake.Observe(ctx, req, fn)
	}
	return p.Fake.Observe(ctx, req, func(o *providers.Observation) error {
		if err := fn(o); err != nil {
			return err
		}
		p.logger.Error("crashing on purpose")
		os.Exit(3)
		return nil
	})
}

func main() {
	logger := plugin.NewLogger("fakeplugin", os.Stderr, os.Getenv)
	if m := os.Getenv("FAKEPLUGIN_MARKER"); m != "" {
		// Proves to a test that this binary was executed.
		_ = os.WriteFile(m, []byte("started\n"), 0o644)
	}
	p := &logged{
		Fake:   providertest.NewFake(providertest.FakeFleet()...),
		logger: logger,
		crash:  os.Getenv("FAKEPLUGIN_CRASH") == "observe",
	}
	cfg := plugin.ServeConfig(p, logger)
	if v := os.Getenv("FAKEPLUGIN_PROTOCOL"); v != "" {
		n, _ := strconv.Atoi(v)
		cfg.ProtocolVersion = uint(n)
	}
	if v := os.Getenv("FAKEPLUGIN_COOKIE"); v != "" {
		cfg.MagicCookieValue = v
	}
	goplugin.Serve(cfg)
}
