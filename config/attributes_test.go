package config

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rackform/rackform/config/version"
)

var printAttrs = flag.Bool("print-attrs", false, "print the diagnostics of the attribute tests as Go literals")

// checkDiags loads main.rf.hcl and compares its diagnostics with want.
func checkDiags(t *testing.T, src string, want []diag) *Config {
	t.Helper()
	cfg, diags := loadFiles(t, map[string]string{"main.rf.hcl": src}, LoadOptions{Getenv: func(string) string { return "pw" }})
	got := flatten(diags)
	if *printAttrs {
		fmt.Printf("CASE %s\n", t.Name())
		for _, d := range got {
			fmt.Printf("{%q, %q,\n%q,\n%q},\n", d.Severity, d.Summary, d.Detail, d.Range)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	return cfg
}

// bios replaces base's bios component attributes (version, scheme) with attrs.
func bios(t *testing.T, attrs string) string {
	return replace(t, base, `    version = "1.2.3"
    scheme  = "dotted"
`, attrs)
}

func TestComponentSchemeAttributes(t *testing.T) {
	tests := []struct {
		name    string
		attrs   string
		scheme  version.Scheme
		pattern string
		want    []diag
	}{
		{name: "vendor", attrs: "    version = \"P79 v1.45\"\n    scheme  = \"vendor\"\n", scheme: version.Vendor},
		{name: "opaque", attrs: "    version = \"build 7f3a\"\n    scheme  = \"opaque\"\n", scheme: version.Opaque},
		{name: "hex", attrs: "    version = \"94.02.5C.00.03\"\n    scheme  = \"hex\"\n", scheme: version.Hex},
		{name: "a hex version under dotted suggests hex",
			attrs: "    version = \"94.02.5C.00.03\"\n    scheme  = \"dotted\"\n",
			want: []diag{{"error", "Invalid version",
				"version does not parse under the \"dotted\" scheme: \"94.02.5C.00.03\" is not a dotted version (integers separated by dots): field 3 is \"5C\". Declare scheme = \"hex\", which reads it.",
				"main.rf.hcl:8,15-8,31"}}},
		{name: "a version_pattern alone means the pattern scheme",
			attrs:  "    version         = \"U30 v2.52\"\n    version_pattern = \"(?P<family>[A-Z]\\\\d+) v(\\\\d+)\\\\.(\\\\d+)\"\n",
			scheme: version.Pattern, pattern: `(?P<family>[A-Z]\d+) v(\d+)\.(\d+)`},
		{name: "inherited semver suggests the scheme that reads the version",
			attrs: "    version = \"P79 v1.45\"\n",
			want: []diag{{"error", "Invalid version",
				"version does not parse under the \"semver\" scheme (inherited from release \"r1\"): \"P79 v1.45\" is not a semantic version (MAJOR.MINOR.PATCH[-PRE][+BUILD]): invalid semantic version. Declare scheme = \"vendor\", which reads it.",
				"main.rf.hcl:8,15-8,26"}}},
		{name: "no built-in scheme reads it",
			attrs: "    version = \"1.5.27 ESM\"\n    scheme  = \"vendor\"\n",
			want: []diag{{"error", "Invalid version",
				"version does not parse under the \"vendor\" scheme: \"1.5.27 ESM\" is not a vendor version: expected an optional family token (\"P79\", \"nc.\") or Lenovo build code (\"42S-\"), an optional \"v\", a dotted number, and only the suffixes the vendor scheme knows (a revision letter, a hex build id, a release number -N, a pre-release -rcN, -betaN or -alphaN, -N-gHASH, -revN, a date, \"Build N\", a 0x build id). No built-in scheme reads it: declare a version_pattern whose capture groups say what is compared, or scheme = \"opaque\" to compare it for equality only.",
				"main.rf.hcl:8,15-8,27"}}},
		{name: "pattern scheme without a pattern",
			attrs: "    version = \"1\"\n    scheme  = \"pattern\"\n",
			want: []diag{{"error", "Missing version_pattern",
				"scheme = \"pattern\" reads versions with a regular expression: set version_pattern, whose capture groups say what is compared (see the language reference).",
				"main.rf.hcl:9,15-9,24"}}},
		{name: "pattern on another scheme",
			attrs: "    version         = \"1\"\n    scheme          = \"dotted\"\n    version_pattern = \"(\\\\d+)\"\n",
			want: []diag{{"error", "version_pattern without the pattern scheme",
				"version_pattern is read only by scheme = \"pattern\", but this block has scheme = \"dotted\": remove one of them.",
				"main.rf.hcl:10,23-10,31"}}},
		{name: "a pattern that does not compile",
			attrs: "    version         = \"1\"\n    version_pattern = \"v(\\\\d+\"\n",
			want: []diag{{"error", "Invalid version_pattern",
				"The version_pattern \"v(\\\\d+\" is not a regular expression: error parsing regexp: missing closing ): `^(?:v(\\d+)$`.",
				"main.rf.hcl:9,23-9,31"}}},
		{name: "a version the pattern does not match",
			attrs: "    version         = \"x1\"\n    version_pattern = \"v(\\\\d+)\"\n",
			want: []diag{{"error", "Invalid version",
				"version does not parse under the \"pattern\" scheme: \"x1\" does not match the version_pattern \"v(\\\\d+)\". Declare scheme = \"vendor\", which reads it.",
				"main.rf.hcl:8,23-8,27"}}},
		{name: "unknown scheme",
			attrs: "    version = \"1\"\n    scheme  = \"semantic\"\n",
			want: []diag{{"error", "Invalid value for scheme",
				"\"semantic\" is not a valid scheme: it must be \"semver\", \"dotted\", \"hex\", \"vendor\", \"pattern\" or \"opaque\".",
				"main.rf.hcl:9,15-9,25"}}},
		{name: "allow_change on an ordered scheme",
			attrs: "    version      = \"1.2.3\"\n    scheme       = \"dotted\"\n    allow_change = true\n",
			want: []diag{{"error", "allow_change needs the opaque scheme",
				"allow_change lets a component whose versions are only equal or different (scheme = \"opaque\") move to its target. Component \"bios\" has scheme = \"dotted\", whose versions are older or newer: it is upgraded, or downgraded with allow_downgrade = true.",
				"main.rf.hcl:10,20-10,24"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := checkDiags(t, bios(t, tt.attrs), tt.want)
			if tt.want != nil {
				return
			}
			c := cfg.Release("r1").Components[0]
			if c.Scheme != tt.scheme || c.Pattern != tt.pattern || c.Version.Scheme() != tt.scheme {
				t.Errorf("scheme %q pattern %q (version read as %q), want %q %q", c.Scheme, c.Pattern, c.Version.Scheme(), tt.scheme, tt.pattern)
			}
		})
	}
}

func TestReleaseSchemeIsInherited(t *testing.T) {
	src := bios(t, "    version = \"rel-4.5\"\n") // inherits the release's pattern
	src = replace(t, src, `  version = "4.5.0"
`, `  version         = "rel-4.5"
  version_pattern = "rel-(?P<major>\\d+)\\.(?P<minor>\\d+)"
  upgrade_from    = ["rel-4.3"]
`)
	cfg := checkDiags(t, src, []diag{{"error", "Release skips a minor version",
		"4.3 → 4.5 skips 4.4. A runtime release moves at most one minor version per run; upgrade to 4.4 first.",
		"main.rf.hcl:5,22-5,31"}})
	r := cfg.Release("r1")
	c := r.Components[0]
	if r.Scheme != version.Pattern || c.Scheme != version.Pattern || c.Pattern != r.Pattern || !c.Version.HasMinors() {
		t.Errorf("release %q/%q, component %q/%q", r.Scheme, r.Pattern, c.Scheme, c.Pattern)
	}
}

func TestOpaqueReleaseUpgradeFromIsUndecidable(t *testing.T) {
	src := replace(t, base, `  version = "4.5.0"
`, `  version      = "build-b"
  scheme       = "opaque"
  upgrade_from = ["build-a"]
`)
	checkDiags(t, src, []diag{{"error", "Undecidable version",
		"Release \"r1\" cannot check upgrade_from build-a against its version build-b: \"build-a\" and \"build-b\" cannot be ordered under the \"opaque\" scheme: opaque versions are only equal or different, never older or newer. List only versions its scheme can order against the release's.",
		"main.rf.hcl:5,19-5,28"}})
}

func TestComponentSHA256AndMethod(t *testing.T) {
	const digest = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"
	tests := []struct {
		name   string
		attrs  string
		sha    string
		method string
		want   []diag
	}{
		{name: "default method is auto", method: MethodAuto},
		{name: "sha256 is kept, lower case", attrs: "    sha256 = \"" + digest + "\"\n", sha: strings.ToLower(digest), method: MethodAuto},
		{name: "sha256 too short", attrs: "    sha256 = \"abc\"\n", method: MethodAuto,
			want: []diag{{"error", "Invalid sha256",
				"sha256 must be the image's SHA-256 digest as 64 hexadecimal digits (as sha256sum prints it); got 3 characters.",
				"main.rf.hcl:11,14-11,19"}}},
		{name: "sha256 not hex", attrs: "    sha256 = \"" + strings.Repeat("g", 64) + "\"\n", method: MethodAuto,
			want: []diag{{"error", "Invalid sha256",
				"sha256 must be the image's SHA-256 digest as 64 hexadecimal digits (as sha256sum prints it); got 64 characters, and 'g' is not a hexadecimal digit.",
				"main.rf.hcl:11,14-11,80"}}},
		{name: "http_push", attrs: "    method = \"http_push\"\n", method: MethodHTTPPush},
		{name: "multipart_push", attrs: "    method = \"multipart_push\"\n", method: MethodMultipartPush},
		{name: "push, either push method", attrs: "    method = \"push\"\n", method: MethodPush},
		{name: "simple_update", attrs: "    method = \"simple_update\"\n", method: MethodSimpleUpdate},
		{name: "unknown method", attrs: "    method = \"ftp\"\n", method: MethodAuto,
			want: []diag{{"error", "Invalid value for method",
				"\"ftp\" is not a valid method: it must be \"auto\", \"simple_update\", \"http_push\", \"multipart_push\", \"push\" or \"reimage\".",
				"main.rf.hcl:11,14-11,19"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := replace(t, base, `    image   = "https://127.0.0.1/bios.bin"
`, `    image   = "https://127.0.0.1/bios.bin"
`+tt.attrs)
			cfg := checkDiags(t, src, tt.want)
			c := cfg.Release("r1").Components[0]
			if c.SHA256 != tt.sha || c.Method != tt.method {
				t.Errorf("sha256 %q method %q, want %q %q", c.SHA256, c.Method, tt.sha, tt.method)
			}
		})
	}
}

// sharedBMC puts a1 and a2 on one BMC address, each with the given extra
// attributes.
func sharedBMC(t *testing.T, a1, a2 string) string {
	src := replace(t, base, `      bmc  = "https://127.0.0.1:8443"
      role = "control_plane"
`, `      bmc  = "https://127.0.0.1:8443"
      role = "control_plane"
`+a1)
	return replace(t, src, `      bmc  = "https://127.0.0.2:8443"
      role = "control_plane"
`, `      bmc  = "https://127.0.0.1:8443"
      role = "control_plane"
`+a2)
}

func TestServersShareABMCByNamingSystems(t *testing.T) {
	tests := []struct {
		name   string
		a1, a2 string
		want   []diag
	}{
		{name: "distinct systems", a1: "      system = \"Node0\"\n", a2: "      system = \"Node1\"\n"},
		{name: "one names none", a1: "      system = \"Node0\"\n",
			want: []diag{{"error", "Duplicate BMC address",
				"Server \"a2\" has the BMC address https://127.0.0.1:8443, which server \"a1\" at main.rf.hcl:17 (cluster \"c1\", rack \"a\") already has. Servers share a BMC address only when the BMC serves several systems (a multi-node chassis) and each server names its own with system = \"ID\" (the ComputerSystem's Id or UUID); \"a2\" names no system.",
				"main.rf.hcl:23,14-23,38"}}},
		{name: "the same system twice", a1: "      system = \"Node0\"\n", a2: "      system = \"node0\"\n",
			want: []diag{{"error", "Duplicate system",
				"Server \"a2\" names system \"node0\" behind the BMC https://127.0.0.1:8443, which server \"a1\" at main.rf.hcl:17 (cluster \"c1\", rack \"a\") names too. Servers sharing a BMC each name a different system.",
				"main.rf.hcl:23,14-23,38"}}},
		{name: "a path is not a system", a1: "      system = \"/redfish/v1/Systems/Node0\"\n", a2: "      system = \"Node1\"\n",
			want: []diag{
				{"error", "Invalid system",
					"Server \"a1\" names system \"/redfish/v1/Systems/Node0\": give the ComputerSystem's Id (the last part of /redfish/v1/Systems/ID) or its UUID, not a path.",
					"main.rf.hcl:20,16-20,43"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := checkDiags(t, sharedBMC(t, tt.a1, tt.a2), tt.want)
			if tt.want != nil {
				return
			}
			var systems []string
			for _, sv := range cfg.Servers() {
				systems = append(systems, sv.System)
			}
			if diff := cmp.Diff([]string{"Node0", "Node1", ""}, systems); diff != "" {
				t.Errorf("systems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServerUpdateMethod(t *testing.T) {
	src := sharedBMC(t, "      system        = \"Node0\"\n      update_method = \"multipart_push\"\n", "      system        = \"Node1\"\n      update_method = \"reimage\"\n")
	cfg := checkDiags(t, src, []diag{{"error", "Invalid value for update_method",
		"\"reimage\" is not a valid update_method: it must be \"auto\", \"simple_update\", \"http_push\", \"multipart_push\" or \"push\".",
		"main.rf.hcl:27,23-27,32"}})
	if got := cfg.Servers()[0].UpdateMethod; got != MethodMultipartPush {
		t.Errorf("a1 update_method = %q", got)
	}
	if got := cfg.Servers()[2].UpdateMethod; got != "" {
		t.Errorf("a3 update_method = %q, want \"\" (each component's method)", got)
	}
}

func TestPlainHTTPBMCNeedsAllowHTTP(t *testing.T) {
	httpBase := strings.ReplaceAll(base, "https://", "http://")
	provider := func(attrs string) string {
		return "provider \"redfish\" {\n  username = \"admin\"\n  password = env(\"PW\")\n" + attrs + "}\n"
	}
	tests := []struct {
		name string
		src  string
		want []diag
	}{
		{name: "refused without a provider", src: strings.Replace(base, "https://127.0.0.1:8443", "http://127.0.0.1:8443", 1),
			want: []diag{{"error", "Plain http:// BMC address",
				"Server \"a1\" has the BMC address http://127.0.0.1:8443, which is plain http://: the BMC password would cross the network in clear text. Use https://, or, on a network you trust, set allow_http = true in the cluster's provider block.",
				"main.rf.hcl:18,14-18,37"}}},
		{name: "refused with allow_http = false", src: provider("  allow_http = false\n") + strings.Replace(base, "https://127.0.0.2", "http://127.0.0.2", 1),
			want: []diag{{"error", "Plain http:// BMC address",
				"Server \"a2\" has the BMC address http://127.0.0.2:8443, which is plain http://: the BMC password would cross the network in clear text. Use https://, or, on a network you trust, set allow_http = true in provider \"redfish\".",
				"main.rf.hcl:27,14-27,37"}}},
		{name: "allowed", src: provider("  allow_http = true\n") + httpBase},
		{name: "HTTP in capitals is http", src: strings.Replace(base, "https://127.0.0.3", "HTTP://127.0.0.3", 1),
			want: []diag{{"error", "Plain http:// BMC address",
				"Server \"a3\" has the BMC address HTTP://127.0.0.3:8443, which is plain http://: the BMC password would cross the network in clear text. Use https://, or, on a network you trust, set allow_http = true in the cluster's provider block.",
				"main.rf.hcl:26,14-26,37"}}},
		{name: "servers of one block share one error", src: strings.Replace(base, `    server "a3" {`, `    server "c" {
      count = 12
      bmc   = "http://127.0.3.${count.index}:8443"
      role  = "compute"
    }
    server "a3" {`, 1),
			want: []diag{{"error", "Plain http:// BMC address",
				"Servers \"c-0\", \"c-1\", \"c-2\", \"c-3\", \"c-4\", \"c-5\", \"c-6\", \"c-7\", \"c-8\", \"c-9\" and 2 more have BMC addresses (http://127.0.3.0:8443, …) that are plain http://: the BMC password would cross the network in clear text. Use https://, or, on a network you trust, set allow_http = true in the cluster's provider block.",
				"main.rf.hcl:27,15-27,51"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiags(t, tt.src, tt.want)
		})
	}
}
