package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers"
)

// ProviderStarter starts the plugin for one provider block and returns it
// unconfigured, what the plan records about its binary, and how to stop
// it. Commands start plugins (command.pluginStarter); tests inject
// in-process providers.
type ProviderStarter func(ctx context.Context, decl *config.Provider) (providers.Provider, plan.Provider, func(), error)

// Providers are the started and configured providers of a
// configuration, by provider block name.
type Providers struct {
	ByName map[string]providers.Provider
	Info   []plan.Provider
	stops  []func()
	// decls are the provider blocks by name, to start a plugin again, and
	// stopOf what ends each one's plugin.
	decls  map[string]*config.Provider
	stopOf map[string]func()
}

// Close stops every provider plugin that was started.
func (r *Providers) Close() {
	for i := len(r.stops) - 1; i >= 0; i-- {
		r.stops[i]()
	}
	r.stops = nil
}

// StartProviders starts every provider a cluster of cfg uses and configures
// it with its block's attributes. Sensitive attributes (env(), sensitive
// variables) are in the JSON handed to Configure, which stays in memory and
// on the plugin's mTLS channel; nothing here logs or stores it. The caller
// must Close the result, also when diagnostics have errors.
func StartProviders(ctx context.Context, cfg *config.Config, start ProviderStarter) (*Providers, hcl.Diagnostics) {
	r := &Providers{ByName: map[string]providers.Provider{}, decls: map[string]*config.Provider{}, stopOf: map[string]func(){}}
	var diags hcl.Diagnostics
	used := map[string]*config.Provider{}
	for _, c := range cfg.Clusters {
		if p := planner.ProviderOf(cfg, c); p != nil {
			used[p.Name] = p
		}
	}
	for _, name := range slices.Sorted(maps.Keys(used)) {
		decl := used[name]
		prov, info, stop, d := startProvider(ctx, decl, start)
		if stop != nil {
			r.stops = append(r.stops, stop)
		}
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		r.ByName[name] = prov
		r.decls[name] = decl
		r.stopOf[name] = stop
		r.Info = append(r.Info, info)
	}
	return r, diags
}

// startProvider starts the plugin of one provider block, has it describe
// itself and configures it. stop, when not nil, ends the plugin, also when
// the diagnostics have errors.
func startProvider(ctx context.Context, decl *config.Provider, start ProviderStarter) (providers.Provider, plan.Provider, func(), hcl.Diagnostics) {
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
	if desc != nil && hasAttribute(desc.Schema, CABundleAttr) {
		ca, err := PinCABundle(decl)
		if err != nil {
			return nil, info, stop, hcl.Diagnostics{{
				Severity: hcl.DiagError, Summary: "Invalid attribute " + CABundleAttr,
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
// plugin when it dies (Supervise). pinned returns the SHA-256 the
// plan expects of a provider's binary: a plugin that restarts from another
// binary is refused (PinnedRestart).
func (r *Providers) Supervise(start ProviderStarter, pinned func(name string) string, note func(string)) {
	for _, name := range slices.Sorted(maps.Keys(r.ByName)) {
		decl := r.decls[name]
		restart := PinnedRestart(func(ctx context.Context) (providers.Provider, plan.Provider, func(), error) {
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
		s := Supervise(name, r.ByName[name], r.stopOf[name], restart, note)
		r.ByName[name] = s
		r.stopOf[name] = s.Close
	}
	r.stops = r.stops[:0]
	for _, name := range slices.Sorted(maps.Keys(r.stopOf)) {
		if stop := r.stopOf[name]; stop != nil {
			r.stops = append(r.stops, stop)
		}
	}
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

func hasAttribute(schema []providers.Attribute, name string) bool {
	for _, a := range schema {
		if a.Name == name {
			return true
		}
	}
	return false
}
