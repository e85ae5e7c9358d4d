package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config"
	"github.com/rackform/rackform/config/version"
	"github.com/rackform/rackform/providers/sim"
)

// simConfigFleet is a configuration whose release uses real BMC version
// strings, with a two-node chassis (two servers on one BMC address, each
// naming its system) and servers with their own profile.
const simConfigFleet = `
provider "redfish" {
  username   = "admin"
  password   = env("RACKFORM_SIM_PASSWORD")
  allow_http = true
}

release "r" {
  version = "4.6.1"
  component "bios" {
    version = "P79 v1.46"
    scheme  = "vendor"
    image   = "http://127.0.0.1:9/bios.bin"
    match {
      software_id = "BIOS"
    }
  }
  component "bmc" {
    version = "nc.1.6.17-0-gabcdef"
    scheme  = "vendor"
    image   = "http://127.0.0.1:9/bmc.bin"
    match {
      software_id = "BMC"
    }
  }
  component "nic" {
    version = "22.1"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/nic-22.1.bin"
    match {
      id = "NIC"
    }
  }
  component "cpld" {
    version     = "build-77a"
    scheme      = "opaque"
    allow_change = true
    image       = "http://127.0.0.1:9/cpld.bin"
    match {
      software_id = "CPLD"
    }
  }
  component "runtime" {
    kind    = "runtime"
    version = "4.6.1"
    image   = "http://127.0.0.1:9/runtime-4.6.1.iso"
    match {
      software_id = "runtime-os"
    }
  }
}

cluster "lab" {
  release = release.r
  rack "r1" {
    server "a" {
      bmc  = "http://127.78.9.1:18443"
      role = "compute"
    }
    server "node0" {
      bmc    = "http://127.78.9.2:18443"
      role   = "compute"
      system = "Node0"
    }
    server "node1" {
      bmc    = "http://127.78.9.2:18443"
      role   = "compute"
      system = "Node1"
    }
    server "b" {
      bmc  = "http://127.78.9.3:18443"
      role = "compute"
    }
    server "old" {
      bmc  = "http://127.78.9.4:18443"
      role = "compute"
    }
  }
}
`

func loadTestConfig(t *testing.T, text string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.rf.hcl"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &simCommand{Meta: &Meta{Streams: Streams{Stderr: &strings.Builder{}}, Getenv: func(string) string { return "" }}}
	cfg, ok := loadInventory(c.Meta, dir, c.Getenv)
	if !ok {
		t.Fatalf("config does not load: %s", c.Stderr)
	}
	return cfg
}

// TestSimConfigStartsBehindInTheComponentsOwnFormat: `rackform sim
// -config` starts every server just behind its release, in each
// component's own scheme (vendor text kept, opaque only different), serves
// two servers on one BMC address as one two-system BMC (crayex) with a
// BIOS per system, reports the runtime under the release's software_id,
// and takes -profile-for and -at-target by server name.
func TestSimConfigStartsBehindInTheComponentsOwnFormat(t *testing.T) {
	cfg := loadTestConfig(t, simConfigFleet)
	c := &simCommand{profile: "dmtf", atTarget: "b", profileForFlags: stringList{"old=basic"}}
	specs, err := c.configSpecs(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Name, Addr, Profile string
		Systems             []sim.SystemSpec
		Firmware            map[string]string
		SoftwareIDs         map[string]string
	}
	var gots []got
	for _, s := range specs {
		gots = append(gots, got{s.Name, s.Addr, s.Profile, s.Systems, s.Firmware, s.SoftwareIDs})
	}
	behind := map[string]string{"BIOS": "P79 v1.45", "BMC": "nc.1.6.16-0-gabcdef", "NIC": "22.0", "CPLD": "build-77a-previous", "Runtime": "4.6.0"}
	at := map[string]string{"BIOS": "P79 v1.46", "BMC": "nc.1.6.17-0-gabcdef", "NIC": "22.1", "CPLD": "build-77a", "Runtime": "4.6.1"}
	rt := map[string]string{"Runtime": "runtime-os"}
	want := []got{
		{"a", "127.78.9.1:18443", "dmtf", nil, behind, rt},
		{"node0", "127.78.9.2:18443", "crayex", []sim.SystemSpec{{ID: "Node0", Name: "node0"}, {ID: "Node1", Name: "node1"}},
			map[string]string{"Node0.BIOS": "P79 v1.45", "Node1.BIOS": "P79 v1.45", "BMC": "nc.1.6.16-0-gabcdef", "NIC": "22.0", "CPLD": "build-77a-previous", "Node0.Runtime": "4.6.0", "Node1.Runtime": "4.6.0"}, rt},
		{"b", "127.78.9.3:18443", "dmtf", nil, at, rt},
		{"old", "127.78.9.4:18443", "basic", nil, behind, rt},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("specs (-want +got):\n%s", diff)
	}
	// The fleet takes these specs: every version string, the shared BMC.
	fleet, err := sim.New(sim.Options{Username: "admin", Password: "pw"}, specs)
	if err != nil {
		t.Fatal(err)
	}
	if v := fleet.Versions("node0"); v["Node1.BIOS"] != "P79 v1.45" || v["BMC"] != "nc.1.6.16-0-gabcdef" {
		t.Errorf("the two-node BMC's versions: %v", v)
	}
	if ids := fleet.Identities("node0"); len(ids) != 2 || ids[0].UUID == ids[1].UUID {
		t.Errorf("the two nodes' identities: %v", ids)
	}
}

