package command

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/providers/sim"
)

// defaultSimPassword is the simulator's own test credential, used when
// neither -password nor RACKFORM_SIM_PASSWORD sets one. It guards nothing
// real: the simulator serves loopback only.
const defaultSimPassword = "rackform-sim"

// simCommand serves a simulated fleet of Redfish BMCs until interrupted.
type simCommand struct {
	*Meta
	n          int
	base       string
	port       int
	profile    string
	speed      float64
	tls        bool
	username   string
	password   string
	faults     stringList
	faultRates stringList
	seed       uint64
	admin      string
	caOut      string
	atTarget   string
	firmware   stringList
	target     stringList
	latency    time.Duration
	log        bool
	configDir  string
	down       string
	// profileForFlags are -profile-for NAME=PROFILE.
	profileForFlags stringList
	// refuse are -refuse NAME=METHOD[,METHOD...].
	refuse stringList
	// absent are -absent NAME=MEMBER[,MEMBER...].
	absent         stringList
	strictTransfer bool
	// aliases map each server of a -config fleet to its BMC's name (the
	// first server on a shared BMC), for -fault.
	aliases map[string]string
	// scenario is -scenario: a rehearsal scenario's faults (sim_scenario.go).
	scenario string
}

func (c *simCommand) Synopsis() string { return "Serve a simulated fleet of Redfish BMCs" }
func (c *simCommand) Usage() string    { return "rackform sim [options]" }

func (c *simCommand) Description() string {
	return `Serves N simulated Redfish BMCs on loopback, one address per BMC from
-base upward (127.1.1.1, 127.1.1.2, ... 127.1.1.254, 127.1.2.1, ...), all on
-port. Each BMC behaves like a real one at -speed times real time: sessions,
resets that take minutes, SimpleUpdate and multipart push creating tasks,
versions that change after the required reset, VirtualMedia reimage.
Profiles: dmtf, ilo5, ami, openbmc (single-system BMCs with a firmware
inventory), basic (an older BMC: no firmware inventory, Basic auth only),
crayex (one BMC, 2 systems Node0 and Node1), idrac (Dell iDRAC9: inventory
Ids that carry the version, Previous- rollback images), xcc (Lenovo XCC:
BMC-Backup and -Pending members), hgx (Supermicro HGX: 8 GPUs of one
SoftwareId, several Targets per update), sushy (sushy-tools' emulator:
Basic credentials wanted on the session login, no inventory, updates of
the System only, answered 204), mixed (cycling through the first four) or all
(cycling through all ten). -profile-for picks one server's (or BMC's)
profile; -absent makes inventory members of a BMC absent (a GPU not
fitted).

With -config, every server starts just behind its cluster's release, in
each component's own version format ("P79 v1.46" starts at "P79 v1.45"),
and servers that share one BMC address, each naming its system, are served
by one multi-system BMC (crayex) with one system per server.

Images name their component and version: .../bios-2.80.bin updates BIOS to
2.80, runtime-4.6.1.iso (VirtualMedia) installs Runtime 4.6.1. Components:
BMC, BIOS, NIC, CPLD, Runtime.

Faults: -fault NAME=KIND[:ARG] on one BMC, -fault-rate KIND[:ARG]=P across
the fleet (deterministic with -seed). Kinds: latency:DUR, timeout[:DUR],
error[:COUNT], busy[:DUR], malformed[:COUNT], session-limit:N, task-fail,
task-hang, no-return, ignore-graceful, provisioning, read-only-fs,
unknown-state, down (every connection dropped), host-down (the host off,
health Critical), slow:X (update tasks X times as long),
bmc-restart-during-update:took|lost[:COUNT][:drops-staged] (the BMC
restarts halfway through an update's flash: unreachable for its reset
time, its sessions and the task gone (404), the component at its new
version with took, at its old one with lost; COUNT updates, default every
one: lost:1 takes on the second try; drops-staged: the restart also
discards the images staged for the next host reset), update-offline[:STATE] (the UpdateService reports
Status.State STATE, default UnavailableOffline; Disabled also turns
ServiceEnabled off; updates are refused).

Prints a ready line, the credentials it accepts and the BMC URLs on stdout,
then serves until SIGINT or SIGTERM. -admin serves a JSON control API
(GET /stats, GET /stats/NAME, GET /bmcs, POST /faults).`
}

