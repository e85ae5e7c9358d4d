package command

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers/sim"
)

// simProfileLabel is the server label that picks a simulated hardware
// profile for one server (one of sim.AllProfiles: "dmtf", "ilo5", "ami",
// "openbmc", "basic", "crayex", "idrac", "xcc", "hgx", "sushy"), or for
// a device one of sim.DeviceProfiles ("slingshot", every device's
// default).
// -profile-for does the same from the command line.
const simProfileLabel = "sim_profile"

// uuidRe matches a UUID, which a server's system may be instead of an Id.
var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// configSpecs builds the simulated fleet from a configuration's inventory:
// one BMC per BMC address, so `rackform plan` on the same directory finds
// every BMC where the config says it is. Servers that share an address
// (each naming its system) become one multi-system BMC (profile crayex),
// with one system per server, Id or UUID as the server names it.
//
// A cluster without a release attribute (a channel chooses it) starts at a
// catalog release: the one its sim_release label names, else the oldest
// the catalog publishes (config.SimStartRelease).
//
// Every server starts behind its cluster's release: each component whose
// match rule names a simulated component (by software_id or id, or a
// runtime by kind) reports a version just older than the target, written
// in the component's own scheme ("P79 v1.46" → "P79 v1.45", "2.19.1" →
// "2.19.0"; an opaque target gets a different string). firmware (-firmware)
// overrides that. Servers named in atTarget start at the release's versions,
// and target (-target) wins over those. Servers named in down are left out
// (their BMC is unreachable; on a shared BMC, every system's).
func (c *simCommand) configSpecs(cfg *config.Config, firmware, target map[string]string) ([]sim.BMCSpec, error) {
	profiles, profileFor, err := c.profileChoice()
	if err != nil {
		return nil, err
	}
	atTarget := nameSet(c.atTarget)
	down := nameSet(c.down)
	known := map[string]bool{}
	type group struct {
		addr    string
		servers []*config.Server
	}
	var groups []*group
	byAddr := map[string]*group{}
	for _, s := range cfg.Servers() {
		known[s.Name] = true
		u, err := url.Parse(s.BMC)
		if err != nil {
			return nil, fmt.Errorf("server %s: BMC %q: %w", s.Name, s.BMC, err)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		addr := net.JoinHostPort(u.Hostname(), port)
		g := byAddr[addr]
		if g == nil {
			g = &group{addr: addr}
			byAddr[addr] = g
			groups = append(groups, g)
		}
		g.servers = append(g.servers, s)
	}
	if err := checkNamed(known, "servers of "+cfg.Path, namedFlag{"-at-target", atTarget}, namedFlag{"-down", down}, namedFlag{"-profile-for", boolSet(profileFor)}); err != nil {
		return nil, err
	}
	var specs []sim.BMCSpec
	c.aliases = map[string]string{}
	for i, g := range groups {
		first := g.servers[0]
		if slices.ContainsFunc(g.servers, func(s *config.Server) bool { return down[s.Name] }) {
			continue
		}
		profile := profiles[i%len(profiles)]
		chosen := ""
		for _, s := range g.servers {
			for _, p := range []string{s.Labels[simProfileLabel], profileFor[s.Name]} {
				if p != "" {
					if chosen != "" && chosen != p {
						return nil, fmt.Errorf("servers on BMC %s are given profiles %s and %s: one BMC has one profile", g.addr, chosen, p)
					}
					chosen = p
				}
			}
		}
		multi := len(g.servers) > 1
		switch {
		case first.IsDevice() && chosen == "":
			// A device gets a device's BMC: no ComputerSystem.
			profile = sim.DeviceProfiles()[0]
		case first.IsDevice() != sim.IsDeviceProfile(chosen) && chosen != "":
			what := map[bool]string{true: "a device (a device block)", false: "a server"}[first.IsDevice()]
			return nil, fmt.Errorf("%s is %s, but is given profile %s, which is %s: a device profile (%s) serves no ComputerSystem, a server's does",
				first.Name, what, chosen, map[bool]string{true: "a device's", false: "a server's"}[sim.IsDeviceProfile(chosen)], strings.Join(sim.DeviceProfiles(), ", "))
		case chosen != "":
			profile = chosen
		case multi || first.System != "":
			profile = sim.ProfileCrayEX
		case profile == sim.ProfileCrayEX:
			// A server that names no system never gets a multi-system BMC
			// from cycling: plan would ask it to name one.
			profile = sim.ProfileDMTF
		}
		if multi && profile != sim.ProfileCrayEX {
			return nil, fmt.Errorf("servers %s share BMC %s, but profile %s serves one system: only %s serves several", serverNames(g.servers), g.addr, profile, sim.ProfileCrayEX)
		}
		if len(g.servers) > 4 {
			return nil, fmt.Errorf("servers %s share BMC %s: a simulated BMC serves at most 4 systems", serverNames(g.servers), g.addr)
		}
		spec := sim.BMCSpec{Name: first.Name, Addr: g.addr, Profile: profile, PowerOn: true, Firmware: map[string]string{}}
		// Systems: one per server, as each names it.
		sysIDs := make([]string, len(g.servers))
		if profile == sim.ProfileCrayEX {
			used := map[string]bool{}
			for _, s := range g.servers {
				if s.System != "" && !uuidRe.MatchString(s.System) {
					used[s.System] = true
				}
			}
			next := 0
			free := func() string {
				for used[fmt.Sprintf("Node%d", next)] {
					next++
				}
				id := fmt.Sprintf("Node%d", next)
				used[id] = true
				return id
			}
			for j, s := range g.servers {
				ss := sim.SystemSpec{ID: s.System, Name: s.Name}
				if s.System == "" || uuidRe.MatchString(s.System) {
					ss.ID, ss.UUID = free(), s.System
				}
				sysIDs[j] = ss.ID
				spec.Systems = append(spec.Systems, ss)
			}
			for len(spec.Systems) < 2 {
				spec.Systems = append(spec.Systems, sim.SystemSpec{ID: free()})
			}
		} else if first.System != "" {
			ss := sim.SystemSpec{ID: first.System, Name: first.Name}
			if uuidRe.MatchString(first.System) {
				ss = sim.SystemSpec{UUID: first.System, Name: first.Name}
			}
			spec.Systems = []sim.SystemSpec{ss}
		}
		// Versions: behind the release, then -firmware, then at target.
		for j, s := range g.servers {
			c.aliases[s.Name] = first.Name
			prefix := ""
			if profile == sim.ProfileCrayEX {
				prefix = sysIDs[j] + "."
			}
			rel := releaseComponents(s.Cluster.Release, s)
			startAt := false
			if s.Cluster.Release == nil {
				// A cluster whose channel chooses its release runs a
				// catalog release: sim_release, else the oldest.
				rel, startAt = releaseComponents(config.SimStartRelease(cfg, s.Cluster), s), true
			}
			for _, rc := range rel {
				key := rc.key
				if perSystem(key) {
					key = prefix + key
				} else if j > 0 {
					continue // a shared component: the first server's release decides
				}
				spec.Firmware[key] = behindVersion(rc.version)
				if startAt {
					spec.Firmware[key] = rc.version.String()
				}
				if rc.softwareID != "" {
					if spec.SoftwareIDs == nil {
						spec.SoftwareIDs = map[string]string{}
					}
					spec.SoftwareIDs[rc.key] = rc.softwareID
				}
			}
			for k, v := range firmware {
				setVersion(spec.Firmware, prefix, k, v, j == 0)
			}
			if atTarget[s.Name] {
				for _, rc := range rel {
					setVersion(spec.Firmware, prefix, rc.key, rc.version.String(), j == 0)
				}
				for k, v := range target {
					setVersion(spec.Firmware, prefix, k, v, j == 0)
				}
			}
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%s has no servers to simulate", cfg.Path)
	}
	return specs, nil
}

// setVersion sets component k (a plain key such as BIOS) to v in fw: the
// system's own for a per-system component, else the BMC's (only from the
// first server on a shared BMC).
func setVersion(fw map[string]string, prefix, k, v string, first bool) {
	if perSystem(k) {
		fw[prefix+k] = v
		return
	}
	if first {
		fw[k] = v
	}
}

// perSystem reports whether a component key is one per system on a BMC
// with several (BIOS, Runtime) rather than the BMC's own.
func perSystem(key string) bool {
	return strings.EqualFold(key, sim.ComponentBIOS) || strings.EqualFold(key, sim.ComponentRuntime)
}

func serverNames(servers []*config.Server) string {
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// namedFlag is the names a flag gives (-at-target, -down, -profile-for).
type namedFlag struct {
	flag  string
	names map[string]bool
}

// checkNamed refuses the first flag that gives a name not in known, saying
// what the names must be (what: "servers of DIR").
func checkNamed(known map[string]bool, what string, flags ...namedFlag) error {
	for _, f := range flags {
		var unknown []string
		for n := range f.names {
			if !known[n] {
				unknown = append(unknown, n)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return fmt.Errorf("%s names %s, not %s", f.flag, strings.Join(unknown, ", "), what)
		}
	}
	return nil
}

func boolSet(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// profileChoice is the profiles the fleet cycles through (-profile, with
// mixed and all expanded) and the servers or BMCs given their own
// (-profile-for).
func (c *simCommand) profileChoice() (cycle []string, profileFor map[string]string, err error) {
	cycle = []string{c.profile}
	switch c.profile {
	case "mixed":
		cycle = sim.Profiles()
	case "all":
		cycle = sim.AllProfiles()
	}
	profileFor, err = c.profileFor()
	return cycle, profileFor, err
}

// profileFor parses -profile-for NAME=PROFILE.
func (c *simCommand) profileFor() (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range c.profileForFlags {
		name, p, ok := strings.Cut(kv, "=")
		if !ok || name == "" || p == "" {
			return nil, fmt.Errorf("-profile-for %q: want NAME=PROFILE", kv)
		}
		if all := append(sim.AllProfiles(), sim.DeviceProfiles()...); !slices.Contains(all, p) {
			return nil, fmt.Errorf("-profile-for %q: unknown profile %q (want one of %s)", kv, p, strings.Join(all, ", "))
		}
		out[name] = p
	}
	return out, nil
}

// releaseComponent is a release component the simulator can report.
type releaseComponent struct {
	key        string // the simulator's component key
	version    version.Version
	softwareID string // the SoftwareId to report, when not the key
}

// releaseComponents maps a release's components onto the simulator's
// component keys: by match software_id or id, or a runtime (kind) whose
// software_id is its own ("runtime-os"), which the simulator then reports.
//
// With s, only the components for s: a device's kind's, or a server's
// (config.Component.For); nil: every component.
func releaseComponents(r *config.Release, s *config.Server) []releaseComponent {
	if r == nil {
		return nil
	}
	keys := map[string]string{}
	for _, k := range []string{sim.ComponentBMC, sim.ComponentBIOS, sim.ComponentNIC, sim.ComponentCPLD, sim.ComponentRuntime} {
		keys[strings.ToLower(k)] = k
	}
	var out []releaseComponent
	for _, comp := range r.Components {
		if s != nil && !comp.For(s) {
			continue
		}
		found := false
		for _, id := range []string{comp.Match.SoftwareID, comp.Match.ID} {
			if k, ok := keys[strings.ToLower(id)]; ok {
				out = append(out, releaseComponent{key: k, version: comp.Version})
				found = true
				break
			}
		}
		if !found && comp.Kind == config.KindRuntime && comp.Match.SoftwareID != "" {
			out = append(out, releaseComponent{key: sim.ComponentRuntime, version: comp.Version, softwareID: comp.Match.SoftwareID})
		}
	}
	return out
}

// releaseVersions maps a release's component versions onto the simulator's
// component keys, for the components whose match rule names one.
func releaseVersions(r *config.Release) map[string]string {
	out := map[string]string{}
	for _, rc := range releaseComponents(r, nil) {
		out[rc.key] = rc.version.String()
	}
	return out
}

// behindVersion is a version just older than v in v's own format, a
// release date kept where another number can be lowered.
func behindVersion(v version.Version) string { return version.Previous(v, false) }

// loadInventory loads the configuration a simulated fleet is built from
// (sim -config, the demo), rendering its errors like validate does. The
// simulator needs only the inventory: warnings (unset credentials read
// with env()) are dropped, errors are not.
func loadInventory(m *Meta, dir string, getenv func(string) string) (*config.Config, bool) {
	loader := config.NewLoader(config.LoadOptions{Getenv: getenv})
	cfg, diags := loader.Load(dir)
	var errs hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d)
		}
	}
	if errs.HasErrors() {
		m.showDiagnostics(errs, loader.Files(), m.Color)
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
