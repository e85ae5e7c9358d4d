package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/planner/plan"
	"github.com/rackform/rackform/planner/plannertest"
	"github.com/rackform/rackform/providers"
)

// channelCatalog publishes three minor lines at sites east, west and
// north, as mirrors and approvals roll out site by site:
//
//	4.4.2 everywhere
//	4.5.3 everywhere; 4.5.4 at east and west
//	4.6.1 and 4.6.2 at east and west; 4.6.3 at west only
//
// extra is appended inside the catalog block.
func channelCatalog(extra string) string {
	var b strings.Builder
	b.WriteString("catalog {\n")
	for _, r := range []struct{ v, sites string }{
		{"4.4.2", ""}, {"4.5.3", ""}, {"4.5.4", `["east", "west"]`},
		{"4.6.1", `["east", "west"]`}, {"4.6.2", `["east", "west"]`}, {"4.6.3", `["west"]`},
	} {
		b.WriteString(catalogRelease(r.v, r.sites))
	}
	b.WriteString(extra)
	b.WriteString("}\n")
	return b.String()
}

// catalogRelease is a catalog release block: runtime os at v, bios at
// "1.<minor><patch>" (each release carries its own firmware).
func catalogRelease(v, sites string) string {
	parts := strings.Split(v, ".")
	parts[2], _, _ = strings.Cut(parts[2], "-")
	s := ""
	if sites != "" {
		s = "    sites = " + sites + "\n"
	}
	return fmt.Sprintf(`  release %q {
%s    component "bios" {
      version = "1.%s%s"
      scheme  = "dotted"
      image   = "http://127.0.0.1:9/bios-%s.bin"
      sha256  = "%064x"
      match {
        software_id = "BIOS"
      }
    }
    component "os" {
      kind    = "runtime"
      version = %q
      image   = "http://127.0.0.1:9/os-%s.iso"
      match {
        software_id = "os"
      }
    }
  }
`, v, s, parts[1], parts[2], v, len(v)+int(parts[2][0]), v, v)
}

// channelFleet is clusters at the sites given (name:site), each of three
// control-plane servers, in one group of a rollout with the attributes
// given, plus the catalog.
func channelFleet(rollout string, clusters ...string) string {
	var b strings.Builder
	b.WriteString("provider \"redfish\" {}\n")
	var refs []string
	for ci, cs := range clusters {
		name, site, _ := strings.Cut(cs, ":")
		refs = append(refs, "cluster."+name)
		fmt.Fprintf(&b, "cluster %q {\n  site = %q\n  rack \"r1\" {\n", name, site)
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(&b, "    server \"%s-%d\" {\n      bmc  = \"https://127.5.%d.%d:8443\"\n      role = \"control_plane\"\n    }\n", name, i, ci+1, i)
		}
		b.WriteString("  }\n}\n")
	}
	fmt.Fprintf(&b, "rollout \"auto\" {\n%s\n  stage \"all\" {\n    group \"g\" {\n      clusters = [%s]\n    }\n  }\n}\n", rollout, strings.Join(refs, ", "))
	return b.String()
}

// runningFleet is a fake provider whose servers report runtime os at
// the version their cluster runs (runs[cluster]) and bios "1.0".
func runningFleet(cfg *config.Config, runs map[string]string) (map[string]providers.Provider, *plannertest.Provider) {
	fake := &plannertest.Provider{Servers: map[string]*providers.Observation{}}
	for _, s := range cfg.Servers() {
		addr := plannertest.Address(s)
		fake.Servers[addr] = &providers.Observation{Server: addr, Reachable: true, PowerState: providers.PowerOn, Health: "OK",
			Fingerprint: "fake:" + addr,
			Components: []providers.Component{
				{ID: "BIOS", SoftwareID: "BIOS", Name: "BIOS", Version: "1.0", Updateable: true},
				{ID: "os", SoftwareID: "os", Name: "os", Version: runs[s.Cluster.Name], Updateable: true},
			}}
	}
	return map[string]providers.Provider{"redfish": fake}, fake
}

func planChannels(t *testing.T, src string, runs map[string]string) (*plan.Plan, []string, *plannertest.Provider) {
	t.Helper()
	cfg := loadText(t, src)
	provs, fake := runningFleet(cfg, runs)
	p, diags := planWith(t, cfg, nil, func(o *Options) { o.Providers = provs })
	var errs []string
	for _, d := range diags {
		if d.Severity == 1 {
			errs = append(errs, d.Summary+": "+d.Detail)
		}
	}
	return p, errs, fake
}