func (c *simCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	c.faults, c.faultRates, c.firmware, c.target, c.profileForFlags, c.refuse, c.absent = nil, nil, nil, nil, nil, nil, nil
	fs.IntVar(&c.n, "n", 10, "Serve `N` BMCs.")
	fs.StringVar(&c.base, "base", "127.1.1.1", "First BMC `IP` (loopback); the others follow.")
	fs.IntVar(&c.port, "port", 8443, "TCP `PORT` of every BMC (0: a free port each).")
	fs.StringVar(&c.profile, "profile", "dmtf", "Hardware `PROFILE`: "+strings.Join(sim.AllProfiles(), ", ")+", mixed or all.")
	fs.Var(&c.absent, "absent", "Make inventory members of a BMC (or with -config, a server's BMC) absent: `NAME=MEMBER[,MEMBER]`, e.g. bmc-0001=HGX_FW_GPU_SXM_3. Repeatable.")
	fs.Var(&c.refuse, "refuse", "Make a BMC (or with -config, a server's BMC) advertise but refuse update methods: `NAME=METHOD[,METHOD]` with simple_update, http_push, multipart_push. Repeatable.")
	fs.BoolVar(&c.strictTransfer, "strict-transfer-protocol", false, "ami BMCs require SimpleUpdate's TransferProtocol and allow only HTTP or FTP, as the real one's ActionInfo says.")
	fs.Var(&c.profileForFlags, "profile-for", "Give one BMC (or with -config, one server) its own profile: `NAME=PROFILE`. Repeatable.")
	fs.Float64Var(&c.speed, "speed", 1, "Time scale `X`: 6000 makes a 10-minute flash take 100 ms.")
	fs.BoolVar(&c.tls, "tls", false, "Serve HTTPS with a CA generated at start (see -ca-out). With -config, on by itself when the BMC addresses are https://.")
	fs.StringVar(&c.username, "username", "admin", "User `NAME` the BMCs accept.")
	fs.StringVar(&c.password, "password", "", "`PASSWORD` the BMCs accept (default: RACKFORM_SIM_PASSWORD, else "+defaultSimPassword+").")
	fs.Var(&c.faults, "fault", "Inject a fault: `NAME=KIND[:ARG]`. Repeatable.")
	fs.Var(&c.faultRates, "fault-rate", "Inject a fault by probability: `KIND[:ARG]=P`. Repeatable.")
	fs.Uint64Var(&c.seed, "seed", 1, "`SEED` of -fault-rate.")
	fs.StringVar(&c.admin, "admin", "", "Serve the JSON control API on `ADDR` (loopback), e.g. 127.0.0.1:9900.")
	fs.StringVar(&c.caOut, "ca-out", "", "Write the CA certificate (PEM) to `FILE` (with -tls).")
	fs.StringVar(&c.atTarget, "at-target", "", "BMC `NAMES` (comma-separated) that start at the -target versions.")
	fs.Var(&c.firmware, "firmware", "Initial version of a component on every BMC: `COMPONENT=VERSION`. Repeatable.")
	fs.Var(&c.target, "target", "Version the -at-target BMCs start with: `COMPONENT=VERSION`. Repeatable.")
	fs.DurationVar(&c.latency, "latency", 0, "Add `DURATION` to every response of every BMC.")
	fs.BoolVar(&c.log, "log", false, "Log every request on stderr.")
	fs.StringVar(&c.configDir, "config", "", "Serve one BMC per server of the configuration in `DIR`, at the server's bmc address (-n and -base are ignored). -at-target then names servers, which start at their cluster's release versions.")
	fs.StringVar(&c.scenario, "scenario", "", "With -config: inject the faults of the rehearsal scenario in `FILE` (rackform rehearse -scenario), at and for on the simulator's clock from its start (-speed times faster); what it cannot inject as a rehearsal does is refused.")
	fs.StringVar(&c.down, "down", "", "With -config: server `NAMES` (comma-separated) whose BMC is not served at all (unreachable).")
	return fs
}

