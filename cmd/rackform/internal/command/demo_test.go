package command

import (
	"path"
	"strings"
	"testing"
	"time"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/examples"
	"github.com/rackform/rackform/providers/sim"
)

// loadEmbeddedNexusLab loads the example the demo runs, from the binary's
// copy.
func loadEmbeddedNexusLab(t *testing.T) *config.Config {
	t.Helper()
	dir := t.TempDir()
	if err := examples.WriteNexusLab(dir); err != nil {
		t.Fatal(err)
	}
	l := config.NewLoader(config.LoadOptions{Getenv: func(string) string { return "" }})
	cfg, diags := l.Load(dir)
	if diags.HasErrors() {
		t.Fatalf("the embedded nexus-lab does not load: %s", diags.Error())
	}
	return cfg
}

// TestDemoFleetFitsTheExample checks the demo's fleet against the example:
// the servers it names exist, every component matches a simulated one by
// SoftwareId, every starting version is older than the release's (so the
// plan has no downgrade) and the runtime starts at a release the example
// may upgrade from, and every image names its component as the simulator
// expects.
func TestDemoFleetFitsTheExample(t *testing.T) {
	cfg := loadEmbeddedNexusLab(t)
	for _, n := range append(append([]string{}, demoAtTarget...), demoDown...) {
		if cfg.Server(n) == nil {
			t.Errorf("the demo names server %s, which nexus-lab does not have", n)
		}
	}
	if len(cfg.Clusters) != 1 {
		t.Fatalf("%d clusters, the demo expects one", len(cfg.Clusters))
	}
	rel := cfg.Clusters[0].Release
	seen := map[string]bool{}
	for _, c := range rel.Components {
		key := c.Match.SoftwareID
		from, ok := demoFirmware[key]
		if !ok {
			t.Errorf("component %q matches software_id %q, which the demo fleet does not set (keys: BMC, BIOS, NIC, Runtime)", c.Name, key)
			continue
		}
		seen[key] = true
		v, err := c.Version.Format().Parse(from)
		if err != nil {
			t.Errorf("demo version %s=%s does not parse under %s: %v", key, from, c.Scheme, err)
			continue
		}
		if order, err := version.Compare(v, c.Version); err != nil || order >= 0 {
			t.Errorf("demo starts %s at %s, not older than the release's %s", key, from, c.Version)
		}
		base := strings.ToLower(path.Base(c.Image))
		if !strings.HasPrefix(base, strings.ToLower(key)+"-"+c.Version.String()+".") {
			t.Errorf("component %q: image %s does not name %s-%s as the simulator expects", c.Name, c.Image, strings.ToLower(key), c.Version)
		}
		if c.Kind == config.KindRuntime {
			listed := false
			for _, u := range rel.UpgradeFrom {
				listed = listed || version.Equal(u, v)
			}
			if !listed {
				t.Errorf("the runtime starts at %s, which release %s does not list in upgrade_from", from, rel.Version)
			}
		}
	}
	for key := range demoFirmware {
		if !seen[key] {
			t.Errorf("the demo sets %s, which no component of the release matches", key)
		}
	}
	if got := releaseVersions(rel); len(got) != len(rel.Components) {
		t.Errorf("the simulator recognises %d of the release's %d components: %v", len(got), len(rel.Components), got)
	}
}

func TestScaledClock(t *testing.T) {
	c := newScaledClock(1000)
	t0 := c.Now()
	start := time.Now()
	<-c.At(t0.Add(30 * time.Second)) // 30ms of real time
	if real := time.Since(start); real < 25*time.Millisecond || real > 2*time.Second {
		t.Errorf("a 30s wait at 1000× took %s of real time, want about 30ms", real)
	}
	if got := c.Now().Sub(t0); got < 30*time.Second {
		t.Errorf("after the wait the clock advanced %s, want at least 30s", got)
	}
	select {
	case <-c.At(t0):
	case <-time.After(time.Second):
		t.Error("a deadline in the past did not fire at once")
	}
}

func TestDemoSummarize(t *testing.T) {
	cfg := loadEmbeddedNexusLab(t)
	var specs []sim.BMCSpec
	initial := map[string]map[string]string{}
	for i, s := range cfg.Servers()[:3] {
		specs = append(specs, sim.BMCSpec{Name: s.Name, Addr: "127.0.0.1:0", Profile: sim.ProfileDMTF, Firmware: map[string]string{"BIOS": "1.0"}, PowerOn: true})
		if i == 0 {
			specs[i].Firmware["BIOS"] = "2.0"
		}
	}
	fleet, err := sim.New(sim.Options{Speed: 1000}, specs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		initial[s.Name] = fleet.Versions(s.Name)
	}
	// Server 0 starts at target and is untouched; 1 and 2 were never
	// upgraded; the other 37 were never served.
	sum := demoSummarize(cfg, fleet, initial, map[string]string{"BIOS": "2.0"})
	if len(sum.skipped) != 1 || sum.skipped[0] != specs[0].Name {
		t.Errorf("skipped %v, want [%s]", sum.skipped, specs[0].Name)
	}
	if len(sum.behind) != 2 || len(sum.upgraded) != 0 {
		t.Errorf("behind %v, upgraded %v: the servers still at 1.0 are not at target", sum.behind, sum.upgraded)
	}
	if sum.reachable != 3 || len(sum.unreachable) != len(cfg.Servers())-3 {
		t.Errorf("reachable %d, unreachable %d", sum.reachable, len(sum.unreachable))
	}
}