func TestBehindVersion(t *testing.T) {
	for _, tc := range []struct {
		v      string
		scheme version.Scheme
		want   string
	}{
		{"2.80", version.Dotted, "2.79"},
		{"4.6.1", version.Semver, "4.6.0"},
		{"4.6.0", version.Semver, "4.5.0"},
		{"2.19.1", version.Dotted, "2.19.0"},
		{"P79 v1.46", version.Vendor, "P79 v1.45"},
		{"A43 v2.52 (10/29/2021)", version.Vendor, "A43 v2.51 (10/29/2021)"},
		{"2.46 May 11 2021", version.Vendor, "2.45 May 11 2021"},
		{"ex235a.bios-1.3.6", version.Vendor, "ex235a.bios-1.3.5"},
		{"nc.1.6.16-21-gabcdef", version.Vendor, "nc.1.6.16-20-gabcdef"},
		{"C27", version.Vendor, "C26"},
		{"build-77a", version.Opaque, "build-77a-previous"},
	} {
		v := version.MustParse(tc.v, tc.scheme)
		got := behindVersion(v)
		if got != tc.want {
			t.Errorf("behindVersion(%q) = %q, want %q", tc.v, got, tc.want)
			continue
		}
		if tc.scheme == version.Opaque {
			continue
		}
		o := version.MustParse(got, tc.scheme)
		if c, err := version.Compare(o, v); err != nil || c >= 0 {
			t.Errorf("%q is not older than %q: %d %v", got, tc.v, c, err)
		}
	}
}

