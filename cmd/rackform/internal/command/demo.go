package command

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
	"github.com/rackform/rackform/cmd/rackform/internal/run"
	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/examples"
	"github.com/rackform/rackform/executor"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/providers/sim"
)

// The demo fleet. Every name is a server of examples/nexus-lab.
var (
	// demoFirmware is where the simulated fleet starts: one release behind
	// (runtime 4.5.2, listed in upgrade_from, one minor below 4.6.1) and
	// older firmware, so every change is an upgrade.
	demoFirmware = map[string]string{
		sim.ComponentBIOS:    "2.17.3",
		sim.ComponentBMC:     "7.08.12",
		sim.ComponentNIC:     "22.28.1",
		sim.ComponentRuntime: "4.5.2",
	}
	// demoAtTarget start at the release's versions: plan skips them.
	demoAtTarget = []string{"r01-s05", "r02-s04", "r04-s09"}
	// demoDown are not served at all: plan skips them as unreachable.
	demoDown = []string{"r03-s07"}
	// demoProfiles are cycled through the fleet. openbmc is left out: it
	// offers only push updates, for which the provider downloads the image,
	// and the example's image server does not exist.
	demoProfiles = []string{sim.ProfileDMTF, sim.ProfileILO5, sim.ProfileAMI}
)

const (
	demoUser        = "admin"
	demoPasswordEnv = "RACKFORM_BMC_PASSWORD" // what examples/nexus-lab reads
	demoDefaultSpd  = 600
	// demoMaxSpeed keeps the demo's simulated time (about speed × wall
	// time, most of which is real-time overhead) well inside the plan's
	// 72h validity, which apply checks on its scaled clock.
	demoMaxSpeed = 5000
	demoPort     = 8443 // the example's BMC port
)

// demoCommand runs sim → plan → apply on the embedded nexus-lab example.
type demoCommand struct {
	*Meta
	speed     float64
	port      int
	keepState bool
	noColor   bool
}

func (c *demoCommand) Synopsis() string {
	return "Upgrade a simulated 40-server lab: sim, plan, apply, continue"
}
func (c *demoCommand) Usage() string { return "rackform demo [options]" }

func (c *demoCommand) Description() string {
	return `Shows the whole job on the nexus-lab example built into this binary, with
nothing to set up: it writes the example to a temporary directory, serves a
simulated fleet for it on loopback (HTTPS, the example's BMC addresses,
39 of its 40 BMCs: one server is down, three are already at the release),
runs "rackform plan -out" against it with the real redfish provider, shows
the plan, and applies it with the progress view. The demo sets the
example's pause_after_rack variable, so the run pauses after each compute
rack but the last; the demo prints the exact "rackform continue" command an
operator would run and runs it. At the end it prints what the simulator
reports: servers upgraded, skipped and unreachable, and the wall time.

Simulated time runs -speed times faster than real time, for the BMCs and
for the apply's own clock alike: at 600, a 10-minute flash takes a second
and the 15-minute wait after a rack 1.5 seconds. The limit is 5000: the
demo's simulated time must stay inside the plan's 72-hour validity.

The BMC credentials are the simulator's own (the password is generated for
the run unless RACKFORM_SIM_PASSWORD sets it) and reach the example's
provider through RACKFORM_BMC_PASSWORD in this process only; they are never
printed. The example's BMC addresses (127.1.RACK.SERVER:8443) must be
free; -port serves them on another port (changing the demo's copy of the
inventory).

Exit status: 0 when every reachable server ended at the release versions,
1 otherwise, 130 when interrupted.`
}

func (c *demoCommand) Flags() *flag.FlagSet {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.Float64Var(&c.speed, "speed", demoDefaultSpd, "Time scale `X` of the simulator and of apply's clock.")
	fs.IntVar(&c.port, "port", demoPort, "Serve the BMCs on TCP `PORT` instead of the example's 8443 (the demo's copy of inventory.csv is changed to match).")
	fs.BoolVar(&c.keepState, "keep-state", false, "Keep the temporary directory (example, plan file, state directory) and print its path.")
	fs.BoolVar(&c.noColor, "no-color", false, "Never colour or redraw the output (also: the NO_COLOR environment variable).")
	return fs
}

