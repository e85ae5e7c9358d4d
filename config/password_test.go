package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A password is refused when it is not sensitive, in words that say where
// it comes from; and one taken from a sensitive variable validate has no
// value for is not (issue 26 item 8: it was reported as a literal
// password, telling the user to do what the file already did).
func TestPasswordRules(t *testing.T) {
	tests := []struct {
		name  string
		files func(t *testing.T) map[string]string
		opts  LoadOptions
		want  []diag
	}{
		// validate without a value for a required sensitive variable: the
		// password is unknown but sensitive, so nothing is wrong with it
		// (it was reported as a literal password).
		{name: "password from an unset sensitive variable", files: func(t *testing.T) map[string]string {
			src := replace(t, base, `role = "control_plane"
    }
  }`, `role = "control_plane"
      credentials {
        username = "root"
        password = var.server_pw
      }
    }
  }`)
			return map[string]string{"main.rf.hcl": src + "variable \"bmc_pw\" {\n  type      = string\n  sensitive = true\n}\nvariable \"server_pw\" {\n  type      = string\n  sensitive = true\n}\nprovider \"redfish\" {\n  password = var.bmc_pw\n}\n"}
		}, opts: LoadOptions{UnsetVariablesUnknown: true}},
		// A password from a variable not declared sensitive: the fix is on
		// the variable, which the message names, with or without a value.
		{name: "password from a variable not sensitive", files: func(t *testing.T) map[string]string {
			src := replace(t, base, `role = "control_plane"
    }
  }`, `role = "control_plane"
      credentials {
        username = "root"
        password = var.server_pw
      }
    }
  }`)
			return map[string]string{"main.rf.hcl": src + "variable \"bmc_pw\" {\n  type = string\n}\nvariable \"server_pw\" {\n  type = string\n}\nprovider \"redfish\" {\n  password = \"${var.bmc_pw}!${local.suffix}\"\n}\nlocals {\n  suffix = \"x\"\n}\n"}
		}, opts: LoadOptions{UnsetVariablesUnknown: true},
			want: []diag{
				{"error", "Password not sensitive",
					"Server \"a3\" takes its password from variable \"server_pw\", which is not declared sensitive: add sensitive = true to variable \"server_pw\" (or write password = env(\"NAME\")), so the password never appears in a configuration review or a plan.",
					"main.rf.hcl:30,20-30,33"},
				{"error", "Password not sensitive",
					"Provider \"redfish\" has a password built from var.bmc_pw and local.suffix, which is not sensitive: take it from env(\"NAME\") or a variable declared sensitive = true, so it never appears in a configuration review or a plan.",
					"main.rf.hcl:42,14-42,45"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := loadFiles(t, tt.files(t), tt.opts)
			if diff := cmp.Diff(tt.want, flatten(diags)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}