// choices lists each cluster's choice as "NAME VERSION[ pending][ hop]: WHY".
func choices(p *plan.Plan) []string {
	var out []string
	for _, st := range p.Run.Stages {
		for _, g := range st.Groups {
			for _, c := range g.Clusters {
				r := c.Release
				if r == nil {
					out = append(out, c.Name+" (none)")
					continue
				}
				line := c.Name + " " + r.Version
				if r.Pending != "" {
					line += " pending"
				}
				if r.Hop {
					line += " hop"
				}
				out = append(out, line+": "+r.Why)
			}
		}
	}
	return out
}

func TestChannelSelection(t *testing.T) {
	tests := []struct {
		name    string
		rollout string
		catalog string // extra releases
		runs    map[string]string
		want    []string
	}{
		{
			// Seed: "The Rapid channel is always the most recent supported
			// minor release" and "Latest: Use the latest node images
			// available in the region of a cluster ... different image
			// versions could be used depending on which region a cluster
			// is in". Howto: "Latest image: Updates every AKS cluster in
			// the update run to the latest image available for that
			// cluster in its region."
			name:    "rapid latest: newest minor, newest patch at each site",
			rollout: `channel = "rapid"`,
			runs:    map[string]string{"east-1": "4.5.3", "west-1": "4.5.3"},
			want: []string{
				"east-1 4.6.2: rapid: newest minor 4.6, latest patch 4.6.3; site east has 4.6.2 at newest → latest picks 4.6.2",
				"west-1 4.6.3: rapid: newest minor 4.6, latest patch 4.6.3; site west has it → latest picks 4.6.3",
			},
		},
		{
			// Seed: "Consistent: When the update run starts, it picks the
			// latest common image versions across the regions of the
			// member clusters in this run, such that the same, consistent
			// image versions are used across clusters." Howto: "The update
			// run picks the latest common image across all these regions
			// to achieve consistency."
			name:    "rapid consistent: latest version common to every site",
			rollout: "channel = \"rapid\"\n  image_selection = \"consistent\"",
			runs:    map[string]string{"east-1": "4.5.3", "west-1": "4.5.3"},
			want: []string{
				"east-1 4.6.2: rapid: newest minor 4.6, latest patch 4.6.3; sites east, west have 4.6.2 in common (site east has 4.6.2 only) → consistent picks 4.6.2",
				"west-1 4.6.2: rapid: newest minor 4.6, latest patch 4.6.3; sites east, west have 4.6.2 in common (site east has 4.6.2 only) → consistent picks 4.6.2",
			},
		},
		{
			// Seed: "The Stable channel is always the latest ... patch
			// release on minor version N-1, where N is the latest
			// supported minor version."
			name:    "stable: latest patch of the previous minor",
			rollout: `channel = "stable"`,
			runs:    map[string]string{"east-1": "4.5.3", "north-1": "4.4.2"},
			want: []string{
				"east-1 4.5.4: stable: newest minor 4.6, so minor 4.5, latest patch 4.5.4; site east has it → latest picks 4.5.4",
				"north-1 4.5.3: stable: newest minor 4.6, so minor 4.5, latest patch 4.5.4; site north has 4.5.3 at newest → latest picks 4.5.3",
			},
		},
		{
			// Seed: "A new minor version of 1.31 is published. Any patch
			// release in the 1.30 minor range would be considered for
			// Stable channel updates. Any cluster previously receiving
			// updates from 1.29 would be updated to the most recent patch
			// for 1.30." (and for Rapid: "1.30 shifts to the Stable
			// channel").
			name:    "stable moves when a new minor is published",
			rollout: `channel = "stable"`,
			catalog: catalogRelease("4.7.0", ""),
			runs:    map[string]string{"east-1": "4.5.4", "west-1": "4.5.4"},
			want: []string{
				"east-1 4.6.2: stable: newest minor 4.7, so minor 4.6, latest patch 4.6.3; site east has 4.6.2 at newest → latest picks 4.6.2",
				"west-1 4.6.3: stable: newest minor 4.7, so minor 4.6, latest patch 4.6.3; site west has it → latest picks 4.6.3",
			},
		},
		{
			// Seed (Rapid): "A new minor Kubernetes version of 1.31 is
			// published. 1.30 shifts to the Stable channel. Any cluster
			// previously receiving updates from 1.30 would be updated to
			// the most recent patch for 1.31 which is now the Rapid
			// channel." And: "Auto-upgrade only updates to GA versions ...
			// and doesn't update to preview versions" (4.8.0-rc.1 is
			// never picked).
			name:    "rapid moves to a newly published minor, never to a preview",
			rollout: `channel = "rapid"`,
			catalog: catalogRelease("4.7.0", "") + catalogRelease("4.8.0-rc.1", ""),
			runs:    map[string]string{"east-1": "4.6.2", "west-1": "4.6.3"},
			want: []string{
				"east-1 4.7.0: rapid: newest minor 4.7, latest patch 4.7.0; site east has it → latest picks 4.7.0",
				"west-1 4.7.0: rapid: newest minor 4.7, latest patch 4.7.0; site west has it → latest picks 4.7.0",
			},
		},
		{
			// Seed (NodeImage channel): "Member cluster nodes are updated
			// with a newly patched [image] ... Node image upgrades support
			// patch versions that are deprecated, so long as the minor
			// version is still supported": the firmware channel stays on
			// the minor each cluster runs.
			name:    "firmware: the minor each cluster runs",
			rollout: `channel = "firmware"`,
			runs:    map[string]string{"east-1": "4.5.3", "west-1": "4.6.1"},
			want: []string{
				"east-1 4.5.4: firmware: cluster runs 4.5.3, minor 4.5, latest patch 4.5.4, firmware only; site east has it → latest picks 4.5.4",
				"west-1 4.6.3: firmware: cluster runs 4.6.1, minor 4.6, latest patch 4.6.3, firmware only; site west has it → latest picks 4.6.3",
			},
		},
		{
			// Seed: "Target Kubernetes version isn't yet available in the
			// member's Azure region" (and "Target node image version isn't
			// yet available") makes a member Pending; the message says
			// where the release is published (the seed's message links the
			// release tracker).
			name:    "pending: the channel's minor is not at the cluster's site",
			rollout: `channel = "rapid"`,
			runs:    map[string]string{"west-1": "4.5.3", "north-1": "4.5.3"},
			want: []string{
				"west-1 4.6.3: rapid: newest minor 4.6, latest patch 4.6.3; site west has it → latest picks 4.6.3",
				"north-1 4.6.3 pending: rapid: newest minor 4.6, latest patch 4.6.3; site north has no release of minor 4.6 yet → latest waits for 4.6.3; pending: release 4.6.3 is not yet available at site north (published at west)",
			},
		},
		{
			// Consistent with a site that has nothing of the line: the
			// common version of the sites that do, and the others wait.
			// Seed: "When consistent node image is chosen ..., if it's not
			// possible to find the target image version for one of the
			// node pools, then the upgrade is skipped for that cluster."
			// (choice: rackform plans such a cluster pending, not skipped,
			// because its site may still get the release; rackform skip
			// cluster.NAME skips it explicitly.)
			name:    "consistent: a site without the minor is pending on the common pick",
			rollout: "channel = \"rapid\"\n  image_selection = \"consistent\"",
			runs:    map[string]string{"east-1": "4.5.3", "west-1": "4.5.3", "north-1": "4.5.3"},
			want: []string{
				"east-1 4.6.2: rapid: newest minor 4.6, latest patch 4.6.3; sites east, west have 4.6.2 in common (site east has 4.6.2 only) → consistent picks 4.6.2",
				"west-1 4.6.2: rapid: newest minor 4.6, latest patch 4.6.3; sites east, west have 4.6.2 in common (site east has 4.6.2 only) → consistent picks 4.6.2",
				"north-1 4.6.2 pending: rapid: newest minor 4.6, latest patch 4.6.3; sites east, west have 4.6.2 in common (site east has 4.6.2 only) → consistent picks 4.6.2; pending: release 4.6.2 is not yet available at site north (published at east, west)",
			},
		},
		{
			// Seed: "Auto-upgrade does not move clusters between minor
			// versions when there's more than one minor version difference
			// (for example: 1.28 to 1.30)"; with allow_multi_hop the run
			// takes the intermediate minor (one minor per run).
			name:    "multi-hop: two minors behind hops to the intermediate minor",
			rollout: "channel = \"rapid\"\n  allow_multi_hop = true",
			runs:    map[string]string{"east-1": "4.4.2", "west-1": "4.5.3"},
			want: []string{
				"east-1 4.5.4 hop: rapid: newest minor 4.6, latest patch 4.6.3; cluster runs 4.4.2, 2 minors behind: this run hops to minor 4.5 (allow_multi_hop), latest patch 4.5.4; the next plan moves it on; site east has it → latest picks 4.5.4",
				"west-1 4.6.3: rapid: newest minor 4.6, latest patch 4.6.3; site west has it → latest picks 4.6.3",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var clusters []string
			for _, c := range []string{"east-1:east", "west-1:west", "north-1:north"} {
				if _, ok := tt.runs[strings.Split(c, ":")[0]]; ok {
					clusters = append(clusters, c)
				}
			}
			src := channelFleet(tt.rollout, clusters...) + channelCatalog(tt.catalog)
			p, errs, _ := planChannels(t, src, tt.runs)
			if len(errs) > 0 {
				t.Fatalf("plan errors: %v", errs)
			}
			if d := cmp.Diff(tt.want, choices(p)); d != "" {
				t.Errorf("choices (-want +got):\n%s", d)
			}
		})
	}
}