func (c *demoCommand) Run(ctx context.Context, args []string) int {
	_, code, ok := c.operands(c, args, 0, 0, "takes no arguments, got %d")
	if !ok {
		return code
	}
	// Read before helpText, which binds fresh flag storage.
	speed, port := c.speed, c.port
	if speed < 1 || speed > demoMaxSpeed {
		return c.usageFor("demo", "-speed must be between 1 and %d, got %v", demoMaxSpeed, speed)
	}
	if port < 1 || port > 65535 {
		return c.usageFor("demo", "-port %d is not a TCP port", port)
	}
	started := time.Now()
	out := c.Stdout

	tmp, err := os.MkdirTemp("", "rackform-demo-")
	if err != nil {
		return c.fail("creating a temporary directory: %s", err)
	}
	if c.keepState {
		defer fmt.Fprintf(out, "\nKept %s (the example, plan.json and the state directory).\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	cfgDir := filepath.Join(tmp, "nexus-lab")
	planFile := filepath.Join(tmp, "plan.json")
	stateDir := filepath.Join(tmp, "state")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return c.fail("%s", err)
	}
	if err := examples.WriteNexusLab(cfgDir); err != nil {
		return c.fail("%s", err)
	}
	if c.port != demoPort {
		if err := demoMovePort(cfgDir, c.port); err != nil {
			return c.fail("%s", err)
		}
	}

	// The simulator's own credentials, for this run only, reach the
	// example's provider block through env() as a real password would.
	// Like `rackform sim`, RACKFORM_SIM_PASSWORD sets it.
	password := ""
	if c.Getenv != nil {
		password = c.Getenv("RACKFORM_SIM_PASSWORD")
	}
	pwOrigin := "RACKFORM_SIM_PASSWORD"
	if password == "" {
		var err error
		if password, err = demoPassword(); err != nil {
			return c.fail("generating the simulator's password: %s", err)
		}
		pwOrigin = "a password generated for this run"
	}
	meta := *c.Meta
	parent := c.Getenv
	meta.Getenv = func(name string) string {
		if name == demoPasswordEnv {
			return password
		}
		if parent == nil {
			return ""
		}
		return parent(name)
	}
	if c.noColor {
		meta.Color = false
	}
	color := meta.Color

	// 1. The fleet.
	cfg, ok := loadInventory(c.Meta, cfgDir, func(string) string { return "" })
	if !ok {
		return ExitError
	}
	if len(cfg.Clusters) != 1 || cfg.Clusters[0].Release == nil {
		return c.fail("the embedded example has %d clusters, want one with a release", len(cfg.Clusters))
	}
	sc := &simCommand{Meta: &meta, profile: sim.ProfileDMTF, atTarget: strings.Join(demoAtTarget, ","), down: strings.Join(demoDown, ",")}
	specs, err := sc.configSpecs(cfg, demoFirmware, nil)
	if err != nil {
		return c.fail("%s", err)
	}
	for i := range specs {
		specs[i].Profile = demoProfiles[i%len(demoProfiles)]
	}
	simCtx, stopSim := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSim()
	fleet, err := startFleet(simCtx, fleetServe{Options: sim.Options{Speed: c.speed, Username: demoUser, Password: password, TLS: true}}, specs)
	if err != nil {
		return c.fail("starting the simulated fleet: %s (the demo serves the example's BMC addresses, 127.1.RACK.SERVER:%d; is a `rackform sim` or another demo serving them? -port picks another port)", err, c.port)
	}
	defer fleet.Close()
	initial := map[string]map[string]string{}
	for _, s := range specs {
		initial[s.Name] = fleet.Versions(s.Name)
	}
	rel := cfg.Clusters[0].Release
	target := releaseVersions(rel)
	fmt.Fprintf(out, "rackform demo: sim → plan → apply → continue on the built-in nexus-lab example.\n")
	c.header(out, color, "1. A simulated fleet")
	fmt.Fprintf(out, "The nexus-lab example (%d servers in %d racks) is in %s.\n", len(cfg.Servers()), demoRackCount(cfg), cfgDir)
	where := "the example's addresses"
	if c.port != demoPort {
		where = fmt.Sprintf("the example's addresses on port %d (-port)", c.port)
	}
	fmt.Fprintf(out, "Serving %d simulated BMCs over HTTPS at %s (%s), profiles %s:\n", len(specs), where, demoAddrRange(specs), strings.Join(demoProfiles, ", "))
	fmt.Fprintf(out, "  - %s: down, its BMC is not served (unreachable)\n", strings.Join(demoDown, ", "))
	fmt.Fprintf(out, "  - %s: already at release %s\n", strings.Join(demoAtTarget, ", "), rel.Version)
	fmt.Fprintf(out, "  - the others: %s\n", demoVersionList(demoFirmware))
	fmt.Fprintf(out, "Target, release %s: %s\n", rel.Version, demoVersionList(target))
	fmt.Fprintf(out, "Credentials: the simulator's own (user %s, %s), handed to the example's provider through %s; never printed.\n", demoUser, pwOrigin, demoPasswordEnv)
	fmt.Fprintf(out, "Time runs %s× faster than real time, for the BMCs and for apply's clock: a 10-minute flash takes %s, the 15-minute wait after a rack %s.\n",
		demoNum(c.speed), demoReal(10*time.Minute, c.speed), demoReal(15*time.Minute, c.speed))

	// 2. Plan, exactly as `rackform plan -out` does it.
	poll := demoPoll(c.speed)
	planArgs := []string{"-var", "pause_after_rack=true", "-var", "bmc_poll_interval=" + poll.String(), "-state-dir", stateDir, "-out", planFile}
	if c.noColor {
		planArgs = append([]string{"-no-color"}, planArgs...)
	}
	planArgs = append(planArgs, cfgDir)
	c.header(out, color, "2. Plan")
	fmt.Fprintf(out, "$ rackform plan %s\n\n", strings.Join(planArgs, " "))
	if code := (&planCommand{Meta: &meta}).Run(ctx, planArgs); code != ExitOK {
		fmt.Fprintf(c.Stderr, "Error: rackform plan failed (exit %d); the demo stops here.\n", code)
		return demoExit(code)
	}
	file, err := os.ReadFile(planFile)
	if err != nil {
		return c.fail("reading the plan: %s", err)
	}
	sha := plan.SHA256(file)

	// 3. Apply, then continue at every pause, through the commands' own
	// code with apply's clock scaled like the simulator's.
	clock := newScaledClock(c.speed)
	opts := runOpts{Options: run.Options{Clock: clock}, poll: time.Duration(c.speed * float64(250*time.Millisecond))}
	common := []string{"-state-dir", stateDir}
	if c.noColor {
		common = append(common, "-no-color")
	}
	applyArgs := append(append([]string{}, common...), "-expect-sha256", sha, planFile)
	c.header(out, color, "3. Apply")
	fmt.Fprintf(out, "$ rackform apply %s\n\n", strings.Join(applyArgs, " "))
	code = (&applyCommand{Meta: &meta, runOpts: opts}).Run(ctx, applyArgs)
	pauses := 0
	for code == ExitPaused {
		st, rack, err := demoRunState(ctx, stateDir)
		if err != nil {
			return c.fail("reading the run's state: %s", err)
		}
		if st.Name != executor.Paused || st.Reason != executor.ReasonAfterRack {
			return c.fail("the run stopped as %s, not at a pause after a rack; the demo stops here.", st)
		}
		if rack == "" {
			rack = "a compute rack"
		} else {
			rack = "compute rack " + rack
		}
		pauses++
		// continue vouches for the plan the state directory stores as
		// apply did for the plan file: with the reviewed SHA-256.
		contArgs := append(append([]string{}, common...), "-expect-sha256", sha)
		fmt.Fprintln(out)
		if pauses == 1 {
			fmt.Fprintf(out, "The run paused after %s, as pause_after_rack = true asks: apply exited %d.\n", rack, ExitPaused)
			fmt.Fprintln(out, "An operator checks the rack's workloads, then resumes the run from any machine sharing the state directory with:")
		} else {
			fmt.Fprintf(out, "Paused again, after %s; the operator resumes with:\n", rack)
		}
		fmt.Fprintf(out, "\n  rackform continue %s\n\n", strings.Join(contArgs, " "))
		fmt.Fprintln(out, "The demo runs it now.")
		fmt.Fprintf(out, "$ rackform continue %s\n\n", strings.Join(contArgs, " "))
		code = (&continueCommand{Meta: &meta, runOpts: opts}).Run(ctx, contArgs)
	}
	applyCode := code

	// 4. What the simulator says, not what the plan or the journal said.
	sum := demoSummarize(cfg, fleet, initial, target)
	stopSim()
	if err := fleet.Close(); err != nil {
		fmt.Fprintf(c.Stderr, "Warning: stopping the simulated fleet: %s\n", err)
	}
	c.header(out, color, "Summary (from the simulator's state)")
	fmt.Fprintf(out, "Servers upgraded:  %d (now at %s)\n", len(sum.upgraded), demoVersionList(target))
	fmt.Fprintf(out, "Skipped:           %d already at target (%s)\n", len(sum.skipped), strings.Join(sum.skipped, ", "))
	fmt.Fprintf(out, "Unreachable:       %d (%s): never served, never touched\n", len(sum.unreachable), strings.Join(sum.unreachable, ", "))
	if len(sum.behind) > 0 {
		fmt.Fprintf(out, "Not at target:     %d (%s)\n", len(sum.behind), strings.Join(sum.behind, ", "))
	}
	fmt.Fprintf(out, "Reachable servers at target: %d of %d\n", sum.reachable-len(sum.behind), sum.reachable)
	fmt.Fprintf(out, "Pauses continued:  %d\n", pauses)
	wall := time.Since(started)
	fmt.Fprintf(out, "Wall time:         %s (about %s of simulated time at %s×)\n", wall.Round(100*time.Millisecond), demoDur(time.Duration(float64(wall)*c.speed)), demoNum(c.speed))
	switch {
	case applyCode == ExitInterrupted:
		return ExitInterrupted
	case applyCode != ExitOK:
		return c.fail("the apply ended with exit status %d.", applyCode)
	case len(sum.behind) > 0:
		return c.fail("%d reachable servers are not at the release versions.", len(sum.behind))
	}
	fmt.Fprintln(out, "Demo complete.")
	return ExitOK
}

func (c *demoCommand) header(out io.Writer, color bool, title string) {
	if color {
		fmt.Fprintf(out, "\n\x1b[1m== %s ==\x1b[0m\n", title)
		return
	}
	fmt.Fprintf(out, "\n== %s ==\n", title)
}

// demoRunState is the run's state as the state directory records it, and
// the name of the rack whose pause_after_rack pause holds it ("" for none).
func demoRunState(ctx context.Context, dir string) (executor.State, string, error) {
	// The plan applied last, in dir: no environment, so never PostgreSQL.
	r, err := run.OpenForControl(ctx, run.Env{}, dir, "")
	if err != nil {
		return executor.State{}, "", err
	}
	defer r.Close()
	st, err := r.Control.Status(ctx)
	if err != nil {
		return executor.State{}, "", err
	}
	return st.Run.State, pausedRack(st.Run), nil
}

// pausedRack finds the pause node paused after a rack and names its rack:
// the scope whose id the pause's id extends ("<scope>.pause").
func pausedRack(run *executor.Node) string {
	for pause := range applyview.Nodes(run) {
		if pause.Kind == executor.KindPause && pause.State.Name == executor.Paused && pause.State.Reason == executor.ReasonAfterRack {
			for n := range applyview.Nodes(run) {
				if n.Kind == executor.KindScope && n.ID+".pause" == pause.ID {
					return n.Name
				}
			}
			return ""
		}
	}
	return ""
}

type demoSummary struct {
	upgraded, skipped, unreachable, behind []string
	reachable                              int
}

// demoSummarize classifies every server of the configuration by what the
// simulator reports now: its versions against the release's, and whether
// it was ever flashed or reimaged.
func demoSummarize(cfg *config.Config, fleet *sim.Fleet, initial map[string]map[string]string, target map[string]string) demoSummary {
	var s demoSummary
	for _, srv := range cfg.Servers() {
		before, served := initial[srv.Name]
		if !served {
			s.unreachable = append(s.unreachable, srv.Name)
			continue
		}
		s.reachable++
		now := fleet.Versions(srv.Name)
		atTarget := true
		for k, v := range target {
			if now[k] != v {
				atTarget = false
			}
		}
		changed := false
		for k := range target {
			if before[k] != now[k] {
				changed = true
			}
		}
		st := fleet.Stats(srv.Name)
		touched := st.Updates > 0 || st.Reimages > 0
		switch {
		case !atTarget:
			s.behind = append(s.behind, srv.Name)
		case changed && touched:
			s.upgraded = append(s.upgraded, srv.Name)
		case !changed && !touched:
			s.skipped = append(s.skipped, srv.Name)
		default:
			// At target but flashed without a change, or changed without
			// an update: not what an upgrade or a skip looks like.
			s.behind = append(s.behind, srv.Name)
		}
	}
	return s
}

// scaledClock is apply's clock for the demo: time runs speed times faster
// than real time from its start, like the simulator's.
type scaledClock struct {
	start time.Time
	speed float64
	mu    sync.Mutex
}

func newScaledClock(speed float64) *scaledClock {
	return &scaledClock{start: time.Now(), speed: speed}
}

func (c *scaledClock) Now() time.Time {
	return c.start.Add(time.Duration(float64(time.Since(c.start)) * c.speed))
}

// Pace tells the executor that hooks, real processes, run at real time
// on this clock (executor.Paced).
func (c *scaledClock) Pace() float64 { return c.speed }

func (c *scaledClock) At(t time.Time) <-chan time.Time {
	ch := make(chan time.Time, 1)
	d := time.Duration(float64(t.Sub(c.Now())) / c.speed)
	if d <= 0 {
		ch <- c.Now()
		return ch
	}
	time.AfterFunc(d, func() { ch <- c.Now() })
	return ch
}

// demoMovePort rewrites the BMC port of every row of the written
// example's inventory.csv.
func demoMovePort(dir string, port int) error {
	path := filepath.Join(dir, "inventory.csv")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	from := fmt.Sprintf(":%d,", demoPort)
	n := strings.Count(string(b), from)
	if n == 0 {
		return fmt.Errorf("-port: the example's inventory.csv has no BMC on port %d", demoPort)
	}
	return os.WriteFile(path, []byte(strings.ReplaceAll(string(b), from, fmt.Sprintf(":%d,", port))), 0o644)
}

func demoPassword() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "sim-" + hex.EncodeToString(b), nil
}

// demoPoll is the provider's poll interval: a second of simulated time,
// between 20ms and 1s of real time.
func demoPoll(speed float64) time.Duration {
	d := time.Duration(float64(time.Minute) / speed)
	return min(max(d, 20*time.Millisecond), time.Second).Round(time.Millisecond)
}

func demoExit(code int) int {
	if code == ExitInterrupted {
		return code
	}
	return ExitError
}

func demoRackCount(cfg *config.Config) int {
	racks := map[string]bool{}
	for _, s := range cfg.Servers() {
		racks[s.Rack.Name] = true
	}
	return len(racks)
}

func demoAddrRange(specs []sim.BMCSpec) string {
	if len(specs) == 0 {
		return ""
	}
	return specs[0].Addr + " .. " + specs[len(specs)-1].Addr
}

func demoVersionList(v map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(v)) {
		parts = append(parts, k+" "+v[k])
	}
	return strings.Join(parts, ", ")
}

func demoNum(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

func demoReal(d time.Duration, speed float64) string {
	return time.Duration(float64(d) / speed).Round(time.Millisecond).String()
}

func demoDur(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := d/time.Hour, (d%time.Hour)/time.Minute
	if h == 0 {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh%02dm", h, m)
}