func (c *simCommand) Run(ctx context.Context, args []string) int {
	_, code, ok := c.operands(c, args, 0, 0, "takes no arguments, got %d")
	if !ok {
		return code
	}
	var specs []sim.BMCSpec
	var cfg *config.Config
	var err error
	if c.configDir != "" {
		var ok bool
		cfg, ok = loadInventory(c.Meta, c.configDir, c.Getenv)
		if !ok {
			return ExitError
		}
		specs, err = c.specsFromConfig(cfg)
		if err == nil && !c.tls {
			c.tls, err = configWantsTLS(cfg)
		}
	} else {
		specs, err = c.specs()
	}
	if err == nil {
		err = c.applyQuirks(specs)
	}
	if err != nil {
		return c.usageFor("sim", "%s", err)
	}
	serve, err := c.serveOptions()
	if err == nil && c.configDir != "" {
		serve.Faults = c.faultsByBMC(serve.Faults)
	}
	if err == nil && c.scenario != "" {
		if cfg == nil {
			err = errors.New("-scenario needs -config: a scenario names servers of a configuration")
		} else {
			more, sc, diags := c.scenarioFaults(cfg, c.scenario)
			if diags.HasErrors() {
				c.showDiagnostics(diags, sc.Files(), c.Color)
				return ExitError
			}
			for name, fs := range more {
				serve.Faults[name] = append(serve.Faults[name], fs...)
			}
		}
	}
	if err != nil {
		return c.usageFor("sim", "%s", err)
	}
	if err := serveFleet(ctx, c.Stdout, c.Stderr, serve, specs); err != nil {
		return c.fail("%s", err)
	}
	return ExitOK
}

// fleetServe is how serveFleet runs a fleet, whatever built its specs
// (flags here; a configuration's inventory elsewhere).
type fleetServe struct {
	Options sim.Options
	// Faults are injected per BMC name before the fleet serves.
	Faults map[string][]sim.Fault
	Rate   sim.FaultRate
	// Admin is the control API's address ("" for none).
	Admin string
	// CAOut receives the CA certificate with TLS ("" for none).
	CAOut string
}

func (c *simCommand) serveOptions() (fleetServe, error) {
	var s fleetServe
	pw := cmp.Or(c.password, c.Getenv("RACKFORM_SIM_PASSWORD"), defaultSimPassword)
	if c.speed <= 0 {
		return s, fmt.Errorf("-speed must be positive, got %v", c.speed)
	}
	s.Options = sim.Options{Speed: c.speed, Username: c.username, Password: pw, TLS: c.tls, Latency: c.latency}
	if c.log {
		s.Options.Log = c.Stderr
	}
	s.Faults = map[string][]sim.Fault{}
	for _, f := range c.faults {
		name, spec, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return s, fmt.Errorf("-fault %q: want NAME=KIND[:ARG]", f)
		}
		ft, err := sim.ParseFault(spec)
		if err != nil {
			return s, fmt.Errorf("-fault %q: %w", f, err)
		}
		s.Faults[name] = append(s.Faults[name], ft)
	}
	s.Rate = sim.FaultRate{Seed: c.seed, Rates: map[sim.FaultKind]float64{}, Args: map[sim.FaultKind]sim.Fault{}}
	for _, r := range c.faultRates {
		spec, pstr, ok := strings.Cut(r, "=")
		p, err := strconv.ParseFloat(pstr, 64)
		if !ok || err != nil || p < 0 || p > 1 {
			return s, fmt.Errorf("-fault-rate %q: want KIND[:ARG]=P with P in [0,1]", r)
		}
		ft, err := sim.ParseFault(spec)
		if err != nil {
			return s, fmt.Errorf("-fault-rate %q: %w", r, err)
		}
		s.Rate.Rates[ft.Kind] = p
		s.Rate.Args[ft.Kind] = ft
	}
	if c.caOut != "" && !c.tls {
		return s, errors.New("-ca-out needs -tls")
	}
	s.Admin, s.CAOut = c.admin, c.caOut
	return s, nil
}

