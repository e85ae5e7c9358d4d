package command

import (
	"context"
	"io"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/plugin"
)

// pluginStarter starts providers out of process: the built-in redfish
// provider by re-executing this binary, any other from the plugins
// directory, pinned by pins: the lock file beside the configuration when
// planning, the plan's own pins when applying.
func pluginStarter(pins func() (*plugin.Lock, error), getenv func(string) string, stderr io.Writer) run.ProviderStarter {
	return func(ctx context.Context, decl *config.Provider) (providers.Provider, plan.Provider, func(), error) {
		// The host's own log of plugin lifecycle and plugin log lines:
		// quiet (warnings and errors) unless the plugin log level asks for
		// more, and plain text because people read stderr.
		level := logLevel(getenv, hclog.Warn)
		logger := hclog.New(&hclog.LoggerOptions{Name: "rackform", Output: stderr, Level: level})
		var spec plugin.Spec
		info := plan.Provider{Name: decl.Name}
		if decl.Name == "redfish" {
			var err error
			if spec, err = plugin.BuiltinSpec(decl.Name); err != nil {
				return nil, info, nil, err
			}
			if info.SHA256, err = plugin.BuiltinSHA256(); err != nil {
				return nil, info, nil, err
			}
			info.Source = "builtin"
		} else {
			bin, err := run.FindPlugin(decl.Name, getenv)
			if err != nil {
				return nil, info, nil, err
			}
			lock, err := pins()
			if err != nil {
				return nil, info, nil, err
			}
			if spec, err = lock.Spec(*bin); err != nil {
				return nil, info, nil, err
			}
			info.Source, info.SHA256 = filepath.Base(bin.Path), spec.SHA256
		}
		c, err := plugin.Start(ctx, spec, logger)
		if err != nil {
			return nil, info, nil, err
		}
		return c, info, c.Close, nil
	}
}
