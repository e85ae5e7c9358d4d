package config

import (
	"strings"
	"testing"
	"time"
)

// TestBackendSettings: the rackform settings block selects the state
// backend; an unknown backend, an unknown attribute, a connection string
// in the configuration (it may hold a password and the configuration goes
// into every plan), a non-literal value and a second backend are errors
// that say what to do; the same block is read from a plan's snapshot
// without loading the rest.
func TestBackendSettings(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      *Backend
		err       string
	}{
		{"none", ``, nil, ""},
		{"postgres", "rackform {\n  backend \"postgres\" {\n    lease_duration = \"45s\"\n  }\n}\n", &Backend{Type: BackendPostgres, LeaseDuration: 45 * time.Second}, ""},
		{"postgres defaults", "rackform {\n  backend \"postgres\" {}\n}\n", &Backend{Type: BackendPostgres}, ""},
		{"local", "rackform {\n  backend \"local\" {}\n}\n", &Backend{Type: BackendLocal}, ""},
		{"unknown backend", "rackform {\n  backend \"s3\" {}\n}\n", nil, `There is no state backend "s3". The backends are "local" and "postgres".`},
		{"connection string", "rackform {\n  backend \"postgres\" {\n    conn_str = \"postgres://u:pw@db/x\"\n  }\n}\n", nil, "from the environment variable RACKFORM_PG_CONN_STR only"},
		{"unknown attribute", "rackform {\n  backend \"postgres\" {\n    schema = \"x\"\n  }\n}\n", nil, `The postgres backend takes no attribute "schema"; it takes: lease_duration.`},
		{"not a literal", "variable \"d\" {\n  default = \"30s\"\n}\nrackform {\n  backend \"postgres\" {\n    lease_duration = var.d\n  }\n}\n", nil, "must be a literal value"},
		{"too short", "rackform {\n  backend \"postgres\" {\n    lease_duration = \"1s\"\n  }\n}\n", nil, "at least 3s"},
		{"two backends", "rackform {\n  backend \"postgres\" {}\n}\nrackform {\n  backend \"local\" {}\n}\n", nil, "A configuration has one state backend; the first is at main.rf.hcl:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be, diags := ParseBackend(map[string][]byte{"main.rf.hcl": []byte(tc.src), "data.csv": []byte("rackform {")})
			check := func(where string, be *Backend, errs []diag) {
				t.Helper()
				if tc.err != "" {
					found := false
					for _, d := range errs {
						found = found || strings.Contains(d.Detail, tc.err)
					}
					if !found {
						t.Fatalf("%s: diagnostics %+v lack %q", where, errs, tc.err)
					}
					return
				}
				if len(errs) > 0 {
					t.Fatalf("%s: %+v", where, errs)
				}
				if (be == nil) != (tc.want == nil) || be != nil && (be.Type != tc.want.Type || be.LeaseDuration != tc.want.LeaseDuration) {
					t.Fatalf("%s: backend %+v, want %+v", where, be, tc.want)
				}
			}
			check("ParseBackend", be, flatten(diags))
			cfg, diags := loadFiles(t, map[string]string{"main.rf.hcl": tc.src}, LoadOptions{})
			var errs []diag
			for _, d := range flatten(diags) {
				if d.Severity == "error" {
					errs = append(errs, d)
				}
			}
			var got *Backend
			if cfg != nil {
				got = cfg.Backend
			}
			check("Load", got, errs)
		})
	}
}