// Seed: "Auto-upgrade does not move clusters between minor versions when
// there's more than one minor version difference": without multi-hop the
// plan fails, naming the intermediate release.
func TestChannelNeverSkipsAMinor(t *testing.T) {
	src := channelFleet(`channel = "rapid"`, "east-1:east") + channelCatalog("")
	_, errs, _ := planChannels(t, src, map[string]string{"east-1": "4.4.2"})
	want := []string{`Minor version skipped: Cluster "east-1" runs 4.4.2, more than one minor behind the rapid channel (4.6.3): a run moves the runtime at most one minor version, and a channel never skips one. Upgrade it to release 4.5.4 first, or set allow_multi_hop = true on rollout "auto" to plan that hop now.`}
	if d := cmp.Diff(want, errs); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

// A channel never downgrades: a cluster newer than its channel is an error.
func TestChannelNeverDowngrades(t *testing.T) {
	src := channelFleet(`channel = "stable"`, "east-1:east") + channelCatalog("")
	_, errs, _ := planChannels(t, src, map[string]string{"east-1": "4.6.1"})
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "Cluster ahead of its channel") {
		t.Errorf("errors = %v", errs)
	}
}

// The firmware channel (the seed's node-image-only upgrade type) changes
// firmware components only, and asks the BMCs about the release actually
// chosen once the cluster's minor is known (a second observation).
func TestFirmwareChannelFirmwareOnly(t *testing.T) {
	src := channelFleet(`channel = "firmware"`, "east-1:east") + channelCatalog("")
	p, errs, fake := planChannels(t, src, map[string]string{"east-1": "4.5.3"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if p.Run.Scope != config.ScopeFirmwareOnly {
		t.Errorf("scope = %q", p.Run.Scope)
	}
	for _, s := range p.Servers {
		if len(s.Changes) != 1 || s.Changes[0].Component != "bios" || s.Changes[0].To != "1.54" {
			t.Errorf("%s changes = %+v, want bios to 1.54 only", s.Address, s.Changes)
		}
	}
	if fake.ObserveCalls() != 2 {
		t.Errorf("observe calls = %d, want 2 (again for the release chosen after observing)", fake.ObserveCalls())
	}
	last := fake.Targets()[len(fake.Targets())-1]
	if len(last.Updates) != 1 || last.Updates[0].ImageURI != "http://127.0.0.1:9/bios-4.5.4.bin" {
		t.Errorf("last intents = %+v, want the 4.5.4 bios image", last.Updates)
	}
}

// Observed is called once, when the planner needs its providers no more:
// after a channel's second observation, never before (plan stops the
// plugins there).
func TestObservedAfterTheLastObservation(t *testing.T) {
	cfg := loadText(t, channelFleet(`channel = "firmware"`, "east-1:east")+channelCatalog(""))
	provs, fake := runningFleet(cfg, map[string]string{"east-1": "4.5.3"})
	var calls, observesBefore []int
	p, diags := planWith(t, cfg, nil, func(o *Options) {
		o.Providers = provs
		o.Observed = func() {
			calls = append(calls, len(calls))
			observesBefore = append(observesBefore, fake.ObserveCalls())
		}
	})
	if diags.HasErrors() || p == nil {
		t.Fatal(diags.Error())
	}
	if len(calls) != 1 || observesBefore[0] != 2 {
		t.Errorf("Observed called %d times, after %v observations; want once, after both", len(calls), observesBefore)
	}
}

// Recorded by value: the plan holds the catalog entries its clusters were
// planned to, and the pending cluster's servers are planned in full (apply
// holds them until the release is available).
func TestChannelPlanRecordsCatalogAndPending(t *testing.T) {
	src := channelFleet(`channel = "rapid"`, "west-1:west", "north-1:north") + channelCatalog("")
	p, errs, _ := planChannels(t, src, map[string]string{"west-1": "4.5.3", "north-1": "4.5.3"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if p.Catalog == nil || len(p.Catalog.Entries) != 1 || p.Catalog.Entries[0].Version != "4.6.3" {
		t.Fatalf("catalog = %+v, want the one entry used (4.6.3)", p.Catalog)
	}
	e := p.Catalog.Entries[0]
	if e.Minor != "4.6" || len(e.Sites) != 1 || len(e.Components) != 2 || e.Components[0].SHA256 == "" {
		t.Errorf("entry = %+v", e)
	}
	pend := p.PendingClusters()
	if len(pend) != 1 || pend[0].Name != "north-1" {
		t.Fatalf("pending = %+v", pend)
	}
	for _, s := range p.Servers {
		if s.Action != plan.ActionUpgrade || len(s.Steps) == 0 {
			t.Errorf("%s: %s with %d steps, want planned in full", s.Address, s.Action, len(s.Steps))
		}
	}
}

// A cluster that names its release is also pending where the catalog
// says that release is not available yet.
func TestNamedReleasePendingAtItsSite(t *testing.T) {
	src := strings.Replace(channelFleet("", "north-1:north"), "  site = \"north\"", "  site = \"north\"\n  release = release.r", 1) +
		channelCatalog("") + strings.Replace(strings.Replace(catalogRelease("4.6.3", ""), "  release \"4.6.3\"", "release \"r\"", 1), "    sites", "    # sites", 1)
	src = strings.Replace(src, "release \"r\" {\n", "release \"r\" {\n  version = \"4.6.3\"\n", 1)
	p, errs, _ := planChannels(t, src, map[string]string{"north-1": "4.5.3"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := []string{"north-1 4.6.3 pending: release 4.6.3 (named by the cluster); pending: release 4.6.3 is not yet available at site north (published at west)"}
	if d := cmp.Diff(want, choices(p)); d != "" {
		t.Errorf("choices (-want +got):\n%s", d)
	}
}

// Seed: "You can create multiple auto-upgrade profiles for the same
// Fleet": two rollouts follow different channels over the same clusters,
// and plan -rollout picks which one runs.
func TestMultipleChannelRollouts(t *testing.T) {
	src := channelFleet(`channel = "stable"`, "east-1:east") + `
rollout "fast" {
  channel = "rapid"
  stage "all" {
    group "g" {
      clusters = [cluster.east-1]
    }
  }
}
` + channelCatalog("")
	cfg := loadText(t, src)
	provs, _ := runningFleet(cfg, map[string]string{"east-1": "4.5.3"})
	for rollout, want := range map[string]string{"auto": "4.5.4", "fast": "4.6.2"} {
		p, diags := planWith(t, cfg, nil, func(o *Options) { o.Providers = provs; o.Rollout = rollout })
		if diags.HasErrors() {
			t.Fatalf("%s: %s", rollout, diags.Error())
		}
		if got := p.Run.Stages[0].Groups[0].Clusters[0].Release.Version; got != want {
			t.Errorf("rollout %s picks %s, want %s", rollout, got, want)
		}
	}
}

// A pending cluster with nothing to install does not hold the run.
func TestPendingClusterAlreadyAtItsRelease(t *testing.T) {
	src := channelFleet(`channel = "rapid"`, "north-1:north") + channelCatalog("")
	cfg := loadText(t, src)
	provs, fake := runningFleet(cfg, map[string]string{"north-1": "4.6.3"})
	for _, o := range fake.Servers {
		o.Components[0].Version = "1.63" // bios at 4.6.3's
	}
	p, diags := planWith(t, cfg, nil, func(o *Options) { o.Providers = provs })
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if pend := p.PendingClusters(); len(pend) != 0 {
		t.Errorf("pending = %+v, want none: its servers are at target", pend)
	}
	if got := choices(p); len(got) != 1 || !strings.HasSuffix(got[0], "(its servers are already at it: nothing waits)") {
		t.Errorf("choices = %v", got)
	}
}
