package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/providers/plugin"
)

// builtinProvider is the provider that ships inside the rackform binary;
// it is pinned by the binary's own hash in every plan, not by the lock file.
const builtinProvider = "redfish"

// providersLockCommand pins the external provider plugins a configuration
// uses by SHA-256, like `terraform providers lock`: plan and apply refuse a
// plugin binary whose hash differs from its pin.
type providersLockCommand struct {
	*Meta
	pluginDir string
}

func (c *providersLockCommand) Synopsis() string {
	return "Pin the configuration's provider plugins by SHA-256"
}
func (c *providersLockCommand) Usage() string { return "rackform providers lock [options] [DIR]" }
func (c *providersLockCommand) Description() string {
	return `Finds the plugin binary (rackform-provider-NAME in the plugins directory)
of every provider block in the configuration in DIR (default ".") and records
its SHA-256 in DIR/` + plugin.LockFile + `. Commit that file: plan and apply
start a plugin only when its hash matches the pin. The built-in redfish
provider needs no pin; plans record the rackform binary's own hash.

Run it again after upgrading a plugin on purpose; the file shows the change
in review.`
}

func (c *providersLockCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("providers lock", flag.ContinueOnError)
	fs.StringVar(&c.pluginDir, "plugin-dir", "", "Look for plugins in `DIR` (default: $"+plugin.EnvDir+", else "+plugin.DefaultDir+").")
	return fs
}

func (c *providersLockCommand) Run(_ context.Context, args []string) int {
	rest, code, ok := c.parseFlags(c, args)
	if !ok {
		return code
	}
	dir := "."
	switch len(rest) {
	case 0:
	case 1:
		dir = rest[0]
	default:
		return c.usage("providers lock takes at most one directory, got %q", rest)
	}
	loader := config.NewLoader(config.LoadOptions{Getenv: c.Getenv})
	cfg, diags := loader.Load(dir)
	if diags.HasErrors() {
		c.showDiagnostics(diags, loader.Files(), c.Color)
		return ExitError
	}
	lockPath := filepath.Join(dir, plugin.LockFile)
	lock, err := plugin.LoadLock(lockPath)
	if err != nil {
		return c.fail("%s", err)
	}
	pdir := plugin.Dir(c.pluginDir, c.Getenv)
	bins, err := plugin.Discover(pdir)
	if err != nil {
		return c.fail("%s", err)
	}
	found := map[string]string{}
	for _, b := range bins {
		found[b.Name] = b.Path
	}
	var names []string
	for _, p := range cfg.Providers {
		if p.Name != builtinProvider {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		fmt.Fprintf(c.Stdout, "Nothing to pin: %s uses only the built-in %s provider.\n", dir, builtinProvider)
		return ExitOK
	}
	var missing []error
	for _, name := range names {
		path, ok := found[name]
		if !ok {
			missing = append(missing, fmt.Errorf("provider %q: no plugin binary %s%s in %s", name, plugin.BinaryPrefix, name, pdir))
			continue
		}
		sum, err := lock.Pin(name, path)
		if err != nil {
			missing = append(missing, fmt.Errorf("provider %q: %w", name, err))
			continue
		}
		fmt.Fprintf(c.Stdout, "Pinned %s: sha256:%s (%s)\n", name, sum, path)
	}
	if len(missing) > 0 {
		// Write nothing: a half-pinned lock file would look complete in review.
		return c.fail("%s", errors.Join(missing...))
	}
	if err := lock.Write(lockPath); err != nil {
		return c.fail("%s", err)
	}
	fmt.Fprintf(c.Stdout, "Wrote %s.\n", lockPath)
	return ExitOK
}
