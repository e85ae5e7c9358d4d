package command

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/providers/sim"
)

// simProfileLabel is the server label that picks a simulated hardware
// profile for one server ("dmtf", "ilo5", "ami", "openbmc").
const simProfileLabel = "sim_profile"

// configSpecs builds the simulated fleet from a configuration's inventory:
// one BMC per server, at the server's BMC address, so `rackform plan` on
// the same directory finds every BMC where the config says it is.
//
// Servers named in down are left out (their BMC is unreachable). Servers
// named in atTarget start at the versions of their cluster's release, for
// every component whose match rule names a simulated component by
// software_id or id; with -target given, those versions win.
func (c *simCommand) configSpecs(cfg *config.Config, firmware, target map[string]string) ([]sim.BMCSpec, error) {
	profiles := []string{c.profile}
	if c.profile == "mixed" {
		profiles = sim.Profiles()
	}
	atTarget := nameSet(c.atTarget)
	down := nameSet(c.down)
	var specs []sim.BMCSpec
	for i, s := range cfg.Servers() {
		if down[s.Name] {
			delete(down, s.Name)
			continue
		}
		u, err := url.Parse(s.BMC)
		if err != nil {
			return nil, fmt.Errorf("server %s: BMC %q: %w", s.Name, s.BMC, err)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		profile := profiles[i%len(profiles)]
		if p := s.Labels[simProfileLabel]; p != "" {
			profile = p
		}
		fw := map[string]string{}
		for k, v := range firmware {
			fw[k] = v
		}
		if atTarget[s.Name] {
			delete(atTarget, s.Name)
			for k, v := range releaseVersions(s.Cluster.Release) {
				fw[k] = v
			}
			for k, v := range target {
				fw[k] = v
			}
		}
		specs = append(specs, sim.BMCSpec{
			Name:     s.Name,
			Addr:     net.JoinHostPort(u.Hostname(), port),
			Profile:  profile,
			Firmware: fw,
			PowerOn:  true,
		})
	}
	for _, left := range []struct {
		flag  string
		names map[string]bool
	}{{"-at-target", atTarget}, {"-down", down}} {
		if len(left.names) > 0 {
			return nil, fmt.Errorf("%s names %s, not servers of %s", left.flag, strings.Join(sortedNames(left.names), ", "), cfg.Path)
		}
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%s has no servers to simulate", cfg.Path)
	}
	return specs, nil
}

// releaseVersions maps a release's component versions onto the simulator's
// component keys, for the components whose match rule names one.
func releaseVersions(r *config.Release) map[string]string {
	out := map[string]string{}
	if r == nil {
		return out
	}
	keys := map[string]string{}
	for _, k := range []string{sim.ComponentBMC, sim.ComponentBIOS, sim.ComponentNIC, sim.ComponentCPLD, sim.ComponentRuntime} {
		keys[strings.ToLower(k)] = k
	}
	for _, comp := range r.Components {
		for _, id := range []string{comp.Match.SoftwareID, comp.Match.ID} {
			if k, ok := keys[strings.ToLower(id)]; ok {
				out[k] = comp.Version.String()
				break
			}
		}
	}
	return out
}

// loadSimConfig loads the configuration for -config, rendering its
// diagnostics like validate does.
func (c *simCommand) loadSimConfig(dir string) (*config.Config, bool) {
	loader := config.NewLoader(config.LoadOptions{Getenv: c.Getenv})
	cfg, diags := loader.Load(dir)
	// The simulator needs only the inventory: unset credentials (env()) are
	// fine here, other errors are not.
	var errs hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d)
		}
	}
	if errs.HasErrors() {
		c.showDiagnostics(errs, loader.Files(), c.Color)
		return nil, false
	}
	return cfg, true
}

func nameSet(list string) map[string]bool {
	set := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			set[n] = true
		}
	}
	return set
}

func sortedNames(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