// applyQuirks applies -refuse, -absent and -strict-transfer-protocol to
// specs.
func (c *simCommand) applyQuirks(specs []sim.BMCSpec) error {
	byName := map[string]*sim.BMCSpec{}
	for i := range specs {
		specs[i].StrictTransferProtocol = c.strictTransfer
		byName[specs[i].Name] = &specs[i]
	}
	for _, a := range c.absent {
		name, members, ok := strings.Cut(a, "=")
		s := byName[c.bmcOf(name)]
		if !ok || s == nil || members == "" {
			return fmt.Errorf("-absent %q: want NAME=MEMBER[,MEMBER] naming a BMC or server of this fleet", a)
		}
		for _, m := range strings.Split(members, ",") {
			s.Absent = append(s.Absent, strings.TrimSpace(m))
		}
	}
	for _, r := range c.refuse {
		name, methods, ok := strings.Cut(r, "=")
		if !ok || name == "" || methods == "" {
			return fmt.Errorf("-refuse %q: want NAME=METHOD[,METHOD]", r)
		}
		name = c.bmcOf(name)
		s := byName[name]
		if s == nil {
			return fmt.Errorf("-refuse %q: no BMC or server named %s", r, name)
		}
		for _, m := range strings.Split(methods, ",") {
			m = strings.TrimSpace(m)
			if m != sim.MethodSimpleUpdate && m != sim.MethodHTTPPush && m != sim.MethodMultipartPush {
				return fmt.Errorf("-refuse %q: method %q is not simple_update, http_push or multipart_push", r, m)
			}
			s.Refuse = append(s.Refuse, m)
		}
	}
	return nil
}

// configWantsTLS reports whether a configuration's BMC addresses are all
// https:// (then -config serves HTTPS without -tls, so a plan on the same
// directory connects); a mix of http:// and https:// cannot be served by
// one simulated fleet.
func configWantsTLS(cfg *config.Config) (bool, error) {
	var https, plain []string
	for _, s := range cfg.Servers() {
		if strings.HasPrefix(strings.ToLower(s.BMC), "https://") {
			https = append(https, s.Name)
		} else {
			plain = append(plain, s.Name)
		}
	}
	if len(https) > 0 && len(plain) > 0 {
		return false, fmt.Errorf("%s mixes https:// BMC addresses (%s, ...) and http:// ones (%s, ...): the simulator serves one or the other; simulate them from separate directories", cfg.Path, https[0], plain[0])
	}
	return len(https) > 0, nil
}

// faultsByBMC renames -fault targets from servers to their BMC (a shared
// BMC is named after its first server).
func (c *simCommand) faultsByBMC(faults map[string][]sim.Fault) map[string][]sim.Fault {
	out := map[string][]sim.Fault{}
	for name, fs := range faults {
		bmc := c.bmcOf(name)
		out[bmc] = append(out[bmc], fs...)
	}
	return out
}

// bmcOf is the BMC that serves name: with -config, a server's (a shared
// BMC is named after its first server); else name itself.
func (c *simCommand) bmcOf(name string) string {
	if bmc, ok := c.aliases[name]; ok {
		return bmc
	}
	return name
}

func parseVersions(flagName string, l stringList) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range l {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%s %q: want COMPONENT=VERSION", flagName, kv)
		}
		out[k] = v
	}
	return out, nil
}

