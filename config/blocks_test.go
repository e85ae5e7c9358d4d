package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/rackform/rackform/config/version"
)

var ignoreRanges = cmpopts.IgnoreTypes(hcl.Range{})

// sameCluster compares clusters by identity: references must point at the
// one decoded cluster, not a copy.
var sameCluster = cmp.Comparer(func(a, b *Cluster) bool { return a == b })

func load(t *testing.T, src string) *Config {
	t.Helper()
	writeConfig(t, map[string]string{"main.rf.hcl": src})
	l := NewLoader(LoadOptions{Getenv: func(k string) string { return map[string]string{"PW": "pw"}[k] }})
	cfg, diags := l.Load(".")
	if diags.HasErrors() {
		t.Fatalf("diagnostics:\n%s", renderDiags(l, diags))
	}
	return cfg
}

func TestStrategyBlock(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want func() *Strategy
	}{
		{
			name: "empty strategy is the Nexus default",
			src:  `strategy "s" {}`,
			want: func() *Strategy {
				s := NewDefaultStrategy()
				s.Name, s.Implicit = "s", false
				return s
			},
		},
		{
			name: "every setting",
			src: `strategy "s" {
  drain_timeout    = "5m"
  shutdown_timeout = "2m"
  verify_timeout   = "30m"
  control_plane {
    on_breach = "fail"
    remediation {
      reboots = 2
    }
  }
  management {
    groups         = 3
    batches        = 1
    failure_budget = "10%"
    threshold {
      type  = "count"
      value = 1
    }
  }
  compute {
    order            = "natural"
    max_unavailable  = "25%"
    wait_after_rack  = "0s"
    pause_after_rack = true
    canary_rack      = "r01"
    failure_budget   = 2
    on_breach        = "fail"
    verify_timeout   = "2h"
    threshold {
      type  = "percent"
      value = 80
    }
  }
  drain {
    command = ["kubectl", "drain"]
  }
  uncordon {
    command = ["kubectl", "uncordon"]
    timeout = "1m"
  }
  stage "gpu-first" {
    roles       = ["compute"]
    labels      = { gpu = "true" }
    batch_size  = 4
    wait_after  = "10m"
    pause_after = true
  }
}`,
			want: func() *Strategy {
				s := NewDefaultStrategy()
				s.Name, s.Implicit = "s", false
				s.DrainTimeout, s.ShutdownTimeout, s.VerifyTimeout = 5*time.Minute, 2*time.Minute, 30*time.Minute
				s.ControlPlane = ControlPlaneSettings{OnBreach: "fail", VerifyTimeout: 30 * time.Minute, Remediation: Remediation{Reboots: 2}}
				s.Management.Groups, s.Management.Batches = 3, 1
				s.Management.FailureBudget = Quantity{Value: 10, Percent: true}
				s.Management.Threshold = Threshold{Type: "count", Value: 1}
				s.Management.VerifyTimeout = 30 * time.Minute
				s.Compute = ComputeSettings{
					ScopeSettings: ScopeSettings{
						Threshold:     Threshold{Type: "percent", Value: 80},
						FailureBudget: Quantity{Value: 2},
						OnBreach:      "fail",
					},
					Order:          "natural",
					MaxUnavailable: Quantity{Value: 25, Percent: true},
					PauseAfterRack: true,
					CanaryRack:     "r01",
					VerifyTimeout:  2 * time.Hour,
					Remediation:    Remediation{Reimages: 1},
				}
				s.Drain = &Hook{Command: []string{"kubectl", "drain"}, Timeout: 5 * time.Minute}
				s.Uncordon = &Hook{Command: []string{"kubectl", "uncordon"}, Timeout: time.Minute}
				s.Stages = []*StrategyStage{{
					Name: "gpu-first", Roles: []string{"compute"}, Labels: map[string]string{"gpu": "true"},
					BatchSize: Quantity{Value: 4},
					ScopeSettings: ScopeSettings{
						Threshold: Threshold{Type: "percent", Value: 100}, FailureBudget: Quantity{Unset: true}, OnBreach: "pause",
					},
					WaitAfter: 10 * time.Minute, PauseAfter: true,
				}}
				return s
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := load(t, tt.src)
			if diff := cmp.Diff(tt.want(), cfg.Strategy("s"), ignoreRanges); diff != "" {
				t.Errorf("strategy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReleaseBlock(t *testing.T) {
	cfg := load(t, `release "r" {
  version         = "4.6.1"
  allow_downgrade = true
  upgrade_from    = ["4.5.0"]
  component "bmc" {
    match {
      name = "BMC*"
    }
    version    = "7.10.30.1"
    scheme     = "dotted"
    image      = "https://127.0.0.1/bmc.bin"
    apply_time = "Immediate"
    method     = "push"
  }
  component "os" {
    kind = "runtime"
    match {
      software_id = "os"
    }
    version = "4.6.1"
  }
}`)
	r := cfg.Release("r")
	sv := func(s string) version.Version { return version.MustParse(s, version.Semver) }
	want := &Release{
		Name: "r", Version: sv("4.6.1"), Scheme: version.Semver, AllowDowngrade: true,
		UpgradeFrom: []version.Version{sv("4.5.0")},
	}
	want.Components = []*Component{
		{Name: "bmc", Match: Match{Name: "BMC*"}, Version: version.MustParse("7.10.30.1", version.Dotted), Scheme: version.Dotted,
			Image: "https://127.0.0.1/bmc.bin", ApplyTime: "Immediate", Method: "push", Kind: "firmware", AllowDowngrade: true, Release: want},
		{Name: "os", Match: Match{SoftwareID: "os"}, Version: sv("4.6.1"), Scheme: version.Semver,
			ApplyTime: "OnReset", Reboot: true, Method: "reimage", Kind: "runtime", AllowDowngrade: true, Release: want},
	}
	opts := cmp.Options{ignoreRanges, cmp.Comparer(version.Equal), cmpopts.IgnoreUnexported(Release{})}
	if diff := cmp.Diff(want, r, opts); diff != "" {
		t.Errorf("release (-want +got):\n%s", diff)
	}
	if r.Runtime() != r.Components[1] {
		t.Errorf("Runtime() = %v", r.Runtime())
	}
}

func TestClusterReferencesAndInheritance(t *testing.T) {
	cfg := load(t, `
variable "canary" {
  default = true
}
provider "redfish" {
  username = "admin"
  password = env("PW")
}
release "old" {
  version = "4.5.0"
}
release "new" {
  version = "4.6.0"
}
strategy "s" {}
maintenance_window "w" {
  start    = "2026-07-01T22:00:00Z"
  duration = "4h"
}
maintenance_window "rackw" {
  start    = "2026-07-02T22:00:00Z"
  duration = "4h"
}
cluster "c" {
  release            = var.canary ? release.new : release.old
  strategy           = strategy.s
  maintenance_window = maintenance_window.w
  labels             = { env = "lab" }
  rack "r1" {
    maintenance_window = maintenance_window.rackw
    server "a" {
      bmc  = "https://127.0.0.1"
      role = "control_plane"
      credentials {
        username = "root"
        password = env("PW")
      }
    }
  }
  rack "r2" {
    server "b" {
      bmc       = "https://127.0.0.2"
      role      = "control_plane_spare"
      node_name = "node-b"
    }
  }
}
cluster "d" {
  release = release.old
  labels  = { peer = cluster.c.labels.env }
}
`)
	c := cfg.Cluster("c")
	if c.Release != cfg.Release("new") || c.Strategy != cfg.Strategy("s") || c.MaintenanceWindow != cfg.MaintenanceWindow("w") || c.Provider != cfg.Provider("redfish") {
		t.Errorf("cluster references not resolved: %+v", c)
	}
	a, b := cfg.Server("a"), cfg.Server("b")
	if a.MaintenanceWindow != cfg.MaintenanceWindow("rackw") || b.MaintenanceWindow != c.MaintenanceWindow {
		t.Errorf("window inheritance: a=%v b=%v", a.MaintenanceWindow, b.MaintenanceWindow)
	}
	if a.NodeName != "a" || b.NodeName != "node-b" {
		t.Errorf("node names: %q %q", a.NodeName, b.NodeName)
	}
	if a.Credentials == nil || a.Credentials.Password.Reveal() != "pw" || !a.Credentials.Password.Sensitive() || a.Credentials.Username.Sensitive() {
		t.Errorf("credentials: %#v", a.Credentials)
	}
	if b.Credentials != nil {
		t.Errorf("b has credentials")
	}
	d := cfg.Cluster("d")
	if d.Strategy != cfg.DefaultStrategy || !d.Strategy.Implicit {
		t.Errorf("cluster without strategy: %v", d.Strategy)
	}
	if diff := cmp.Diff(map[string]string{"peer": "lab"}, d.Labels); diff != "" {
		t.Errorf("labels from a cluster reference (-want +got):\n%s", diff)
	}
	if got := cfg.Provider("redfish").Attrs.GetAttr("username"); !got.RawEquals(cty.StringVal("admin")) {
		t.Errorf("provider username = %#v", got)
	}
}

func TestEffectiveRollout(t *testing.T) {
	two := base + `cluster "c2" {
  release = release.r1
}
`
	t.Run("implicit", func(t *testing.T) {
		cfg := load(t, two)
		ro, err := cfg.EffectiveRollout("")
		if err != nil {
			t.Fatal(err)
		}
		if !ro.Implicit || len(ro.Stages) != 1 || len(ro.Stages[0].Groups) != 1 {
			t.Fatalf("rollout = %+v", ro)
		}
		if diff := cmp.Diff([]*Cluster{cfg.Cluster("c1"), cfg.Cluster("c2")}, ro.Stages[0].Groups[0].Clusters, sameCluster); diff != "" {
			t.Errorf("clusters (-want +got):\n%s", diff)
		}
	})
	t.Run("declared", func(t *testing.T) {
		cfg := load(t, two+`rollout "q3" {
  scope = "firmware_only"
  stage "canary" {
    after_stage_wait = "1h"
    approval "ok" {
      when        = "after"
      description = "look"
    }
    group "g" {
      clusters = [cluster.c2]
    }
  }
  stage "prod" {
    group "p" {
      clusters = [cluster.c1]
    }
  }
}
`)
		ro, err := cfg.EffectiveRollout("")
		if err != nil {
			t.Fatal(err)
		}
		want := &Rollout{Name: "q3", Scope: "firmware_only", Stages: []*Stage{
			{Name: "canary", AfterStageWait: time.Hour,
				Approvals: []*Approval{{Name: "ok", When: "after", Description: "look"}},
				Groups:    []*Group{{Name: "g", Clusters: []*Cluster{cfg.Cluster("c2")}}}},
			{Name: "prod", Groups: []*Group{{Name: "p", Clusters: []*Cluster{cfg.Cluster("c1")}}}},
		}}
		if diff := cmp.Diff(want, ro, ignoreRanges, sameCluster); diff != "" {
			t.Errorf("rollout (-want +got):\n%s", diff)
		}
		if _, err := cfg.EffectiveRollout("nope"); err == nil {
			t.Errorf("EffectiveRollout(nope) succeeded")
		}
	})
}

func TestFunctions(t *testing.T) {
	writeConfig(t, map[string]string{
		"main.rf.hcl": `locals {
  j   = jsondecode(file("data.json"))
  y   = yamldecode(file("data.yaml"))
  tpl = templatefile("greet.tpl", { name = "rack" })
  s   = startswith("r01", "r") && endswith("r01", "1")
  t   = try(local.j.missing, "fallback")
  c   = can(tonumber("x"))
  f   = format("%s-%02d", upper("r"), max(1, 7))
}
release "r" {
  version = "1.0.0"
  component "x" {
    match {
      id = join(",", [local.j.id, local.y.id, local.tpl, tostring(local.s), local.t, tostring(local.c), local.f])
    }
    version = "1.0.0"
    image   = "https://127.0.0.1/x"
  }
}
`,
		"data.json": `{"id": "J"}`,
		"data.yaml": "id: Yml\n",
		"greet.tpl": "hello ${upper(name)}",
	})
	l := NewLoader(LoadOptions{})
	cfg, diags := l.Load(".")
	if diags.HasErrors() {
		t.Fatalf("diagnostics:\n%s", renderDiags(l, diags))
	}
	if got, want := cfg.Release("r").Components[0].Match.ID, "J,Yml,hello RACK,true,fallback,false,R-07"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFileErrorNamesDirectory(t *testing.T) {
	writeConfig(t, map[string]string{"main.rf.hcl": `locals {
  x = file("nope.csv")
}
`})
	_, diags := NewLoader(LoadOptions{}).Load(".")
	want := []diag{{"error", "Invalid function argument",
		`Invalid value for "path" parameter: no file exists at "nope.csv" (paths are relative to the configuration directory ".").`,
		"main.rf.hcl:2,13-2,21"}}
	if diff := cmp.Diff(want, flatten(diags)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestIndexReference: a name that is not an identifier, like a release
// named after its version, is referenced with an index.
func TestIndexReference(t *testing.T) {
	cfg := load(t, `release "4.6.1" {
  version = "4.6.1"
}
cluster "east-1" {
  release = release["4.6.1"]
}
rollout "r" {
  stage "s" {
    group "g" {
      clusters = [cluster.east-1]
    }
  }
}
`)
	if cfg.Cluster("east-1").Release != cfg.Release("4.6.1") {
		t.Errorf("release[\"4.6.1\"] not resolved")
	}
}
