package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
	"github.com/rackform/rackform/providers/plugin"
)

// providerStarter starts the plugin for one provider block and returns it
// unconfigured, what the plan records about its binary, and how to stop
// it. Commands use startPlugin; tests inject in-process providers.
type providerStarter func(ctx context.Context, decl *config.Provider) (providers.Provider, plan.Provider, func(), error)

// runningProviders are the started and configured providers of a
// configuration, by provider block name.
type runningProviders struct {
	byName map[string]providers.Provider
	info   []plan.Provider
	stops  []func()
	// decls are the provider blocks by name, to start a plugin again, and
	// stopOf what ends each one's plugin.
	decls  map[string]*config.Provider
	stopOf map[string]func()
}

// Close stops every provider plugin that was started.
func (r *runningProviders) Close() {
	for i := len(r.stops) - 1; i >= 0; i-- {
		r.stops[i]()
	}
	r.stops = nil
}

// startProviders starts every provider a cluster of cfg uses and configures
// it with its block's attributes. Sensitive attributes (env(), sensitive
// variables) are in the JSON handed to Configure, which stays in memory and
// on the plugin's mTLS channel; nothing here logs or stores it. The caller
// must Close the result, also when diagnostics have errors.
func startProviders(ctx context.Context, cfg *config.Config, start providerStarter) (*runningProviders, hcl.Diagnostics) {
	r := &runningProviders{byName: map[string]providers.Provider{}, decls: map[string]*config.Provider{}, stopOf: map[string]func(){}}
	var diags hcl.Diagnostics
	used := map[string]*config.Provider{}
	for _, c := range cfg.Clusters {
		if p := planner.ProviderOf(cfg, c); p != nil {
			used[p.Name] = p
		}
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		decl := used[name]
		prov, info, stop, d := startProvider(ctx, decl, start)
		if stop != nil {
			r.stops = append(r.stops, stop)
		}
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		r.byName[name] = prov
		r.decls[name] = decl
		r.stopOf[name] = stop
		r.info = append(r.info, info)
	}
	return r, diags
}

// startProvider starts the plugin of one provider block, has it describe
// itself and configures it. stop, when not nil, ends the plugin, also when
// the diagnostics have errors.
func startProvider(ctx context.Context, decl *config.Provider, start providerStarter) (providers.Provider, plan.Provider, func(), hcl.Diagnostics) {
	name := decl.Name
	subject := decl.DeclRange.Ptr()
	prov, info, stop, err := start(ctx, decl)
	if err != nil {
		return nil, info, nil, hcl.Diagnostics{{
			Severity: hcl.DiagError, Summary: "Failed to start provider",
			Detail: fmt.Sprintf("Provider %q could not be started: %v.", name, err), Subject: subject,
		}}
	}
	desc, pd := prov.Describe(ctx)
	if pd.HasErrors() {
		return nil, info, stop, providerDiags(name, "describe itself", pd, subject)
	}
	if info.Version == "" && desc != nil {
		info.Version = desc.Version
	}
	if info.Name == "" {
		info.Name = name
	}
	// The CA bundle is read here, once: the plan records its SHA-256 and
	// the plugin is given the PEM text hashed, never a path to read again.
	attrs := decl.Attrs
	if desc != nil && hasAttribute(desc.Schema, run.CABundleAttr) {
		ca, err := run.PinCABundle(decl)
		if err != nil {
			return nil, info, stop, hcl.Diagnostics{{
				Severity: hcl.DiagError, Summary: "Invalid attribute " + run.CABundleAttr,
				Detail: fmt.Sprintf("Provider %q: %s.", name, err), Subject: subject,
			}}
		}
		attrs, info.CABundleSHA256, info.CABundle = ca.Attrs, ca.SHA256, ca.Path
	}
	raw, err := ctyjson.Marshal(attrs, attrs.Type())
	if err != nil {
		return nil, info, stop, hcl.Diagnostics{{
			Severity: hcl.DiagError, Summary: "Invalid provider configuration",
			// The error is not quoted: it could carry an attribute value.
			Detail: fmt.Sprintf("The attributes of provider %q cannot be passed to the plugin as JSON.", name), Subject: subject,
		}}
	}
	if cd := prov.Configure(ctx, &providers.ConfigureRequest{Config: raw}); cd.HasErrors() {
		return nil, info, stop, providerDiags(name, "accept its configuration", cd, subject)
	}
	return prov, info, stop, nil
}

// supervise wraps every running provider in a supervisor that restarts its
// plugin when it dies (run.Supervise). pinned returns the SHA-256 the
// plan expects of a provider's binary: a plugin that restarts from another
// binary is refused (run.PinnedRestart).
func (r *runningProviders) supervise(start providerStarter, pinned func(name string) string, note func(string)) {
	for _, name := range sortedKeys(r.byName) {
		decl := r.decls[name]
		restart := run.PinnedRestart(func(ctx context.Context) (providers.Provider, plan.Provider, func(), error) {
			p, info, stop, d := startProvider(ctx, decl, start)
			if d.HasErrors() {
				if stop != nil {
					stop()
				}
				return nil, info, nil, errors.New(strings.TrimSuffix(d[0].Detail, "."))
			}
			return p, info, stop, nil
		}, pinned(name))
		// The supervisor ends the plugin it runs now, which after a
		// restart is no longer the one started first.
		s := run.Supervise(name, r.byName[name], r.stopOf[name], restart, note)
		r.byName[name] = s
		r.stopOf[name] = s.Close
	}
	r.stops = r.stops[:0]
	for _, name := range sortedKeys(r.stopOf) {
		if stop := r.stopOf[name]; stop != nil {
			r.stops = append(r.stops, stop)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func providerDiags(name, what string, pd providers.Diagnostics, subject *hcl.Range) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range pd {
		sev := hcl.DiagError
		if d.Severity == providers.Warning {
			sev = hcl.DiagWarning
		}
		detail := d.Detail
		if detail == "" {
			detail = fmt.Sprintf("Provider %q did not %s.", name, what)
		}
		out = append(out, &hcl.Diagnostic{Severity: sev, Summary: fmt.Sprintf("Provider %q: %s", name, d.Summary), Detail: detail, Subject: subject})
	}
	return out
}

// pluginStarter starts providers out of process: the built-in redfish
// provider by re-executing this binary, any other from the plugins
// directory, pinned by the lock file beside the configuration.
func pluginStarter(cfgDir string, getenv func(string) string, stderr io.Writer) providerStarter {
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
			bins, err := plugin.Discover(plugin.Dir("", getenv))
			if err != nil {
				return nil, info, nil, err
			}
			var bin *plugin.Binary
			for i := range bins {
				if bins[i].Name == decl.Name {
					bin = &bins[i]
				}
			}
			if bin == nil {
				return nil, info, nil, fmt.Errorf("no plugin binary %s%s in %s", plugin.BinaryPrefix, decl.Name, plugin.Dir("", getenv))
			}
			lock, err := plugin.LoadLock(filepath.Join(cfgDir, plugin.LockFile))
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

func hasAttribute(schema []providers.Attribute, name string) bool {
	for _, a := range schema {
		if a.Name == name {
			return true
		}
	}
	return false
}