// TestSimConfigRefusesWhatItCannotServe: servers sharing a BMC with a
// single-system profile, or five on one BMC, are refused clearly.
func TestSimConfigRefusesWhatItCannotServe(t *testing.T) {
	cfg := loadTestConfig(t, simConfigFleet)
	for _, tc := range []struct {
		c    *simCommand
		want string
	}{
		{&simCommand{profile: "dmtf", profileForFlags: stringList{"node1=ilo5"}}, "profile ilo5 serves one system"},
		{&simCommand{profile: "dmtf", profileForFlags: stringList{"nobody=ilo5"}}, "-profile-for names nobody, not servers"},
		{&simCommand{profile: "dmtf", profileForFlags: stringList{"a=toaster"}}, `unknown profile "toaster"`},
	} {
		if _, err := tc.c.configSpecs(cfg, nil, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
}

// TestSimQuirkFlags: -refuse makes a BMC (by server name with -config)
// advertise but refuse a method; -strict-transfer-protocol makes ami as
// strict as the real one's ActionInfo.
func TestSimQuirkFlags(t *testing.T) {
	cfg := loadTestConfig(t, simConfigFleet)
	c := &simCommand{profile: "dmtf", refuse: stringList{"node1=simple_update,http_push"}, strictTransfer: true}
	specs, err := c.configSpecs(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.applyQuirks(specs); err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		want := []string(nil)
		if s.Name == "node0" { // node1's BMC is node0's
			want = []string{"simple_update", "http_push"}
		}
		if !cmp.Equal(s.Refuse, want) || !s.StrictTransferProtocol {
			t.Errorf("%s: Refuse %v Strict %v, want %v true", s.Name, s.Refuse, s.StrictTransferProtocol, want)
		}
	}
	// -absent: a server's name reaches its BMC; the member must exist.
	c = &simCommand{profile: "hgx", absent: stringList{"node1=HGX_FW_GPU_SXM_3,HGX_FW_GPU_SXM_4"}}
	specs, err = c.configSpecs(cfg, nil, nil)
	if err == nil {
		err = c.applyQuirks(specs)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == "node0" && !cmp.Equal(s.Absent, []string{"HGX_FW_GPU_SXM_3", "HGX_FW_GPU_SXM_4"}) {
			t.Errorf("node0 absent %v", s.Absent)
		}
	}
	if c := (&simCommand{profile: "dmtf", absent: stringList{"nobody=GPU1"}}); c.applyQuirks(specs) == nil {
		t.Error("-absent nobody=GPU1 accepted")
	}
	for _, bad := range []string{"node1", "nobody=http_push", "a=ftp_push"} {
		c := &simCommand{profile: "dmtf", refuse: stringList{bad}}
		specs, _ := c.configSpecs(cfg, nil, nil)
		if err := c.applyQuirks(specs); err == nil {
			t.Errorf("-refuse %s accepted", bad)
		}
	}
}

// TestSimProfileAllAndProfileFor: -profile all cycles through every
// profile, basic and crayex included; mixed keeps the first four;
// -profile-for picks one BMC's.
func TestSimProfileAllAndProfileFor(t *testing.T) {
	for _, tc := range []struct {
		profile string
		pfor    stringList
		want    []string
	}{
		{"all", nil, []string{"dmtf", "ilo5", "ami", "openbmc", "basic", "crayex", "idrac"}},
		{"hgx", stringList{"bmc-0002=xcc", "bmc-0003=sushy"}, []string{"hgx", "xcc", "sushy", "hgx", "hgx", "hgx", "hgx"}},
		{"mixed", nil, []string{"dmtf", "ilo5", "ami", "openbmc", "dmtf", "ilo5", "ami"}},
		{"dmtf", stringList{"bmc-0002=crayex", "bmc-0007=basic"}, []string{"dmtf", "crayex", "dmtf", "dmtf", "dmtf", "dmtf", "basic"}},
	} {
		c := &simCommand{n: 7, base: "127.78.10.1", port: 0, profile: tc.profile, profileForFlags: tc.pfor}
		specs, err := c.specs()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range specs {
			got = append(got, s.Profile)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("-profile %s %v (-want +got):\n%s", tc.profile, tc.pfor, diff)
		}
		if _, err := sim.New(sim.Options{}, specs); err != nil {
			t.Errorf("-profile %s: %v", tc.profile, err)
		}
	}
}

// TestSimConfigServesEveryExample: `rackform sim -config` with no flags
// serves each shipped example: HTTPS because its BMC addresses are
// https://, and every server just behind its release in every component
// the simulator reports (so plan on the same directory has work to do).
func TestSimConfigServesEveryExample(t *testing.T) {
	dirs, _ := filepath.Glob("../../../../examples/*/main.rf.hcl")
	if len(dirs) < 3 {
		t.Fatalf("examples found: %v", dirs)
	}
	for _, main := range dirs {
		dir := filepath.Dir(main)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c := &simCommand{Meta: &Meta{Streams: Streams{Stderr: &strings.Builder{}}, Getenv: func(string) string { return "" }}, profile: "dmtf"}
			cfg, ok := loadInventory(c.Meta, dir, c.Getenv)
			if !ok {
				t.Fatalf("does not load: %s", c.Stderr)
			}
			specs, err := c.configSpecs(cfg, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tls, err := configWantsTLS(cfg); err != nil || !tls {
				t.Errorf("TLS %v %v, want on (https:// BMC addresses)", tls, err)
			}
			byName := map[string]sim.BMCSpec{}
			for _, s := range specs {
				byName[s.Name] = s
			}
			for _, s := range cfg.Servers() {
				spec, ok := byName[s.Name]
				if !ok {
					continue // a second system on a shared BMC
				}
				for _, rc := range releaseComponents(s.Cluster.Release, s) {
					got := spec.Firmware[rc.key]
					if got == "" && s.System != "" {
						// A multi-system BMC: the system's own member.
						got = spec.Firmware[s.System+"."+rc.key]
					}
					if got == "" || got == rc.version.String() {
						t.Errorf("%s: %s starts at %q, want just behind %s (firmware %v)", s.Name, rc.key, got, rc.version, spec.Firmware)
					}
				}
			}
			if _, err := sim.New(sim.Options{}, specs); err != nil {
				t.Error(err)
			}
		})
	}
	mixed := strings.Replace(simConfigFleet, `bmc  = "http://127.78.9.1:18443"`, `bmc  = "https://127.78.9.1:18443"`, 1)
	if _, err := configWantsTLS(loadTestConfig(t, mixed)); err == nil || !strings.Contains(err.Error(), "mixes https://") {
		t.Errorf("mixed http/https: %v", err)
	}
}
