package command

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// ciDir holds the CI kit: pipelines users copy into their repositories.
var ciDir = filepath.Join("..", "..", "..", "..", "examples", "ci")

// invocation is one `rackform …` command line found in a pipeline.
type invocation struct {
	cmd   string
	flags []string
	line  string
}

// shellStop ends a command's words.
var shellStop = map[string]bool{"|": true, "||": true, "&&": true, ";": true, ">": true, ">>": true, "2>&1": true, ";;": true, ")": true}

// rackformInvocations finds every rackform command in a script: the word
// "rackform", the subcommand (two words for "providers lock"), and the
// flags after it, also inside ${VAR:+-flag "$VAR"}.
func rackformInvocations(script string) []invocation {
	var out []invocation
	for _, line := range strings.Split(script, "\n") {
		words := strings.Fields(line)
		for i := 0; i < len(words); i++ {
			if words[i] != "rackform" || i+1 >= len(words) {
				continue
			}
			inv := invocation{cmd: words[i+1], line: strings.TrimSpace(line)}
			j := i + 2
			if inv.cmd == "providers" && j < len(words) {
				inv.cmd += " " + words[j]
				j++
			}
			for ; j < len(words) && !shellStop[words[j]]; j++ {
				w := strings.Trim(words[j], `"'`)
				if k := strings.Index(w, ":+-"); strings.HasPrefix(w, "${") && k > 0 {
					w = w[k+2:]
				}
				if strings.HasPrefix(w, "-") && len(w) > 1 {
					name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
					inv.flags = append(inv.flags, name)
				}
			}
			out = append(out, inv)
			i = j - 1
		}
	}
	return out
}

// scalars returns every string value of a YAML document.
func scalars(n *yaml.Node) []string {
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, scalars(c)...)
	}
	return out
}

// checkInvocations returns what is wrong with invs: a command or a flag
// that rackform does not have.
func checkInvocations(invs []invocation) []string {
	cmds := (&Meta{}).commands()
	var bad []string
	for _, inv := range invs {
		r, ok := cmds[inv.cmd]
		if !ok {
			bad = append(bad, "no command rackform "+inv.cmd+" (in: "+inv.line+")")
			continue
		}
		fs := r.Flags()
		for _, f := range inv.flags {
			if f == "help" || f == "h" {
				continue
			}
			if fs.Lookup(f) == nil {
				bad = append(bad, "rackform "+inv.cmd+" has no flag -"+f+" (in: "+inv.line+")")
			}
		}
	}
	return bad
}

// TestCIKitNamesRealCommands: the CI pipelines of examples/ci parse as
// YAML, and every rackform command and flag they run exists (a renamed
// flag would break every user's pipeline silently). Together they cover
// the hand-off: validate, plan, show, apply with -expect-sha256, status,
// continue, approve.
func TestCIKitNamesRealCommands(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(ciDir, "*.yml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("want the GitHub Actions and GitLab CI files in %s, found %v (%v)", ciDir, files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var doc yaml.Node
			if err := yaml.Unmarshal(src, &doc); err != nil {
				t.Fatalf("not YAML: %v", err)
			}
			var generic map[string]any
			if err := yaml.Unmarshal(src, &generic); err != nil || generic == nil {
				t.Fatalf("not a YAML mapping: %v", err)
			}
			var invs []invocation
			for _, s := range scalars(&doc) {
				invs = append(invs, rackformInvocations(s)...)
			}
			for _, b := range checkInvocations(invs) {
				t.Error(b)
			}
			seen := map[string]bool{}
			for _, inv := range invs {
				seen[inv.cmd] = true
				if inv.cmd == "apply" {
					has := false
					for _, fl := range inv.flags {
						has = has || fl == "expect-sha256"
					}
					if !has {
						t.Errorf("apply without -expect-sha256: %s", inv.line)
					}
				}
			}
			var missing []string
			for _, c := range []string{"validate", "plan", "show", "apply", "status", "continue", "approve"} {
				if !seen[c] {
					missing = append(missing, c)
				}
			}
			sort.Strings(missing)
			if len(missing) > 0 {
				t.Errorf("the pipeline never runs rackform %s", strings.Join(missing, ", "))
			}
			if f := filepath.Base(f); f == "github-actions.yml" {
				jobs, _ := generic["jobs"].(map[string]any)
				for _, j := range []string{"plan", "apply", "resume"} {
					if jobs[j] == nil {
						t.Errorf("no job %q", j)
					}
				}
			}
		})
	}
}

// TestCIKitCheckerFindsMistakes: the check above fails on a command or a
// flag that does not exist, including one inside ${VAR:+…}.
func TestCIKitCheckerFindsMistakes(t *testing.T) {
	invs := rackformInvocations(`rackform aply plan.json
rackform continue -lock-timout 5m
rackform status ${RUN_ID:+-rum "$RUN_ID"} | tee out
go install github.com/rackform/rackform/cmd/rackform@v1
rackform apply -expect-sha256 "$SHA" rollout.plan && rackform providers lock -bogus`)
	bad := checkInvocations(invs)
	want := []string{"no command rackform aply", "has no flag -lock-timout", "has no flag -rum", "rackform providers lock has no flag -bogus"}
	if len(bad) != len(want) {
		t.Fatalf("found %q, want %d mistakes", bad, len(want))
	}
	for i, w := range want {
		if !strings.Contains(bad[i], w) {
			t.Errorf("mistake %d = %q, want %q", i, bad[i], w)
		}
	}
}