// versionFlags parses -firmware and -target.
func (c *simCommand) versionFlags() (firmware, target map[string]string, err error) {
	if firmware, err = parseVersions("-firmware", c.firmware); err != nil {
		return nil, nil, err
	}
	target, err = parseVersions("-target", c.target)
	return firmware, target, err
}

// specsFromConfig builds the fleet from a configuration's inventory.
func (c *simCommand) specsFromConfig(cfg *config.Config) ([]sim.BMCSpec, error) {
	firmware, target, err := c.versionFlags()
	if err != nil {
		return nil, err
	}
	return c.configSpecs(cfg, firmware, target)
}

// specs builds the fleet from the flags.
func (c *simCommand) specs() ([]sim.BMCSpec, error) {
	if c.n < 1 {
		return nil, fmt.Errorf("-n must be at least 1, got %d", c.n)
	}
	if c.port < 0 || c.port > 65535 {
		return nil, fmt.Errorf("-port %d is not a TCP port", c.port)
	}
	profiles, profileFor, err := c.profileChoice()
	if err != nil {
		return nil, err
	}
	ips, err := simAddresses(c.base, c.n)
	if err != nil {
		return nil, err
	}
	firmware, target, err := c.versionFlags()
	if err != nil {
		return nil, err
	}
	atTarget := nameSet(c.atTarget)
	if len(atTarget) > 0 && len(target) == 0 {
		return nil, errors.New("-at-target needs -target COMPONENT=VERSION")
	}
	width := max(4, len(strconv.Itoa(c.n)))
	specs := make([]sim.BMCSpec, c.n)
	known := map[string]bool{}
	for i := range specs {
		name := fmt.Sprintf("bmc-%0*d", width, i+1)
		known[name] = true
		fw := maps.Clone(firmware)
		if atTarget[name] {
			maps.Copy(fw, target)
		}
		profile := cmp.Or(profileFor[name], profiles[i%len(profiles)])
		specs[i] = sim.BMCSpec{
			Name:     name,
			Addr:     net.JoinHostPort(ips[i].String(), strconv.Itoa(c.port)),
			Profile:  profile,
			Firmware: fw,
			PowerOn:  true,
		}
	}
	fleet := fmt.Sprintf("BMCs of this fleet (bmc-%0*d..bmc-%0*d)", width, 1, width, c.n)
	if err := checkNamed(known, fleet, namedFlag{"-profile-for", boolSet(profileFor)}, namedFlag{"-at-target", atTarget}); err != nil {
		return nil, err
	}
	return specs, nil
}

// simAddresses returns n loopback IPv4 addresses from base, skipping .0 and
// .255 in the last octet.
func simAddresses(base string, n int) ([]net.IP, error) {
	ip := net.ParseIP(base).To4()
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("-base %q is not a loopback IPv4 address", base)
	}
	out := make([]net.IP, 0, n)
	cur := [4]byte{ip[0], ip[1], ip[2], ip[3]}
	for len(out) < n {
		if cur[3] != 0 && cur[3] != 255 {
			out = append(out, net.IPv4(cur[0], cur[1], cur[2], cur[3]).To4())
		}
		// Increment as a 24-bit number inside 127.0.0.0/8.
		for i := 3; i >= 1; i-- {
			cur[i]++
			if cur[i] != 0 {
				break
			}
			if i == 1 {
				return nil, fmt.Errorf("-base %s: %d BMCs do not fit in 127.0.0.0/8", base, n)
			}
		}
	}
	return out, nil
}

