package config

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var printRules = flag.Bool("print-rules", false, "print the diagnostics of TestRules as Go literals")

// replace returns base with old replaced by new, failing loudly when old is
// not in base so a case cannot silently test the unedited base.
func replace(t *testing.T, src, old, new string) string {
	t.Helper()
	if !strings.Contains(src, old) {
		t.Fatalf("case edit: %q not in source", old)
	}
	return strings.Replace(src, old, new, 1)
}

// replaceLast is replace for the last occurrence.
func replaceLast(t *testing.T, src, old, new string) string {
	t.Helper()
	i := strings.LastIndex(src, old)
	if i < 0 {
		t.Fatalf("case edit: %q not in source", old)
	}
	return src[:i] + new + src[i+len(old):]
}

func TestRules(t *testing.T) {
	tests := []struct {
		name string
		// files returns the configuration; main.rf.hcl usually starts from base.
		files func(t *testing.T) map[string]string
		opts  LoadOptions
		want  []diag
	}{

		{name: "valid base", files: func(t *testing.T) map[string]string { return map[string]string{"main.rf.hcl": base} }},
		{name: "duplicate release", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base, "more.rf.hcl": "release \"r1\" {\n  version = \"4.5.1\"\n}\n"}
		},
			want: []diag{
				{"error", "Duplicate release name",
					"A release named \"r1\" was already declared at main.rf.hcl:2. Names must be unique within their kind.",
					"more.rf.hcl:1,1-1,13"},
			},
		},
		{name: "duplicate variable", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base + "variable \"x\" {\n  default = 1\n}\nvariable \"x\" {\n  default = 2\n}\n"}
		},
			want: []diag{
				{"error", "Duplicate variable name",
					"A variable named \"x\" was already declared at main.rf.hcl:31. Names must be unique within their kind.",
					"main.rf.hcl:34,1-34,13"},
			},
		},
		{name: "duplicate local", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base + "locals {\n  a = 1\n}\nlocals {\n  a = 2\n}\n"}
		},
			want: []diag{
				{"error", "Duplicate local value name",
					"A local value named \"a\" was already declared at main.rf.hcl:32. Names must be unique within their kind.",
					"main.rf.hcl:35,3-35,8"},
			},
		},
		{name: "server in two clusters", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base, "c2.rf.hcl": `cluster "c2" {
  release = release.r1
  rack "b" {
    server "a1" {
      bmc  = "https://127.0.1.1:8443"
      role = "control_plane"
    }
    server "b2" {
      bmc  = "https://127.0.1.2:8443"
      role = "control_plane"
    }
    server "b3" {
      bmc  = "https://127.0.1.3:8443"
      role = "control_plane"
    }
  }
}
`}
		},
			want: []diag{
				{"error", "Duplicate server",
					"A server named \"a1\" is already declared at c2.rf.hcl:4 (cluster \"c2\", rack \"b\"). A server belongs to exactly one rack of one cluster.",
					"main.rf.hcl:17,5-17,16"},
			},
		},
		{name: "same BMC twice", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `"https://127.0.0.3:8443"`, `"HTTPS://127.0.0.1:8443/"`)}
		},
			want: []diag{
				{"error", "Duplicate BMC address",
					"Server \"a3\" has the BMC address HTTPS://127.0.0.1:8443/, which server \"a1\" at main.rf.hcl:17 (cluster \"c1\", rack \"a\") already has. Servers share a BMC address only when the BMC serves several systems (a multi-node chassis) and each server names its own with system = \"ID\" (the ComputerSystem's Id or UUID); \"a1\" and \"a3\" name no system.",
					"main.rf.hcl:26,14-26,39"},
			},
		},
		{name: "duplicate rack", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replaceLast(t, base, "  }\n}\n", "  }\n  rack \"a\" {\n  }\n}\n")}
		},
			want: []diag{
				{"error", "Duplicate rack name",
					"Cluster \"c1\" already has a rack named \"a\", declared at main.rf.hcl:16.",
					"main.rf.hcl:30,3-30,11"},
			},
		},
		{name: "unknown role", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `role = "control_plane"
    }
    server "a3"`, `role = "controlplane"
    }
    server "a3"`)}
		},
			want: []diag{
				{"error", "Unknown role",
					"Server \"a2\" has role \"controlplane\"; a role must be \"control_plane\", \"control_plane_spare\", \"management\" or \"compute\".",
					"main.rf.hcl:23,14-23,28"},
				{"error", "Invalid control-plane placement",
					"Cluster \"c1\" has one rack, so it needs exactly 3 control_plane servers in that rack to keep quorum; it has 2 (a1 in rack a, a3 in rack a).",
					"main.rf.hcl:14,1-14,13"},
			},
		},
		{name: "bmc scheme", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `"https://127.0.0.1:8443"`, `"ftp://127.0.0.1"`)}
		},
			want: []diag{
				{"error", "Invalid BMC URL",
					"Server \"a1\": \"ftp://127.0.0.1\" must start with https:// (or http://), as in \"https://10.0.0.1:443\".",
					"main.rf.hcl:18,14-18,31"},
			},
		},
		{name: "bmc password in url", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `"https://127.0.0.1:8443"`, `"https://root:calvin@127.0.0.1"`)}
		},
			want: []diag{
				{"error", "Invalid BMC URL",
					"Server \"a1\": the BMC URL contains a password; put credentials in a credentials block or the provider, using env().",
					"main.rf.hcl:18,14-18,45"},
			},
		},
		{name: "bmc without host", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `"https://127.0.0.1:8443"`, `"https:///redfish"`)}
		},
			want: []diag{
				{"error", "Invalid BMC URL",
					"Server \"a1\": \"https:///redfish\" has no host.",
					"main.rf.hcl:18,14-18,32"},
			},
		},
		{name: "bad duration", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, "release = release.r1\n", "release = release.r1\n  strategy = strategy.s\n") +
				"strategy \"s\" {\n  compute {\n    wait_after_rack = \"15 minutes\"\n  }\n}\n"}
		},
			want: []diag{
				{"error", "Invalid duration",
					"\"15 minutes\" is not a duration: write a number with a unit, such as \"90s\", \"15m\" or \"1h30m\".",
					"main.rf.hcl:34,23-34,35"},
			},
		},
		{name: "threshold out of range", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base + "strategy \"p\" {\n  compute {\n    threshold {\n      type  = \"percent\"\n      value = 101\n    }\n  }\n  management {\n    threshold {\n      type  = \"count\"\n      value = 0\n    }\n  }\n}\n"}
		},
			want: []diag{
				{"error", "Invalid threshold",
					"A count threshold must be at least 1; got 0.",
					"main.rf.hcl:41,15-41,16"},
				{"error", "Invalid threshold",
					"A percent threshold must be from 1 to 100; got 101.",
					"main.rf.hcl:35,15-35,18"},
			},
		},
		{name: "count threshold larger than rack", files: func(t *testing.T) map[string]string {
			src := replace(t, base, "release = release.r1\n", "release = release.r1\n  strategy = strategy.s\n")
			src = replace(t, src, `role = "control_plane"
    }
  }`, `role = "control_plane"
    }
    server "a4" {
      bmc  = "https://127.0.0.4:8443"
      role = "compute"
    }
  }`)
			return map[string]string{"main.rf.hcl": src + "strategy \"s\" {\n  compute {\n    max_unavailable = 2\n    threshold {\n      type  = \"count\"\n      value = 3\n    }\n  }\n}\n"}
		},
			want: []diag{
				{"error", "Threshold larger than the rack",
					"Strategy \"s\" needs 3 successful servers per rack, but rack \"a\" of cluster \"c1\" has only 1 compute servers, so the threshold can never be met.",
					"main.rf.hcl:41,15-41,16"},
				{"error", "max_unavailable larger than the rack",
					"Strategy \"s\" allows 2 servers down at once, but rack \"a\" of cluster \"c1\" has only 1 compute servers; use a percentage or a count up to 1.",
					"main.rf.hcl:38,23-38,24"},
			},
		},
		{name: "version does not parse", files: func(t *testing.T) map[string]string {
			src := replace(t, base, `version = "4.5.0"`, `version = "4.5"`)
			return map[string]string{"main.rf.hcl": replace(t, src, `version = "1.2.3"`, `version = "1.2.x"`)}
		},
			want: []diag{
				{"error", "Invalid version",
					"version does not parse under the \"semver\" scheme (the default): \"4.5\" is not a semantic version (MAJOR.MINOR.PATCH[-PRE][+BUILD]): invalid semantic version. Declare scheme = \"dotted\", which reads it.",
					"main.rf.hcl:3,13-3,18"},
				{"error", "Invalid version",
					"version does not parse under the \"dotted\" scheme: \"1.2.x\" is not a dotted version (integers separated by dots): field 3 is \"x\". No built-in scheme reads it: declare a version_pattern whose capture groups say what is compared, or scheme = \"opaque\" to compare it for equality only.",
					"main.rf.hcl:8,15-8,22"},
			},
		},
		{name: "release skips a minor", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `version = "4.5.0"`, `version      = "4.6.1"
  upgrade_from = ["4.5.3", "4.4.0"]`)}
		},
			want: []diag{
				{"error", "Release skips a minor version",
					"4.4 → 4.6 skips 4.5. A runtime release moves at most one minor version per run; upgrade to 4.5 first.",
					"main.rf.hcl:4,28-4,35"},
			},
		},
		{name: "catalog decides the skip", files: func(t *testing.T) map[string]string {
			src := replace(t, base, `version = "4.5.0"`, `version      = "4.6.1"
  upgrade_from = ["4.4.0"]`)
			return map[string]string{"main.rf.hcl": src + "catalog {\n  releases = [\"4.4.0\", \"4.6.1\"]\n}\n"}
		}},
		{name: "downgrade without allow_downgrade", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `version = "4.5.0"`, `version      = "4.5.0"
  upgrade_from = ["4.5.2"]`)}
		},
			want: []diag{
				{"error", "Downgrade not allowed",
					"Release \"r1\" (4.5.0) is older than 4.5.2, which it lists in upgrade_from; set allow_downgrade = true to allow going back.",
					"main.rf.hcl:4,19-4,26"},
			},
		},
		{name: "one rack needs three control-plane servers", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `role = "control_plane"
    }
  }`, `role = "compute"
    }
  }`)}
		},
			want: []diag{
				{"error", "Invalid control-plane placement",
					"Cluster \"c1\" has one rack, so it needs exactly 3 control_plane servers in that rack to keep quorum; it has 2 (a1 in rack a, a2 in rack a).",
					"main.rf.hcl:14,1-14,13"},
			},
		},
		{name: "two racks spare in same rack", files: func(t *testing.T) map[string]string {
			src := replace(t, base, `role = "control_plane"
    }
    server "a2"`, `role = "control_plane_spare"
    }
    server "a2"`)
			src = replace(t, src, `role = "control_plane"
    }
    server "a3"`, `role = "compute"
    }
    server "a3"`)
			src = replaceLast(t, src, `  }
}
`, `  }
  rack "b" {
    server "b1" {
      bmc  = "https://127.0.1.1:8443"
      role = "compute"
    }
  }
}
`)
			return map[string]string{"main.rf.hcl": src}
		},
			want: []diag{
				{"error", "Invalid control-plane placement",
					"The control_plane_spare \"a1\" is in rack \"a\" with the control_plane server \"a3\"; with two racks the spare goes in the other rack so losing a rack keeps one control-plane node.",
					"main.rf.hcl:19,14-19,35"},
			},
		},
		{name: "three racks control plane in same rack and no spare", files: func(t *testing.T) map[string]string {
			src := replaceLast(t, base, `  }
}
`, `  }
  rack "b" {
    server "b1" {
      bmc  = "https://127.0.1.1:8443"
      role = "compute"
    }
  }
  rack "c" {
    server "c1" {
      bmc  = "https://127.0.2.1:8443"
      role = "compute"
    }
  }
}
`)
			return map[string]string{"main.rf.hcl": src}
		},
			want: []diag{
				{"error", "Invalid control-plane placement",
					"The control_plane servers \"a1\" and \"a2\" are both in rack \"a\"; with 3 racks the 3 control-plane servers go in 3 different racks so losing a rack keeps quorum.",
					"main.rf.hcl:23,14-23,29"},
				{"error", "Invalid control-plane placement",
					"The control_plane servers \"a2\" and \"a3\" are both in rack \"a\"; with 3 racks the 3 control-plane servers go in 3 different racks so losing a rack keeps quorum.",
					"main.rf.hcl:27,14-27,29"},
				{"error", "Invalid control-plane placement",
					"Cluster \"c1\" has 3 racks, so it needs exactly 1 control_plane_spare; it has 0 (none).",
					"main.rf.hcl:14,1-14,13"},
			},
		},
		{name: "reference to nothing", files: func(t *testing.T) map[string]string {
			src := replace(t, base, "release = release.r1\n", "release = release.r1\n  strategy = strategy.nexsu\n  maintenance_window = maintenance_window.w\n")
			return map[string]string{"main.rf.hcl": src + "strategy \"nexus\" {\n}\n"}
		},
			want: []diag{
				{"error", "Reference to undeclared strategy",
					"There is no strategy named \"nexsu\" in the configuration. Did you mean strategy.nexus?",
					"main.rf.hcl:16,14-16,28"},
				{"error", "Reference to undeclared maintenance window",
					"There is no maintenance window named \"w\" in the configuration.",
					"main.rf.hcl:17,24-17,44"},
			},
		},
		{name: "reference to undeclared variable", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base + "variable \"site\" {\n  default = \"x\"\n}\nlocals {\n  a = var.sit\n}\n"}
		},
			want: []diag{
				{"error", "Reference to undeclared input variable",
					"There is no variable named \"sit\": declare it with a variable block. Did you mean var.site?",
					"main.rf.hcl:35,7-35,14"},
			},
		},
		{name: "wrong kind of reference", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, "release = release.r1\n", "release = release.r1\n  strategy = release.r1\n")}
		},
			want: []diag{
				{"error", "Invalid reference",
					"\"strategy\" must refer to a strategy, as in strategy = strategy.NAME.",
					"main.rf.hcl:16,14-16,24"},
			},
		},
		{name: "unknown attribute", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, "release = release.r1\n", "release = release.r1\n  colour = \"red\"\n")}
		},
			want: []diag{
				{"error", "Unsupported argument",
					"An argument named \"colour\" is not expected here.",
					"main.rf.hcl:16,3-16,9"},
			},
		},
		{name: "local cycle", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base + "locals {\n  a = local.b\n  b = local.c\n  c = local.a\n}\n"}
		},
			want: []diag{
				{"error", "Reference cycle",
					"These declarations refer to each other, so none can be evaluated first: local.a → local.b → local.c → local.a.",
					"main.rf.hcl:32,3-32,14"},
			},
		},
		{name: "block cycle", files: func(t *testing.T) map[string]string {
			src := replace(t, base, "release = release.r1\n", "release = release.r1\n  labels = { peer = cluster.c2.name }\n")
			return map[string]string{"main.rf.hcl": src + "cluster \"c2\" {\n  release = release.r1\n  labels = { peer = cluster.c1.name }\n}\n"}
		},
			want: []diag{
				{"error", "Reference cycle",
					"These declarations refer to each other, so none can be evaluated first: cluster.c1 → cluster.c2 → cluster.c1.",
					"main.rf.hcl:14,1-14,13"},
			},
		},
		{name: "two runtime components and bad match", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `  component "bios" {`, `  component "os" {
    kind = "runtime"
    match {
      software_id = "os"
      id          = "os"
    }
    version = "4.5.0"
  }
  component "os2" {
    kind = "runtime"
    match {
      name = "OS[*"
    }
    version = "4.5.0"
  }
  component "bios" {`)}
		},
			want: []diag{
				{"error", "Invalid match rule",
					"A match block sets exactly one of software_id, id or name; this one sets 2.",
					"main.rf.hcl:6,5-6,10"},
				{"error", "Invalid match rule",
					"The name pattern \"OS[*\" is not a valid glob: syntax error in pattern.",
					"main.rf.hcl:15,14-15,20"},
				{"error", "More than one runtime component",
					"Release \"r1\" already has the runtime component \"os\" at main.rf.hcl:4; a release carries at most one runtime image.",
					"main.rf.hcl:12,3-12,18"},
			},
		},
		{name: "literal password", files: func(t *testing.T) map[string]string {
			src := replace(t, base, `role = "control_plane"
    }
  }`, `role = "control_plane"
      credentials {
        username = "root"
        password = "calvin"
      }
    }
  }`)
			return map[string]string{"main.rf.hcl": src + "provider \"redfish\" {\n  password = \"calvin\"\n}\n"}
		},
			want: []diag{
				{"error", "Literal password",
					"Server \"a3\" has a password that is not a sensitive value: write it as env(\"NAME\") or a sensitive variable, so it never appears in a configuration review or a plan.",
					"main.rf.hcl:30,20-30,28"},
				{"error", "Literal password",
					"Provider \"redfish\" has a password that is not a sensitive value: write it as env(\"NAME\") or a sensitive variable, so it never appears in a configuration review or a plan.",
					"main.rf.hcl:36,14-36,22"},
			},
		},
		{name: "sensitive value outside credentials", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `"https://127.0.0.1:8443"`, `env("BMC_URL")`)}
		}, opts: LoadOptions{Getenv: func(string) string { return "https://127.9.9.9" }},
			want: []diag{
				{"error", "Sensitive value not allowed",
					"The value of \"bmc\" is derived from a sensitive value (env() or a sensitive variable). Only credentials and provider attributes may hold sensitive values, because everything else can be shown in a plan.",
					"main.rf.hcl:18,14-18,28"},
			},
		},
		{name: "required variable", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base + "variable \"site\" {\n  type = string\n}\n"}
		},
			want: []diag{
				{"error", "No value for required variable",
					"The variable \"site\" has no default, so it must be set with -var, -var-file or the environment variable RACKFORM_VAR_site.",
					"main.rf.hcl:31,1-31,16"},
			},
		},
		{name: "variable validation", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base + `variable "racks" {
  type    = number
  default = 0
  validation {
    condition     = var.racks > 0
    error_message = "At least one rack is needed."
  }
}
`}
		},
			want: []diag{
				{"error", "Invalid value for variable",
					"At least one rack is needed.\n\nThis was checked by the validation rule at main.rf.hcl:35 (value from default).",
					"main.rf.hcl:31,1-31,17"},
			},
		},
		{name: "count threshold larger than a management batch", files: func(t *testing.T) map[string]string {
			// One rack: group A holds the 3 management servers, in
			// batches of 2 and 1 (rule 5); group B is empty.
			src := replace(t, base, "release = release.r1\n", "release = release.r1\n  strategy = strategy.s\n")
			src = replace(t, src, `role = "control_plane"
    }
  }`, `role = "control_plane"
    }
    server "m1" {
      bmc  = "https://127.0.1.1:8443"
      role = "management"
    }
    server "m2" {
      bmc  = "https://127.0.1.2:8443"
      role = "management"
    }
    server "m3" {
      bmc  = "https://127.0.1.3:8443"
      role = "management"
    }
  }`)
			return map[string]string{"main.rf.hcl": src + "strategy \"s\" {\n  management {\n    threshold {\n      type  = \"count\"\n      value = 2\n    }\n  }\n}\n"}
		},
			want: []diag{
				{"error", "Threshold larger than the batch",
					"Strategy \"s\" needs 2 successful servers per management batch, but batch 2 of management group A in cluster \"c1\" has only 1 server, so the threshold can never be met; use a percentage or a count up to 1.",
					"main.rf.hcl:48,15-48,16"},
			},
		},
		{name: "management batches alternate racks", files: func(t *testing.T) map[string]string {
			// Racks in order r1, r2, r3 (not as declared): group A = r1
			// and r3, 4 management servers in batches of 2 and 2; group B
			// = r2, 1 server. Grouping in declared order (r2, r1, r3)
			// would make batch 2 of group A the one that is too small.
			srv := func(name, role string, ip int) string {
				return fmt.Sprintf("    server %q {\n      bmc  = \"https://127.0.0.%d:8443\"\n      role = %q\n    }\n", name, ip, role)
			}
			src := relSrc + "cluster \"c1\" {\n  release  = release.r1\n  strategy = strategy.s\n" +
				"  rack \"r2\" {\n" + srv("cp2", "control_plane", 1) + srv("spare", "control_plane_spare", 2) + srv("r2-m1", "management", 3) + "  }\n" +
				"  rack \"r1\" {\n" + srv("cp1", "control_plane", 4) + srv("r1-m1", "management", 5) + srv("r1-m2", "management", 6) + "  }\n" +
				"  rack \"r3\" {\n" + srv("cp3", "control_plane", 7) + srv("r3-m1", "management", 8) + srv("r3-m2", "management", 9) + "  }\n}\n"
			return map[string]string{"main.rf.hcl": src + "strategy \"s\" {\n  management {\n    threshold {\n      type  = \"count\"\n      value = 2\n    }\n  }\n}\n"}
		},
			want: []diag{
				{"error", "Threshold larger than the batch",
					"Strategy \"s\" needs 2 successful servers per management batch, but batch 1 of management group B in cluster \"c1\" has only 1 server, so the threshold can never be met; use a percentage or a count up to 1.",
					"main.rf.hcl:55,15-55,16"},
			},
		},
		{name: "strategy stage selects an unknown rack", files: func(t *testing.T) map[string]string {
			src := replace(t, base, "release = release.r1\n", "release = release.r1\n  strategy = strategy.s\n")
			src += `cluster "c2" {
  release  = release.r1
  strategy = strategy.s
  rack "aa" {
    server "x1" {
      bmc  = "https://127.0.9.1:8443"
      role = "control_plane"
    }
    server "x2" {
      bmc  = "https://127.0.9.2:8443"
      role = "control_plane"
    }
    server "x3" {
      bmc  = "https://127.0.9.3:8443"
      role = "control_plane"
    }
  }
}
strategy "s" {
  stage "first" {
    racks = ["a"]
  }
  stage "rest" {
    racks = ["a", "aa"]
  }
}
`
			return map[string]string{"main.rf.hcl": src}
		},
			want: []diag{
				{"error", "Unknown rack",
					"Stage \"rest\" of strategy \"s\" selects rack \"aa\", but cluster \"c1\", which uses the strategy, has no such rack. Did you mean \"a\"?",
					"main.rf.hcl:55,19-55,23"},
				{"error", "Unknown rack",
					"Stage \"first\" of strategy \"s\" selects rack \"a\", but cluster \"c2\", which uses the strategy, has no such rack. Did you mean \"aa\"?",
					"main.rf.hcl:52,14-52,17"},
				{"error", "Unknown rack",
					"Stage \"rest\" of strategy \"s\" selects rack \"a\", but cluster \"c2\", which uses the strategy, has no such rack. Did you mean \"aa\"?",
					"main.rf.hcl:55,14-55,17"},
			},
		},
		{name: "strategy stage batch_size and threshold larger than its batches", files: func(t *testing.T) map[string]string {
			src := replace(t, base, "release = release.r1\n", "release = release.r1\n  strategy = strategy.s\n")
			src = replace(t, src, `role = "control_plane"
    }
  }`, `role = "control_plane"
    }
    server "w1" {
      bmc  = "https://127.0.1.1:8443"
      role = "compute"
    }
    server "w2" {
      bmc  = "https://127.0.1.2:8443"
      role = "compute"
    }
    server "w3" {
      bmc  = "https://127.0.1.3:8443"
      role = "compute"
    }
    server "m1" {
      bmc  = "https://127.0.1.4:8443"
      role = "management"
    }
  }`)
			return map[string]string{"main.rf.hcl": src + `strategy "s" {
  stage "compute" {
    roles      = ["compute"]
    batch_size = 2
    threshold {
      type  = "count"
      value = 2
    }
  }
  stage "management" {
    roles      = ["management"]
    batch_size = 4
  }
  stage "control" {
    roles = ["control_plane"]
    threshold {
      type  = "count"
      value = 1
    }
  }
  stage "fits" {
    batch_size = "50%"
    threshold {
      type  = "percent"
      value = 100
    }
  }
}
`}
		},
			want: []diag{
				{"error", "Threshold larger than the batch",
					"Stage \"compute\" of strategy \"s\" needs 2 successful servers per batch, but in cluster \"c1\" its last batch (batch 2) has only 1 server, so the threshold can never be met; use a percentage or a count up to 1.",
					"main.rf.hcl:54,15-54,16"},
				{"error", "batch_size larger than the stage",
					"Stage \"management\" of strategy \"s\" has batch_size 4, but in cluster \"c1\" it takes only 1 server besides control-plane servers; use a percentage or a count up to 1.",
					"main.rf.hcl:59,18-59,19"},
			},
		},
		{name: "unknown canary rack", files: func(t *testing.T) map[string]string {
			src := replace(t, base, "release = release.r1\n", "release = release.r1\n  strategy = strategy.s\n")
			return map[string]string{"main.rf.hcl": src + "strategy \"s\" {\n  compute {\n    canary_rack = \"b\"\n  }\n}\n"}
		},
			want: []diag{
				{"error", "Unknown canary rack",
					"Strategy \"s\" names canary rack \"b\", but cluster \"c1\" has no such rack. Did you mean \"a\"?",
					"main.rf.hcl:14,1-14,13"},
			},
		},
		{name: "cluster in two groups", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base + `rollout "r" {
  stage "one" {
    group "g1" {
      clusters = [cluster.c1]
    }
  }
  stage "two" {
    group "g2" {
      clusters = [cluster.c1]
    }
  }
}
`}
		},
			want: []diag{
				{"error", "Cluster in two groups",
					"Cluster \"c1\" is already in group \"g1\" at main.rf.hcl:33; a cluster is upgraded once per rollout.",
					"main.rf.hcl:38,5-38,15"},
			},
		},
		{name: "for_each list without names", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `  rack "a" {`, `  rack "x" {
    for_each = [1, 2]
  }
  rack "a" {`)}
		},
			want: []diag{
				{"error", "Invalid for_each argument",
					"Element 0 of the for_each list has no \"name\" attribute. A for_each list must hold objects with a name (such as csvdecode rows with a name column); otherwise use a map or a set of strings.",
					"main.rf.hcl:17,16-17,22"},
			},
		},
		{name: "maintenance window", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base + `maintenance_window "w" {
  start      = "2026-07-01 22:00"
  duration   = "25h"
  recurrence = "daily"
  timezone   = "Mars/Olympus"
}
`}
		},
			want: []diag{
				{"error", "Invalid time zone",
					"\"Mars/Olympus\" is not an IANA time zone name such as \"UTC\" or \"Europe/Berlin\".",
					"main.rf.hcl:35,16-35,30"},
				{"error", "Invalid window start",
					"\"2026-07-01 22:00\" is not an RFC 3339 time such as \"2026-07-01T22:00:00Z\" or \"2026-07-01T22:00:00+02:00\".",
					"main.rf.hcl:32,16-32,34"},
				{"error", "Invalid duration",
					"A daily window lasting 25h0m0s would overlap its next opening.",
					"main.rf.hcl:33,16-33,21"},
			},
		},
		{name: "invalid server name", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `server "a1" {`, `server "a1" {
      name = "a 1"`)}
		},
			want: []diag{
				{"error", "Invalid name",
					"\"a 1\" is not a valid server name: a name starts with a letter or digit and contains only letters, digits, '-', '_', '.' and ':'.",
					"main.rf.hcl:18,14-18,19"},
			},
		},
		{name: "self reference", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, "release = release.r1\n", "release = release.r1\n  labels = { me = cluster.c1.name }\n")}
		},
			want: []diag{
				{"error", "Reference cycle",
					"These declarations refer to each other, so none can be evaluated first: cluster.c1 → cluster.c1.",
					"main.rf.hcl:14,1-14,13"},
			},
		},
		{name: "component without match or image", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `  component "bios" {`, `  component "nic" {
    version = "1.0"
    scheme  = "dotted"
  }
  component "bios" {`)}
		},
			want: []diag{
				{"error", "Missing image",
					"Component \"nic\" is updated with \"auto\", which needs an image URI: set image.",
					"main.rf.hcl:4,3-4,18"},
				{"error", "Missing match block",
					"Component \"nic\" needs a match block saying how to find it in the BMC's firmware inventory: software_id, id or name.",
					"main.rf.hcl:4,3-4,18"},
			},
		},
		{name: "dynamic components are checked", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": replace(t, base, `  component "bios" {`, `  dynamic "component" {
    for_each = { nic = "1.0", raid = "x.1" }
    labels   = [component.key]
    content {
      match {
        id = component.key
      }
      version = component.value
      scheme  = "dotted"
      image   = "https://127.0.0.1/${component.key}.bin"
    }
  }
  component "bios" {`)}
		},
			want: []diag{
				{"error", "Invalid version",
					"version does not parse under the \"dotted\" scheme: \"x.1\" is not a dotted version (integers separated by dots): field 1 is \"x\". Declare scheme = \"vendor\", which reads it.",
					"main.rf.hcl:11,17-11,32"},
			},
		},
		{name: "four racks spare shares a rack", files: func(t *testing.T) map[string]string {
			src := replace(t, base, `role = "control_plane"
    }
    server "a2"`, `role = "control_plane_spare"
    }
    server "a2"`)
			src = replace(t, src, `role = "control_plane"
    }
    server "a3"`, `role = "compute"
    }
    server "a3"`)
			src = replaceLast(t, src, `  }
}
`, `  }
  rack "b" {
    server "b1" {
      bmc  = "https://127.0.1.1:8443"
      role = "control_plane"
    }
  }
  rack "c" {
    server "c1" {
      bmc  = "https://127.0.2.1:8443"
      role = "control_plane"
    }
  }
  rack "d" {
    server "d1" {
      bmc  = "https://127.0.3.1:8443"
      role = "compute"
    }
  }
}
`)
			return map[string]string{"main.rf.hcl": src}
		},
			want: []diag{
				{"warning", "Control-plane spare shares a rack",
					"The control_plane_spare \"a1\" is in rack \"a\" with the control_plane server \"a3\", but rack \"d\" has no control-plane server; with 4 racks the spare belongs in a rack of its own.",
					"main.rf.hcl:19,14-19,35"},
			},
		},
		{name: "only rf.hcl files are read", files: func(t *testing.T) map[string]string {
			return map[string]string{"main.rf.hcl": base, "x.tf": "garbage {"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadFiles(t, tt.files(t), tt.opts)
			got := flatten(diags)
			if *printRules {
				fmt.Printf("CASE %s\n", tt.name)
				for _, d := range got {
					fmt.Printf("{%q, %q,\n%q,\n%q},\n", d.Severity, d.Summary, d.Detail, d.Range)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}
