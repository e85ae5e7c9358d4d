package config

import (
	"strings"
	"testing"
)

// TestRedactTokens: the last-line scrub replaces a secret only where it
// stands as a token of its own, never inside a longer word.
func TestRedactTokens(t *testing.T) {
	tests := []struct {
		text    string
		secrets []string
		want    string
	}{
		{`The file extra.vars sets "unused".`, []string{"x"}, `The file extra.vars sets "unused".`},
		{`cannot parse "x" as a number`, []string{"x"}, `cannot parse "(sensitive value)" as a number`},
		{`x`, []string{"x"}, `(sensitive value)`},
		{`x.vars and vars.x`, []string{"x"}, `(sensitive value).vars and vars.(sensitive value)`},
		{`pwd is not pw`, []string{"pw"}, `pwd is not (sensitive value)`},
		{`token hunter2-secret, hunter2`, []string{"hunter2-secret", "hunter2"}, `token (sensitive value), (sensitive value)`},
		{`a_x x_a x1 1x`, []string{"x"}, `a_x x_a x1 1x`},
		{`p@ss!word`, []string{"@ss!"}, `p(sensitive value)word`}, // non-word ends need no boundary
		{`héx and é x`, []string{"x"}, `héx and é (sensitive value)`},
		{`sensitive value`, []string{"value", "sensitive"}, `(sensitive value) (sensitive value)`},
		{`nothing here`, []string{"zzz"}, `nothing here`},
	}
	for _, tt := range tests {
		if got := redactTokens(tt.text, tt.secrets); got != tt.want {
			t.Errorf("redactTokens(%q, %q) = %q, want %q", tt.text, tt.secrets, got, tt.want)
		}
	}
}

// TestShortSecretKeepsMessagesIntact is the review finding: with a
// sensitive variable set to "x", substring replacement turned extra.vars
// into e(sensitive value)tra.vars.
func TestShortSecretKeepsMessagesIntact(t *testing.T) {
	src := base + `
variable "token" {
  type      = string
  sensitive = true
}
`
	writeConfig(t, map[string]string{"main.rf.hcl": src, "extra.vars": "unused = 1\n"})
	_, diags := NewLoader(LoadOptions{Vars: []string{"token=x"}, VarFiles: []string{"extra.vars"}}).Load(".")
	want := []diag{{"warning", "Value for undeclared variable",
		`The file extra.vars sets "unused", but no variable of that name is declared; the value is ignored.`,
		"extra.vars:1,1-1,7"}}
	got := flatten(diags)
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestFunctionErrorsNeverQuoteSecrets: a function called with a sensitive
// argument reports a fixed error instead of its own, which would quote
// the argument. The messages are checked before any scrubbing, so this is
// the first line of defence on its own.
func TestFunctionErrorsNeverQuoteSecrets(t *testing.T) {
	for _, src := range []string{
		`parseint(var.secret, 10)`,
		`tonumber(var.secret)`,
		`tobool(var.secret)`,
		`file(var.secret)`,
		`timeadd(var.secret, "1h")`,
		`regex(var.secret, "x")`,
		`jsondecode(var.secret)`,
		`formatdate(var.secret, "2026-01-01T00:00:00Z")`,
		`templatefile("nope.tpl", { pw = var.secret })`,
		`element([], length(var.secret))`,
	} {
		t.Run(src, func(t *testing.T) {
			_, diags := evalFn(t, src)
			if !diags.HasErrors() {
				t.Fatalf("no error")
			}
			for _, d := range diags {
				if strings.Contains(d.Summary+d.Detail, "hunter2") {
					t.Errorf("the message quotes the secret: %s: %s", d.Summary, d.Detail)
				}
				if !strings.Contains(d.Detail, errSensitiveCall) {
					t.Errorf("detail = %q, want the fixed message", d.Detail)
				}
			}
		})
	}
	// Without a sensitive argument the function's own message stays.
	_, diags := evalFn(t, `parseint("hunter3", 10)`)
	if !diags.HasErrors() || !strings.Contains(diags[0].Detail, `"hunter3"`) {
		t.Errorf("plain error changed: %v", diags)
	}
}