// serveFleet builds the fleet from specs, serves it, prints what it serves
// on out, and blocks until ctx ends; then it stops every listener. The specs
// may come from flags or from a configuration's inventory.
func serveFleet(ctx context.Context, out, errOut io.Writer, s fleetServe, specs []sim.BMCSpec) error {
	fleet, err := startFleet(ctx, s, specs)
	if err != nil {
		return err
	}
	defer fleet.Close()
	if s.CAOut != "" {
		if err := os.WriteFile(s.CAOut, fleet.CACertPEM(), 0o644); err != nil {
			return fmt.Errorf("writing the CA certificate: %w", err)
		}
	}
	var admin *http.Server
	if s.Admin != "" {
		host, _, err := net.SplitHostPort(s.Admin)
		if ip := net.ParseIP(host); err != nil || ((ip == nil || !ip.IsLoopback()) && host != "localhost") {
			return fmt.Errorf("-admin %q: want a loopback host:port", s.Admin)
		}
		ln, err := net.Listen("tcp", s.Admin)
		if err != nil {
			return fmt.Errorf("-admin: %w", err)
		}
		admin = &http.Server{Handler: fleet.AdminHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = admin.Serve(ln) }()
		defer admin.Close()
		s.Admin = ln.Addr().String()
	}
	printReady(out, fleet.BMCs(), s)
	select {
	case <-ctx.Done():
	case <-fleet.Done():
	}
	fmt.Fprintln(errOut, "rackform sim: stopping")
	if err := fleet.Close(); err != nil {
		return err
	}
	fmt.Fprintln(errOut, "rackform sim: stopped")
	return nil
}

// startFleet builds the fleet from specs, injects s's faults and starts
// serving it until ctx ends or it is closed: the one way `rackform sim`
// and the demo start a simulated fleet.
func startFleet(ctx context.Context, s fleetServe, specs []sim.BMCSpec) (*sim.Fleet, error) {
	fleet, err := sim.New(s.Options, specs)
	if err != nil {
		return nil, err
	}
	for name, faults := range s.Faults {
		for _, ft := range faults {
			if err := fleet.SetFault(name, ft); err != nil {
				return nil, fmt.Errorf("-fault: %w", err)
			}
		}
	}
	if len(s.Rate.Rates) > 0 {
		fleet.SetFaultRate(s.Rate)
	}
	if err := fleet.Start(ctx); err != nil {
		return nil, err
	}
	return fleet, nil
}

func printReady(out io.Writer, bmcs []sim.BMCInfo, s fleetServe) {
	hostPort := func(u string) (string, string) {
		h, p, _ := net.SplitHostPort(u[strings.Index(u, "://")+3:])
		return h, p
	}
	scheme := "http"
	if s.Options.TLS {
		scheme = "https"
	}
	firstHost, port := hostPort(bmcs[0].URL)
	lastHost, lastPort := hostPort(bmcs[len(bmcs)-1].URL)
	where := firstHost
	if len(bmcs) > 1 {
		where += ".." + lastHost
	}
	portText := "port " + port
	if port != lastPort {
		portText = "various ports"
	}
	fmt.Fprintf(out, "rackform sim: ready: %d BMCs on %s %s (%s)\n", len(bmcs), where, portText, scheme)
	fmt.Fprintf(out, "rackform sim: credentials: %s / %s (the simulator's own test credentials, accepted by every BMC)\n", s.Options.Username, s.Options.Password)
	if s.CAOut != "" {
		fmt.Fprintf(out, "rackform sim: CA certificate: %s\n", s.CAOut)
	}
	if s.Admin != "" {
		fmt.Fprintf(out, "rackform sim: admin API: http://%s\n", s.Admin)
	}
	show := bmcs
	if len(bmcs) > 20 {
		show = append(append([]sim.BMCInfo{}, bmcs[:3]...), bmcs[len(bmcs)-1])
	}
	for i, b := range show {
		if len(bmcs) > 20 && i == 3 {
			fmt.Fprintf(out, "  ... %d more\n", len(bmcs)-4)
		}
		if len(b.Systems) > 0 {
			fmt.Fprintf(out, "  %s %s (%s: systems %s)\n", b.Name, b.URL, b.Profile, strings.Join(b.Systems, ", "))
			continue
		}
		fmt.Fprintf(out, "  %s %s (%s)\n", b.Name, b.URL, b.Profile)
	}
}
